import { sleep } from './logger.js';

/**
 * client-go's token bucket: `burst` tokens to start with, refilled at `qps` per second; each
 * request takes one, waiting for it when none is left. Waiters are served in arrival order.
 */
export class TokenBucket {
  private tokens: number;
  private last = performance.now();
  /** Serialises waiters so tokens are handed out in arrival order. */
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly qps: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  /** Takes a token; resolves with how long it waited (ms). An aborted signal stops the wait. */
  take(signal?: AbortSignal): Promise<number> {
    const started = performance.now();
    const turn = this.tail.then(async () => {
      this.refill();
      if (this.tokens < 1) {
        await sleep(((1 - this.tokens) / this.qps) * 1000, signal);
        this.refill();
      }
      this.tokens -= 1;
      return performance.now() - started;
    });
    this.tail = turn.then(() => undefined);
    return turn;
  }

  private refill(): void {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
  }
}
