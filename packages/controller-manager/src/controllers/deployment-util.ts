// Pure helpers of the deployment controller, each named after and behaving as its Kubernetes
// v1.32 counterpart (pkg/controller/deployment/util) unless its comment says otherwise.
import {
  deploymentAnnotation,
  naming,
  podTemplateHashLabel,
  type Deployment,
  type DeploymentCondition,
  type DeploymentStatus,
  type IntOrString,
  type PodTemplateSpec,
  type ReplicaSet,
} from '@svc/api';
import { canonicalJson, jsonEqual, withoutZeroValues } from '@svc/machinery';
import { nowTime, replicasOf } from './workload-util.js';

/** `progressDeadlineSeconds` that means "no deadline" (Kubernetes: MaxInt32). */
const NO_DEADLINE = 2_147_483_647;
/** Longest `revision-history` annotation kept (Kubernetes' maxRevHistoryLengthInChars). */
const MAX_REVISION_HISTORY_CHARS = 2000;

export const REASON = {
  newRSCreated: 'NewReplicaSetCreated',
  foundNewRS: 'FoundNewReplicaSet',
  newRSAvailable: 'NewReplicaSetAvailable',
  rsUpdated: 'ReplicaSetUpdated',
  timedOut: 'ProgressDeadlineExceeded',
  paused: 'DeploymentPaused',
  resumed: 'DeploymentResumed',
  failedRSCreate: 'ReplicaSetCreateError',
  minimumAvailable: 'MinimumReplicasAvailable',
  minimumUnavailable: 'MinimumReplicasUnavailable',
} as const;

// ---- intOrPercent, surge and unavailability

/**
 * An int, or a percent of `total` rounded up or down (Kubernetes' GetScaledValueFromIntOrPercent);
 * throws on a string that is not `<digits>%`.
 */
