// Pure helpers of the statefulset controller, each named after and behaving as its Kubernetes
// v1.32 counterpart (pkg/controller/statefulset/stateful_set_utils.go) unless its comment says otherwise.
import {
  statefulSetPodLabel,
  type ControllerRevision,
  type OwnerReference,
  type PersistentVolumeClaim,
  type Pod,
  type PodTemplateSpec,
  type StatefulSet,
  type StatefulSetStatus,
} from '@svc/api';
import { newControllerRef } from './controller-ref.js';
import { REVISION_HASH_LABEL } from './daemonset-util.js';
import { isPodAvailable, isPodReady } from './pod-util.js';

const ORDINAL = /^(.*)-([0-9]+)$/;

/** The parent's name and ordinal a pod's name encodes, or undefined (Kubernetes' getParentNameAndOrdinal). */
export function parentAndOrdinal(pod: Pod): { parent: string; ordinal: number } | undefined {
  const m = ORDINAL.exec(pod.metadata.name ?? '');
  if (!m) return undefined;
  const ordinal = Number(m[2]);
  return Number.isSafeInteger(ordinal) ? { parent: m[1] ?? '', ordinal } : undefined;
}

export const ordinalOf = (pod: Pod): number => parentAndOrdinal(pod)?.ordinal ?? -1;

/** The pod is named as one of the set's (Kubernetes' isMemberOf). */
export const isMemberOf = (set: StatefulSet, pod: Pod): boolean => parentAndOrdinal(pod)?.parent === set.metadata.name;

export const replicasOfSet = (set: StatefulSet): number => set.spec.replicas ?? 1;
/** `spec.ordinals.start`, 0 when unset (Kubernetes' getStartOrdinal). */
export const startOrdinal = (set: StatefulSet): number => set.spec.ordinals?.start ?? 0;
/** The last ordinal in range (Kubernetes' getEndOrdinal). */
export const endOrdinal = (set: StatefulSet): number => startOrdinal(set) + replicasOfSet(set) - 1;
export const podInOrdinalRange = (pod: Pod, set: StatefulSet): boolean => {
  const o = ordinalOf(pod);
  return o >= startOrdinal(set) && o <= endOrdinal(set);
};

export const podName = (set: StatefulSet, ordinal: number): string => `${set.metadata.name ?? ''}-${ordinal}`;
/** `<template>-<set>-<ordinal>` (Kubernetes' getPersistentVolumeClaimName). */
export const claimName = (set: StatefulSet, template: string, ordinal: number): string =>
  `${template}-${set.metadata.name ?? ''}-${ordinal}`;

export const isCreated = (p: Pod): boolean => (p.status?.phase ?? '') !== '';
export const isPending = (p: Pod): boolean => p.status?.phase === 'Pending';
export const isFailed = (p: Pod): boolean => p.status?.phase === 'Failed';
export const isSucceeded = (p: Pod): boolean => p.status?.phase === 'Succeeded';
export const isTerminating = (p: Pod): boolean => !!p.metadata.deletionTimestamp;
export const isRunningAndReady = (p: Pod): boolean => p.status?.phase === 'Running' && isPodReady(p);
export const isRunningAndAvailable = (p: Pod, minReadySeconds: number, nowMs: number): boolean =>
  p.status?.phase === 'Running' && isPodAvailable(p, minReadySeconds, nowMs);
/** Running and Ready and not being deleted (Kubernetes' isHealthy). */
export const isHealthy = (p: Pod): boolean => isRunningAndReady(p) && !isTerminating(p);
/** The revision a pod was made from: its `controller-revision-hash` label, a revision's name. */
export const podRevision = (p: Pod): string => p.metadata.labels?.[REVISION_HASH_LABEL] ?? '';
/** OrderedReady makes one pod at a time; Parallel bursts (Kubernetes' allowsBurst). */
export const allowsBurst = (set: StatefulSet): boolean => set.spec.podManagementPolicy === 'Parallel';

