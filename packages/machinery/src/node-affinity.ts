import type { Node, NodeSelectorRequirement, NodeSelectorTerm, Pod } from '@svc/api';

/** Go's strconv.ParseInt(v, 10, 64), as node selector `Gt`/`Lt` read label values. */
function parseInt64(v: string): number | undefined {
  return /^[+-]?\d+$/.test(v) ? Number(v) : undefined;
}

/** One label requirement (In, NotIn, Exists, DoesNotExist, Gt, Lt); an unknown operator or a malformed Gt/Lt value matches nothing. */
function matchesLabel(r: NodeSelectorRequirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = labels[r.key] ?? '';
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return has && values.includes(value);
    case 'NotIn':
      return !has || !values.includes(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      if (!has || values.length !== 1) return false;
      const have = parseInt64(value);
      const want = parseInt64(values[0] ?? '');
      if (have === undefined || want === undefined) return false;
      return r.operator === 'Gt' ? have > want : have < want;
    }
    default:
      return false;
  }
}

/** One field requirement: only `metadata.name` with In or NotIn (Kubernetes' node field selector). */
function matchesField(r: NodeSelectorRequirement, node: Node): boolean {
  if (r.key !== 'metadata.name') return false;
  const name = node.metadata.name ?? '';
  if (r.operator === 'In') return (r.values ?? []).includes(name);
  if (r.operator === 'NotIn') return !(r.values ?? []).includes(name);
  return false;
}

/** A term matches when all its requirements do; a term without any requirement matches nothing. */
export function matchesTerm(t: NodeSelectorTerm, node: Node): boolean {
  const exprs = t.matchExpressions ?? [];
  const fields = t.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  const labels = node.metadata.labels ?? {};
  return exprs.every((r) => matchesLabel(r, labels)) && fields.every((r) => matchesField(r, node));
}

/**
 * Kubernetes' NodeAffinity filter: every `spec.nodeSelector` label is on the node and, when
 * required node affinity is given, at least one of its terms matches.
 */
export function podMatchesNode(pod: Pod, node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  for (const [k, v] of Object.entries(pod.spec?.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return true;
  return (required.nodeSelectorTerms ?? []).some((t) => matchesTerm(t, node));
}

/** The summed weights of the preferred terms the node matches (Kubernetes' NodeAffinity score before normalizing). */
export function preferredAffinityWeight(pod: Pod, node: Node): number {
  let sum = 0;
  for (const p of pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []) {
    if (p.weight !== 0 && matchesTerm(p.preference, node)) sum += p.weight;
  }
  return sum;
}