export function scaledValue(v: IntOrString | undefined, total: number, roundUp: boolean): number {
  if (v === undefined) return 0;
  if (typeof v === 'number') return v;
  const m = /^([0-9]+)%$/.exec(v);
  if (!m) throw new Error(`invalid value for IntOrString: invalid value ${JSON.stringify(v)}`);
  const x = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

export const isRollingUpdate = (d: Deployment): boolean => d.spec.strategy?.type !== 'Recreate';

/** maxSurge rounds up, maxUnavailable down; both 0 make maxUnavailable 1 (Kubernetes' ResolveFenceposts). */
export function resolveFenceposts(d: Deployment): { surge: number; unavailable: number } {
  const ru = d.spec.strategy?.rollingUpdate ?? {};
  const desired = replicasOf(d);
  const surge = scaledValue(ru.maxSurge, desired, true);
  const unavailable = scaledValue(ru.maxUnavailable, desired, false);
  return surge === 0 && unavailable === 0 ? { surge, unavailable: 1 } : { surge, unavailable };
}

export function maxSurge(d: Deployment): number {
  return isRollingUpdate(d) ? resolveFenceposts(d).surge : 0;
}

export function maxUnavailable(d: Deployment): number {
  if (!isRollingUpdate(d) || replicasOf(d) === 0) return 0;
  return Math.min(resolveFenceposts(d).unavailable, replicasOf(d));
}

// ---- counting and ordering ReplicaSets

const sum = (rss: ReadonlyArray<ReplicaSet | undefined>, f: (rs: ReplicaSet) => number): number =>
  rss.reduce((n, rs) => n + (rs ? f(rs) : 0), 0);

/** Sum of `spec.replicas`. */
export const specReplicas = (rss: ReadonlyArray<ReplicaSet | undefined>): number => sum(rss, replicasOf);
/** Sum of `status.replicas`. */
export const actualReplicas = (rss: ReadonlyArray<ReplicaSet | undefined>): number =>
  sum(rss, (rs) => rs.status?.replicas ?? 0);
export const readyReplicas = (rss: ReadonlyArray<ReplicaSet | undefined>): number =>
  sum(rss, (rs) => rs.status?.readyReplicas ?? 0);
export const availableReplicas = (rss: ReadonlyArray<ReplicaSet | undefined>): number =>
  sum(rss, (rs) => rs.status?.availableReplicas ?? 0);

/** ReplicaSets with `spec.replicas` > 0. */
export const activeReplicaSets = (rss: ReadonlyArray<ReplicaSet | undefined>): ReplicaSet[] =>
  rss.filter((rs): rs is ReplicaSet => rs !== undefined && replicasOf(rs) > 0);

const created = (rs: ReplicaSet): number => Date.parse(rs.metadata.creationTimestamp ?? '') || 0;
const byName = (a: ReplicaSet, b: ReplicaSet): number =>
  (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : (a.metadata.name ?? '') > (b.metadata.name ?? '') ? 1 : 0;

/** Older first, then by name. */
export const byCreation = (a: ReplicaSet, b: ReplicaSet): number => created(a) - created(b) || byName(a, b);
/** Larger first; among equals older first (scale-down order). */
export const bySizeOlder = (a: ReplicaSet, b: ReplicaSet): number => replicasOf(b) - replicasOf(a) || byCreation(a, b);
/** Larger first; among equals newer first (scale-up order). */
export const bySizeNewer = (a: ReplicaSet, b: ReplicaSet): number => replicasOf(b) - replicasOf(a) || byCreation(b, a);
/** Lower revision first, then older. */
export const byRevision = (a: ReplicaSet, b: ReplicaSet): number =>
  (revisionOf(a) ?? 0) - (revisionOf(b) ?? 0) || byCreation(a, b);

// ---- templates and the pod-template hash

/**
 * A template with every false, 0, "", null, {} and [] field left out: the JSON stand-in for
 * Kubernetes comparing and hashing typed templates, where such a field and an absent one
 * decode alike (clients that round-trip a template through typed structs, as kubectl's
 * `rollout undo` does, drop them; the server's defaulting fills the fields where absent and
 * zero would differ).
 */
export function semanticTemplate(t: Partial<PodTemplateSpec> | undefined): unknown {
  return withoutZeroValues(t ?? {});
}

/** Templates equal (as `semanticTemplate`) apart from the `pod-template-hash` label. */
export function equalIgnoreHash(a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined): boolean {
  const strip = (t: PodTemplateSpec | undefined): unknown => {
    const c: Partial<PodTemplateSpec> = structuredClone(t ?? {});
    if (c.metadata?.labels) delete c.metadata.labels[podTemplateHashLabel()];
    return semanticTemplate(c);
  };
  return jsonEqual(strip(a), strip(b));
}

const SAFE_ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * The `pod-template-hash` of a template: FNV-32a, then the collision count as 4 little-endian
 * bytes, printed in decimal and mapped to Kubernetes' vowel-free alphabet (SafeEncodeString).
 * Differs from Kubernetes in what is hashed: the canonical JSON (keys sorted) of
 * `semanticTemplate(t)`, not Go's printout of the struct, so values differ from a Kubernetes
 * cluster's.
 */
export function computeHash(t: PodTemplateSpec | undefined, collisionCount?: number): string {
  let h = 0x811c9dc5;
  const feed = (bytes: Uint8Array): void => {
    for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  };
  feed(new TextEncoder().encode(canonicalJson(semanticTemplate(t))));
  if (collisionCount !== undefined) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, collisionCount >>> 0, true);
    feed(b);
  }
  return [...String(h >>> 0)].map((c) => SAFE_ALPHANUMS[c.charCodeAt(0) % SAFE_ALPHANUMS.length]).join('');
}

/** The ReplicaSet whose template equals the Deployment's (oldest first if several). */
export function findNewReplicaSet(d: Deployment, rsList: readonly ReplicaSet[]): ReplicaSet | undefined {
  return [...rsList].sort(byCreation).find((rs) => equalIgnoreHash(rs.spec.template, d.spec.template));
}

