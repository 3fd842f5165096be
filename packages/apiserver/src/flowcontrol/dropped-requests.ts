/** The largest `Retry-After` (seconds) a priority level suggests. */
const MAX_RETRY_AFTER_S = 32;

/** Dropped requests of one priority level: per-second counts and the current suggestion. */
class LevelDrops {
  /** Earlier seconds with drops, oldest first. */
  private history: { second: number; count: number }[] = [];
  private currentSecond = 0;
  private currentCount = 0;
  retryAfter = 1;
  /** When `retryAfter` last doubled (0: it may double at the first chance). */
  private doubledAt = 0;

  record(second: number): void {
    if (second === this.currentSecond) {
      this.currentCount++;
      return;
    }
    this.remember(this.currentSecond, this.currentCount);
    this.currentSecond = second;
    this.currentCount = 1;
    this.adjust(second);
  }

  /** Keeps the seconds that can still matter: within twice `retryAfter` (at most the maximum). */
  private remember(second: number, count: number): void {
    this.history.push({ second, count });
    const keep = Math.min(2 * this.retryAfter, MAX_RETRY_AFTER_S);
    const first = this.history.findIndex((h) => second - h.second <= keep);
    this.history = first < 0 ? [] : this.history.slice(first);
  }

  /**
   * As TCP's congestion window, mirrored: the suggestion doubles when the last `retryAfter`
   * seconds dropped at least three requests per second of it (once per `retryAfter` seconds),
   * and shrinks by one when they dropped fewer than one per second.
   */
  private adjust(now: number): void {
    const dropped = this.history
      .filter((h) => h.second < now && now - h.second <= this.retryAfter)
      .reduce((sum, h) => sum + h.count, 0);
    if (now - this.doubledAt >= this.retryAfter && dropped >= 3 * this.retryAfter) {
      this.retryAfter = Math.min(2 * this.retryAfter, MAX_RETRY_AFTER_S);
      this.doubledAt = now;
    } else if (dropped < this.retryAfter && this.retryAfter > 1) {
      this.retryAfter--;
    }
  }
}

/**
 * The `Retry-After` that priority and fairness sends with a 429, per priority level, as
 * Kubernetes 1.32's dropped-requests tracker computes it: 1 s at first, doubled (up to 32 s)
 * while the level keeps dropping many requests, lowered by one second at a time once it drops
 * few. The suggestion moves only when a new second sees its first drop.
 */
export class DroppedRequests {
  private readonly levels = new Map<string, LevelDrops>();

  constructor(private readonly nowMs: () => number = Date.now) {}

  record(level: string): void {
    let l = this.levels.get(level);
    if (!l) {
      l = new LevelDrops();
      this.levels.set(level, l);
    }
    l.record(Math.floor(this.nowMs() / 1000));
  }

  /** Seconds a client rejected at `level` should wait. */
  retryAfter(level: string): number {
    return this.levels.get(level)?.retryAfter ?? 1;
  }
}
