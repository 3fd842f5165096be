import { networkInterfaces } from 'node:os';
import { isIP } from 'node:net';
import {
  apiServiceName,
  isAlreadyExists,
  isNotFound,
  naming,
  type ApiObject,
  type Catalog,
  type EndpointPort,
} from '@svc/api';
import { sleep } from '@svc/machinery';
import type { Logger } from '@svc/component-base';
import type { ApiServerOptions } from '../options.js';
import { deepEqual } from '../registry/object-utils.js';
import { firstServiceIp } from '../registry/service-allocator.js';
import type { BuiltStorage } from './storage.js';
import type { Stores } from './stores.js';
import {
  EndpointsAdapter,
  LeaseReconciler,
  MASTER_LEASE_TTL_SECONDS,
  MasterCountReconciler,
  NoneReconciler,
  type EndpointReconciler,
} from './endpoint-reconciler.js';

/** Kubernetes' bootstrap controller: the Service and its endpoints are reconciled every 10 s. */
export const ENDPOINT_INTERVAL_MS = 10_000;

/** The port of the `svc` Service (Kubernetes' ServicePort 443; the target is the secure port). */
const SERVICE_PORT = 443;

/**
 * The address this server advertises: `--advertise-address`, else the bind address unless it is
 * a wildcard or loopback, else the first non-internal IPv4 (then IPv6) address of this host, as
 * Kubernetes' ResolveExternalAddress chooses.
 */
export function resolveAdvertiseAddress(opts: Pick<ApiServerOptions, 'advertiseAddress' | 'bindAddress'>): string {
  if (opts.advertiseAddress && !isUnspecified(opts.advertiseAddress)) return opts.advertiseAddress;
  const bind = opts.bindAddress;
  if (isIP(bind) && !isUnspecified(bind) && !bind.startsWith('127.') && bind !== '::1') return bind;
  const all = Object.values(networkInterfaces()).flatMap((l) => l ?? []);
  const pick =
    all.find((i) => !i.internal && i.family === 'IPv4') ?? all.find((i) => !i.internal && i.family === 'IPv6');
  if (!pick)
    throw new Error('unable to find a suitable network address: no non-loopback interface; set --advertise-address');
  return pick.address;
}

const isUnspecified = (ip: string): boolean => ip === '0.0.0.0' || ip === '::';

export interface ApiServiceOptions {
  opts: ApiServerOptions;
  catalog: Catalog;
  stores: Stores;
  storage: BuiltStorage;
  log: Logger;
  /** The secure port, once bound. */
  port: () => number;
  /** Test hooks: reconcile period and lease TTL (Kubernetes' 10 s and 15 s otherwise). */
  intervalMs?: number;
  leaseTtlSeconds?: number;
}

/**
 * The `svc` Service in `default` (Kubernetes' `kubernetes` Service) and, by
 * `--endpoint-reconciler-type`, its Endpoints and EndpointSlice listing the live API servers.
 * `run` loops until its signal aborts; `stop` takes this server out of the Endpoints first.
 */
export class ApiService {
  private readonly reconciler: EndpointReconciler;
  readonly ip: string;

  constructor(private readonly o: ApiServiceOptions) {
    this.ip = resolveAdvertiseAddress(o.opts);
    const adapter = new EndpointsAdapter({ catalog: o.catalog, stores: o.stores });
    switch (o.opts.endpointReconcilerType) {
      case 'lease':
        this.reconciler = new LeaseReconciler({
          adapter,
          storage: o.storage.storage,
          storePrefix: o.opts.storePrefix,
          ttlSeconds: o.leaseTtlSeconds ?? MASTER_LEASE_TTL_SECONDS,
        });
        break;
      case 'master-count':
        this.reconciler = new MasterCountReconciler({ adapter, count: o.opts.apiserverCount });
        break;
      case 'none':
        this.reconciler = new NoneReconciler();
        break;
    }
  }

  private ports(): EndpointPort[] {
    return [{ name: 'https', port: this.o.port(), protocol: 'TCP' }];
  }

  /** The Service as Kubernetes' bootstrap controller writes it (NodePort when `--svc-service-node-port` is set). */
  private service(): ApiObject {
    const nodePort = this.o.opts.svcServiceNodePort;
    const port: Record<string, unknown> = {
      name: 'https',
      protocol: 'TCP',
      port: SERVICE_PORT,
      targetPort: this.o.port(),
    };
    if (nodePort > 0) port.nodePort = nodePort;
    return {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: apiServiceName(),
        namespace: 'default',
        labels: { component: 'apiserver', provider: naming().clusterName },
      },
      spec: {
        ports: [port],
        sessionAffinity: 'None',
        type: nodePort > 0 ? 'NodePort' : 'ClusterIP',
        clusterIP: firstServiceIp(this.o.opts.serviceClusterIpRange),
      },
    };
  }

  /** Creates the Service, or corrects its ports and type (nothing else) when they differ. */
  async ensureService(): Promise<void> {
    const type = this.o.catalog.lookup('', 'v1', 'services');
    if (!type) return;
    const store = this.o.stores.storeFor(type);
    const desired = this.service();
    const ctx = { fieldManager: naming().apiserverName };
    const desiredSpec = desired.spec as { ports: unknown[]; type: string };
    try {
      const current = await store.get('default', apiServiceName());
      const spec = (current.spec ?? {}) as { ports?: unknown[]; type?: string };
      if (deepEqual(spec.ports, desiredSpec.ports) && spec.type === desiredSpec.type) return;
      await store.update('default', apiServiceName(), {
        updater: (cur) => ({ ...cur, spec: { ...(cur.spec ?? {}), ports: desiredSpec.ports, type: desiredSpec.type } }),
        ctx,
      });
      this.o.log.info('updated the API server Service', { service: apiServiceName() });
    } catch (e) {
      if (!isNotFound(e)) throw e;
      try {
        await store.create('default', desired, { ctx });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    }
  }

  /** One pass: the Service, then the endpoints. */
  async reconcile(): Promise<void> {
    await this.ensureService();
    await this.reconciler.reconcile({ ip: this.ip, ports: this.ports() });
  }

  /** Reconciles every interval until `signal` aborts; failures are logged and retried. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.reconcile();
      } catch (e) {
        if (!signal.aborted) this.o.log.warn('API server Service reconcile failed', { error: (e as Error).message });
      }
      await sleep(this.o.intervalMs ?? ENDPOINT_INTERVAL_MS, signal);
    }
  }

  /** Takes this server out of the Endpoints (best effort: a failure is logged). */
  async stop(): Promise<void> {
    try {
      await this.reconciler.remove({ ip: this.ip, ports: this.ports() });
    } catch (e) {
      this.o.log.warn('removing this API server from the Service endpoints failed', { error: (e as Error).message });
    }
  }
}
