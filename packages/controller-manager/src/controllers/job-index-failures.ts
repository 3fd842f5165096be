import { batchKey, type Job, type Pod } from '@svc/api';
import {
  completionIndexOf,
  hasTrackingFinalizer,
  isPodFailed,
  parseIndexes,
  podFailurePolicyAction,
} from './job-util.js';

/**
 * `spec.backoffLimitPerIndex` (Kubernetes 1.32, beta): each index of an Indexed Job has its own
 * failure budget. A pod carries the failures of its index so far in the
 * `batch.<prefix>/job-index-failure-count` annotation (failures a podFailurePolicy `Ignore` rule
 * matched go to `job-index-ignored-failure-count`); its replacement gets the count plus one. An
 * index fails once a counted failure finds the count at the limit, or at once on a `FailIndex`
 * rule; failed indexes are listed in `status.failedIndexes` and never run again. The last failed
 * pod of an index waiting for its replacement keeps its tracking finalizer until the replacement
 * exists, so its count is not lost; the replacement waits its own back-off (10 s doubling per
 * failure of the index, from when that pod finished).
 */

const MAX_INT32 = 2147483647;

const annotationCount = (p: Pod, key: string): number => {
  const v = p.metadata.annotations?.[key];
  if (v === undefined || !/^[+-]?\d+$/.test(v)) return 0;
  const n = Number(v);
  return n < 0 || n > MAX_INT32 ? 0 : n;
};

/** The counted failures of a pod's index before it (0 when the annotation is absent or bad). */
export const indexFailureCount = (p: Pod): number => annotationCount(p, batchKey('job-index-failure-count'));

const absoluteFailureCount = (p: Pod): number =>
  indexFailureCount(p) + annotationCount(p, batchKey('job-index-ignored-failure-count'));

export const hasBackoffLimitPerIndex = (job: Job): boolean =>
  job.spec.completionMode === 'Indexed' && job.spec.backoffLimitPerIndex !== undefined;

/** Kubernetes' isIndexFailed: the pod failed and either a FailIndex rule matched or its index is out of retries. */
export function isIndexFailed(job: Job, p: Pod): boolean {
  if (!isPodFailed(p, job)) return false;
  let counted = true;
  if (job.spec.podFailurePolicy) {
    const { action } = podFailurePolicyAction(job, p);
    if (action === 'FailIndex') return true;
    counted = action !== 'Ignore';
  }
  return counted && indexFailureCount(p) >= (job.spec.backoffLimitPerIndex ?? 0);
}

/** `status.failedIndexes` plus the indexes of not yet counted pods that failed their index. */
export function failedIndexesOf(job: Job, pods: readonly Pod[]): Set<number> {
  const completions = job.spec.completions ?? 0;
  const failed = parseIndexes(job.status?.failedIndexes, completions);
  for (const p of pods) {
    const index = completionIndexOf(p, completions);
    if (index !== undefined && hasTrackingFinalizer(p) && isIndexFailed(job, p)) failed.add(index);
  }
  return failed;
}

/**
 * When a pod finished (Kubernetes' getFinishedTime): its containers' last `finishedAt` if all
 * ended, else the moment Ready turned False, else its deletion less the grace period, else its creation.
 */
export function finishedAtMs(p: Pod): number {
  const statuses = p.status?.containerStatuses ?? [];
  let latest: number | undefined;
  for (const cs of statuses) {
    const at = cs.state?.terminated?.finishedAt;
    if (!at) {
      latest = undefined;
      break;
    }
    latest = Math.max(latest ?? 0, Date.parse(at));
  }
  if (latest !== undefined) return latest;
  const ready = p.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status === 'False' && ready.lastTransitionTime) return Date.parse(ready.lastTransitionTime);
  if (p.metadata.deletionTimestamp)
    return Date.parse(p.metadata.deletionTimestamp) - (p.metadata.deletionGracePeriodSeconds ?? 0) * 1000;
  return Date.parse(p.metadata.creationTimestamp ?? '') || 0;
}

/**
 * Kubernetes' getPodsWithDelayedDeletionPerIndex: per index that neither succeeded, failed nor
 * runs, the last failed pod (highest failure count, latest finish) still to be counted; its
 * replacement inherits its count.
 */
export function lastFailedPodPerIndex(
  job: Job,
  o: { pods: readonly Pod[]; busy: ReadonlySet<number>; failed: ReadonlySet<number> },
): Map<number, Pod> {
  const completions = job.spec.completions ?? 0;
  const out = new Map<number, Pod>();
  for (const p of o.pods) {
    if (!isPodFailed(p, job)) continue;
    const index = completionIndexOf(p, completions);
    if (index === undefined || o.busy.has(index) || o.failed.has(index)) continue;
    const prev = out.get(index);
    if (!prev || (absoluteFailureCount(prev) <= absoluteFailureCount(p) && finishedAtMs(p) >= finishedAtMs(prev)))
      out.set(index, p);
  }
  return out;
}

/** The failure-count annotations of the pod replacing `replaced` (zeroes for an index's first pod). */
export function failureCountAnnotations(job: Job, replaced: Pod | undefined): Record<string, string> {
  let counted = 0;
  let ignored = 0;
  if (replaced) {
    counted = indexFailureCount(replaced);
    ignored = annotationCount(replaced, batchKey('job-index-ignored-failure-count'));
    if (job.spec.podFailurePolicy && podFailurePolicyAction(job, replaced).action === 'Ignore') ignored++;
    else counted++;
  }
  return {
    [batchKey('job-index-failure-count')]: String(counted),
    ...(ignored > 0 ? { [batchKey('job-index-ignored-failure-count')]: String(ignored) } : {}),
  };
}

/**
 * Kubernetes' getPodCreationInfoForIndependentIndexes: of the indexes to start, those whose
 * back-off has passed; when none has, how long until the first one may start.
 */
export function indexesPastBackoff(
  indexes: readonly number[],
  o: { lastFailed: ReadonlyMap<number, Pod>; nowMs: number; baseMs: number; maxMs: number },
): { ready: number[]; waitMs: number } {
  const ready: number[] = [];
  let waitMs = Infinity;
  for (const index of indexes) {
    const last = o.lastFailed.get(index);
    let remaining = 0;
    if (last) {
      const failures = absoluteFailureCount(last) + 1;
      const backoff = Math.min(o.baseMs * 2 ** (failures - 1), o.maxMs);
      remaining = Math.max(0, finishedAtMs(last) + backoff - o.nowMs);
    }
    if (remaining === 0) ready.push(index);
    else waitMs = Math.min(waitMs, remaining);
  }
  return { ready, waitMs: ready.length > 0 || waitMs === Infinity ? 0 : waitMs };
}

/** Kubernetes' failure verdicts of a Job with backoffLimitPerIndex: too many failed indexes, or every index done and some failed. */
export function failedIndexesFailure(
  job: Job,
  { failed, succeeded }: { failed: number; succeeded: number },
): { reason: string; message: string } | undefined {
  const max = job.spec.maxFailedIndexes;
  if (max !== undefined && failed > max)
    return {
      reason: 'MaxFailedIndexesExceeded',
      message: 'Job has exceeded the specified maximal number of failed indexes',
    };
  if (failed > 0 && failed + succeeded >= (job.spec.completions ?? 0))
    return { reason: 'FailedIndexes', message: 'Job has failed indexes' };
  return undefined;
}
