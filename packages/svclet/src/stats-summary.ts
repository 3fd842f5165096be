import { readFile } from 'node:fs/promises';
import type { Pod } from '@svc/api';
import { nodeUsage, type ContainerUsage } from './resource-metrics.js';

/**
 * The kubelet's Summary API (`GET /stats/summary`, stats/v1alpha1) from what this node can
 * measure: the node's CPU and memory from /proc, each running container's from its process
 * group, summed per pod. Field names as Kubernetes 1.32's `Summary`; what a process runtime
 * has no counterpart for (network, file systems, volumes, rlimits) is left out, as the
 * kubelet leaves out what cAdvisor did not measure.
 */
export interface CpuStats {
  time: string;
  usageNanoCores?: number;
  usageCoreNanoSeconds: number;
}

export interface MemoryStats {
  time: string;
  availableBytes?: number;
  usageBytes: number;
  workingSetBytes: number;
  rssBytes?: number;
}

export interface ContainerStats {
  name: string;
  startTime?: string;
  cpu: CpuStats;
  memory: MemoryStats;
}

export interface PodStats {
  podRef: { name: string; namespace: string; uid: string };
  startTime?: string;
  containers: ContainerStats[];
  cpu: CpuStats;
  memory: MemoryStats;
}

export interface Summary {
  node: { nodeName: string; startTime?: string; cpu: CpuStats; memory: MemoryStats };
  pods: PodStats[];
}

/** The node's memory from /proc/meminfo (bytes). */
export interface NodeMemory {
  totalBytes: number;
  freeBytes: number;
  availableBytes: number;
}

export interface SummaryInput {
  nodeName: string;
  /** The node's boot time (ms since the epoch), its `startTime`. */
  bootMs?: number;
  node: { cpuSeconds: number; memory: NodeMemory };
  containers: readonly ContainerUsage[];
  pods: readonly Pod[];
  timestampMs: number;
  /** CPU rates (cores) by `node` or `<namespace>/<pod>/<container>`, where two samples exist. */
  rates: ReadonlyMap<string, number>;
}

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const nanos = (seconds: number): number => Math.round(seconds * 1e9);

function cpu(o: { time: string; seconds: number; cores: number | undefined }): CpuStats {
  return {
    time: o.time,
    ...(o.cores === undefined ? {} : { usageNanoCores: Math.round(o.cores * 1e9) }),
    usageCoreNanoSeconds: nanos(o.seconds),
  };
}

export const containerKey = (c: Pick<ContainerUsage, 'namespace' | 'pod' | 'container'>): string =>
  `${c.namespace}/${c.pod}/${c.container}`;

/** The Summary of `input` (pure: sampling and rates are the caller's). */
export function buildSummary(input: SummaryInput): Summary {
  const time = iso(input.timestampMs);
  const { memory } = input.node;
  const nodeStats = {
    nodeName: input.nodeName,
    ...(input.bootMs === undefined ? {} : { startTime: iso(input.bootMs) }),
    cpu: cpu({ time, seconds: input.node.cpuSeconds, cores: input.rates.get('node') }),
    memory: {
      time,
      availableBytes: memory.availableBytes,
      usageBytes: Math.max(0, memory.totalBytes - memory.freeBytes),
      workingSetBytes: Math.max(0, memory.totalBytes - memory.availableBytes),
    },
  };
  const byPod = new Map<string, ContainerUsage[]>();
  for (const c of input.containers) {
    const key = `${c.namespace}/${c.pod}`;
    byPod.set(key, [...(byPod.get(key) ?? []), c]);
  }
  const pods: PodStats[] = [];
  for (const pod of input.pods) {
    const ns = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    const used = byPod.get(`${ns}/${name}`);
    if (!used) continue;
    const containers = used.map((c): ContainerStats => {
      const rate = input.rates.get(containerKey(c));
      return {
        name: c.container,
        ...(c.startedAtMs === undefined ? {} : { startTime: iso(c.startedAtMs) }),
        cpu: cpu({ time, seconds: c.cpuSeconds, cores: rate }),
        memory: { time, usageBytes: c.memoryBytes, workingSetBytes: c.memoryBytes, rssBytes: c.memoryBytes },
      };
    });
    const rates = used.map((c) => input.rates.get(containerKey(c)));
    const podCores = rates.every((r) => r !== undefined) ? rates.reduce<number>((a, r) => a + (r ?? 0), 0) : undefined;
    const bytes = used.reduce((a, c) => a + c.memoryBytes, 0);
    pods.push({
      podRef: { name, namespace: ns, uid: pod.metadata.uid ?? '' },
      ...(pod.status?.startTime ? { startTime: pod.status.startTime } : {}),
      containers,
      cpu: cpu({ time, seconds: used.reduce((a, c) => a + c.cpuSeconds, 0), cores: podCores }),
      memory: { time, usageBytes: bytes, workingSetBytes: bytes, rssBytes: bytes },
    });
  }
  return { node: nodeStats, pods };
}

