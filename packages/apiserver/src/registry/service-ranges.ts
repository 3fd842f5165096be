import type { ServiceRangeFlags } from '../service-range-flags.js';
import type { Storage } from '../storage/interface.js';
import { ClusterIpRange, NodePortRange } from './service-allocator.js';
import type { ServiceAllocation } from './service-store.js';

/** The Service ranges of `--service-cluster-ip-range` and `--service-node-port-range`, kept in `storage`. */
export function serviceAllocation(
  opts: ServiceRangeFlags & { storePrefix: string },
  storage: Storage,
): ServiceAllocation {
  const { storePrefix } = opts;
  return {
    ips: new ClusterIpRange({ storage, storePrefix, cidr: opts.serviceClusterIpRange }),
    nodePorts: new NodePortRange({ storage, storePrefix, ...opts.serviceNodePortRange }),
  };
}
