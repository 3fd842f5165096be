import { podDeletionCostAnnotation, type Pod, type PodCondition } from '@svc/api';

/** Not finished (phase neither Succeeded nor Failed) and not being deleted (Kubernetes' IsPodActive). */
export function isPodActive(p: Pod): boolean {
  const phase = p.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !p.metadata.deletionTimestamp;
}

function readyCondition(p: Pod): PodCondition | undefined {
  return p.status?.conditions?.find((c) => c.type === 'Ready');
}

/** The pod's `Ready` condition is `True`. */
export function isPodReady(p: Pod): boolean {
  return readyCondition(p)?.status === 'True';
}

/** Ready, and (with `minReadySeconds`) ready since more than that many seconds before `nowMs` (Kubernetes' IsPodAvailable). */
export function isPodAvailable(p: Pod, minReadySeconds: number, nowMs: number): boolean {
  if (!isPodReady(p)) return false;
  if (minReadySeconds === 0) return true;
  const since = Date.parse(readyCondition(p)?.lastTransitionTime ?? '');
  return Number.isFinite(since) && since + minReadySeconds * 1000 < nowMs;
}

const PHASE_ORDER: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

function deletionCost(p: Pod): number {
  const v = Number(p.metadata.annotations?.[podDeletionCostAnnotation()] ?? 0);
  return Number.isInteger(v) ? v : 0;
}

function readySince(p: Pod): number {
  return isPodReady(p) ? Date.parse(readyCondition(p)?.lastTransitionTime ?? '') || 0 : 0;
}

function maxRestarts(p: Pod): number {
  return Math.max(0, ...(p.status?.containerStatuses ?? []).map((c) => c.restartCount ?? 0));
}

/** ⌊log2(now - t)⌋ in nanoseconds, -1 for a time not in the past (Kubernetes' logarithmic scale-down buckets). */
function logRank(t: number, nowMs: number): number {
  const d = (nowMs - t) * 1e6;
  return d > 0 ? Math.floor(Math.log2(d)) : -1;
}

/** Zero-time first, then the later time first (Kubernetes' afterOrZero as a comparison). */
function laterFirst(a: { t: number; uid: string }, b: { t: number; uid: string }, nowMs: number): number {
  if (a.t === 0 || b.t === 0) return a.t === 0 ? -1 : 1;
  const diff = logRank(a.t, nowMs) - logRank(b.t, nowMs);
  if (diff !== 0) return diff;
  return a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0;
}

/**
 * `pods` in the order Kubernetes' ReplicaSet controller deletes them (ActivePodsWithRanks, with
 * PodDeletionCost and LogarithmicScaleDown on): unassigned before assigned; Pending, Unknown,
 * Running; not ready before ready; lower deletion cost; more active `related` pods on the same
 * node; ready for less time; more container restarts; created more recently.
 */
export function sortPodsForDeletion(pods: readonly Pod[], related: readonly Pod[], nowMs = Date.now()): Pod[] {
  const onNode = new Map<string, number>();
  for (const p of related)
    if (isPodActive(p)) onNode.set(p.spec?.nodeName ?? '', (onNode.get(p.spec?.nodeName ?? '') ?? 0) + 1);
  const rank = (p: Pod): number => onNode.get(p.spec?.nodeName ?? '') ?? 0;
  const created = (p: Pod): number => Date.parse(p.metadata.creationTimestamp ?? '') || 0;
  return [...pods].sort((a, b) => {
    const na = a.spec?.nodeName ?? '';
    const nb = b.spec?.nodeName ?? '';
    if (na !== nb && (na === '' || nb === '')) return na === '' ? -1 : 1;
    const pa = PHASE_ORDER[a.status?.phase ?? ''] ?? 0;
    const pb = PHASE_ORDER[b.status?.phase ?? ''] ?? 0;
    if (pa !== pb) return pa - pb;
    if (isPodReady(a) !== isPodReady(b)) return isPodReady(a) ? 1 : -1;
    if (deletionCost(a) !== deletionCost(b)) return deletionCost(a) - deletionCost(b);
    if (rank(a) !== rank(b)) return rank(b) - rank(a);
    const uidA = a.metadata.uid ?? '';
    const uidB = b.metadata.uid ?? '';
    if (isPodReady(a) && isPodReady(b) && readySince(a) !== readySince(b))
      return laterFirst({ t: readySince(a), uid: uidA }, { t: readySince(b), uid: uidB }, nowMs);
    if (maxRestarts(a) !== maxRestarts(b)) return maxRestarts(b) - maxRestarts(a);
    if (created(a) !== created(b)) return laterFirst({ t: created(a), uid: uidA }, { t: created(b), uid: uidB }, nowMs);
    return 0;
  });
}
