import { parseCidr, type Cidr } from './node-ipam-cidr.js';

/** node-ipam-controller's flags as given (mask sizes 0 when unset, as Kubernetes' config). */
export interface NodeIpamFlags {
  allocateNodeCidrs: boolean;
  cidrAllocatorType: string;
  clusterCidr?: string;
  nodeCidrMaskSize: number;
  nodeCidrMaskSizeIpv4: number;
  nodeCidrMaskSizeIpv6: number;
  serviceClusterIpRange?: string;
}

/** What the range allocator runs with: one cluster CIDR per family, each with its node mask size. */
export interface NodeIpamConfig {
  allocateNodeCidrs: boolean;
  clusterCidrs: Cidr[];
  nodeMaskSizes: number[];
  /** Taken out of the pool (`--service-cluster-ip-range`, one or two). */
  serviceCidrs: Cidr[];
}

const DEFAULT_MASK = { 4: 24, 6: 64 } as const;

const splitList = (s: string | undefined): string[] =>
  (s ?? '').trim() === ''
    ? []
    : (s ?? '')
        .trim()
        .split(',')
        .map((x) => x.trim());

function parseList(flag: string, items: string[]): Cidr[] {
  return items.map((item) => {
    try {
      return parseCidr(item);
    } catch (e) {
      throw new Error(`${flag}: ${(e as Error).message}`, { cause: e });
    }
  });
}

const isDualStack = (cidrs: readonly Cidr[]): boolean =>
  cidrs.some((c) => c.family === 4) && cidrs.some((c) => c.family === 6);

/** Kubernetes' setNodeCIDRMaskSizes: which mask flag applies to which cluster CIDR, with its refusals. */
function maskSizes(f: NodeIpamFlags, clusterCidrs: readonly Cidr[]): number[] {
  const sized = (v4: number, v6: number): number[] => clusterCidrs.map((c) => (c.family === 6 ? v6 : v4));
  let v4: number = DEFAULT_MASK[4];
  let v6: number = DEFAULT_MASK[6];
  if (clusterCidrs.length > 1) {
    if (f.nodeCidrMaskSize !== 0)
      throw new Error('usage of --node-cidr-mask-size is not allowed with dual-stack clusters');
    if (f.nodeCidrMaskSizeIpv4 !== 0) v4 = f.nodeCidrMaskSizeIpv4;
    if (f.nodeCidrMaskSizeIpv6 !== 0) v6 = f.nodeCidrMaskSizeIpv6;
    return sized(v4, v6);
  }
  const singleStackV6 = clusterCidrs[0]?.family === 6;
  if (f.nodeCidrMaskSize !== 0) {
    if (f.nodeCidrMaskSizeIpv4 !== 0 || f.nodeCidrMaskSizeIpv6 !== 0)
      throw new Error(
        'usage of --node-cidr-mask-size-ipv4 and --node-cidr-mask-size-ipv6 is not allowed if --node-cidr-mask-size is set. For dual-stack clusters please unset it and use IPFamily specific flags',
      );
    return sized(f.nodeCidrMaskSize, f.nodeCidrMaskSize);
  }
  if (f.nodeCidrMaskSizeIpv4 !== 0) {
    if (singleStackV6)
      throw new Error('usage of --node-cidr-mask-size-ipv4 is not allowed for a single-stack IPv6 cluster');
    v4 = f.nodeCidrMaskSizeIpv4;
  }
  if (f.nodeCidrMaskSizeIpv6 !== 0) {
    if (!singleStackV6)
      throw new Error('usage of --node-cidr-mask-size-ipv6 is not allowed for a single-stack IPv4 cluster');
    v6 = f.nodeCidrMaskSizeIpv6;
  }
  return sized(v4, v6);
}

/**
 * Checks node-ipam-controller's flags as Kubernetes does when it starts the controller (here at
 * parse time, so a bad value stops the binary with exit 2): `--service-cluster-ip-range` at most
 * two entries, of two families; with `--allocate-node-cidrs`, `--cluster-cidr` required, at most one
 * CIDR per family and two in all, the mask flags of Kubernetes' setNodeCIDRMaskSizes, each mask no
 * shorter than its cluster CIDR's prefix (nor longer than the address, nor, for IPv6, more than 16
 * bits longer), and the RangeAllocator the only allocator type (there is no cloud provider).
 * Throws with the message to print.
 */
export function nodeIpamConfig(f: NodeIpamFlags): NodeIpamConfig {
  const serviceItems = splitList(f.serviceClusterIpRange);
  if (serviceItems.length > 2) throw new Error('--service-cluster-ip-range can not contain more than two entries');
  const off: NodeIpamConfig = { allocateNodeCidrs: false, clusterCidrs: [], nodeMaskSizes: [], serviceCidrs: [] };
  if (!f.allocateNodeCidrs) return off;
  const serviceCidrs = parseList('--service-cluster-ip-range', serviceItems);
  if (serviceCidrs.length === 2 && !isDualStack(serviceCidrs))
    throw new Error(
      '--service-cluster-ip-range: serviceCIDR and secondaryServiceCIDR are not dualstack (from different IPfamiles)',
    );
  if (f.cidrAllocatorType === 'CloudAllocator')
    throw new Error("--cidr-allocator-type is set to 'CloudAllocator' but cloud provider is not configured");
  if (f.cidrAllocatorType !== 'RangeAllocator')
    throw new Error(`--cidr-allocator-type: invalid CIDR allocator type: ${f.cidrAllocatorType}`);
  const clusterItems = splitList(f.clusterCidr);
  if (clusterItems.length === 0) throw new Error('--cluster-cidr must be specified if --allocate-node-cidrs is set');
  const clusterCidrs = parseList('--cluster-cidr', clusterItems);
  if (clusterCidrs.length > 1 && !isDualStack(clusterCidrs))
    throw new Error(
      `--cluster-cidr: len of ClusterCIDRs==${clusterCidrs.length} and they are not configured as dual stack (at least one from each IPFamily)`,
    );
  if (clusterCidrs.length > 2)
    throw new Error(`--cluster-cidr: length of clusterCIDRs is:${clusterCidrs.length} more than max allowed of 2`);
  const nodeMaskSizes = maskSizes(f, clusterCidrs);
  clusterCidrs.forEach((c, i) => {
    const mask = nodeMaskSizes[i] ?? 0;
    if (c.prefix > mask)
      throw new Error(
        'Invalid --cluster-cidr, mask size of cluster CIDR must be less than or equal to --node-cidr-mask-size configured for CIDR family',
      );
    if (mask > (c.family === 4 ? 32 : 128))
      throw new Error(`--node-cidr-mask-size: ${mask} is longer than an IPv${c.family} address`);
    if (c.family === 6 && mask - c.prefix > 16)
      throw new Error('--node-cidr-mask-size-ipv6: New CIDR set failed; the node CIDR size is too big');
  });
  return { allocateNodeCidrs: true, clusterCidrs, nodeMaskSizes, serviceCidrs };
}
