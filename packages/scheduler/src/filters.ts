import { nodeTaintKey, type Pod, type Taint, type Toleration } from '@svc/api';
import { podMatchesNode } from '@svc/machinery';
import { hostPorts, podRequests, type NodeInfo, type Resources } from './node-info.js';

/**
 * Why a node does not fit (Kubernetes' framework.Status of a Filter plugin):
 * `Unschedulable` may change by preempting pods on the node; `UnschedulableAndUnresolvable` cannot.
 */
export interface FilterStatus {
  plugin: string;
  code: 'Unschedulable' | 'UnschedulableAndUnresolvable';
  reasons: string[];
}

/** What the filters compute once per pod and scheduling cycle (Kubernetes' PreFilter state). */
export interface PodState {
  pod: Pod;
  requests: Resources;
  ports: ReturnType<typeof hostPorts>;
}

export function podState(pod: Pod): PodState {
  return { pod, requests: podRequests(pod), ports: hostPorts(pod) };
}

export interface FilterPlugin {
  name: string;
  filter(s: PodState, n: NodeInfo): FilterStatus | undefined;
}

/** Kubernetes' Toleration.ToleratesTaint: an empty effect or key matches any; an empty operator means Equal. */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? '') {
    case '':
    case 'Equal':
      return (t.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

export function toleratedBy(tolerations: readonly Toleration[] | undefined, taint: Taint): boolean {
  return (tolerations ?? []).some((t) => toleratesTaint(t, taint));
}

const unresolvable = (plugin: string, reason: string): FilterStatus => ({
  plugin,
  code: 'UnschedulableAndUnresolvable',
  reasons: [reason],
});

/** Kubernetes' NodeUnschedulable: `spec.unschedulable` nodes, unless the pod tolerates the unschedulable NoSchedule taint. */
const nodeUnschedulable: FilterPlugin = {
  name: 'NodeUnschedulable',
  filter: (s, n) => {
    if (!n.node?.spec?.unschedulable) return undefined;
    if (toleratedBy(s.pod.spec?.tolerations, { key: nodeTaintKey('unschedulable'), effect: 'NoSchedule' }))
      return undefined;
    return unresolvable('NodeUnschedulable', 'node(s) were unschedulable');
  },
};

/** Kubernetes' NodeName: a pod that names a node fits only there. */
const nodeName: FilterPlugin = {
  name: 'NodeName',
  filter: (s, n) =>
    s.pod.spec?.nodeName && s.pod.spec.nodeName !== n.name
      ? unresolvable('NodeName', "node(s) didn't match the requested node name")
      : undefined,
};

/** Kubernetes' TaintToleration filter: every NoSchedule and NoExecute taint must be tolerated; the first that is not is reported. */
const taintToleration: FilterPlugin = {
  name: 'TaintToleration',
  filter: (s, n) => {
    for (const taint of n.node?.spec?.taints ?? []) {
      if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
      if (!toleratedBy(s.pod.spec?.tolerations, taint)) {
        return unresolvable('TaintToleration', `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`);
      }
    }
    return undefined;
  },
};

/** Kubernetes' NodeAffinity filter: `spec.nodeSelector` and required node affinity. */
const nodeAffinity: FilterPlugin = {
  name: 'NodeAffinity',
  filter: (s, n) =>
    n.node && podMatchesNode(s.pod, n.node)
      ? undefined
      : unresolvable('NodeAffinity', "node(s) didn't match Pod's node affinity/selector"),
};

/** Kubernetes' NodePorts: a host port (protocol, port) conflicts when the IPs are equal or either is 0.0.0.0. */
const nodePorts: FilterPlugin = {
  name: 'NodePorts',
  filter: (s, n) => {
    const used = n.usedPorts;
    const conflict = s.ports.some((want) =>
      used.some(
        (u) =>
          u.protocol === want.protocol &&
          u.port === want.port &&
          (u.ip === want.ip || u.ip === '0.0.0.0' || want.ip === '0.0.0.0'),
      ),
    );
    return conflict
      ? {
          plugin: 'NodePorts',
          code: 'Unschedulable',
          reasons: ["node(s) didn't have free ports for the requested pod ports"],
        }
      : undefined;
  },
};

/**
 * Kubernetes' NodeResourcesFit filter: one more pod than `allocatable.pods` is "Too many pods";
 * each requested resource (when > 0) must fit into allocatable minus what the node's pods request.
 */
const nodeResourcesFit: FilterPlugin = {
  name: 'NodeResourcesFit',
  filter: (s, n) => {
    const reasons: string[] = [];
    if (n.pods.size + 1 > n.allocatable('pods')) reasons.push('Too many pods');
    const requested = n.requested;
    const names = [...s.requests.keys()]
      .filter((k) => k !== 'pods')
      .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    for (const r of names) {
      const want = s.requests.get(r) ?? 0;
      if (want > 0 && want > n.allocatable(r) - (requested.get(r) ?? 0)) reasons.push(`Insufficient ${r}`);
    }
    return reasons.length > 0 ? { plugin: 'NodeResourcesFit', code: 'Unschedulable', reasons } : undefined;
  },
};

/** Kubernetes checks cpu, memory and ephemeral storage first, then the other (scalar) resources. */
function rank(resource: string): number {
  const i = ['cpu', 'memory', 'ephemeral-storage'].indexOf(resource);
  return i < 0 ? 3 : i;
}

/** The default profile's filters in Kubernetes' order; a node fails at the first that refuses it. */
export const FILTERS: readonly FilterPlugin[] = [
  nodeUnschedulable,
  nodeName,
  taintToleration,
  nodeAffinity,
  nodePorts,
  nodeResourcesFit,
];

export function runFilters(
  s: PodState,
  n: NodeInfo,
  filters: readonly FilterPlugin[] = FILTERS,
): FilterStatus | undefined {
  for (const f of filters) {
    const st = f.filter(s, n);
    if (st) return st;
  }
  return undefined;
}