/** The claims a pod of the set mounts, by template name (Kubernetes' getPersistentVolumeClaims). */
export function claimsFor(set: StatefulSet, ordinal: number): Map<string, PersistentVolumeClaim> {
  const out = new Map<string, PersistentVolumeClaim>();
  for (const t of set.spec.volumeClaimTemplates ?? []) {
    const name = t.metadata.name ?? '';
    const labels = { ...(t.metadata.labels ?? {}), ...(set.spec.selector?.matchLabels ?? {}) };
    out.set(name, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: claimName(set, name, ordinal),
        namespace: set.metadata.namespace,
        labels,
        ...(t.metadata.annotations ? { annotations: { ...t.metadata.annotations } } : {}),
      },
      spec: structuredClone(t.spec ?? {}),
    });
  }
  return out;
}

/** Kubernetes' updateIdentity: name, hostname, subdomain, and the pod-name and pod-index labels. Mutates `pod`. */
export function updateIdentity(set: StatefulSet, pod: Pod, ordinal: number): void {
  const name = podName(set, ordinal);
  pod.metadata.name = name;
  pod.metadata.namespace = set.metadata.namespace;
  const labels = (pod.metadata.labels ??= {});
  labels[statefulSetPodLabel('pod-name')] = name;
  labels[statefulSetPodLabel('pod-index')] = String(ordinal);
  const spec = (pod.spec ??= { containers: [] });
  spec.hostname = name;
  if (set.spec.serviceName) spec.subdomain = set.spec.serviceName;
}

/** Kubernetes' updateStorage: a volume per claim template, naming the pod's claim (replacing a template volume of that name). Mutates `pod`. */
export function updateStorage(set: StatefulSet, pod: Pod, ordinal: number): void {
  const claims = claimsFor(set, ordinal);
  if (claims.size === 0) return;
  const spec = (pod.spec ??= { containers: [] });
  const volumes = (spec.volumes ?? []).filter((v) => !claims.has(v.name));
  for (const [name, claim] of claims)
    volumes.push({ name, persistentVolumeClaim: { claimName: claim.metadata.name ?? '' } });
  spec.volumes = volumes;
}

/** The pod's name, namespace, labels and hostname are the set's for its ordinal (Kubernetes' identityMatches). */
export function identityMatches(set: StatefulSet, pod: Pod): boolean {
  const po = parentAndOrdinal(pod);
  if (!po || po.parent !== set.metadata.name) return false;
  const labels = pod.metadata.labels ?? {};
  return (
    pod.metadata.name === podName(set, po.ordinal) &&
    pod.metadata.namespace === set.metadata.namespace &&
    labels[statefulSetPodLabel('pod-name')] === pod.metadata.name &&
    labels[statefulSetPodLabel('pod-index')] === String(po.ordinal)
  );
}

/** Every claim template is mounted as the pod's claim (Kubernetes' storageMatches). */
export function storageMatches(set: StatefulSet, pod: Pod): boolean {
  const ordinal = ordinalOf(pod);
  if (ordinal < 0) return false;
  const volumes = new Map((pod.spec?.volumes ?? []).map((v) => [v.name, v]));
  for (const [name, claim] of claimsFor(set, ordinal)) {
    const source = volumes.get(name)?.persistentVolumeClaim as { claimName?: string } | undefined;
    if (source?.claimName !== claim.metadata.name) return false;
  }
  return true;
}

/** Kubernetes' newStatefulSetPod: the template's pod, named and mounted for `ordinal`, controlled by the set. */
export function newStatefulSetPod(set: StatefulSet, template: PodTemplateSpec, ordinal: number): Pod {
  const t = structuredClone(template);
  const metadata: Pod['metadata'] = { ownerReferences: [newControllerRef(set, 'apps/v1', 'StatefulSet')] };
  if (t.metadata?.labels) metadata.labels = t.metadata.labels;
  if (t.metadata?.annotations) metadata.annotations = t.metadata.annotations;
  if (t.metadata?.finalizers) metadata.finalizers = t.metadata.finalizers;
  const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata, spec: t.spec ?? { containers: [] } };
  updateIdentity(set, pod, ordinal);
  updateStorage(set, pod, ordinal);
  return pod;
}

