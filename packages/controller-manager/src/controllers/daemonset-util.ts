// Pure helpers of the daemonset controller, each named after and behaving as its Kubernetes
// v1.32 counterpart (pkg/controller/daemon and its util package) unless its comment says otherwise.
import {
  nodeTaintKey,
  type Affinity,
  type ApiObject,
  type ControllerRevision,
  type DaemonSet,
  type DaemonSetStatus,
  type Node,
  type Pod,
  type PodSpec,
  type PodTemplateSpec,
  type Toleration,
} from '@svc/api';
import { jsonEqual, podMatchesNode } from '@svc/machinery';
import { newControllerRef } from './controller-ref.js';
import { computeHash, scaledValue, semanticTemplate } from './deployment-util.js';
import { toleratesTaint } from './node-taints.js';
import { isPodAvailable, isPodReady } from './pod-util.js';

/** Label of pods and ControllerRevisions: the hash of the template they were made from. */
export const REVISION_HASH_LABEL = 'controller-revision-hash';
/** Label of pods: the DaemonSet's template generation when they were made. */
export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';
/** The apps/v1 spelling of the DaemonSet's template generation (the server keeps it). */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

/** The template generation, undefined when absent or unparsable (Kubernetes' GetTemplateGeneration). */
export function templateGeneration(ds: DaemonSet): number | undefined {
  const v = ds.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
  return v !== undefined && /^[0-9]+$/.test(v) ? Number(v) : undefined;
}

/** Kubernetes' MatchToleration: the same key, operator, value and effect. */
const sameToleration = (a: Toleration, b: Toleration): boolean =>
  (a.key ?? '') === (b.key ?? '') &&
  (a.operator ?? '') === (b.operator ?? '') &&
  (a.value ?? '') === (b.value ?? '') &&
  (a.effect ?? '') === (b.effect ?? '');

/**
 * Kubernetes' AddOrUpdateDaemonPodTolerations: daemon pods tolerate not-ready and unreachable
 * (NoExecute, forever), disk/memory/pid pressure and unschedulable (NoSchedule), and with
 * host networking network-unavailable. Mutates `spec`.
 */
export function addDaemonPodTolerations(spec: PodSpec): void {
  const wanted: Toleration[] = [
    { key: nodeTaintKey('not-ready'), operator: 'Exists', effect: 'NoExecute' },
    { key: nodeTaintKey('unreachable'), operator: 'Exists', effect: 'NoExecute' },
    { key: nodeTaintKey('disk-pressure'), operator: 'Exists', effect: 'NoSchedule' },
    { key: nodeTaintKey('memory-pressure'), operator: 'Exists', effect: 'NoSchedule' },
    { key: nodeTaintKey('pid-pressure'), operator: 'Exists', effect: 'NoSchedule' },
    { key: nodeTaintKey('unschedulable'), operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (spec.hostNetwork)
    wanted.push({ key: nodeTaintKey('network-unavailable'), operator: 'Exists', effect: 'NoSchedule' });
  const tolerations = (spec.tolerations ??= []);
  for (const t of wanted) {
    const i = tolerations.findIndex((x) => sameToleration(x, t));
    if (i < 0) tolerations.push(t);
    else tolerations[i] = t;
  }
}

/** The first taint with one of `effects` that no toleration tolerates (Kubernetes' FindMatchingUntoleratedTaint). */
function hasUntoleratedTaint(node: Node, tolerations: readonly Toleration[], effects: readonly string[]): boolean {
  return (node.spec?.taints ?? []).some(
    (taint) => effects.includes(taint.effect) && !tolerations.some((t) => toleratesTaint(t, taint)),
  );
}

/**
 * Kubernetes' NodeShouldRunDaemonPod: whether a daemon pod should be created on `node`
 * (name, nodeSelector, required node affinity, NoSchedule/NoExecute taints tolerated with the
 * daemon tolerations added) and whether one there may keep running (only NoExecute taints matter).
 */
export function nodeShouldRunDaemonPod(
  node: Node,
  ds: DaemonSet,
): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const name = node.metadata.name ?? '';
  const spec = structuredClone(ds.spec.template.spec ?? { containers: [] });
  if (spec.nodeName && spec.nodeName !== name) return { shouldRun: false, shouldContinueRunning: false };
  addDaemonPodTolerations(spec);
  const pod: Pod = { metadata: { namespace: ds.metadata.namespace }, spec: { ...spec, nodeName: name } };
  if (!podMatchesNode(pod, node)) return { shouldRun: false, shouldContinueRunning: false };
  const tolerations = spec.tolerations ?? [];
  if (hasUntoleratedTaint(node, tolerations, ['NoSchedule', 'NoExecute']))
    return { shouldRun: false, shouldContinueRunning: !hasUntoleratedTaint(node, tolerations, ['NoExecute']) };
  return { shouldRun: true, shouldContinueRunning: true };
}

/**
 * Kubernetes' ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes the
 * one term `metadata.name In [node]`, so the scheduler places the pod on that node.
 */
export function affinityForNode(affinity: Affinity | undefined, nodeName: string): Affinity {
  const required = {
    nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }],
  };
  const out: Affinity = structuredClone(affinity ?? {});
  out.nodeAffinity = { ...(out.nodeAffinity ?? {}), requiredDuringSchedulingIgnoredDuringExecution: required };
  return out;
}

