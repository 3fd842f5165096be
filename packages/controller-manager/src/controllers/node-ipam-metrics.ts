import { Counter, Gauge, type Registry } from 'prom-client';
import { formatCidr } from './node-ipam-cidr.js';
import type { CidrSet } from './node-ipam-cidr.js';

type Label = 'clusterCIDR';

/** A metric registered once per registry (the manager builds its controllers again after losing the lease). */
function once<M>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

/**
 * Kubernetes' cidrset metrics (subsystem `node_ipam_controller`, label `clusterCIDR`): blocks
 * allocated and released, the share in use and the size of each cluster CIDR's pool.
 */
export class CidrSetMetrics {
  private readonly allocations: Counter<Label>;
  private readonly releases: Counter<Label>;
  private readonly usage: Gauge<Label>;
  private readonly max: Gauge<Label>;

  constructor(registry: Registry) {
    const counter = (name: string, help: string): Counter<Label> =>
      once(registry, name, () => new Counter({ name, help, labelNames: ['clusterCIDR'], registers: [registry] }));
    const gauge = (name: string, help: string): Gauge<Label> =>
      once(registry, name, () => new Gauge({ name, help, labelNames: ['clusterCIDR'], registers: [registry] }));
    this.allocations = counter(
      'node_ipam_controller_cidrset_cidrs_allocations_total',
      'Counter measuring total number of CIDR allocations.',
    );
    this.releases = counter(
      'node_ipam_controller_cidrset_cidrs_releases_total',
      'Counter measuring total number of CIDR releases.',
    );
    this.usage = gauge('node_ipam_controller_cidrset_usage_cidrs', 'Gauge measuring percentage of allocated CIDRs.');
    // Kubernetes' spelling (sic).
    this.max = gauge('node_ipam_controller_cirdset_max_cidrs', 'Maximum number of CIDRs that can be allocated.');
  }

  /** Counts `allocated` blocks taken and `released` freed in `set`, and refreshes its gauges. */
  changed(set: CidrSet, o: { allocated?: number; released?: number }): void {
    const label = { clusterCIDR: formatCidr(set.cluster) };
    if (o.allocated) this.allocations.inc(label, o.allocated);
    if (o.released) this.releases.inc(label, o.released);
    this.usage.set(label, set.allocated / set.maxCidrs);
    this.max.set(label, set.maxCidrs);
  }
}
