import { isIP } from 'node:net';
import type { ApiObject } from '@svc/api';
import { formatIp, ipToBigInt } from '@svc/machinery';
import { isStorageError, type Storage } from '../storage/interface.js';

/**
 * One range of Service addresses or node ports as a bitmap kept in a single storage key, as
 * Kubernetes' RangeAllocation objects under `/registry/ranges/`: every allocation and release is
 * a compare-and-swap of that key (the storage's guaranteedUpdate retries on a concurrent
 * write), so API servers sharing the store never hand out the same item.
 */
export class RangeBitmap {
  constructor(
    private readonly o: {
      storage: Storage;
      key: string;
      /** Written into the object, so a changed range is noticed. */
      range: string;
      size: number;
      /** Items below this offset are left for static (requested) allocation while others are free. */
      dynamicOffset: number;
    },
  ) {}

  get size(): number {
    return this.o.size;
  }

  /** Marks `index` taken; false when it already was. With `dryRun`, only checks. */
  async allocate(index: number, opts: { dryRun?: boolean } = {}): Promise<boolean> {
    let free = false;
    await this.change((bits) => {
      free = !has(bits, index);
      if (free && !opts.dryRun) set(bits, index, true);
      return free && !opts.dryRun;
    });
    return free;
  }

  /** Takes a free item (upper band first, at random, as Kubernetes); undefined when the range is full. */
  async allocateNext(opts: { dryRun?: boolean } = {}): Promise<number | undefined> {
    let picked: number | undefined;
    await this.change((bits) => {
      picked = pickFree(bits, { size: this.o.size, offset: this.o.dynamicOffset });
      if (picked !== undefined && !opts.dryRun) set(bits, picked, true);
      return picked !== undefined && !opts.dryRun;
    });
    return picked;
  }

  async release(index: number): Promise<void> {
    await this.change((bits) => {
      if (!has(bits, index)) return false;
      set(bits, index, false);
      return true;
    });
  }

  /**
   * One compare-and-swap that marks `mark` taken and frees `release` (the repair's write); answers
   * which items actually changed.
   */
  async reconcile(o: { mark: readonly number[]; release: readonly number[] }): Promise<{
    marked: number[];
    released: number[];
  }> {
    let marked: number[] = [];
    let released: number[] = [];
    await this.change((bits) => {
      marked = o.mark.filter((i) => i >= 0 && i < this.o.size && !has(bits, i));
      released = o.release.filter((i) => has(bits, i));
      for (const i of marked) set(bits, i, true);
      for (const i of released) set(bits, i, false);
      return marked.length > 0 || released.length > 0;
    });
    return { marked, released };
  }

  async allocated(): Promise<number[]> {
    const bits = await this.read();
    const out: number[] = [];
    for (let i = 0; i < this.o.size; i++) if (has(bits, i)) out.push(i);
    return out;
  }

  private async read(): Promise<Uint8Array> {
    try {
      return decode(await this.o.storage.get(this.o.key));
    } catch (e) {
      if (isStorageError(e, 'KeyNotFound')) return new Uint8Array(Math.ceil(this.o.size / 8));
      throw e;
    }
  }

  /** Runs `mutate` on the current bitmap inside one compare-and-swap; it answers whether to write. */
  private async change(mutate: (bits: Uint8Array) => boolean): Promise<void> {
    const object = (bits: Uint8Array): ApiObject =>
      ({
        apiVersion: 'v1',
        kind: 'RangeAllocation',
        metadata: { name: '' },
        range: this.o.range,
        data: Buffer.from(bits).toString('base64'),
      }) as ApiObject;
    for (;;) {
      try {
        await this.o.storage.guaranteedUpdate(this.o.key, (cur) => {
          const bits = decode(cur, this.o.size);
          return mutate(bits) ? object(bits) : cur;
        });
        return;
      } catch (e) {
        if (!isStorageError(e, 'KeyNotFound')) throw e;
      }
      const bits = new Uint8Array(Math.ceil(this.o.size / 8));
      if (!mutate(bits)) return;
      try {
        await this.o.storage.create(this.o.key, object(bits));
        return;
      } catch (e) {
        if (!isStorageError(e, 'KeyExists')) throw e;
      }
    }
  }
}

function decode(obj: ApiObject, size = 0): Uint8Array {
  const data = typeof obj.data === 'string' ? Buffer.from(obj.data, 'base64') : Buffer.alloc(0);
  const bits = new Uint8Array(Math.max(data.length, Math.ceil(size / 8)));
  bits.set(data);
  return bits;
}

