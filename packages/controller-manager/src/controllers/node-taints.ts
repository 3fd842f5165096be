import { isConflict, isNotFound, type Node, type NodeCondition, type Pod, type Taint, type Toleration } from '@svc/api';
import type { Informer, ResourceClient } from '@svc/client';

/** Now as the API's seconds-precision time. */
export function nowTime(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

export function nodeCondition(node: Node, type: string): NodeCondition | undefined {
  return node.status?.conditions?.find((c) => c.type === type);
}

/** Kubernetes' Taint.MatchTaint: the same key and effect. */
export function sameTaint(a: Taint, b: Taint): boolean {
  return a.key === b.key && a.effect === b.effect;
}

/** Kubernetes' Toleration.ToleratesTaint. */
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

const NODE_NAME_INDEX = 'spec.nodeName';
const indexed = new WeakSet<object>();

/** Pods by `spec.nodeName` from a (shared) pod informer; the index is added once per informer. */
export function podsOnNode(pods: Informer<Pod>): (node: string) => Pod[] {
  if (!indexed.has(pods)) {
    pods.addIndexers({ [NODE_NAME_INDEX]: (p) => (p.spec?.nodeName ? [p.spec.nodeName] : []) });
    indexed.add(pods);
  }
  return (node) => pods.store.byIndex(NODE_NAME_INDEX, node);
}

/** How often a taint write is retried after a conflict (client-go's RetryOnConflict default). */
const CONFLICT_RETRIES = 5;

/**
 * Kubernetes' SwapNodeControllerTaint: one write that adds `add` (stamped with `timeAdded`)
 * and removes `remove` (both matched by key and effect) on the node. A taint already there
 * is kept as is. The first try writes over `node` (a cached copy), later tries over a fresh
 * read; resolves false when the node is gone or nothing needed changing.
 */
export async function swapNodeTaints(
  api: ResourceClient<Node>,
  node: Node,
  { add, remove }: { add: Taint[]; remove: Taint[] },
): Promise<boolean> {
  let current = node;
  for (let attempt = 0; ; attempt++) {
    const old = current.spec?.taints ?? [];
    const kept = old.filter((t) => !remove.some((r) => sameTaint(r, t)));
    const stamp = nowTime();
    const added = add
      .filter((a) => !kept.some((t) => sameTaint(a, t) && (t.value ?? '') === (a.value ?? '')))
      .map((a) => ({ ...a, timeAdded: stamp }));
    const taints = [...kept.filter((t) => !added.some((a) => sameTaint(a, t))), ...added];
    if (kept.length === old.length && added.length === 0) return false;
    try {
      await api.update({ ...current, spec: { ...current.spec, taints } });
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      if (!isConflict(e) || attempt + 1 >= CONFLICT_RETRIES) throw e;
    }
    try {
      current = await api.get(node.metadata.name ?? '');
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }
}