/**
 * The node a daemon pod is for: `spec.nodeName`, else the single `metadata.name In [node]`
 * field term of its required node affinity (Kubernetes' GetTargetNodeName).
 */
export function targetNodeName(pod: Pod): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  for (const t of terms ?? []) {
    for (const f of t.matchFields ?? []) {
      if (f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1) return f.values[0];
    }
  }
  return undefined;
}

/** The template a daemon pod is made from (Kubernetes' CreatePodTemplate): daemon tolerations, generation and hash labels. */
export function daemonPodTemplate(ds: DaemonSet, hash: string): PodTemplateSpec {
  const t: PodTemplateSpec = structuredClone(ds.spec.template);
  t.spec ??= { containers: [] };
  addDaemonPodTolerations(t.spec);
  const labels = ((t.metadata ??= {}).labels ??= {});
  const generation = templateGeneration(ds);
  if (generation !== undefined) labels[TEMPLATE_GENERATION_LABEL] = String(generation);
  if (hash) labels[REVISION_HASH_LABEL] = hash;
  return t;
}

/** Kubernetes' IsPodUpdated: the pod carries the current hash or the current template generation. */
export function isPodUpdated(pod: Pod, hash: string, generation: number | undefined): boolean {
  const labels = pod.metadata.labels ?? {};
  return (
    (hash !== '' && labels[REVISION_HASH_LABEL] === hash) ||
    (generation !== undefined && labels[TEMPLATE_GENERATION_LABEL] === String(generation))
  );
}

const created = (p: Pod): number => Date.parse(p.metadata.creationTimestamp ?? '') || 0;

/** Scheduled pods first, then older first, then by name (Kubernetes' podByCreationTimestampAndPhase). */
export function byCreationAndPhase(a: Pod, b: Pod): number {
  const sa = a.spec?.nodeName ? 0 : 1;
  const sb = b.spec?.nodeName ? 0 : 1;
  if (sa !== sb) return sa - sb;
  if (created(a) !== created(b)) return created(a) - created(b);
  const na = a.metadata.name ?? '';
  const nb = b.metadata.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}

// ---- history

/** A workload whose history is its pod template (DaemonSet, StatefulSet). */
export interface TemplatedWorkload {
  spec: { template: PodTemplateSpec };
}

/**
 * A ControllerRevision's `data` for `ds` (Kubernetes' getPatch, for DaemonSets and StatefulSets
 * alike): a strategic-merge patch that replaces `spec.template`; `kubectl rollout undo` sends it
 * back as it is.
 */
export function revisionData(ds: TemplatedWorkload): { spec: { template: Record<string, unknown> } } {
  return { spec: { template: { ...structuredClone(ds.spec.template), $patch: 'replace' } } };
}

/**
 * Kubernetes' NewControllerRevision for a templated workload: `<owner>-<hash>` (the hash of its
 * template and `collisionCount`), the template's labels plus `controller-revision-hash`, the
 * owner's annotations, controlled by the owner, `data` the template patch.
 */
