import type { Pod } from '@svc/api';
import { quantityMilliValue } from '@svc/machinery';

/**
 * Kubernetes 1.32's replica calculator for resource metrics (pkg/controller/podautoscaler/
 * replica_calculator.go), pure: the pods and their metrics in, a replica count out.
 */

/** One pod's usage: milli-units (millicores, milli-bytes) summed over its containers, when sampled, over what window. */
export interface PodMetric {
  value: number;
  timestampMs: number;
  windowMs: number;
}

export type PodMetrics = Map<string, PodMetric>;

export interface CalculatorSettings {
  tolerance: number;
  cpuInitializationPeriodMs: number;
  initialReadinessDelayMs: number;
}

export interface ResourceQuery {
  currentReplicas: number;
  resource: string;
  /** Only this container's usage and request (a ContainerResource metric). */
  container?: string;
  pods: readonly Pod[];
  metrics: PodMetrics;
  nowMs: number;
}

export interface UtilizationResult {
  replicas: number;
  /** Percent of the requests (integer, rounded down). */
  utilization: number;
  /** Average usage per pod in milli-units. */
  rawAverage: number;
}

const ms = (t: string | undefined): number | undefined => (t ? Date.parse(t) : undefined);

/** Kubernetes' groupPods: which pods count, which are unready, which have no metrics, which are ignored. */
export function groupPods(
  q: Pick<ResourceQuery, 'pods' | 'metrics' | 'resource' | 'nowMs'>,
  s: Pick<CalculatorSettings, 'cpuInitializationPeriodMs' | 'initialReadinessDelayMs'>,
): { readyCount: number; unready: Set<string>; missing: Set<string>; ignored: Set<string> } {
  const unready = new Set<string>();
  const missing = new Set<string>();
  const ignored = new Set<string>();
  let readyCount = 0;
  for (const pod of q.pods) {
    const name = pod.metadata.name ?? '';
    if (pod.metadata.deletionTimestamp || pod.status?.phase === 'Failed') {
      ignored.add(name);
      continue;
    }
    if (pod.status?.phase === 'Pending') {
      unready.add(name);
      continue;
    }
    const metric = q.metrics.get(name);
    if (!metric) {
      missing.add(name);
      continue;
    }
    if (q.resource === 'cpu') {
      const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
      const start = ms(pod.status?.startTime);
      let isUnready: boolean;
      if (!ready || start === undefined) isUnready = true;
      else {
        const transition = ms(ready.lastTransitionTime) ?? 0;
        if (start + s.cpuInitializationPeriodMs > q.nowMs)
          // Within the CPU initialization period: unready, or no full metric window since the transition.
          isUnready = ready.status === 'False' || metric.timestampMs < transition + metric.windowMs;
        // Afterwards: unready only if it has never been ready.
        else isUnready = ready.status === 'False' && start + s.initialReadinessDelayMs > transition;
      }
      if (isUnready) {
        unready.add(name);
        continue;
      }
    }
    readyCount++;
  }
  return { readyCount, unready, missing, ignored };
}

/** Kubernetes' calculatePodRequests: each pod's request in milli-units (restartable init containers too). */
export function podRequests(pods: readonly Pod[], o: { resource: string; container?: string }): Map<string, number> {
  const out = new Map<string, number>();
  for (const pod of pods) {
    const containers = [
      ...(pod.spec?.containers ?? []),
      ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always'),
    ];
    let sum = 0;
    for (const c of containers) {
      if (o.container && o.container !== c.name) continue;
      const req = c.resources?.requests?.[o.resource];
      if (req === undefined)
        throw new Error(`missing request for ${o.resource} in container ${c.name} of Pod ${pod.metadata.name ?? ''}`);
      sum += quantityMilliValue(String(req));
    }
    out.set(pod.metadata.name ?? '', sum);
  }
  return out;
}

/** Kubernetes' GetResourceUtilizationRatio. */
export function utilizationRatio(
  metrics: PodMetrics,
  o: { requests: Map<string, number>; target: number },
): { ratio: number; utilization: number; rawAverage: number } {
  let total = 0;
  let requested = 0;
  let n = 0;
  for (const [name, m] of metrics) {
    const r = o.requests.get(name);
    if (r === undefined) continue;
    total += m.value;
    requested += r;
    n++;
  }
  if (requested === 0) throw new Error('no metrics returned matched known pods');
  const utilization = Math.trunc((total * 100) / requested);
  return { ratio: utilization / o.target, utilization, rawAverage: Math.trunc(total / n) };
}

