import {
  apiServiceName,
  endpointSliceLabel,
  group,
  isAlreadyExists,
  isNotFound,
  naming,
  type ApiObject,
  type Catalog,
  type EndpointPort,
  type EndpointSlice,
  type Endpoints,
  type SliceEndpoint,
} from '@svc/api';
import { deepEqual } from '../registry/object-utils.js';
import type { GenericStore } from '../registry/store.js';
import type { Storage } from '../storage/interface.js';
import { isStorageError } from '../storage/interface.js';
import type { Stores } from './stores.js';

/** `--endpoint-reconciler-type`. */
export const ENDPOINT_RECONCILER_TYPES = ['master-count', 'lease', 'none'] as const;
export type EndpointReconcilerType = (typeof ENDPOINT_RECONCILER_TYPES)[number];

/** Keeps the API servers' addresses in the Endpoints (and EndpointSlice) of the `svc` Service. */
export interface EndpointReconciler {
  /** Records this server (its lease, for `lease`) and makes the Endpoints list the live servers. */
  reconcile(o: { ip: string; ports: EndpointPort[] }): Promise<void>;
  /** Takes this server out (graceful stop): its lease deleted and the Endpoints written without it. */
  remove(o: { ip: string; ports: EndpointPort[] }): Promise<void>;
}

const ctx = (): { fieldManager: string } => ({ fieldManager: naming().apiserverName });

/** Kubernetes' EndpointsAdapter: the Endpoints, and the EndpointSlice of the same name kept equal to it. */
export class EndpointsAdapter {
  constructor(private readonly o: { catalog: Catalog; stores: Stores }) {}

  private store(g: string, plural: string): GenericStore {
    const type = this.o.catalog.lookup(g, 'v1', plural);
    if (!type) throw new Error(`${plural} are not served`);
    return this.o.stores.storeFor(type);
  }

  /** The Endpoints of the `svc` Service, or undefined. */
  async get(): Promise<Endpoints | undefined> {
    try {
      return (await this.store('', 'endpoints').get('default', apiServiceName())) as Endpoints;
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** Writes the Endpoints (create when `create`), then its EndpointSlice. */
  async write(e: Endpoints, o: { create: boolean }): Promise<void> {
    const store = this.store('', 'endpoints');
    if (o.create) {
      try {
        await store.create('default', e, { ctx: ctx() });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    } else {
      await store.update('default', apiServiceName(), { updater: () => e, ctx: ctx() });
    }
    await this.ensureSlice(e);
  }

  /** The slice mirrors the Endpoints: IPv4 unless every address is IPv6; ready addresses then not-ready ones. */
  async ensureSlice(e: Endpoints): Promise<void> {
    const desired = sliceFromEndpoints(e);
    const store = this.store(group('discovery'), 'endpointslices');
    let current: EndpointSlice;
    try {
      current = (await store.get('default', apiServiceName())) as EndpointSlice;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await store.create('default', desired, { ctx: ctx() });
      } catch (createErr) {
        if (!isAlreadyExists(createErr)) throw createErr;
      }
      return;
    }
    if (current.addressType !== desired.addressType) {
      await store.delete('default', apiServiceName(), { ctx: {}, options: {} });
      await store.create('default', desired, { ctx: ctx() });
      return;
    }
    if (
      deepEqual(current.endpoints ?? [], desired.endpoints) &&
      deepEqual(current.ports ?? [], desired.ports ?? []) &&
      deepEqual(current.metadata.labels ?? {}, desired.metadata.labels ?? {})
    )
      return;
    await store.update('default', apiServiceName(), {
      updater: (cur) => ({ ...desired, metadata: { ...cur.metadata, labels: desired.metadata.labels } }),
      ctx: ctx(),
    });
  }
}

function sliceFromEndpoints(e: Endpoints): EndpointSlice {
  const subset = e.subsets?.[0];
  const all = [...(subset?.addresses ?? []), ...(subset?.notReadyAddresses ?? [])];
  const ipv6 = all.length > 0 && all.every((a) => a.ip.includes(':'));
  const endpoint = (ip: string, ready: boolean): SliceEndpoint => ({ addresses: [ip], conditions: { ready } });
  const slice: EndpointSlice = {
    apiVersion: `${group('discovery')}/v1`,
    kind: 'EndpointSlice',
    metadata: {
      name: e.metadata.name,
      namespace: 'default',
      labels: { [endpointSliceLabel('service-name')]: apiServiceName() },
    },
    addressType: ipv6 ? 'IPv6' : 'IPv4',
    endpoints: [
      ...(subset?.addresses ?? []).map((a) => endpoint(a.ip, true)),
      ...(subset?.notReadyAddresses ?? []).map((a) => endpoint(a.ip, false)),
    ],
  };
  if (subset?.ports?.length)
    slice.ports = subset.ports.map((p) => ({ name: p.name ?? '', protocol: p.protocol ?? 'TCP', port: p.port }));
  return slice;
}

/** The Endpoints named for the Service, labelled so the mirroring controller leaves it alone. */
function endpointsObject(current: Endpoints | undefined): Endpoints {
  const base: Endpoints = current
    ? structuredClone(current)
    : { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: apiServiceName(), namespace: 'default' } };
  return base;
}

/** Sets the skip-mirror label; true when it was not already set. */
function setSkipMirror(e: Endpoints): boolean {
  const key = endpointSliceLabel('skip-mirror');
  const labels = (e.metadata.labels ??= {});
  if (labels[key] === 'true') return false;
  labels[key] = 'true';
  return true;
}

const portsEqual = (a: EndpointPort[] | undefined, b: EndpointPort[]): boolean => deepEqual(a ?? [], b);
const byIp = (a: { ip: string }, b: { ip: string }): number => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0);