/** /proc/meminfo's totals, and the boot time from /proc/stat's `btime`. */
export async function nodeMemoryAndBoot(): Promise<{ memory: NodeMemory; bootMs?: number }> {
  const [meminfo, stat] = await Promise.all([readFile('/proc/meminfo', 'utf8'), readFile('/proc/stat', 'utf8')]);
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(meminfo)?.[1] ?? 0) * 1024;
  const btime = /^btime\s+(\d+)/m.exec(stat)?.[1];
  return {
    memory: { totalBytes: kb('MemTotal'), freeBytes: kb('MemFree'), availableBytes: kb('MemAvailable') },
    ...(btime ? { bootMs: Number(btime) * 1000 } : {}),
  };
}

interface CpuSample {
  seconds: number;
  atMs: number;
}

/** Rates older than this are not used: a fresh pair of samples is taken instead. */
const MAX_SAMPLE_AGE_MS = 60_000;
/** The gap between the two samples of a fresh pair (cAdvisor's housekeeping: 1 s and up). */
const PAIR_GAP_MS = 1000;

/**
 * Serves summaries: CPU rates come from this scrape and the previous one when that is recent,
 * else from a second sample taken `PAIR_GAP_MS` later, so every running container has
 * `usageNanoCores` as the kubelet's (cAdvisor-sampled) summary does.
 */
export class StatsSummarySource {
  private previous = new Map<string, CpuSample>();

  constructor(
    private readonly o: {
      nodeName: string;
      pods: () => readonly Pod[];
      containerUsage?: () => Promise<{ containers: ContainerUsage[] }>;
      sleep?: (ms: number) => Promise<void>;
    },
  ) {}

  async summary(): Promise<Summary> {
    let sample = await this.sample();
    const stale = (k: string): boolean => {
      const p = this.previous.get(k);
      return !p || sample.atMs - p.atMs > MAX_SAMPLE_AGE_MS || sample.atMs - p.atMs <= 0;
    };
    if ([...sample.cpu.keys()].some(stale)) {
      this.remember(sample);
      await (this.o.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms))))(PAIR_GAP_MS);
      sample = await this.sample();
    }
    const rates = new Map<string, number>();
    for (const [k, seconds] of sample.cpu) {
      const p = this.previous.get(k);
      if (p && sample.atMs > p.atMs && seconds >= p.seconds)
        rates.set(k, (seconds - p.seconds) / ((sample.atMs - p.atMs) / 1000));
    }
    this.remember(sample);
    const { memory, bootMs } = sample.node;
    return buildSummary({
      nodeName: this.o.nodeName,
      bootMs,
      node: { cpuSeconds: sample.cpu.get('node') ?? 0, memory },
      containers: sample.containers,
      pods: this.o.pods(),
      timestampMs: sample.atMs,
      rates,
    });
  }

  private remember(s: { cpu: Map<string, number>; atMs: number }): void {
    this.previous = new Map([...s.cpu].map(([k, seconds]) => [k, { seconds, atMs: s.atMs }]));
  }

  private async sample(): Promise<{
    cpu: Map<string, number>;
    containers: ContainerUsage[];
    node: { memory: NodeMemory; bootMs?: number };
    atMs: number;
  }> {
    const [own, usage, node] = await Promise.all([
      this.o.containerUsage?.() ?? Promise.resolve({ containers: [] }),
      nodeUsage(),
      nodeMemoryAndBoot(),
    ]);
    const cpu = new Map<string, number>([['node', usage.cpuSeconds]]);
    for (const c of own.containers) cpu.set(containerKey(c), c.cpuSeconds);
    return { cpu, containers: own.containers, node, atMs: Date.now() };
  }
}
