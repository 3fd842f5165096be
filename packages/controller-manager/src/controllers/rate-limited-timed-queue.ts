/**
 * A token bucket that never waits (client-go's `TryAccept`): `burst` tokens to start with,
 * refilled at `qps` per second. A bucket with `qps` ≤ 0 never accepts.
 */
export class TryTokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly qps: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  tryAccept(): boolean {
    if (this.qps <= 0) return false;
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** What a `try` callback answers: done (leave the queue), or try again after `retryAfterMs`. */
export type TryResult = { done: true } | { done: false; retryAfterMs: number };

interface Item {
  value: string;
  uid: string;
  processAt: number;
}

/** Kubernetes' EvictionRateLimiterBurst. */
const BURST = 1;

/**
 * Kubernetes' RateLimitedTimedQueue for the node controller: unique values, handed out in the
 * order they became due (FIFO among equals) while the limiter grants a token, one token per
 * value. A value that was handed out and done stays a member (so `add` refuses it) until
 * `remove`. Not reentrant: one `try` at a time.
 */
export class RateLimitedTimedQueue {
  private readonly members = new Set<string>();
  private pending: Item[] = [];
  private limiter: TryTokenBucket;

  constructor(
    qps: number,
    private readonly clock: { now(): number } = { now: () => performance.now() },
  ) {
    this.limiter = new TryTokenBucket(qps, BURST, () => this.clock.now());
  }

  /** Adds `value` due now; false when it is already a member. */
  add(value: string, uid: string): boolean {
    if (this.members.has(value)) return false;
    this.members.add(value);
    this.pending.push({ value, uid, processAt: this.clock.now() });
    return true;
  }

  /** Forgets `value` (pending or done); true when it was a member. */
  remove(value: string): boolean {
    this.pending = this.pending.filter((i) => i.value !== value);
    return this.members.delete(value);
  }

  get qps(): number {
    return this.limiter.qps;
  }

  /**
   * Switches to `qps` (≤ 0: hand nothing out). As Kubernetes, a limiter that was out of tokens
   * hands the new one over empty too, so a rate change does not release an extra value.
   */
  swapLimiter(qps: number): void {
    if (qps === this.limiter.qps) return;
    const next = new TryTokenBucket(qps, BURST, () => this.clock.now());
    if (qps > 0 && !this.limiter.tryAccept()) next.tryAccept();
    this.limiter = next;
  }

  /** Hands out due values in order while tokens last; a value removed meanwhile is not put back. */
  async try(fn: (value: string, uid: string) => Promise<TryResult>): Promise<void> {
    for (let head = this.pending[0]; head; head = this.pending[0]) {
      if (!this.limiter.tryAccept()) return;
      const now = this.clock.now();
      if (now < head.processAt) return;
      const r = await fn(head.value, head.uid);
      const i = this.pending.indexOf(head);
      if (i < 0) continue;
      this.pending.splice(i, 1);
      if (!r.done) {
        head.processAt = now + r.retryAfterMs + 1;
        this.pending.push(head);
        this.pending.sort((a, b) => a.processAt - b.processAt);
      }
    }
  }
}