/**
 * `master-count` (deprecated in Kubernetes): each server adds its own address and, when more
 * than `--apiserver-count` are listed, drops the ones after its own, so the list settles on
 * the count; nothing ever notices a server that died.
 */
export class MasterCountReconciler implements EndpointReconciler {
  constructor(private readonly o: { adapter: EndpointsAdapter; count: number }) {}

  async reconcile(o: { ip: string; ports: EndpointPort[] }): Promise<void> {
    const current = await this.o.adapter.get();
    const e = endpointsObject(current);
    const skipChanged = setSkipMirror(e);
    if (!current) {
      e.subsets = [{ addresses: [{ ip: o.ip }], ports: o.ports }];
      return this.o.adapter.write(e, { create: true });
    }
    const subset = e.subsets?.length === 1 ? e.subsets[0] : undefined;
    if (!subset) {
      e.subsets = [{ addresses: [{ ip: o.ip }], ports: o.ports }];
      return this.o.adapter.write(e, { create: false });
    }
    const addresses = subset.addresses ?? [];
    const ipCorrect = addresses.some((a) => a.ip === o.ip) && addresses.length <= this.o.count;
    const portsCorrect = portsEqual(subset.ports, o.ports);
    if (!skipChanged && ipCorrect && portsCorrect) return this.o.adapter.ensureSlice(e);
    if (!ipCorrect) {
      const list = addresses.some((a) => a.ip === o.ip) ? [...addresses] : [...addresses, { ip: o.ip }];
      list.sort(byIp);
      const own = list.findIndex((a) => a.ip === o.ip);
      while (list.length > this.o.count) list.splice((own + 1) % list.length, 1);
      subset.addresses = list;
    }
    if (!portsCorrect) subset.ports = o.ports;
    return this.o.adapter.write(e, { create: false });
  }

  async remove(o: { ip: string; ports: EndpointPort[] }): Promise<void> {
    const current = await this.o.adapter.get();
    if (!current) return;
    const e = endpointsObject(current);
    const subset = e.subsets?.[0];
    if (!subset || !(subset.addresses ?? []).some((a) => a.ip === o.ip)) return;
    subset.addresses = (subset.addresses ?? []).filter((a) => a.ip !== o.ip);
    if (subset.addresses.length === 0) e.subsets = [];
    return this.o.adapter.write(e, { create: false });
  }
}

