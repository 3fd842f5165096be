import type { ApiObject } from '@svc/api';
import { objectKey, type Informer } from './informer.js';
import { WorkQueue } from './work-queue.js';
import { silentClientLogger, type ClientLogger } from './logger.js';

export interface ReconcileResult {
  /** Process the key again after this many milliseconds (not a failure: no back-off). */
  requeueAfter?: number;
}

export type Reconcile = (key: string, signal: AbortSignal) => Promise<ReconcileResult | void> | ReconcileResult | void;

export interface ControllerOptions {
  /** For logs. */
  name: string;
  /** Level-based and idempotent; throwing requeues the key with per-key exponential back-off. */
  reconcile: Reconcile;
  /** Concurrent workers (default 1); one key is never reconciled by two at once. */
  workers?: number;
  queue?: WorkQueue<string>;
  logger?: ClientLogger;
}

/**
 * Runs `reconcile` over keys fed by informers: handlers enqueue `namespace/name` keys, `run`
 * waits for every watched informer to sync, then N workers take keys from a rate-limited
 * queue. A success (or a `requeueAfter`) forgets the key's back-off.
 */
export class Controller {
  readonly queue: WorkQueue<string>;
  private readonly informers: Informer<ApiObject>[] = [];
  private readonly logger: ClientLogger;

  constructor(private readonly o: ControllerOptions) {
    this.queue = o.queue ?? new WorkQueue<string>();
    this.logger = o.logger ?? silentClientLogger;
  }

  /** Enqueues the keys `toKeys` gives (default: the object's own key) on every add, update and delete. */
  watch<T extends ApiObject>(informer: Informer<T>, toKeys: (obj: T) => string[] = (obj) => [objectKey(obj)]): void {
    const enqueue = (obj: T): void => {
      for (const k of toKeys(obj)) this.queue.add(k);
    };
    informer.addEventHandler({ onAdd: enqueue, onUpdate: (_old, obj) => enqueue(obj), onDelete: enqueue });
    this.informers.push(informer as unknown as Informer<ApiObject>);
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  /**
   * Waits for the informers to sync (they must be running), then works until `signal`
   * fires: the queue shuts down and each worker finishes its current key. Resolves when
   * every worker stopped.
   */
  async run(signal: AbortSignal): Promise<void> {
    const stop = (): void => this.queue.shutDown();
    signal.addEventListener('abort', stop, { once: true });
    try {
      await Promise.all(this.informers.map((i) => i.waitForSync({ signal, timeoutMs: Number.MAX_SAFE_INTEGER })));
    } catch {
      return;
    }
    const workers = Array.from({ length: this.o.workers ?? 1 }, () => this.worker(signal));
    await Promise.all(workers);
    signal.removeEventListener('abort', stop);
  }

  private async worker(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        const r = await this.o.reconcile(key, signal);
        this.queue.forget(key);
        if (r?.requeueAfter !== undefined) this.queue.addAfter(key, r.requeueAfter);
      } catch (e) {
        if (!signal.aborted) {
          this.logger.warn('reconcile failed, requeueing', {
            controller: this.o.name,
            key,
            error: String(e),
            requeues: this.queue.numRequeues(key),
          });
          this.queue.addRateLimited(key);
        }
      } finally {
        this.queue.done(key);
      }
    }
  }
}
