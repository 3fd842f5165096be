import type { Pod } from '@svc/api';
import type { FilterStatus } from './filters.js';

/** "n reason" counts, sorted as strings, joined (Kubernetes' sortReasonsHistogram). */
function histogram(reasons: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const r of reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  return [...counts]
    .map(([r, n]) => `${n} ${r}`)
    .sort()
    .join(', ');
}

/**
 * What preemption would say (Kubernetes' DefaultPreemption PostFilter message). We never
 * preempt: nodes refused for an unresolvable reason are "not helpful", the others have no victims.
 */
function preemptionMessage(pod: Pod, statuses: readonly FilterStatus[]): string {
  if (pod.spec?.preemptionPolicy === 'Never') return 'not eligible due to preemptionPolicy=Never.';
  const reasons = statuses.map((s) =>
    s.code === 'UnschedulableAndUnresolvable'
      ? 'Preemption is not helpful for scheduling'
      : 'No preemption victims found for incoming pod',
  );
  return `0/${statuses.length} nodes are available: ${histogram(reasons)}.`;
}

/**
 * Kubernetes' FitError message for a pod no node took, from each node's filter status:
 * `0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 Insufficient cpu. preemption: 0/3 nodes are available: ...`
 */
export function fitErrorMessage(pod: Pod, statuses: readonly FilterStatus[]): string {
  const reasons = statuses.flatMap((s) => s.reasons);
  const filterMsg = reasons.length > 0 ? ` ${histogram(reasons)}.` : '';
  return `0/${statuses.length} nodes are available:${filterMsg} preemption: ${preemptionMessage(pod, statuses)}`;
}

/** Kubernetes' ErrNoNodesAvailable text. */
export const NO_NODES_AVAILABLE = 'no nodes available to schedule pods';
