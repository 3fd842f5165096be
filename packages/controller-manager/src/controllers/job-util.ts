import { batchKey, type Job, type JobCondition, type Pod, type PodFailurePolicyRule } from '@svc/api';
import { nowTime } from './workload-util.js';

/** Kubernetes' DefaultJobPodFailureBackOff and MaxJobPodFailureBackOff. */
export const DEFAULT_POD_FAILURE_BACKOFF_MS = 10_000;
export const MAX_POD_FAILURE_BACKOFF_MS = 10 * 60_000;

export const isFinishedPod = (p: Pod): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

/** Kubernetes' isPodFailed: Failed, or (unless only failed pods are replaced) deleted before it succeeded. */
export function isPodFailed(p: Pod, job: Job): boolean {
  if (p.status?.phase === 'Failed') return true;
  if (job.spec.podReplacementPolicy === 'Failed') return false;
  return !!p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded';
}

export const hasTrackingFinalizer = (p: Pod): boolean =>
  (p.metadata.finalizers ?? []).includes(batchKey('job-tracking'));

export function conditionOf(job: Job, type: string): JobCondition | undefined {
  return job.status?.conditions?.find((c) => c.type === type && c.status === 'True');
}

/** Complete or Failed: nothing more happens to the Job's pods but finalizer removal. */
export const isJobFinished = (job: Job): boolean => !!conditionOf(job, 'Complete') || !!conditionOf(job, 'Failed');

/**
 * Sets a condition (Kubernetes' ensureJobConditionStatus): a new type is appended, a changed
 * status moves lastTransitionTime, a same status only refreshes reason and message. Answers true when anything changed.
 */
export function setCondition(
  conditions: JobCondition[],
  c: { type: string; status: 'True' | 'False'; reason: string; message: string; nowMs: number },
): boolean {
  const now = nowTime(c.nowMs);
  const existing = conditions.find((x) => x.type === c.type);
  if (!existing) {
    if (c.status === 'False') return false;
    conditions.push({
      type: c.type,
      status: c.status,
      lastProbeTime: now,
      lastTransitionTime: now,
      reason: c.reason,
      message: c.message,
    });
    return true;
  }
  if (existing.status === c.status && existing.reason === c.reason && existing.message === c.message) return false;
  if (existing.status !== c.status) existing.lastTransitionTime = now;
  existing.status = c.status;
  existing.lastProbeTime = now;
  existing.reason = c.reason;
  existing.message = c.message;
  return true;
}

/** The completion index of an Indexed Job's pod, from its annotation (then label); undefined when absent or bad. */
export function completionIndexOf(p: Pod, completions: number): number | undefined {
  const v =
    p.metadata.annotations?.[batchKey('job-completion-index')] ?? p.metadata.labels?.[batchKey('job-completion-index')];
  if (v === undefined || !/^(0|[1-9][0-9]*)$/.test(v)) return undefined;
  const n = Number(v);
  return n < completions ? n : undefined;
}

/** `1,3-5,7,8` (Kubernetes' compressed index list: runs of three or more as ranges) from a set of indexes. */
export function formatIndexes(indexes: Iterable<number>): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && (sorted[j + 1] ?? 0) === (sorted[j] ?? 0) + 1) j++;
    out.push(i === j ? String(sorted[i]) : `${sorted[i]}${j === i + 1 ? ',' : '-'}${sorted[j]}`);
    i = j + 1;
  }
  return out.join(',');
}

/** The indexes of a compressed index list (`1,3-5`); out-of-range or malformed parts are skipped. */
export function parseIndexes(text: string | undefined, completions: number): Set<number> {
  const out = new Set<number>();
  for (const part of (text ?? '').split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) continue;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    for (let i = from; i <= to && i < completions; i++) out.add(i);
  }
  return out;
}

/** The outcome of a failed pod under `spec.podFailurePolicy`: the matching rule's action and its message, or Count. */
export function podFailurePolicyAction(
  job: Job,
  pod: Pod,
): { action: PodFailurePolicyRule['action']; message?: string } {
  const rules = job.spec.podFailurePolicy?.rules ?? [];
  const podName = `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
  for (const [i, rule] of rules.entries()) {
    const codes = rule.onExitCodes;
    if (codes) {
      const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
      for (const cs of statuses) {
        if (codes.containerName !== undefined && codes.containerName !== cs.name) continue;
        const code = cs.state?.terminated?.exitCode;
        if (code === undefined || code === 0) continue;
        const inValues = codes.values.includes(code);
        if (codes.operator === 'In' ? inValues : !inValues) {
          return {
            action: rule.action,
            message: `Container ${cs.name} for pod ${podName} failed with exit code ${code} matching ${rule.action} rule at index ${i}`,
          };
        }
      }
    }
    for (const pattern of rule.onPodConditions ?? []) {
      const hit = (pod.status?.conditions ?? []).some(
        (c) => c.type === pattern.type && c.status === (pattern.status ?? 'True'),
      );
      if (hit)
        return {
          action: rule.action,
          message: `Pod ${podName} has condition ${pattern.type} matching ${rule.action} rule at index ${i}`,
        };
    }
  }
  return { action: 'Count' };
}

/** Failures since the last success and when the last one was seen (Kubernetes' backoffRecord). */
export interface BackoffRecord {
  failuresAfterLastSuccess: number;
  lastFailureMs: number;
}

/** How long new pods must wait after failures: base·2^(failures−1), at most `maxMs`, counted from the last failure. */
export function remainingBackoffMs(
  r: BackoffRecord | undefined,
  { nowMs, baseMs, maxMs }: { nowMs: number; baseMs: number; maxMs: number },
): number {
  if (!r || r.failuresAfterLastSuccess === 0) return 0;
  const backoff = Math.min(baseMs * 2 ** (r.failuresAfterLastSuccess - 1), maxMs);
  return Math.max(0, r.lastFailureMs + backoff - nowMs);
}
