import type { Pod } from '@svc/api';
import type { RestClient } from '@svc/client';
import type { PodMetrics } from './hpa-replica-calculator.js';

/**
 * Pods' CPU and memory usage for the horizontal-pod-autoscaler, from their nodes'
 * `/metrics/resource` (the node agents' Prometheus text) read through the API server's
 * `nodes/<name>/proxy`. Kubernetes' controller reads the metrics.k8s.io API of a
 * metrics-server, which scrapes the same endpoint; there is no such API here, so this does
 * the metrics-server's part: CPU is a cumulative counter, its rate the difference of two
 * samples of a container (the previous scrape when it is recent, else a second one a second
 * later); memory is the working set as sampled.
 */
export interface ResourceSample {
  name: string;
  labels: Record<string, string>;
  value: number;
  timestampMs?: number;
}

/** Parses Prometheus text exposition into samples (comments skipped). */
export function parsePrometheusText(text: string): ResourceSample[] {
  const out: ResourceSample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1] ?? ''] = (l[2] ?? '').replace(/\\n/g, '\n').replace(/\\(.)/g, '$1');
    out.push({
      name: m[1] ?? '',
      labels,
      value: Number(m[3]),
      timestampMs: m[4] === undefined ? undefined : Number(m[4]),
    });
  }
  return out;
}

interface ContainerSample {
  cpuSeconds?: number;
  memoryBytes?: number;
  timestampMs: number;
}

/** A CPU sample older than this is not used for a rate; a fresh pair is taken instead. */
const MAX_RATE_AGE_MS = 60_000;
/** The gap between the two samples of a fresh pair. */
const PAIR_GAP_MS = 1000;

const containerKey = (ns: string, pod: string, container: string): string => `${ns}/${pod}/${container}`;

export class NodeResourceMetrics {
  /** The previous CPU sample of each container. */
  private readonly lastCpu = new Map<string, { cpuSeconds: number; timestampMs: number }>();

  constructor(
    private readonly client: RestClient,
    private readonly o: { sleep: (ms: number) => Promise<void>; now: () => number },
  ) {}

  /** One node's containers, by `namespace/pod/container`; rejects when the node cannot be read. */
  private async scrape(node: string): Promise<Map<string, ContainerSample>> {
    const r = await this.client.request('GET', `/api/v1/nodes/${encodeURIComponent(node)}/proxy/metrics/resource`);
    if (r.status !== 200) throw new Error(`node ${node}: /metrics/resource answered ${r.status}`);
    const out = new Map<string, ContainerSample>();
    const now = this.o.now();
    for (const s of parsePrometheusText(r.body.toString('utf8'))) {
      const { namespace, pod, container } = s.labels;
      if (namespace === undefined || pod === undefined || container === undefined) continue;
      const key = containerKey(namespace, pod, container);
      const c = out.get(key) ?? { timestampMs: s.timestampMs ?? now };
      if (s.name === 'container_cpu_usage_seconds_total') c.cpuSeconds = s.value;
      else if (s.name === 'container_memory_working_set_bytes') c.memoryBytes = s.value;
      else continue;
      out.set(key, c);
    }
    return out;
  }

  private async scrapeAll(nodes: readonly string[]): Promise<Map<string, ContainerSample>> {
    const all = new Map<string, ContainerSample>();
    const results = await Promise.allSettled(nodes.map((n) => this.scrape(n)));
    for (const r of results) if (r.status === 'fulfilled') for (const [k, v] of r.value) all.set(k, v);
    return all;
  }

  /**
   * The usage of each pod that has one, in milli-units (millicores; milli-bytes for memory),
   * summed over its containers (or of `container` only); pods without a complete sample are
   * left out (the calculator counts them as missing). Throws when no pod has one, as
   * Kubernetes' metrics client does for an empty answer.
   */
  async podMetrics(o: { pods: readonly Pod[]; resource: string; container?: string }): Promise<PodMetrics> {
    // The node agents report CPU and memory only, as the kubelet's resource metrics.
    if (o.resource !== 'cpu' && o.resource !== 'memory')
      throw new Error('no metrics returned from resource metrics API');
    const nodes = [...new Set(o.pods.map((p) => p.spec?.nodeName).filter((n): n is string => !!n))];
    const wanted = (p: Pod): string[] => {
      const names = (p.spec?.containers ?? []).map((c) => c.name).filter((n) => !o.container || n === o.container);
      return names.map((n) => containerKey(p.metadata.namespace ?? '', p.metadata.name ?? '', n));
    };
    let samples = await this.scrapeAll(nodes);
    if (o.resource === 'cpu') {
      const fresh = (k: string): boolean => {
        const prev = this.lastCpu.get(k);
        const cur = samples.get(k);
        return (
          !!prev && !!cur && cur.timestampMs > prev.timestampMs && cur.timestampMs - prev.timestampMs <= MAX_RATE_AGE_MS
        );
      };
      if (o.pods.some((p) => wanted(p).some((k) => samples.has(k) && !fresh(k)))) {
        this.remember(samples);
        await this.o.sleep(PAIR_GAP_MS);
        samples = await this.scrapeAll(nodes);
      }
    }
    const metrics: PodMetrics = new Map();
    for (const pod of o.pods) {
      const keys = wanted(pod);
      let value = 0;
      let timestampMs = 0;
      let windowMs = 0;
      const complete =
        keys.length > 0 &&
        keys.every((k) => {
          const s = samples.get(k);
          if (!s) return false;
          timestampMs = Math.max(timestampMs, s.timestampMs);
          if (o.resource === 'memory') {
            if (s.memoryBytes === undefined) return false;
            value += s.memoryBytes * 1000;
            return true;
          }
          const prev = this.lastCpu.get(k);
          if (s.cpuSeconds === undefined || !prev || s.timestampMs <= prev.timestampMs) return false;
          const gap = s.timestampMs - prev.timestampMs;
          value += (Math.max(0, s.cpuSeconds - prev.cpuSeconds) / (gap / 1000)) * 1000;
          windowMs = Math.max(windowMs, gap);
          return true;
        });
      if (complete) metrics.set(pod.metadata.name ?? '', { value: Math.round(value), timestampMs, windowMs });
    }
    if (o.resource === 'cpu') this.remember(samples);
    if (metrics.size === 0) throw new Error('no metrics returned from resource metrics API');
    return metrics;
  }

  private remember(samples: Map<string, ContainerSample>): void {
    for (const [k, s] of samples)
      if (s.cpuSeconds !== undefined) this.lastCpu.set(k, { cpuSeconds: s.cpuSeconds, timestampMs: s.timestampMs });
  }

  /** Drops the samples of containers of pods that are gone (keeps the cache from growing). */
  retainPods(alive: ReadonlySet<string>): void {
    for (const k of this.lastCpu.keys()) {
      const [ns, pod] = k.split('/');
      if (!alive.has(`${ns ?? ''}/${pod ?? ''}`)) this.lastCpu.delete(k);
    }
  }
}
