import { createHash, randomUUID } from 'node:crypto';
import { hostname as osHostname } from 'node:os';
import {
  apiServerIdentityLabel,
  group,
  isAlreadyExists,
  isConflict,
  isNotFound,
  naming,
  nodeLabelKey,
  peerAdvertiseAddressAnnotation,
  type Catalog,
  type Lease,
} from '@svc/api';
import { sleep } from '@svc/machinery';
import type { Logger } from '@svc/component-base';
import type { GenericStore } from '../registry/store.js';
import type { Stores } from './stores.js';

/** Kubernetes' timings of the identity leases (pkg/controlplane): renew every 10 s, valid 1 h, GC hourly. */
export interface IdentityTiming {
  renewIntervalMs: number;
  leaseDurationSeconds: number;
  gcPeriodMs: number;
}

export const IDENTITY_TIMING: IdentityTiming = {
  renewIntervalMs: 10_000,
  leaseDurationSeconds: 3600,
  gcPeriodMs: 3_600_000,
};

/** RFC 4648 base32 without padding, lower case (Go's base32.StdEncoding.WithPadding(NoPadding), lowered). */
function base32(bytes: Uint8Array): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

/** Two-byte big-endian length, then the bytes (Go's cryptobyte AddUint16LengthPrefixed). */
function lengthPrefixed(s: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  const len = Buffer.alloc(2);
  len.writeUInt16BE(b.length);
  return Buffer.concat([len, b]);
}

/**
 * The identity Lease's name, as Kubernetes 1.32 derives the API server ID: `apiserver-` and the
 * first 16 bytes of SHA-256 over the length-prefixed host name and identity value, in lower-case
 * base32. Servers on one host share it (as in Kubernetes: the newest takes the lease over).
 */
export function identityLeaseName(host: string, identity = apiServerIdentityLabel().value): string {
  const hash = createHash('sha256')
    .update(Buffer.concat([lengthPrefixed(host), lengthPrefixed(identity)]))
    .digest();
  return `apiserver-${base32(hash.subarray(0, 16))}`;
}

const microTime = (ms: number): string => new Date(ms).toISOString().replace(/Z$/, '000Z');

/** Expired: renewTime + leaseDurationSeconds before now (Kubernetes' apiserverleasegc). */
export function leaseExpired(lease: Lease, now: number): boolean {
  const renew = Date.parse(lease.spec?.renewTime ?? '');
  const duration = lease.spec?.leaseDurationSeconds;
  if (Number.isNaN(renew) || duration === undefined) return false;
  return renew + duration * 1000 < now;
}

export interface IdentityOptions {
  catalog: Catalog;
  stores: Stores;
  log: Logger;
  timing: IdentityTiming;
  /** The host name hashed into the lease name (the OS host name unless a test says otherwise). */
  hostname?: string;
  /** `--peer-advertise-ip:port`, recorded on the lease when the peer proxy gate is on. */
  peerAddress?: string;
}

/**
 * APIServerIdentity: this server's Lease in the system namespace, renewed until `signal`
 * aborts, and the collector deleting other servers' leases that expired (checked again
 * before deleting, so a lease renewed meanwhile stays).
 */
export class ApiServerIdentity {
  readonly leaseName: string;
  readonly holderIdentity: string;
  private readonly host: string;

  constructor(private readonly o: IdentityOptions) {
    this.host = o.hostname ?? osHostname();
    this.leaseName = identityLeaseName(this.host);
    this.holderIdentity = `${this.leaseName}_${randomUUID()}`;
  }

  /** Renews the lease and collects expired ones until `signal` aborts; errors are logged and retried. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all([
      this.loop(signal, this.o.timing.renewIntervalMs, () => this.renew()),
      this.loop(signal, this.o.timing.gcPeriodMs, () => this.collectExpired()),
    ]);
  }

  private async loop(signal: AbortSignal, everyMs: number, step: () => Promise<void>): Promise<void> {
    while (!signal.aborted) {
      try {
        await step();
      } catch (e) {
        if (!signal.aborted) this.o.log.warn('apiserver identity lease', { error: (e as Error).message });
      }
      await sleep(everyMs, signal).catch(() => undefined);
    }
  }

  private leases(): GenericStore {
    const type = this.o.catalog.lookup(group('coordination'), 'v1', 'leases');
    if (!type) throw new Error('leases are not served');
    return this.o.stores.storeFor(type);
  }

  private desired(current?: Lease): Lease {
    const label = apiServerIdentityLabel();
    const metadata = { ...(current?.metadata ?? {}), name: this.leaseName, namespace: naming().systemNamespace };
    metadata.labels = { ...(metadata.labels ?? {}), [label.key]: label.value, [nodeLabelKey('hostname')]: this.host };
    if (this.o.peerAddress)
      metadata.annotations = {
        ...(metadata.annotations ?? {}),
        [peerAdvertiseAddressAnnotation()]: this.o.peerAddress,
      };
    return {
      apiVersion: `${group('coordination')}/v1`,
      kind: 'Lease',
      metadata,
      spec: {
        ...(current?.spec ?? {}),
        holderIdentity: this.holderIdentity,
        leaseDurationSeconds: this.o.timing.leaseDurationSeconds,
        renewTime: microTime(Date.now()),
      },
    };
  }

  /** One renewal: the lease (re)written with this server as holder and renewTime now. */
  async renew(): Promise<void> {
    const store = this.leases();
    const ctx = { fieldManager: naming().apiserverName };
    try {
      await store.update(naming().systemNamespace, this.leaseName, {
        updater: (current) => this.desired(current as Lease),
        ctx,
      });
    } catch (e) {
      if (!isNotFound(e)) throw e;
      try {
        await store.create(naming().systemNamespace, this.desired(), { ctx });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    }
  }

  /** Deletes every identity lease that expired, each re-read first (Kubernetes' apiserverleasegc). */
  async collectExpired(): Promise<void> {
    const store = this.leases();
    const label = apiServerIdentityLabel();
    const ns = naming().systemNamespace;
    const list = await store.list(ns, { labelMatch: (l) => l[label.key] === label.value });
    for (const item of list.items as Lease[]) {
      if (!leaseExpired(item, Date.now())) continue;
      const name = item.metadata.name ?? '';
      try {
        const fresh = (await store.get(ns, name)) as Lease;
        if (!leaseExpired(fresh, Date.now())) continue;
        await store.delete(ns, name, {
          ctx: {},
          options: { preconditions: { resourceVersion: fresh.metadata.resourceVersion } },
        });
        this.o.log.info('deleted expired apiserver identity lease', { lease: name });
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e;
      }
    }
  }
}
