import type { AuditBackend, PluginErrors } from './backend.js';
import type { AuditRecord } from './event.js';

/** Batch mode's settings (the `--audit-<backend>-batch-*` flags). */
export interface BatchConfig {
  /** Events held at most; more are reported lost. */
  bufferSize: number;
  /** Events per batch handed to the delegate. */
  maxBatchSize: number;
  /** A batch smaller than the maximum goes out this long after its collection began (used when the maximum is above 1). */
  maxBatchWaitMs: number;
  /** At most `qps` batches a second, `burst` at once. */
  throttle?: { qps: number; burst: number };
  /** Hand batches to the delegate without waiting for the previous one (the webhook's), else one at a time (the log's). */
  asyncDelegate: boolean;
}

/** Kubernetes' token bucket rate limiter: `burst` tokens, refilled at `qps`; `accept` waits for one. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  /** Takes a token; resolves when it is due. */
  accept(): Promise<void> {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.qps);
    this.last = t;
    this.tokens -= 1;
    if (this.tokens >= 0) return Promise.resolve();
    const waitMs = (-this.tokens / this.qps) * 1000;
    return new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}

/**
 * Batch mode (Kubernetes' buffered backend): events are queued without waiting and handed to
 * the delegate in batches of up to `maxBatchSize`, at the latest `maxBatchWaitMs` after a
 * batch's collection began, throttled. A full buffer, or events after shutdown began, are
 * reported lost (plugin `buffered`). Shutdown sends what is queued and waits for every batch.
 */
export class BufferedBackend implements AuditBackend {
  readonly name: string;
  private queue: AuditRecord[] = [];
  private head = 0;
  private stopping = false;
  private wake?: () => void;
  /** `wake` is called once this many events are queued. */
  private wakeAt = 1;
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly throttle?: TokenBucket;
  private readonly loop: Promise<void>;

  constructor(
    private readonly delegate: AuditBackend,
    private readonly c: BatchConfig,
    private readonly errors: PluginErrors,
  ) {
    this.name = `buffered<${delegate.name}>`;
    if (c.throttle) this.throttle = new TokenBucket(c.throttle.qps, c.throttle.burst);
    this.loop = this.run();
  }

  private get length(): number {
    return this.queue.length - this.head;
  }

  processEvents(records: readonly AuditRecord[]): Promise<boolean> {
    for (let i = 0; i < records.length; i++) {
      if (this.stopping || this.length >= this.c.bufferSize) {
        const why = this.stopping ? 'audit backend shut down' : 'audit buffer queue blocked';
        this.errors('buffered', new Error(why), records.slice(i));
        break;
      }
      this.queue.push(records[i] as AuditRecord);
    }
    if (this.wake && this.length >= this.wakeAt) this.wake();
    return Promise.resolve(true);
  }

  async shutdown(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
    await Promise.all(this.inflight);
    await this.delegate.shutdown();
  }

  private async run(): Promise<void> {
    for (;;) {
      const batch = await this.collect();
      if (batch.length === 0) {
        if (this.stopping && this.length === 0) return;
        continue;
      }
      if (this.throttle) await this.throttle.accept();
      const sent = this.delegate.processEvents(batch).catch((e: unknown) => {
        this.errors(this.delegate.name, e, batch);
        return false;
      });
      if (!this.c.asyncDelegate) {
        await sent;
        continue;
      }
      this.inflight.add(sent);
      void sent.finally(() => this.inflight.delete(sent));
    }
  }

  /**
   * Up to `maxBatchSize` events: once the first is queued, as soon as that many are, when the
   * wait (counted from the first) is over, or at shutdown.
   */
  private async collect(): Promise<AuditRecord[]> {
    const max = Math.max(1, this.c.maxBatchSize);
    if (this.length === 0 && !this.stopping) await this.until({ queued: 1, timeoutMs: Infinity });
    if (max > 1) {
      const deadline = performance.now() + this.c.maxBatchWaitMs;
      for (let left = this.c.maxBatchWaitMs; this.length < max && !this.stopping && left > 0;) {
        await this.until({ queued: max, timeoutMs: left });
        left = deadline - performance.now();
      }
    }
    const n = Math.min(max, this.length);
    const batch = this.queue.slice(this.head, this.head + n);
    this.head += n;
    if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return batch;
  }

  /** Waits until `queued` events are queued, the timeout passes, or shutdown begins. */
  private until(o: { queued: number; timeoutMs: number }): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = Number.isFinite(o.timeoutMs) ? setTimeout(() => wake(), o.timeoutMs) : undefined;
      const wake = (): void => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      this.wakeAt = o.queued;
      this.wake = wake;
    });
  }
}