function dropPods(metrics: PodMetrics, names: Set<string>): PodMetrics {
  const out = new Map(metrics);
  for (const n of names) out.delete(n);
  return out;
}

/**
 * The shared tail of both calculations: missing pods count as `fallback(ratio)` (or 0 on a
 * scale-up), unready ones as 0 on a scale-up; no change within the tolerance or when the
 * corrected ratio flips the direction.
 */
function correctedReplicas(o: {
  q: ResourceQuery;
  s: CalculatorSettings;
  metrics: PodMetrics;
  groups: ReturnType<typeof groupPods>;
  ratio: number;
  missingValue: (pod: string) => number;
  recompute: (m: PodMetrics) => number;
}): number {
  const { q, s, groups, ratio } = o;
  const scaleUpWithUnready = groups.unready.size > 0 && ratio > 1;
  if (!scaleUpWithUnready && groups.missing.size === 0) {
    if (Math.abs(1 - ratio) <= s.tolerance) return q.currentReplicas;
    return Math.ceil(ratio * groups.readyCount);
  }
  const metrics = new Map(o.metrics);
  if (groups.missing.size > 0) {
    if (ratio < 1)
      for (const p of groups.missing) metrics.set(p, { value: o.missingValue(p), timestampMs: 0, windowMs: 0 });
    else if (ratio > 1) for (const p of groups.missing) metrics.set(p, { value: 0, timestampMs: 0, windowMs: 0 });
  }
  if (scaleUpWithUnready) for (const p of groups.unready) metrics.set(p, { value: 0, timestampMs: 0, windowMs: 0 });
  const next = o.recompute(metrics);
  if (Math.abs(1 - next) <= s.tolerance || (ratio < 1 && next > 1) || (ratio > 1 && next < 1)) return q.currentReplicas;
  const replicas = Math.ceil(next * metrics.size);
  if ((next < 1 && replicas > q.currentReplicas) || (next > 1 && replicas < q.currentReplicas))
    return q.currentReplicas;
  return replicas;
}

function usable(
  q: ResourceQuery,
  s: CalculatorSettings,
): { groups: ReturnType<typeof groupPods>; metrics: PodMetrics } {
  if (q.pods.length === 0) throw new Error('no pods returned by selector while calculating replica count');
  const groups = groupPods(q, s);
  const metrics = dropPods(dropPods(q.metrics, groups.ignored), groups.unready);
  if (metrics.size === 0) throw new Error('did not receive metrics for targeted pods (pods might be unready)');
  return { groups, metrics };
}

/** Kubernetes' GetResourceReplicas: a utilization target (percent of the requests). */
export function resourceReplicas(
  q: ResourceQuery,
  o: { targetUtilization: number; s: CalculatorSettings },
): UtilizationResult {
  const { groups, metrics } = usable(q, o.s);
  const requests = podRequests(q.pods, q);
  const first = utilizationRatio(metrics, { requests, target: o.targetUtilization });
  const fallback = Math.max(100, o.targetUtilization);
  const replicas = correctedReplicas({
    q,
    s: o.s,
    metrics,
    groups,
    ratio: first.ratio,
    missingValue: (p) => Math.trunc(((requests.get(p) ?? 0) * fallback) / 100),
    recompute: (m) => utilizationRatio(m, { requests, target: o.targetUtilization }).ratio,
  });
  return { replicas, utilization: first.utilization, rawAverage: first.rawAverage };
}

/** Kubernetes' GetRawResourceReplicas (calcPlainMetricReplicas): an average value target in milli-units. */
export function rawResourceReplicas(
  q: ResourceQuery,
  o: { targetAverage: number; s: CalculatorSettings },
): { replicas: number; rawAverage: number } {
  const { groups, metrics } = usable(q, o.s);
  const usageRatio = (m: PodMetrics): { ratio: number; average: number } => {
    let total = 0;
    for (const v of m.values()) total += v.value;
    const average = Math.trunc(total / m.size);
    return { ratio: average / o.targetAverage, average };
  };
  const first = usageRatio(metrics);
  const replicas = correctedReplicas({
    q,
    s: o.s,
    metrics,
    groups,
    ratio: first.ratio,
    missingValue: () => o.targetAverage,
    recompute: (m) => usageRatio(m).ratio,
  });
  return { replicas, rawAverage: first.average };
}
