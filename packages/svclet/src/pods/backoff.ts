/**
 * Per-key exponential back-off, as Kubernetes' flowcontrol.Backoff the kubelet restarts
 * containers with: `next` starts a key at the initial period and doubles it up to the cap
 * on each later call; an entry untouched for twice the cap starts afresh. Times in ms.
 */
export class BackOff {
  private readonly entries = new Map<string, { backoffMs: number; lastUpdate: number }>();

  constructor(
    readonly initialMs: number,
    readonly maxMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The current period of `key` (0 when it has none). */
  get(key: string): number {
    return this.entries.get(key)?.backoffMs ?? 0;
  }

  /** Advances `key`: the initial period the first time (or after expiry), else doubled up to the cap. */
  next(key: string, eventTimeMs: number): void {
    const e = this.entries.get(key);
    if (!e || this.expired(eventTimeMs, e.lastUpdate)) {
      this.entries.set(key, { backoffMs: this.initialMs, lastUpdate: this.now() });
    } else {
      e.backoffMs = Math.min(e.backoffMs * 2, this.maxMs);
      e.lastUpdate = this.now();
    }
  }

  /** True while less than the period of `key` has passed since `eventTimeMs` (e.g. the last exit). */
  isInBackOffSince(key: string, eventTimeMs: number): boolean {
    return this.remainingMs(key, eventTimeMs) > 0;
  }

  /** How long `key` stays in back-off counted from `eventTimeMs` (0: not in back-off). */
  remainingMs(key: string, eventTimeMs: number): number {
    const e = this.entries.get(key);
    if (!e || this.expired(eventTimeMs, e.lastUpdate)) return 0;
    return Math.max(0, eventTimeMs + e.backoffMs - this.now());
  }

  /** True while less than the period of `key` has passed since its last `next` (Kubernetes' IsInBackOffSinceUpdate). */
  isInBackOffSinceUpdate(key: string): boolean {
    const e = this.entries.get(key);
    return !!e && this.now() - e.lastUpdate < e.backoffMs;
  }

  /** Forgets every key starting with `prefix`. */
  forget(prefix: string): void {
    for (const k of [...this.entries.keys()]) if (k.startsWith(prefix)) this.entries.delete(k);
  }

  private expired(eventTimeMs: number, lastUpdate: number): boolean {
    return eventTimeMs - lastUpdate > 2 * this.maxMs;
  }
}

/** A duration as Go prints it (`500ms`, `10s`, `1m20s`, `5m0s`), for Kubernetes' back-off messages. */
export function goDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const s = ms / 1000;
  if (s < 60) return `${+s.toFixed(3)}s`;
  const m = Math.floor(s / 60);
  const rest = +(s - m * 60).toFixed(3);
  return m < 60 ? `${m}m${rest}s` : `${Math.floor(m / 60)}h${m % 60}m${rest}s`;
}
