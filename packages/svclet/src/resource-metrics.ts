import { readdir, readFile } from 'node:fs/promises';

/**
 * `/metrics/resource` as the kubelet 1.32 serves it (Prometheus text, sample timestamps in
 * ms): cumulative CPU seconds and working-set bytes of every running container, of every pod
 * (the sum of its containers) and of the node, the containers' start times and whether the
 * scrape failed. The svc-runtime runs each container as a process group led by its main
 * process, so a container's usage is read from `/proc/<pid>/stat` and `statm` of every
 * process of that group; the node's from `/proc/stat` and `/proc/meminfo`.
 */
export interface ContainerUsage {
  namespace: string;
  pod: string;
  container: string;
  /** Cumulative CPU time in core-seconds. */
  cpuSeconds: number;
  /** Resident memory in bytes (the working set: a process's memory not reclaimable without swap). */
  memoryBytes: number;
  /** When the container started (ms since the epoch), if known. */
  startedAtMs?: number;
}

export interface ResourceUsage {
  node: { cpuSeconds: number; memoryBytes: number };
  containers: ContainerUsage[];
  /** A container's usage could not be read. */
  scrapeError: boolean;
  timestampMs: number;
}

/** Linux's USER_HZ (`getconf CLK_TCK`), 100 on every architecture Node.js runs on. */
const CLOCK_TICKS = 100;
const PAGE_SIZE = 4096;

interface ProcessSample {
  pgrp: number;
  cpuTicks: number;
  rssPages: number;
}

/** One process's group and CPU ticks from `/proc/<pid>/stat` (its own and its waited-for children's). */
function parseStat(text: string): { pgrp: number; cpuTicks: number } | undefined {
  // The command name (field 2) is in parentheses and may contain spaces: parse after the last ')'.
  const end = text.lastIndexOf(')');
  if (end < 0) return undefined;
  const f = text
    .slice(end + 2)
    .trim()
    .split(/\s+/);
  // f[0] is field 3 (state): pgrp is field 5, utime..cstime are fields 14..17.
  const n = (field: number): number => Number(f[field - 3] ?? 0);
  return { pgrp: n(5), cpuTicks: n(14) + n(15) + n(16) + n(17) };
}

async function sampleProcess(pid: string): Promise<ProcessSample | undefined> {
  try {
    const [stat, statm] = await Promise.all([
      readFile(`/proc/${pid}/stat`, 'utf8'),
      readFile(`/proc/${pid}/statm`, 'utf8'),
    ]);
    const s = parseStat(stat);
    if (!s) return undefined;
    return { ...s, rssPages: Number(statm.split(' ')[1] ?? 0) };
  } catch {
    return undefined; // the process ended between the listing and the read
  }
}

/** CPU seconds and resident bytes of each of `groups` (process group ids), summed over the group's processes. */
export async function processGroupUsage(
  groups: readonly number[],
): Promise<Map<number, { cpuSeconds: number; memoryBytes: number }>> {
  const out = new Map<number, { cpuSeconds: number; memoryBytes: number }>();
  if (groups.length === 0) return out;
  const wanted = new Set(groups);
  const pids = (await readdir('/proc')).filter((d) => /^\d+$/.test(d));
  const samples = await Promise.all(pids.map(sampleProcess));
  for (const s of samples) {
    if (!s || !wanted.has(s.pgrp)) continue;
    const u = out.get(s.pgrp) ?? { cpuSeconds: 0, memoryBytes: 0 };
    u.cpuSeconds += s.cpuTicks / CLOCK_TICKS;
    u.memoryBytes += s.rssPages * PAGE_SIZE;
    out.set(s.pgrp, u);
  }
  return out;
}

/** The node's CPU seconds (all but idle and iowait) and working set (MemTotal − MemAvailable). */
export async function nodeUsage(): Promise<{ cpuSeconds: number; memoryBytes: number }> {
  const [stat, meminfo] = await Promise.all([readFile('/proc/stat', 'utf8'), readFile('/proc/meminfo', 'utf8')]);
  const cpu = (stat.split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const busy = cpu.reduce((a, b) => a + b, 0) - (cpu[3] ?? 0) - (cpu[4] ?? 0);
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(meminfo)?.[1] ?? 0) * 1024;
  return { cpuSeconds: busy / CLOCK_TICKS, memoryBytes: Math.max(0, kb('MemTotal') - kb('MemAvailable')) };
}