const has = (bits: Uint8Array, i: number): boolean => ((bits[i >> 3] ?? 0) & (1 << (i & 7))) !== 0;

function set(bits: Uint8Array, i: number, on: boolean): void {
  const b = bits[i >> 3] ?? 0;
  bits[i >> 3] = on ? b | (1 << (i & 7)) : b & ~(1 << (i & 7));
}

/** A random free index in [offset, size), else in [0, offset). */
function pickFree(bits: Uint8Array, r: { size: number; offset: number }): number | undefined {
  for (const [lo, hi] of [
    [r.offset, r.size],
    [0, r.offset],
  ] as const) {
    const n = hi - lo;
    if (n <= 0) continue;
    const start = Math.floor(Math.random() * n);
    for (let k = 0; k < n; k++) {
      const i = lo + ((start + k) % n);
      if (!has(bits, i)) return i;
    }
  }
  return undefined;
}

/** Kubernetes' calculateRangeOffset: size/step bounded by [min, max], 0 for ranges smaller than min. */
function rangeOffset(size: number, c: { min: number; max: number; step: number }): number {
  if (size < c.min) return 0;
  return Math.min(c.max, Math.max(c.min, Math.floor(size / c.step)));
}

/** The Service ClusterIP range: addresses of a CIDR less the network (and, for IPv4, broadcast) address. */
export class ClusterIpRange {
  readonly family: 4 | 6;
  /** The first allocatable address (network + 1). */
  private readonly base: bigint;
  readonly size: number;
  readonly bitmap: RangeBitmap;

  constructor(o: { storage: Storage; storePrefix: string; cidr: string }) {
    this.cidr = o.cidr;
    const [ip, bits] = o.cidr.split('/') as [string, string];
    this.family = isIP(ip) === 4 ? 4 : 6;
    const hostBits = BigInt((this.family === 4 ? 32 : 128) - Number(bits));
    const network = ((ipToBigInt(ip) ?? 0n) >> hostBits) << hostBits;
    this.base = network + 1n;
    const total = 1n << hostBits;
    // As Kubernetes: IPv4 loses the network and broadcast addresses, IPv6 the network address; at most 2^16 for IPv6.
    const usable = this.family === 4 ? total - 2n : total - 1n;
    this.size = Number(usable > 65536n && this.family === 6 ? 65536n : usable);
    this.bitmap = new RangeBitmap({
      storage: o.storage,
      key: `${o.storePrefix}/ranges/serviceips`,
      range: o.cidr,
      size: this.size,
      dynamicOffset: rangeOffset(this.size, { min: 16, max: 256, step: 16 }),
    });
  }

  readonly cidr: string;

  get ipFamily(): 'IPv4' | 'IPv6' {
    return this.family === 4 ? 'IPv4' : 'IPv6';
  }

  /** The index of `ip` in the range, or undefined when it is outside. */
  indexOf(ip: string): number | undefined {
    if (isIP(ip) !== this.family) return undefined;
    const n = ipToBigInt(ip);
    if (n === undefined || n < this.base || n >= this.base + BigInt(this.size)) return undefined;
    return Number(n - this.base);
  }

  ipAt(index: number): string {
    return formatIp(this.base + BigInt(index), this.family);
  }
}

/** The NodePort range: a bitmap of ports min..max. */
export class NodePortRange {
  readonly bitmap: RangeBitmap;

  constructor(private readonly o: { storage: Storage; storePrefix: string; min: number; max: number }) {
    const size = o.max - o.min + 1;
    this.bitmap = new RangeBitmap({
      storage: o.storage,
      key: `${o.storePrefix}/ranges/servicenodeports`,
      range: `${o.min}-${o.max}`,
      size,
      dynamicOffset: rangeOffset(size, { min: 16, max: 128, step: 32 }),
    });
  }

  get text(): string {
    return `${this.o.min}-${this.o.max}`;
  }

  indexOf(port: number): number | undefined {
    return port >= this.o.min && port <= this.o.max ? port - this.o.min : undefined;
  }

  portAt(index: number): number {
    return this.o.min + index;
  }
}

/** The first address of a Service range: the API server's own Service takes it, as Kubernetes' `kubernetes` Service. */
export function firstServiceIp(cidr: string): string {
  const [ip, bits] = cidr.split('/') as [string, string];
  const family = isIP(ip) === 4 ? 4 : 6;
  const hostBits = BigInt((family === 4 ? 32 : 128) - Number(bits));
  return formatIp((((ipToBigInt(ip) ?? 0n) >> hostBits) << hostBits) + 1n, family);
}
