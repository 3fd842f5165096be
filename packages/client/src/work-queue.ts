/** Per-key delays for `addRateLimited`. */
export interface RateLimiter<K> {
  /** The delay before the next retry of `key` (counts one more failure). */
  when(key: K): number;
  /** Clears `key`'s failure history. */
  forget(key: K): void;
  numRequeues(key: K): number;
}

/**
 * `base * 2^failures`, capped at `max`, per key. The defaults (5 ms, 1000 s) are Kubernetes'
 * `DefaultControllerRateLimiter` per-item part; its overall 10 qps bucket is not applied here.
 */
export class ExponentialFailureRateLimiter<K> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();
  constructor(
    private readonly baseMs = 5,
    private readonly maxMs = 1_000_000,
  ) {}

  when(key: K): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    return Math.min(this.baseMs * 2 ** n, this.maxMs);
  }

  forget(key: K): void {
    this.failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}

/** Observers of a queue (Kubernetes' workqueue metrics); every method is optional. */
export interface WorkQueueMetrics {
  /** A key entered the queue. */
  added?(): void;
  /** The number of queued keys changed. */
  depth?(n: number): void;
  /** A key waited this long in the queue before a worker took it. */
  queued?(ms: number): void;
  /** A worker processed a key for this long. */
  worked?(ms: number): void;
  /** A key was re-added after a failure. */
  retried?(): void;
}

/**
 * A rate-limited work queue with Kubernetes' guarantees: a key is handed to at most one
 * worker at a time; adding a key that is queued is a no-op; adding one that is being
 * processed marks it dirty and it is queued again by `done`. Keys come out in FIFO order.
 * After `shutDown`, adds are ignored and `get` keeps handing out the queued keys (so
 * workers drain) and then returns `undefined`.
 */
export class WorkQueue<K = string> {
  private readonly queue: K[] = [];
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly waiters: (() => void)[] = [];
  private readonly timers = new Map<ReturnType<typeof setTimeout>, K>();
  /** Keys waiting to be added (addAfter), with when and their timer. */
  private readonly waiting = new Map<K, { readyAt: number; timer: ReturnType<typeof setTimeout> }>();
  private shuttingDown = false;
  private readonly idleWaiters: (() => void)[] = [];
  /** When each dirty key was added, and when each processing key was taken (for metrics). */
  private readonly addedAt = new Map<K, number>();
  private readonly takenAt = new Map<K, number>();

  constructor(
    readonly rateLimiter: RateLimiter<K> = new ExponentialFailureRateLimiter<K>(),
    private readonly metrics: WorkQueueMetrics = {},
  ) {}

  add(key: K): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    this.addedAt.set(key, performance.now());
    this.metrics.added?.();
    if (this.processing.has(key)) return;
    this.push(key);
  }

  private push(key: K): void {
    this.queue.push(key);
    this.metrics.depth?.(this.queue.length);
    this.waiters.shift()?.();
  }

  /** Adds `key` after `delayMs` (at once when ≤ 0). Pending delayed adds are dropped on shutdown. */
  addAfter(key: K, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    // As client-go's delaying queue: a key waits once, for the earliest time it was asked for.
    const readyAt = performance.now() + delayMs;
    const waiting = this.waiting.get(key);
    if (waiting) {
      if (waiting.readyAt <= readyAt) return;
      clearTimeout(waiting.timer);
      this.timers.delete(waiting.timer);
    }
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.waiting.delete(key);
      this.add(key);
    }, delayMs);
    this.timers.set(t, key);
    this.waiting.set(key, { readyAt, timer: t });
  }

  /** Adds `key` after the rate limiter's next delay for it. */
  addRateLimited(key: K): void {
    this.metrics.retried?.();
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /** Clears `key`'s back-off (call when it was processed successfully). */
  forget(key: K): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: K): number {
    return this.rateLimiter.numRequeues(key);
  }

  /** Queued keys (not counting those being processed or waiting on a delay). */
  get length(): number {
    return this.queue.length;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** The next key, marked as processing until `done(key)`; `undefined` once shut down and drained. */
  async get(): Promise<K | undefined> {
    while (this.queue.length === 0) {
      if (this.shuttingDown) return undefined;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    const key = this.queue.shift() as K;
    this.processing.add(key);
    this.dirty.delete(key);
    const now = performance.now();
    this.metrics.depth?.(this.queue.length);
    this.metrics.queued?.(now - (this.addedAt.get(key) ?? now));
    this.addedAt.delete(key);
    this.takenAt.set(key, now);
    return key;
  }

  /** Ends the processing of `key`; if it was added meanwhile, it is queued again. */
  done(key: K): void {
    this.processing.delete(key);
    const taken = this.takenAt.get(key);
    if (taken !== undefined) this.metrics.worked?.(performance.now() - taken);
    this.takenAt.delete(key);
    if (this.dirty.has(key)) this.push(key);
    this.checkIdle();
  }

  /** Stops accepting keys; workers drain what is queued, then `get` returns `undefined`. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const t of this.timers.keys()) clearTimeout(t);
    this.timers.clear();
    this.waiting.clear();
    for (const w of this.waiters.splice(0)) w();
    this.checkIdle();
  }

  /** Resolves once shut down with nothing queued and nothing being processed. */
  drained(): Promise<void> {
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.checkIdle();
    });
  }

  private checkIdle(): void {
    if (this.shuttingDown && this.queue.length === 0 && this.processing.size === 0) {
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }
}
