/** How long unmet expectations hold a controller back before it syncs anyway (Kubernetes' ExpectationsTimeout). */
export const EXPECTATIONS_TIMEOUT_MS = 5 * 60_000;

interface Expectation {
  add: number;
  del: number;
  at: number;
  deleting: Set<string>;
}

/**
 * Kubernetes' UIDTrackingControllerExpectations: the creations and deletions a controller has
 * issued for a key and not yet seen in its informer, so a sync against a cache that lags its
 * own writes does not create or delete twice. Deletions are tracked by pod key, so a pod seen
 * first with a deletion timestamp and then deleted counts once. Single-threaded (JS): no locking.
 */
export class ControllerExpectations {
  private readonly byKey = new Map<string, Expectation>();

  constructor(private readonly now: () => number = Date.now) {}

  /** True when nothing is expected for `key`, everything expected was seen, or the expectations expired. */
  satisfied(key: string): boolean {
    const e = this.byKey.get(key);
    if (!e) return true;
    return (e.add <= 0 && e.del <= 0) || this.now() - e.at > EXPECTATIONS_TIMEOUT_MS;
  }

  /** Replaces `key`'s expectations with `n` creations. */
  expectCreations(key: string, n: number): void {
    this.byKey.set(key, { add: n, del: 0, at: this.now(), deleting: new Set() });
  }

  /** Replaces `key`'s expectations with the deletion of `podKeys`. */
  expectDeletions(key: string, podKeys: readonly string[]): void {
    this.byKey.set(key, { add: 0, del: podKeys.length, at: this.now(), deleting: new Set(podKeys) });
  }

  /** Replaces `key`'s expectations with `creations` creations and the deletion of `deletions` (pod keys) at once. */
  expect(key: string, { creations, deletions }: { creations: number; deletions: readonly string[] }): void {
    this.byKey.set(key, { add: creations, del: deletions.length, at: this.now(), deleting: new Set(deletions) });
  }

  creationObserved(key: string): void {
    const e = this.byKey.get(key);
    if (e) e.add--;
  }

  /** Counts the deletion of `podKey` once, and only if it was expected. */
  deletionObserved(key: string, podKey: string): void {
    const e = this.byKey.get(key);
    if (e?.deleting.delete(podKey)) e.del--;
  }

  delete(key: string): void {
    this.byKey.delete(key);
  }
}