/** The template a revision holds (Kubernetes' ApplyRevision of the `spec.template` replace patch). */
export function revisionTemplate(rev: ControllerRevision): PodTemplateSpec | undefined {
  const data = rev.data as { spec?: { template?: Record<string, unknown> } } | undefined;
  if (!data?.spec?.template) return undefined;
  const { $patch: _directive, ...template } = data.spec.template;
  return structuredClone(template) as unknown as PodTemplateSpec;
}

function ownerRefTo(o: Pod | StatefulSet, apiVersion: string, kind: string): OwnerReference {
  return { apiVersion, kind, name: o.metadata.name ?? '', uid: o.metadata.uid ?? '' };
}

/**
 * Kubernetes' updateClaimOwnerRefForSetAndPod: the owner references a claim needs for the set's
 * persistentVolumeClaimRetentionPolicy (whenDeleted Delete: the set owns it; whenScaled Delete:
 * the pod owns it once the pod is out of range, so the garbage collector removes it with the
 * pod). Answers the new list, or undefined when the claim already has the right references.
 */
export function claimOwnerRefs(claim: PersistentVolumeClaim, set: StatefulSet, pod: Pod): OwnerReference[] | undefined {
  const policy = set.spec.persistentVolumeClaimRetentionPolicy ?? {};
  const deleteWithSet = policy.whenDeleted === 'Delete';
  const deleteWhenScaled = policy.whenScaled === 'Delete';
  const scaledDown = !podInOrdinalRange(pod, set);
  const wantSet = deleteWithSet && !(deleteWhenScaled && scaledDown);
  const wantPod = deleteWhenScaled && scaledDown && !!pod.metadata.uid;
  let refs = [...(claim.metadata.ownerReferences ?? [])];
  const before = JSON.stringify(refs);
  const toggle = (want: boolean, ref: OwnerReference): void => {
    const has = refs.some((r) => r.uid === ref.uid);
    if (want && !has) refs.push(ref);
    if (!want && has) refs = refs.filter((r) => r.uid !== ref.uid);
  };
  toggle(wantSet, ownerRefTo(set, 'apps/v1', 'StatefulSet'));
  toggle(wantPod, ownerRefTo(pod, 'v1', 'Pod'));
  return JSON.stringify(refs) === before ? undefined : refs;
}

/** A claim owned by a pod other than `pod` (one scaled away, waiting for the garbage collector): Kubernetes' hasStaleOwnerRef. */
export function claimIsStale(claim: PersistentVolumeClaim, pod: Pod): boolean {
  return (claim.metadata.ownerReferences ?? []).some(
    (r) => r.kind === 'Pod' && r.apiVersion === 'v1' && r.uid !== pod.metadata.uid,
  );
}

/** Kubernetes' computeReplicaStatus over the set's pods (those in range and condemned). */
export function replicaStatus(
  pods: readonly Pod[],
  o: { minReadySeconds: number; currentRevision: string; updateRevision: string; nowMs: number },
): Pick<StatefulSetStatus, 'replicas' | 'readyReplicas' | 'availableReplicas' | 'currentReplicas' | 'updatedReplicas'> {
  const st = { replicas: 0, readyReplicas: 0, availableReplicas: 0, currentReplicas: 0, updatedReplicas: 0 };
  for (const p of pods) {
    if (isCreated(p)) st.replicas++;
    if (isRunningAndReady(p)) {
      st.readyReplicas++;
      if (isRunningAndAvailable(p, o.minReadySeconds, o.nowMs)) st.availableReplicas++;
    }
    if (isCreated(p) && !isTerminating(p)) {
      if (podRevision(p) === o.currentRevision) st.currentReplicas++;
      if (podRevision(p) === o.updateRevision) st.updatedReplicas++;
    }
  }
  return st;
}
