import { serviceUnavailable, type ApiObject } from '@svc/api';
import { StoreInformer } from '../authz/rbac/informer.js';
import type { GenericStore } from '../registry/store.js';

/** How long a request waits for the first list (Kubernetes' admission WaitForReady: 10 s). */
const READY_WAIT_MS = 10_000;

export interface StoreListerOptions {
  /** The type's store; undefined when the server does not serve the type. */
  store(): GenericStore | undefined;
  signal: AbortSignal;
  onError(e: unknown): void;
}

/**
 * The objects of one type, from an informer over the server's own store (the watch cache)
 * that starts with the first request asking (the stores exist by then) and runs until the
 * server stops. A request waits up to 10 s for the first list, then fails (503). Objects are
 * the cache's: never mutate them.
 */
export class StoreLister<T extends ApiObject> {
  private informer?: StoreInformer;
  private synced = false;
  private starting?: Promise<boolean>;

  constructor(private readonly o: StoreListerOptions) {}

  /** Whether the type is served (then its informer has listed), waiting for the first list. */
  private async ready(): Promise<StoreInformer | undefined> {
    if (this.synced) return this.informer;
    this.starting ??= this.start();
    const ok = await this.starting;
    if (!ok) {
      this.starting = undefined;
      throw serviceUnavailable('not yet ready to handle request');
    }
    return this.informer;
  }

  private async start(): Promise<boolean> {
    const store = this.o.store();
    if (!store) {
      this.synced = true;
      return true;
    }
    if (!this.informer) {
      const informer = new StoreInformer(() => store, this.o.onError);
      this.informer = informer;
      informer.run(this.o.signal).catch(this.o.onError);
    }
    const informer = this.informer;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), READY_WAIT_MS);
      timer.unref();
    });
    const ok = await Promise.race([informer.synced.then(() => true), timedOut]);
    clearTimeout(timer);
    if (ok) this.synced = true;
    return ok;
  }

  /** The objects of `namespace` ('' for every object of a cluster-scoped type), in no particular order. */
  async list(namespace: string): Promise<T[]> {
    const informer = await this.ready();
    if (!informer) return [];
    const out: T[] = [];
    for (const o of informer.list()) if (!namespace || o.metadata.namespace === namespace) out.push(o as T);
    return out;
  }

  async get(namespace: string, name: string): Promise<T | undefined> {
    const informer = await this.ready();
    return informer?.get(namespace, name) as T | undefined;
  }
}
