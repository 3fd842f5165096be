import { createHash } from 'node:crypto';
import type { NodeMachine } from '../node-status.js';
import { systemInfo } from '../host-info.js';

/** The runtime name simulated nodes report (`nodeInfo.containerRuntimeVersion`, pods' container ids). */
export const SIMULATED_RUNTIME = 'simulated';

/**
 * Simulated node `index`'s InternalIP: 100.64.0.0/10 (shared address space, never a real host
 * here), node 1 at 100.64.0.1.
 */
export function simulatedNodeIp(index: number): string {
  return `100.${64 + (index >> 16)}.${(index >> 8) & 255}.${index & 255}`;
}

/** Simulated node `index`'s pod addresses: the /24 10.<hi>.<lo>.0 (hosts 1-254). */
export function simulatedPodIp(index: number, host: number): string {
  return `10.${(index >> 8) & 255}.${index & 255}.${host}`;
}

/** A 32-hex-digit id derived from the node name and a purpose (machine id, boot id), stable across restarts. */
function derivedId(name: string, what: string): string {
  return createHash('sha256').update(`${what}/${name}`).digest('hex').slice(0, 32);
}

/**
 * The machine of a simulated node: the given capacity, never any pressure, always ready; the
 * host's kernel and OS image, ids derived from the node's name, and the `simulated` runtime.
 */
export function simulatedMachine(o: { name: string; capacity: Record<string, string>; version: string }): NodeMachine {
  const host = systemInfo(o.version);
  const id = derivedId(o.name, 'machine');
  const info = {
    ...host,
    machineID: id,
    systemUUID: `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20, 32)}`,
    bootID: derivedId(o.name, 'boot'),
  };
  const capacity = { 'hugepages-1Gi': '0', 'hugepages-2Mi': '0', ...o.capacity };
  return {
    capacity: () => capacity,
    pressure: () => ({ memory: false, disk: false, pid: false }),
    info,
    readiness: async () => undefined,
    runtimeVersion: async () => `${SIMULATED_RUNTIME}://${o.version}`,
  };
}
