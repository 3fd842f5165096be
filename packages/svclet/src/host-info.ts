import { readFileSync, readdirSync, statfsSync } from 'node:fs';
import { arch, cpus, freemem, hostname, networkInterfaces, platform, release, totalmem } from 'node:os';
import type { NodeAddress, NodeSystemInfo } from '@svc/api';
import { formatCpu, formatKi, parseQuantity } from './quantity.js';

// What the node agent reads about its host: names, addresses, capacity, system info and the
// eviction signals behind the pressure conditions. Reads are synchronous and cheap.

/** Kubernetes' node name: `--hostname-override` or the host name, lowercased and trimmed. */
export function nodeNameOf(override: string | undefined): string {
  return (override || hostname()).trim().toLowerCase();
}

/** The node's IPs: `--node-ip`, else the first non-loopback IPv4 of an interface, else 127.0.0.1. */
export function hostIps(nodeIps: readonly string[]): string[] {
  if (nodeIps.length > 0) return [...nodeIps];
  for (const list of Object.values(networkInterfaces())) {
    const hit = list?.find((a) => a.family === 'IPv4' && !a.internal);
    if (hit) return [hit.address];
  }
  return ['127.0.0.1'];
}

/** `status.addresses` without a cloud provider: the node IPs (InternalIP), then the host name. */
export function nodeAddresses(ips: readonly string[], host: string): NodeAddress[] {
  return [...ips.map((address): NodeAddress => ({ type: 'InternalIP', address })), { type: 'Hostname', address: host }];
}

/** `process.arch` as Go's GOARCH (what the `arch` node label and `nodeInfo.architecture` carry). */
export function goArch(): string {
  const a = arch();
  return (
    (
      { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' } as Record<
        string,
        string
      >
    )[a] ?? a
  );
}

export function goOs(): string {
  return platform() === 'win32' ? 'windows' : platform();
}

function readTrimmed(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

function osImage(): string {
  const m = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readTrimmed('/etc/os-release'));
  return m?.[1] ?? 'Unknown';
}

/** `status.nodeInfo` apart from the runtime's version (filled in once the runtime answers). */
export function systemInfo(svcletVersion: string): NodeSystemInfo {
  return {
    machineID: readTrimmed('/etc/machine-id'),
    systemUUID: readTrimmed('/sys/class/dmi/id/product_uuid'),
    bootID: readTrimmed('/proc/sys/kernel/random/boot_id'),
    kernelVersion: release(),
    osImage: osImage(),
    containerRuntimeVersion: '',
    kubeletVersion: svcletVersion,
    kubeProxyVersion: '',
    operatingSystem: goOs(),
    architecture: goArch(),
  };
}

interface FsStats {
  bytes: number;
  available: number;
  inodes: number;
  inodesFree: number;
}

function fsStats(dir: string): FsStats | undefined {
  try {
    const s = statfsSync(dir);
    return { bytes: s.blocks * s.bsize, available: s.bavail * s.bsize, inodes: s.files, inodesFree: s.ffree };
  } catch {
    return undefined;
  }
}

/** `status.capacity`: CPUs, memory, pods (`maxPods`), ephemeral storage of `rootDir`'s file system, no huge pages. */
export function machineCapacity(o: { rootDir: string; maxPods: number }): Record<string, string> {
  const out: Record<string, string> = {
    cpu: String(cpus().length),
    memory: formatKi(totalmem()),
    pods: String(o.maxPods),
  };
  const fs = fsStats(o.rootDir);
  if (fs) out['ephemeral-storage'] = formatKi(fs.bytes);
  out['hugepages-1Gi'] = '0';
  out['hugepages-2Mi'] = '0';
  return out;
}

/** A threshold of `evictionHard` in absolute units: a quantity, or a percentage of `total`. */
function threshold(v: string | undefined, total: number): number {
  if (v === undefined) return 0;
  return v.endsWith('%') ? (Number(v.slice(0, -1)) / 100) * total : parseQuantity(v);
}

/**
 * Kubernetes' allocatable: capacity minus `systemReserved`, `svcReserved` and, for memory and
 * ephemeral storage, the hard eviction threshold; never below zero.
 */
export function allocatable(
  capacity: Record<string, string>,
  o: {
    systemReserved: Record<string, string>;
    svcReserved: Record<string, string>;
    evictionHard: Record<string, string>;
  },
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(capacity)) {
    const cap = parseQuantity(v);
    let left = cap - parseQuantity(o.systemReserved[name] ?? '0') - parseQuantity(o.svcReserved[name] ?? '0');
    if (name === 'memory') left -= threshold(o.evictionHard['memory.available'], cap);
    if (name === 'ephemeral-storage') left -= threshold(o.evictionHard['nodefs.available'], cap);
    out[name] =
      name === 'cpu'
        ? formatCpu(left)
        : name === 'memory' || name === 'ephemeral-storage'
          ? formatKi(left)
          : String(Math.max(0, Math.floor(left)));
  }
  return out;
}

export interface Pressure {
  memory: boolean;
  disk: boolean;
  pid: boolean;
}

function processCount(): number {
  try {
    return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).length;
  } catch {
    return 0;
  }
}

/**
 * The hard eviction signals observed now: memory.available (free memory), nodefs/imagefs
 * available and inodesFree (`rootDir`'s file system), pid.available (pid_max minus processes);
 * a signal without a threshold never signals pressure.
 */
export function observePressure(o: { rootDir: string; evictionHard: Record<string, string> }): Pressure {
  const e = o.evictionHard;
  const total = totalmem();
  const memory = e['memory.available'] !== undefined && freemem() < threshold(e['memory.available'], total);
  let disk = false;
  const fs = fsStats(o.rootDir);
  if (fs) {
    for (const key of ['nodefs.available', 'imagefs.available', 'containerfs.available']) {
      if (e[key] !== undefined && fs.available < threshold(e[key], fs.bytes)) disk = true;
    }
    for (const key of ['nodefs.inodesFree', 'imagefs.inodesFree', 'containerfs.inodesFree']) {
      if (e[key] !== undefined && fs.inodes > 0 && fs.inodesFree < threshold(e[key], fs.inodes)) disk = true;
    }
  }
  let pid = false;
  if (e['pid.available'] !== undefined) {
    const max = Number(readTrimmed('/proc/sys/kernel/pid_max')) || 32768;
    pid = max - processCount() < threshold(e['pid.available'], max);
  }
  return { memory, disk, pid };
}