export function newControllerRevision(
  owner: TemplatedWorkload & ApiObject,
  o: { kind: 'DaemonSet' | 'StatefulSet'; revision: number; collisionCount?: number },
): ControllerRevision {
  const hash = computeHash(owner.spec.template, o.collisionCount);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: `${owner.metadata.name ?? ''}-${hash}`,
      namespace: owner.metadata.namespace,
      labels: { ...(owner.spec.template.metadata?.labels ?? {}), [REVISION_HASH_LABEL]: hash },
      ...(owner.metadata.annotations ? { annotations: { ...owner.metadata.annotations } } : {}),
      ownerReferences: [newControllerRef(owner, 'apps/v1', o.kind)],
    },
    data: revisionData(owner),
    revision: o.revision,
  };
}

/**
 * Whether `rev` holds `ds`'s template (Kubernetes' Match compares the patch bytes; here the
 * templates are compared as `semanticTemplate`, so a revision written by a client that left out
 * empty fields still matches).
 */
export function matchesRevision(ds: TemplatedWorkload, rev: ControllerRevision): boolean {
  const data = rev.data as { spec?: { template?: Record<string, unknown> } } | undefined;
  const { $patch: _directive, ...template } = data?.spec?.template ?? {};
  return jsonEqual(semanticTemplate(template), semanticTemplate(ds.spec.template));
}

// ---- rolling update

/** Daemon pods by target node (Kubernetes' getNodesToDaemonPods over claimed pods). */
export type NodePods = Map<string, Pod[]>;

export function groupByNode(pods: readonly Pod[]): NodePods {
  const out: NodePods = new Map();
  for (const p of pods) {
    const node = targetNodeName(p);
    if (node === undefined) continue;
    const list = out.get(node) ?? [];
    list.push(p);
    out.set(node, list);
  }
  return out;
}

/** Kubernetes' AllowsSurge: a RollingUpdate whose maxSurge is not 0. */
export function allowsSurge(ds: DaemonSet): boolean {
  const ru = ds.spec.updateStrategy?.rollingUpdate;
  return ds.spec.updateStrategy?.type === 'RollingUpdate' && scaledValue(ru?.maxSurge, 100, true) !== 0;
}

/** maxSurge and maxUnavailable of `desired` nodes, percentages rounded up; both 0 make maxUnavailable 1 (Kubernetes' updatedDesiredNodeCounts). */
export function surgeAndUnavailable(ds: DaemonSet, desired: number): { maxSurge: number; maxUnavailable: number } {
  const ru = ds.spec.updateStrategy?.rollingUpdate;
  const maxSurge = allowsSurge(ds) ? scaledValue(ru?.maxSurge, desired, true) : 0;
  const maxUnavailable = scaledValue(ru?.maxUnavailable, desired, true);
  return { maxSurge, maxUnavailable: maxSurge === 0 && maxUnavailable === 0 ? 1 : maxUnavailable };
}

/** The one current and one old pod on a node, or undefined when there are more (Kubernetes' findUpdatedPodsOnNode). */
export function updatedPodsOnNode(
  pods: readonly Pod[],
  hash: string,
  generation: number | undefined,
): { newPod?: Pod; oldPod?: Pod } | undefined {
  let newPod: Pod | undefined;
  let oldPod: Pod | undefined;
  for (const p of pods) {
    if (p.metadata.deletionTimestamp) continue;
    if (isPodUpdated(p, hash, generation)) {
      if (newPod) return undefined;
      newPod = p;
    } else {
      if (oldPod) return undefined;
      oldPod = p;
    }
  }
  return { newPod, oldPod };
}

export interface RollingUpdatePlan {
  /** Names of old pods to delete. */
  deletePods: string[];
  /** Nodes to create a new pod on (surge). */
  createOn: string[];
}

export interface RollingUpdateInput {
  ds: DaemonSet;
  nodes: readonly Node[];
  nodePods: NodePods;
  hash: string;
  nowMs: number;
}

/**
 * Kubernetes' rollingUpdate: without surge, old pods are deleted while no more than
 * maxUnavailable nodes lack an available current pod (unavailable old pods are replaced at
 * once) and the manage loop recreates them; with surge, a new pod is created beside an old one
 * on up to maxSurge nodes at a time (at once where the old one is unavailable), and the old pod
 * is deleted when the new one is available.
 */