/** Kubernetes' default reconciler timings: leases live 15 s, renewed with each reconcile. */
export const MASTER_LEASE_TTL_SECONDS = 15;

/**
 * `lease`: each server keeps a key `<prefix>/masterleases/<ip>` alive in the store with a
 * short TTL (as Kubernetes' storageLeases), and every reconcile writes the Endpoints from the
 * keys that exist, so a server that stops renewing drops out within the TTL.
 */
export class LeaseReconciler implements EndpointReconciler {
  private stopping = false;

  constructor(
    private readonly o: { adapter: EndpointsAdapter; storage: Storage; storePrefix: string; ttlSeconds: number },
  ) {}

  private key(ip: string): string {
    return `${this.o.storePrefix}/masterleases/${ip}`;
  }

  /** Refreshes this server's key and its TTL (a changed generation forces the write, as Kubernetes does). */
  private async updateLease(ip: string): Promise<void> {
    const value = (generation: number): ApiObject =>
      ({
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: ip, generation },
        subsets: [{ addresses: [{ ip }] }],
      }) as ApiObject;
    try {
      await this.o.storage.guaranteedUpdate(this.key(ip), (cur) => value((cur.metadata.generation ?? 0) + 1), {
        ttlSeconds: this.o.ttlSeconds,
      });
    } catch (e) {
      if (!isStorageError(e, 'KeyNotFound')) throw e;
      try {
        await this.o.storage.create(this.key(ip), value(1), { ttlSeconds: this.o.ttlSeconds });
      } catch (err) {
        if (!isStorageError(err, 'KeyExists')) throw err;
      }
    }
  }

  /** The addresses whose keys are alive, sorted. */
  private async liveIps(): Promise<string[]> {
    const list = await this.o.storage.list(`${this.o.storePrefix}/masterleases/`);
    const ips = list.items.map((i) => (i as Endpoints).subsets?.[0]?.addresses?.[0]?.ip ?? i.metadata.name ?? '');
    return ips.filter((ip) => ip !== '').sort();
  }

  async reconcile(o: { ip: string; ports: EndpointPort[] }): Promise<void> {
    if (this.stopping) return;
    await this.updateLease(o.ip);
    await this.doReconcile(o.ports);
  }

  async remove(o: { ip: string; ports: EndpointPort[] }): Promise<void> {
    this.stopping = true;
    try {
      await this.o.storage.delete(this.key(o.ip));
    } catch (e) {
      if (!isStorageError(e, 'KeyNotFound')) throw e;
    }
    await this.doReconcile(o.ports);
  }

  private async doReconcile(ports: EndpointPort[]): Promise<void> {
    const current = await this.o.adapter.get();
    const ips = await this.liveIps();
    // A running server just refreshed its own key: none listed means the store answered wrong.
    if (!this.stopping && ips.length === 0)
      throw new Error(
        `no API server IP addresses were listed in storage, refusing to erase all endpoints for the ${apiServiceName()} Service`,
      );
    const e = endpointsObject(current);
    const skipChanged = setSkipMirror(e);
    const subset = e.subsets?.length === 1 ? e.subsets[0] : undefined;
    const listed = (subset?.addresses ?? []).map((a) => a.ip);
    const ipCorrect = !!subset && deepEqual(listed, ips) && (subset.notReadyAddresses ?? []).length === 0;
    const portsCorrect = !!subset && portsEqual(subset.ports, ports);
    if (current && !skipChanged && ipCorrect && portsCorrect) return this.o.adapter.ensureSlice(e);
    e.subsets = ips.length === 0 ? [] : [{ addresses: ips.map((ip) => ({ ip })), ports }];
    return this.o.adapter.write(e, { create: !current });
  }
}

/** `none`: the Endpoints are left to whoever writes them. */
export class NoneReconciler implements EndpointReconciler {
  async reconcile(): Promise<void> {}
  async remove(): Promise<void> {}
}
