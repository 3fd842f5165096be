import type { Pod } from '@svc/api';
import { preferredAffinityWeight } from '@svc/machinery';
import { podRequests, type NodeInfo, type Resources } from './node-info.js';
import { toleratedBy } from './filters.js';

/** Kubernetes' MaxNodeScore: every plugin scores a node in [0, 100] before its weight applies. */
export const MAX_NODE_SCORE = 100;

/** The resources the resource scorers weigh (Kubernetes' default: cpu and memory, weight 1 each). */
const SCORED = ['cpu', 'memory'] as const;

export interface ScorePlugin {
  name: string;
  weight: number;
  /** Raw scores of the feasible nodes (same order); `undefined` skips the plugin for this pod. */
  score(pod: Pod, nodes: readonly NodeInfo[]): number[] | undefined;
}

/** Kubernetes' DefaultNormalizeScore: scales to [0, max] by the highest score, reversed when asked. */
export function normalize(scores: number[], reverse: boolean): number[] {
  const top = Math.max(0, ...scores);
  if (top === 0) return scores.map(() => (reverse ? MAX_NODE_SCORE : 0));
  return scores.map((s) => {
    const v = Math.trunc((MAX_NODE_SCORE * s) / top);
    return reverse ? MAX_NODE_SCORE - v : v;
  });
}

/** Kubernetes' NodeResourcesFit score, LeastAllocated: free share of cpu and memory after placing the pod (unset requests at their defaults). */
const leastAllocated: ScorePlugin = {
  name: 'NodeResourcesFit',
  weight: 1,
  score: (pod, nodes) => {
    const want = podRequests(pod, true);
    return nodes.map((n) => {
      let sum = 0;
      let weights = 0;
      for (const r of SCORED) {
        const capacity = n.allocatable(r);
        if (capacity === 0) continue;
        const requested = (n.nonZeroRequested.get(r) ?? 0) + (want.get(r) ?? 0);
        sum += requested > capacity ? 0 : Math.trunc(((capacity - requested) * MAX_NODE_SCORE) / capacity);
        weights += 1;
      }
      return weights === 0 ? 0 : Math.trunc(sum / weights);
    });
  },
};

/**
 * Kubernetes' NodeResourcesBalancedAllocation: 100 × (1 − the standard deviation of the cpu
 * and memory fractions requested after placing the pod); skipped for pods that request neither.
 */
const balancedAllocation: ScorePlugin = {
  name: 'NodeResourcesBalancedAllocation',
  weight: 1,
  score: (pod, nodes) => {
    const want: Resources = podRequests(pod);
    if (SCORED.every((r) => (want.get(r) ?? 0) === 0)) return undefined;
    return nodes.map((n) => {
      const fractions: number[] = [];
      for (const r of SCORED) {
        const capacity = n.allocatable(r);
        if (capacity === 0) continue;
        fractions.push(Math.min(1, ((n.requested.get(r) ?? 0) + (want.get(r) ?? 0)) / capacity));
      }
      let std = 0;
      if (fractions.length === 2) std = Math.abs(((fractions[0] ?? 0) - (fractions[1] ?? 0)) / 2);
      return Math.trunc((1 - std) * MAX_NODE_SCORE);
    });
  },
};

/** Kubernetes' TaintToleration score: fewer untolerated PreferNoSchedule taints score higher. */
const taintToleration: ScorePlugin = {
  name: 'TaintToleration',
  weight: 3,
  score: (pod, nodes) => {
    const tolerations = (pod.spec?.tolerations ?? []).filter((t) => !t.effect || t.effect === 'PreferNoSchedule');
    const counts = nodes.map(
      (n) =>
        (n.node?.spec?.taints ?? []).filter((t) => t.effect === 'PreferNoSchedule' && !toleratedBy(tolerations, t))
          .length,
    );
    return normalize(counts, true);
  },
};

/** Kubernetes' NodeAffinity score: the weights of matched preferred terms, normalized. */
const nodeAffinity: ScorePlugin = {
  name: 'NodeAffinity',
  weight: 2,
  score: (pod, nodes) => {
    if (!pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.length) return undefined;
    return normalize(
      nodes.map((n) => (n.node ? preferredAffinityWeight(pod, n.node) : 0)),
      false,
    );
  },
};

/** The default profile's score plugins we run, with Kubernetes' weights. */
export const SCORES: readonly ScorePlugin[] = [taintToleration, nodeAffinity, leastAllocated, balancedAllocation];

/** The weighted sum of every plugin's score for each feasible node. */
export function scoreNodes(pod: Pod, nodes: readonly NodeInfo[], plugins: readonly ScorePlugin[] = SCORES): number[] {
  const total = nodes.map(() => 0);
  for (const p of plugins) {
    const s = p.score(pod, nodes);
    if (!s) continue;
    s.forEach((v, i) => {
      total[i] = (total[i] ?? 0) + v * p.weight;
    });
  }
  return total;
}

/** Kubernetes' selectHost: the highest total, ties broken uniformly at random (reservoir sampling). */
export function selectHost(totals: readonly number[], random: () => number = Math.random): number {
  let best = -1;
  let ties = 0;
  totals.forEach((t, i) => {
    if (best < 0 || t > (totals[best] ?? 0)) {
      best = i;
      ties = 1;
    } else if (t === totals[best]) {
      ties++;
      if (random() * ties < 1) best = i;
    }
  });
  return best;
}
