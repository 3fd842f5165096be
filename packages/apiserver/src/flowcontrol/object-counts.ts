/** How long an object count stays usable without a new poll (Kubernetes' staleTolerationThreshold). */
const STALE_AFTER_MS = 3 * 60_000;

/**
 * The stored object counts the work estimator reads, fed by the same poll as
 * `apiserver_storage_objects` (Kubernetes' object count tracker): a failed count (-1) keeps
 * the last one, which goes stale after three minutes.
 */
export class ObjectCounts {
  private readonly counts = new Map<string, { count: number; at: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  set(groupResource: string, count: number): void {
    if (count < 0) return;
    this.counts.set(groupResource, { count, at: this.now() });
  }

  get(groupResource: string): { count: number; stale: boolean } | undefined {
    const c = this.counts.get(groupResource);
    if (!c) return undefined;
    return { count: c.count, stale: this.now() - c.at > STALE_AFTER_MS };
  }
}