/** Every ReplicaSet but the new one (`all`), and those of them with pods wanted (`active`). */
export function findOldReplicaSets(
  d: Deployment,
  rsList: readonly ReplicaSet[],
): { active: ReplicaSet[]; all: ReplicaSet[] } {
  const newRS = findNewReplicaSet(d, rsList);
  const all = rsList.filter((rs) => rs.metadata.uid !== newRS?.metadata.uid);
  return { active: all.filter((rs) => replicasOf(rs) !== 0), all };
}

// ---- revisions and replica annotations

/** The revision annotation as a number: 0 when absent, undefined when unparsable. */
export function revisionOf(o: { metadata: { annotations?: Record<string, string> } }): number | undefined {
  const v = o.metadata.annotations?.[deploymentAnnotation('revision')];
  if (v === undefined || v === '') return 0;
  return /^[+-]?[0-9]+$/.test(v) ? Number(v) : undefined;
}

export function maxRevision(rss: readonly ReplicaSet[]): number {
  return rss.reduce((m, rs) => Math.max(m, revisionOf(rs) ?? 0), 0);
}

/** Annotations a Deployment does not pass on to its ReplicaSets. */
function skipCopy(key: string): boolean {
  return (
    key === naming().lastAppliedAnnotation ||
    key === 'deprecated.deployment.rollback.to' ||
    (['revision', 'revision-history', 'desired-replicas', 'max-replicas'] as const).some(
      (n) => deploymentAnnotation(n) === key,
    )
  );
}

/** Sets `desired-replicas` and `max-replicas` on `rs` (mutated); true when either changed. */
export function setReplicasAnnotations(rs: ReplicaSet, desired: number, max: number): boolean {
  const a = (rs.metadata.annotations ??= {});
  let changed = false;
  for (const [k, v] of [
    [deploymentAnnotation('desired-replicas'), String(desired)],
    [deploymentAnnotation('max-replicas'), String(max)],
  ] as const) {
    if (a[k] !== v) {
      a[k] = v;
      changed = true;
    }
  }
  return changed;
}

export function replicasAnnotationsNeedUpdate(rs: ReplicaSet, desired: number, max: number): boolean {
  const a = rs.metadata.annotations ?? {};
  return (
    a[deploymentAnnotation('desired-replicas')] !== String(desired) ||
    a[deploymentAnnotation('max-replicas')] !== String(max)
  );
}

/**
 * Brings the new ReplicaSet's annotations up to date (`rs` is mutated): the Deployment's own
 * annotations, `revision` raised to `newRevision` (the old one appended to `revision-history`
 * when this is a rollback to it), and for a ReplicaSet about to be created the replica
 * annotations. True when anything changed.
 */
export function setNewReplicaSetAnnotations(
  d: Deployment,
  rs: ReplicaSet,
  { newRevision, exists }: { newRevision: number; exists: boolean },
): boolean {
  const a = (rs.metadata.annotations ??= {});
  let changed = false;
  for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) {
    if (skipCopy(k) || a[k] === v) continue;
    a[k] = v;
    changed = true;
  }
  const revKey = deploymentAnnotation('revision');
  const oldRevision = a[revKey];
  const old = revisionOf(rs);
  // An unparsable revision is left alone, and nothing reported changed (as Kubernetes).
  if (old === undefined) return false;
  if (old < newRevision) {
    a[revKey] = String(newRevision);
    changed = true;
    if (oldRevision !== undefined) {
      const histKey = deploymentAnnotation('revision-history');
      const history = (a[histKey] ?? '').split(',').filter((s) => s !== '');
      history.push(oldRevision);
      while (history.join(',').length > MAX_REVISION_HISTORY_CHARS && history.length > 1) history.shift();
      if (history.join(',').length <= MAX_REVISION_HISTORY_CHARS) a[histKey] = history.join(',');
    }
  }
  if (!exists && setReplicasAnnotations(rs, replicasOf(d), replicasOf(d) + maxSurge(d))) changed = true;
  return changed;
}