export function planRollingUpdate({ ds, nodes, nodePods, hash, nowMs }: RollingUpdateInput): RollingUpdatePlan {
  const generation = templateGeneration(ds);
  const minReady = ds.spec.minReadySeconds ?? 0;
  const available = (p: Pod): boolean => isPodAvailable(p, minReady, nowMs);
  const byName = new Map(nodes.map((n) => [n.metadata.name ?? '', n]));
  const desired = nodes.filter((n) => nodeShouldRunDaemonPod(n, ds).shouldRun).length;
  const { maxSurge, maxUnavailable } = surgeAndUnavailable(ds, desired);
  const nodeNames = [...nodePods.keys()].sort();
  if (maxSurge === 0) {
    let unavailable = 0;
    const replace: string[] = [];
    const candidates: string[] = [];
    for (const node of nodeNames) {
      const found = updatedPodsOnNode(nodePods.get(node) ?? [], hash, generation);
      if (!found) {
        unavailable++;
        continue;
      }
      const { newPod, oldPod } = found;
      if ((!oldPod && !newPod) || (oldPod && newPod)) unavailable++;
      else if (newPod) {
        if (!available(newPod)) unavailable++;
      } else if (oldPod) {
        if (!available(oldPod)) replace.push(oldPod.metadata.name ?? '');
        else if (unavailable < maxUnavailable) candidates.push(oldPod.metadata.name ?? '');
      }
    }
    const room = Math.min(Math.max(0, maxUnavailable - unavailable), candidates.length);
    return { deletePods: [...replace, ...candidates.slice(0, room)], createOn: [] };
  }
  const deletePods: string[] = [];
  const allowedNew: string[] = [];
  const candidateNew: string[] = [];
  let surging = 0;
  for (const node of nodeNames) {
    const found = updatedPodsOnNode(nodePods.get(node) ?? [], hash, generation);
    if (!found) {
      surging++;
      continue;
    }
    const { newPod, oldPod } = found;
    if (!oldPod) continue;
    if (newPod) {
      if (available(newPod)) deletePods.push(oldPod.metadata.name ?? '');
      else surging++;
      continue;
    }
    const n = byName.get(node);
    const shouldRun = n ? nodeShouldRunDaemonPod(n, ds).shouldRun : false;
    if (!shouldRun) deletePods.push(oldPod.metadata.name ?? '');
    else if (!available(oldPod)) allowedNew.push(node);
    else if (surging < maxSurge) candidateNew.push(node);
  }
  const room = Math.min(Math.max(0, maxSurge - surging), candidateNew.length);
  return { deletePods, createOn: [...allowedNew, ...candidateNew.slice(0, room)] };
}

// ---- status

/** Kubernetes' updateDaemonSetStatus counts, over every node and the oldest daemon pod on each. */
export function calculateDaemonSetStatus({ ds, nodes, nodePods, hash, nowMs }: RollingUpdateInput): DaemonSetStatus {
  const generation = templateGeneration(ds);
  let desired = 0;
  let current = 0;
  let misscheduled = 0;
  let ready = 0;
  let available = 0;
  let updated = 0;
  for (const node of nodes) {
    const pods = [...(nodePods.get(node.metadata.name ?? '') ?? [])].sort(byCreationAndPhase);
    const { shouldRun } = nodeShouldRunDaemonPod(node, ds);
    const pod = pods[0];
    if (!shouldRun) {
      if (pod) misscheduled++;
      continue;
    }
    desired++;
    if (!pod) continue;
    current++;
    if (isPodReady(pod)) {
      ready++;
      if (isPodAvailable(pod, ds.spec.minReadySeconds ?? 0, nowMs)) available++;
    }
    if (isPodUpdated(pod, hash, generation)) updated++;
  }
  return {
    desiredNumberScheduled: desired,
    currentNumberScheduled: current,
    numberMisscheduled: misscheduled,
    numberReady: ready,
    updatedNumberScheduled: updated,
    numberAvailable: available,
    numberUnavailable: desired - available,
  };
}
