import { isIPv4, isIPv6 } from 'node:net';
import { formatIp, ipToBigInt } from '@svc/machinery';

/** A network: its family, first address and prefix length. */
export interface Cidr {
  family: 4 | 6;
  /** The network address (host bits zero). */
  ip: bigint;
  prefix: number;
}

const familyBits = (family: 4 | 6): number => (family === 4 ? 32 : 128);

export function formatCidr(c: Cidr): string {
  return `${formatIp(c.ip, c.family)}/${c.prefix}`;
}

/**
 * Parses `a.b.c.d/n` or `x:y::z/n` as Go's net.ParseCIDR does (the address is masked to its
 * network); throws `invalid CIDR address: <s>`.
 */
export function parseCidr(s: string): Cidr {
  const bad = (): Error => new Error(`invalid CIDR address: ${s}`);
  const slash = s.indexOf('/');
  if (slash < 0) throw bad();
  const addr = s.slice(0, slash);
  const prefixText = s.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) throw bad();
  const prefix = Number(prefixText);
  const family = isIPv4(addr) ? 4 : isIPv6(addr) ? 6 : undefined;
  if (family === undefined || prefix > familyBits(family)) throw bad();
  const ip = ipToBigInt(addr) ?? 0n;
  return { family, ip: maskTo(ip, { family, prefix }), prefix };
}

function maskTo(ip: bigint, o: { family: 4 | 6; prefix: number }): bigint {
  const host = BigInt(familyBits(o.family) - o.prefix);
  return (ip >> host) << host;
}

/** Whether `a` and `b` share any address (one contains the other). */
export function overlaps(a: Cidr, b: Cidr): boolean {
  if (a.family !== b.family) return false;
  const shorter = Math.min(a.prefix, b.prefix);
  return maskTo(a.ip, { family: a.family, prefix: shorter }) === maskTo(b.ip, { family: b.family, prefix: shorter });
}

/** Kubernetes' limit for IPv6: the node mask at most 16 bits longer than the cluster CIDR's. */
const CLUSTER_SUBNET_MAX_DIFF = 16;

/**
 * The node CIDRs of one cluster CIDR, as Kubernetes' cidrset: blocks of `nodeMaskSize` numbered
 * from the cluster CIDR's start; `allocateNext` takes the first free block at or after the one
 * after the last taken (wrapping around), so a released block is not handed out again at once.
 */
export class CidrSet {
  readonly maxCidrs: number;
  private readonly used = new Set<number>();
  private nextCandidate = 0;

  constructor(
    readonly cluster: Cidr,
    readonly nodeMaskSize: number,
  ) {
    const diff = nodeMaskSize - cluster.prefix;
    if (cluster.family === 6 && diff > CLUSTER_SUBNET_MAX_DIFF)
      throw new Error('New CIDR set failed; the node CIDR size is too big');
    this.maxCidrs = 2 ** diff;
  }

  get allocated(): number {
    return this.used.size;
  }

  private block(index: number): Cidr {
    const host = BigInt(familyBits(this.cluster.family) - this.nodeMaskSize);
    return { family: this.cluster.family, ip: this.cluster.ip | (BigInt(index) << host), prefix: this.nodeMaskSize };
  }

  private indexOf(ip: bigint): number {
    const host = BigInt(familyBits(this.cluster.family) - this.nodeMaskSize);
    return Number((ip ^ this.cluster.ip) >> host);
  }

  /** The next free block, marked used; undefined when every block is taken. */
  allocateNext(): Cidr | undefined {
    if (this.used.size >= this.maxCidrs) return undefined;
    let candidate = this.nextCandidate;
    while (this.used.has(candidate)) candidate = (candidate + 1) % this.maxCidrs;
    this.nextCandidate = (candidate + 1) % this.maxCidrs;
    this.used.add(candidate);
    return this.block(candidate);
  }

  /** The blocks `c` covers (all of them when `c` contains the cluster CIDR); throws when outside. */
  private range(c: Cidr): [number, number] {
    if (!overlaps(c, this.cluster))
      throw new Error(`cidr ${formatCidr(c)} is out the range of cluster cidr ${formatCidr(this.cluster)}`);
    if (c.prefix <= this.cluster.prefix) return [0, this.maxCidrs - 1];
    const bits = familyBits(c.family);
    const last = c.ip | ((1n << BigInt(bits - c.prefix)) - 1n);
    return [this.indexOf(c.ip), this.indexOf(last)];
  }

  /** Marks every block `c` covers as used (already used is fine); answers how many were free. */
  occupy(c: Cidr): number {
    const [begin, end] = this.range(c);
    const before = this.used.size;
    for (let i = begin; i <= end; i++) this.used.add(i);
    return this.used.size - before;
  }

  /** Frees every block `c` covers; answers how many were used. */
  release(c: Cidr): number {
    const [begin, end] = this.range(c);
    const before = this.used.size;
    for (let i = begin; i <= end; i++) this.used.delete(i);
    return before - this.used.size;
  }
}