/** Sets the Deployment's revision annotation (mutates `d`); true when it changed. */
export function setDeploymentRevision(d: Deployment, revision: string | undefined): boolean {
  if (revision === undefined) return false;
  const a = (d.metadata.annotations ??= {});
  if (a[deploymentAnnotation('revision')] === revision) return false;
  a[deploymentAnnotation('revision')] = revision;
  return true;
}

// ---- scaling

/** How many replicas the new ReplicaSet may have now (Kubernetes' NewRSNewReplicas). */
export function newRSNewReplicas(
  d: Deployment,
  allRSs: ReadonlyArray<ReplicaSet | undefined>,
  newRS: ReplicaSet,
): number {
  if (!isRollingUpdate(d)) return replicasOf(d);
  const surge = scaledValue(d.spec.strategy?.rollingUpdate?.maxSurge, replicasOf(d), true);
  const current = specReplicas(allRSs);
  const maxTotal = replicasOf(d) + surge;
  if (current >= maxTotal) return replicasOf(newRS);
  return replicasOf(newRS) + Math.min(maxTotal - current, replicasOf(d) - replicasOf(newRS));
}

/** The only active ReplicaSet, or with none active the new one or else the newest old one; undefined when several are active. */
export function findActiveOrLatest(
  newRS: ReplicaSet | undefined,
  oldRSs: readonly ReplicaSet[],
): ReplicaSet | undefined {
  if (!newRS && oldRSs.length === 0) return undefined;
  const newestOld = [...oldRSs].sort((a, b) => byCreation(b, a));
  const active = activeReplicaSets([...newestOld, newRS]);
  if (active.length === 0) return newRS ?? newestOld[0];
  return active.length === 1 ? active[0] : undefined;
}

/** The new ReplicaSet runs every replica the Deployment wants, all available. */
export function isSaturated(d: Deployment, rs: ReplicaSet | undefined): boolean {
  if (!rs) return false;
  const desired = rs.metadata.annotations?.[deploymentAnnotation('desired-replicas')];
  return (
    desired !== undefined &&
    /^[0-9]+$/.test(desired) &&
    Number(desired) === replicasOf(d) &&
    replicasOf(rs) === replicasOf(d) &&
    (rs.status?.availableReplicas ?? 0) === replicasOf(d)
  );
}

/** Go's math.Round: halves away from zero. */
const roundHalfAway = (x: number): number => Math.sign(x) * Math.round(Math.abs(x));

/**
 * The change of `rs`'s size in a proportional scale of the Deployment: its share of the new
 * total (from its `max-replicas` annotation, else the Deployment's status.replicas), bounded
 * by what is still to add or remove (Kubernetes' GetProportion).
 */
