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
  constructor(private readonly baseMs = 5, private readonly maxMs = 1_000_000) {}

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
  private shuttingDown = false;
  private readonly idleWaiters: (() => void)[] = [];

  constructor(readonly rateLimiter: RateLimiter<K> = new ExponentialFailureRateLimiter<K>()) {}

  add(key: K): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.queue.push(key);
    this.waiters.shift()?.();
  }

  /** Adds `key` after `delayMs` (at once when ≤ 0). Pending delayed adds are dropped on shutdown. */
  addAfter(key: K, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.add(key);
    }, delayMs);
    this.timers.set(t, key);
  }

  /** Adds `key` after the rate limiter's next delay for it. */
  addRateLimited(key: K): void {
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
    return key;
  }

  /** Ends the processing of `key`; if it was added meanwhile, it is queued again. */
  done(key: K): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      this.queue.push(key);
      this.waiters.shift()?.();
    }
    this.checkIdle();
  }

  /** Stops accepting keys; workers drain what is queued, then `get` returns `undefined`. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const t of this.timers.keys()) clearTimeout(t);
    this.timers.clear();
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
