/**
 * Hands out etcd leases for keys written with a TTL (Events, `--event-ttl`), reusing one
 * lease for the writes of a short period as Kubernetes' lease manager does: granting a lease
 * is a Raft write of its own, and every Event would otherwise cost one.
 *
 * A lease is granted for `ttl + reuse` seconds, where reuse = min(5 % of ttl,
 * `--lease-reuse-duration-seconds`), and serves later writes with the same TTL while it
 * still outlives their TTL, but by no more than `reuse` (a TTL under 20 s is never reused). So every key lives at least its
 * TTL and at most TTL + reuse. A lease also stops being reused once `maxObjects` keys are
 * attached to it, so that one expiry does not delete an unbounded number of keys at once.
 */
export interface LeaseManagerOptions {
  /** `--lease-reuse-duration-seconds` (Kubernetes' default 60). */
  reuseDurationSeconds: number;
  /** Keys attached to one lease at most (Kubernetes' default 1000). */
  maxObjects?: number;
  /** The clock (ms); tests move it. */
  now?: () => number;
}

/** Share of the TTL a lease is reused for, before the cap of `reuseDurationSeconds`. */
const REUSE_SHARE = 0.05;

interface Held {
  id: string;
  /** When etcd lets the lease expire (ms). */
  expiresAt: number;
  attached: number;
}

export class LeaseManager {
  private held: Held | undefined;
  /** Requests are served one after the other, so concurrent writes share one grant. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly maxObjects: number;
  private readonly now: () => number;

  constructor(
    private readonly grant: (ttlSeconds: number) => Promise<string>,
    private readonly opts: LeaseManagerOptions,
  ) {
    this.maxObjects = opts.maxObjects ?? 1000;
    this.now = opts.now ?? Date.now;
  }

  /** A lease that keeps a key written now for at least `ttlSeconds` (whole seconds, ≥ 1). */
  lease(ttlSeconds: number): Promise<string> {
    const next = this.queue.then(() => this.leaseNow(Math.max(1, Math.ceil(ttlSeconds))));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async leaseNow(ttl: number): Promise<string> {
    const now = this.now();
    const reuse = Math.min(Math.floor(REUSE_SHARE * ttl), this.opts.reuseDurationSeconds);
    const h = this.held;
    if (
      h &&
      h.attached < this.maxObjects &&
      h.expiresAt > now + ttl * 1000 &&
      h.expiresAt <= now + (ttl + reuse) * 1000
    ) {
      h.attached++;
      return h.id;
    }
    const granted = ttl + reuse;
    const id = await this.grant(granted);
    this.held = { id, expiresAt: now + granted * 1000, attached: 1 };
    return id;
  }
}
