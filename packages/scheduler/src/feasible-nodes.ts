import type { NodeInfo } from './node-info.js';
import type { FilterStatus } from './filters.js';

/** Kubernetes' floor: below this many nodes every node is filtered, and no fewer are ever looked for. */
export const MIN_FEASIBLE_NODES_TO_FIND = 100;
/** Kubernetes' lowest adaptive percentage of nodes to score. */
const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5;

/**
 * How many feasible nodes a scheduling cycle looks for before it stops filtering (Kubernetes'
 * `numFeasibleNodesToFind` with `percentageOfNodesToScore` unset, its default): every node of
 * a cluster under 100 nodes; otherwise `50 − nodes/125` percent of them (at least 5 %), and
 * never fewer than 100. 1,000 nodes: 420; 5,000: 500.
 */
export function numFeasibleNodesToFind(allNodes: number): number {
  if (allNodes < MIN_FEASIBLE_NODES_TO_FIND) return allNodes;
  const percentage = Math.max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, 50 - Math.trunc(allNodes / 125));
  return Math.max(MIN_FEASIBLE_NODES_TO_FIND, Math.trunc((allNodes * percentage) / 100));
}

/** The nodes a cycle found feasible, the failures of the others it filtered, and how many it looked at. */
export interface FilterOutcome {
  feasible: NodeInfo[];
  statuses: FilterStatus[];
  processed: number;
}

/**
 * Kubernetes' findNodesThatPassFilters: filters nodes in order from `start` (wrapping round)
 * until `numFeasibleNodesToFind` of them fit or all were seen. The caller starts the next
 * cycle `processed` nodes further on, so every node gets its turn.
 */
export function findFeasibleNodes(
  nodes: readonly NodeInfo[],
  o: { start: number; filter: (n: NodeInfo) => FilterStatus | undefined },
): FilterOutcome {
  const want = numFeasibleNodesToFind(nodes.length);
  const feasible: NodeInfo[] = [];
  const statuses: FilterStatus[] = [];
  let processed = 0;
  while (processed < nodes.length && feasible.length < want) {
    const n = nodes[(o.start + processed) % nodes.length] as NodeInfo;
    processed += 1;
    const st = o.filter(n);
    if (st) statuses.push(st);
    else feasible.push(n);
  }
  return { feasible, statuses, processed };
}