const esc = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const num = (v: number): string => (Number.isInteger(v) ? String(v) : v.toPrecision(15).replace(/\.?0+$/, ''));

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: Array<{ labels: Record<string, string>; value: number }>;
}

function family(name: string, o: { help: string; type: Family['type'] }): Family {
  return { name, help: o.help, type: o.type, samples: [] };
}

/** The text kubelet 1.32's resource metrics collector writes (families sorted by name, as its registry does). */
export function renderResourceMetrics(u: ResourceUsage): string {
  const f = {
    containerCpu: family('container_cpu_usage_seconds_total', {
      help: '[STABLE] Cumulative cpu time consumed by the container in core-seconds',
      type: 'counter',
    }),
    containerMem: family('container_memory_working_set_bytes', {
      help: '[STABLE] Current working set of the container in bytes',
      type: 'gauge',
    }),
    containerStart: family('container_start_time_seconds', {
      help: '[STABLE] Start time of the container since unix epoch in seconds',
      type: 'gauge',
    }),
    nodeCpu: family('node_cpu_usage_seconds_total', {
      help: '[STABLE] Cumulative cpu time consumed by the node in core-seconds',
      type: 'counter',
    }),
    nodeMem: family('node_memory_working_set_bytes', {
      help: '[STABLE] Current working set of the node in bytes',
      type: 'gauge',
    }),
    podCpu: family('pod_cpu_usage_seconds_total', {
      help: '[STABLE] Cumulative cpu time consumed by the pod in core-seconds',
      type: 'counter',
    }),
    podMem: family('pod_memory_working_set_bytes', {
      help: '[STABLE] Current working set of the pod in bytes',
      type: 'gauge',
    }),
    resourceScrape: family('resource_scrape_error', {
      help: '[STABLE] 1 if there was an error while getting container metrics, 0 otherwise',
      type: 'gauge',
    }),
    scrape: family('scrape_error', {
      help: '[ALPHA] 1 if there was an error while getting container metrics, 0 otherwise',
      type: 'gauge',
    }),
  };
  const pods = new Map<string, { namespace: string; pod: string; cpu: number; mem: number }>();
  for (const c of u.containers) {
    const labels = { container: c.container, namespace: c.namespace, pod: c.pod };
    f.containerCpu.samples.push({ labels, value: c.cpuSeconds });
    f.containerMem.samples.push({ labels, value: c.memoryBytes });
    if (c.startedAtMs !== undefined) f.containerStart.samples.push({ labels, value: c.startedAtMs / 1000 });
    const key = `${c.namespace}/${c.pod}`;
    const p = pods.get(key) ?? { namespace: c.namespace, pod: c.pod, cpu: 0, mem: 0 };
    p.cpu += c.cpuSeconds;
    p.mem += c.memoryBytes;
    pods.set(key, p);
  }
  for (const p of pods.values()) {
    f.podCpu.samples.push({ labels: { namespace: p.namespace, pod: p.pod }, value: p.cpu });
    f.podMem.samples.push({ labels: { namespace: p.namespace, pod: p.pod }, value: p.mem });
  }
  f.nodeCpu.samples.push({ labels: {}, value: u.node.cpuSeconds });
  f.nodeMem.samples.push({ labels: {}, value: u.node.memoryBytes });
  f.resourceScrape.samples.push({ labels: {}, value: u.scrapeError ? 1 : 0 });
  f.scrape.samples.push({ labels: {}, value: u.scrapeError ? 1 : 0 });
  const lines: string[] = [];
  for (const fam of Object.values(f)) {
    lines.push(`# HELP ${fam.name} ${fam.help}`, `# TYPE ${fam.name} ${fam.type}`);
    const timed = !fam.name.endsWith('scrape_error');
    for (const s of fam.samples) {
      const l = Object.entries(s.labels)
        .map(([k, v]) => `${k}="${esc(v)}"`)
        .join(',');
      lines.push(`${fam.name}${l ? `{${l}}` : ''} ${num(s.value)}${timed ? ` ${u.timestampMs}` : ''}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
