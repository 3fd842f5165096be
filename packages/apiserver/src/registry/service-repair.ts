import type { ApiObject } from '@svc/api';
import type { Logger } from '@svc/component-base';
import { sleep } from '@svc/machinery';
import type { RangeBitmap } from './service-allocator.js';
import type { ServiceAllocation } from './service-store.js';

/** Kubernetes' numRepairsBeforeLeakCleanup: an item held by no Service is freed on the third repair in a row that sees it so. */
const REPAIRS_BEFORE_LEAK_CLEANUP = 3;
/** Kubernetes' repair interval for Service IPs and node ports. */
export const SERVICE_REPAIR_INTERVAL_MS = 3 * 60_000;

interface ServiceSpec {
  clusterIP?: string;
  clusterIPs?: string[];
  ports?: Array<{ nodePort?: number }>;
  healthCheckNodePort?: number;
}

/** What one repair changed, by range: items marked taken (a Service held them) and items freed (leaks). */
export interface RepairResult {
  ips: { marked: string[]; released: string[] };
  nodePorts: { marked: number[]; released: number[] };
}

/**
 * Kubernetes' Service IP and node-port repair controllers (`RepairIP`, `RepairPorts`): the ranges'
 * bitmaps are made to agree with the Services in storage. A repair reads the bitmaps first, then
 * lists the Services; an address or port a Service holds but the bitmap does not have is marked
 * taken (logged, as Kubernetes' ClusterIPNotAllocated / PortNotAllocated events); one the bitmap
 * has but no Service holds is a leak, kept for two repairs (an allocation whose Service is still
 * being written) and freed on the third in a row; addresses outside the range are logged. Run
 * once before the system namespaces are made (so a server is not ready before its ranges were
 * checked, as Kubernetes' bootstrap controller), then every three minutes.
 */
export class ServiceRangeRepair {
  private readonly leaks = { ips: new Map<number, number>(), nodePorts: new Map<number, number>() };

  constructor(
    private readonly o: {
      allocation: ServiceAllocation;
      /** Every Service in storage (all namespaces). */
      listServices: () => Promise<ApiObject[]>;
      log: Logger;
    },
  ) {}

  async runOnce(): Promise<RepairResult> {
    const { ips, nodePorts } = this.o.allocation;
    const before = {
      ips: new Set(await ips.bitmap.allocated()),
      nodePorts: new Set(await nodePorts.bitmap.allocated()),
    };
    const held = { ips: new Set<number>(), nodePorts: new Set<number>() };
    for (const svc of await this.o.listServices()) {
      const name = `${svc.metadata.namespace ?? ''}/${svc.metadata.name ?? ''}`;
      const spec = (svc.spec ?? {}) as ServiceSpec;
      const addresses = spec.clusterIPs ?? (spec.clusterIP ? [spec.clusterIP] : []);
      for (const ip of addresses) {
        if (ip === '' || ip === 'None') continue;
        const i = ips.indexOf(ip);
        if (i === undefined) {
          // Another family's address (dual-stack is not served) or one outside the range.
          this.o.log.warn('Cluster IP is not within the service CIDR; please recreate the service', {
            service: name,
            ip,
            range: ips.cidr,
          });
          continue;
        }
        if (held.ips.has(i)) this.o.log.warn('Cluster IP was assigned to multiple services', { service: name, ip });
        held.ips.add(i);
      }
      const ports = [...(spec.ports ?? []).map((p) => p.nodePort), spec.healthCheckNodePort];
      for (const port of ports) {
        if (port === undefined || port === 0) continue;
        const i = nodePorts.indexOf(port);
        if (i === undefined) {
          this.o.log.warn('Port is not within the port range; please recreate the service', {
            service: name,
            port,
            range: nodePorts.text,
          });
          continue;
        }
        held.nodePorts.add(i);
      }
    }
    const ipResult = await this.repair({
      bitmap: ips.bitmap,
      before: before.ips,
      held: held.ips,
      leaks: this.leaks.ips,
    });
    const portResult = await this.repair({
      bitmap: nodePorts.bitmap,
      before: before.nodePorts,
      held: held.nodePorts,
      leaks: this.leaks.nodePorts,
    });
    const result: RepairResult = {
      ips: { marked: ipResult.marked.map((i) => ips.ipAt(i)), released: ipResult.released.map((i) => ips.ipAt(i)) },
      nodePorts: {
        marked: portResult.marked.map((i) => nodePorts.portAt(i)),
        released: portResult.released.map((i) => nodePorts.portAt(i)),
      },
    };
    for (const ip of result.ips.marked) this.o.log.warn('Cluster IP was not allocated; repairing', { ip });
    for (const ip of result.ips.released) this.o.log.info('Cluster IP was leaked; freeing it', { ip });
    for (const port of result.nodePorts.marked) this.o.log.warn('Port was not allocated; repairing', { port });
    for (const port of result.nodePorts.released) this.o.log.info('Port was leaked; freeing it', { port });
    return result;
  }

  /** Repairs every three minutes (after a first `runOnce` elsewhere) until `signal`; a failed repair is logged. */
  async run(signal: AbortSignal, intervalMs = SERVICE_REPAIR_INTERVAL_MS): Promise<void> {
    for (;;) {
      await sleep(intervalMs, signal);
      if (signal.aborted) return;
      try {
        await this.runOnce();
      } catch (e) {
        this.o.log.warn('Service IP and port repair failed', { error: (e as Error).message });
      }
    }
  }

  private async repair(o: {
    bitmap: RangeBitmap;
    before: Set<number>;
    held: Set<number>;
    leaks: Map<number, number>;
  }): Promise<{ marked: number[]; released: number[] }> {
    const release: number[] = [];
    for (const i of o.before) {
      if (o.held.has(i)) continue;
      const seen = (o.leaks.get(i) ?? 0) + 1;
      if (seen >= REPAIRS_BEFORE_LEAK_CLEANUP) {
        release.push(i);
        o.leaks.delete(i);
      } else o.leaks.set(i, seen);
    }
    for (const i of [...o.leaks.keys()]) if (!o.before.has(i) || o.held.has(i)) o.leaks.delete(i);
    return o.bitmap.reconcile({ mark: [...o.held].filter((i) => !o.before.has(i)), release });
  }
}