export function proportion(rs: ReplicaSet, d: Deployment, { toAdd, added }: { toAdd: number; added: number }): number {
  if (replicasOf(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  let fraction: number;
  if (replicasOf(d) === 0) fraction = -replicasOf(rs);
  else {
    const total = replicasOf(d) + maxSurge(d);
    const annotated = Number(rs.metadata.annotations?.[deploymentAnnotation('max-replicas')]);
    const base = Number.isInteger(annotated) ? annotated : (d.status?.replicas ?? 0);
    fraction = roundHalfAway((replicasOf(rs) * total) / base) - replicasOf(rs);
  }
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

// ---- conditions and status

export function getCondition(st: DeploymentStatus | undefined, type: string): DeploymentCondition | undefined {
  return st?.conditions?.find((c) => c.type === type);
}

/** `c` with both times set to `nowMs`. */
export function newCondition(
  { type, status, reason, message }: Pick<DeploymentCondition, 'type' | 'status' | 'reason' | 'message'>,
  nowMs = Date.now(),
): DeploymentCondition {
  const t = nowTime(nowMs);
  return { type, status, lastUpdateTime: t, lastTransitionTime: t, reason, message };
}

/** Adds or replaces `c` (mutates `st`); a condition with the same status and reason is left as it is, and an unchanged status keeps its transition time. */
export function setCondition(st: DeploymentStatus, c: DeploymentCondition): void {
  const cur = getCondition(st, c.type);
  if (cur && cur.status === c.status && cur.reason === c.reason) return;
  const next = cur && cur.status === c.status ? { ...c, lastTransitionTime: cur.lastTransitionTime } : c;
  st.conditions = [...(st.conditions ?? []).filter((x) => x.type !== c.type), next];
}

export function removeCondition(st: DeploymentStatus, type: string): void {
  st.conditions = (st.conditions ?? []).filter((x) => x.type !== type);
}

/** The Deployment's status from its ReplicaSets, keeping its conditions and setting `Available` (Kubernetes' calculateStatus). */
export function calculateStatus(
  d: Deployment,
  { allRSs, newRS }: { allRSs: ReadonlyArray<ReplicaSet | undefined>; newRS: ReplicaSet | undefined },
  nowMs = Date.now(),
): DeploymentStatus {
  const available = availableReplicas(allRSs);
  const st: DeploymentStatus = {
    observedGeneration: d.metadata.generation,
    replicas: actualReplicas(allRSs),
    updatedReplicas: actualReplicas([newRS]),
    readyReplicas: readyReplicas(allRSs),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, specReplicas(allRSs) - available),
    conditions: (d.status?.conditions ?? []).map((c) => ({ ...c })),
    collisionCount: d.status?.collisionCount,
  };
  if (available >= replicasOf(d) - maxUnavailable(d)) {
    setCondition(
      st,
      newCondition(
        {
          type: 'Available',
          status: 'True',
          reason: REASON.minimumAvailable,
          message: 'Deployment has minimum availability.',
        },
        nowMs,
      ),
    );
  } else {
    setCondition(
      st,
      newCondition(
        {
          type: 'Available',
          status: 'False',
          reason: REASON.minimumUnavailable,
          message: 'Deployment does not have minimum availability.',
        },
        nowMs,
      ),
    );
  }
  return st;
}

export function hasProgressDeadline(d: Deployment): boolean {
  return d.spec.progressDeadlineSeconds !== undefined && d.spec.progressDeadlineSeconds !== NO_DEADLINE;
}

/** Every wanted replica is updated and available, and the status is for the current generation. */
export function deploymentComplete(d: Deployment, st: DeploymentStatus): boolean {
  const n = replicasOf(d);
  return (
    (st.updatedReplicas ?? 0) === n &&
    (st.replicas ?? 0) === n &&
    (st.availableReplicas ?? 0) === n &&
    (st.observedGeneration ?? 0) >= (d.metadata.generation ?? 0)
  );
}

/** `st` shows progress over the Deployment's stored status: more updated, ready or available replicas, or fewer old ones. */
export function deploymentProgressing(d: Deployment, st: DeploymentStatus): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (st.replicas ?? 0) - (st.updatedReplicas ?? 0);
  return (
    (st.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (st.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
    (st.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
  );
}

/** The last progress (Progressing's lastUpdateTime) is older than progressDeadlineSeconds. */
export function deploymentTimedOut(d: Deployment, st: DeploymentStatus, nowMs = Date.now()): boolean {
  if (!hasProgressDeadline(d)) return false;
  const c = getCondition(st, 'Progressing');
  if (!c || c.reason === REASON.newRSAvailable) return false;
  if (c.reason === REASON.timedOut) return true;
  const from = Date.parse(c.lastUpdateTime ?? '');
  return Number.isFinite(from) && from + (d.spec.progressDeadlineSeconds ?? 0) * 1000 < nowMs;
}

/** Drops zero counts and empty lists (Kubernetes' omitempty), so equal statuses compare equal on the wire. */
export function wireStatus(st: DeploymentStatus): DeploymentStatus {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(st)) {
    if (v === undefined || v === 0 || (Array.isArray(v) && v.length === 0)) continue;
    out[k] = v;
  }
  return out as DeploymentStatus;
}
