import { sleep } from '@svc/machinery';
import { ApiService } from './api-service.js';
import { ApiServerIdentity, IDENTITY_TIMING, type IdentityTiming } from './apiserver-identity.js';
import type { Startup } from './startup.js';
import type { BuiltStorage } from './storage.js';
import type { Stores } from './stores.js';
import { runLegacyTokenTracking } from './legacy-token-tracking.js';

/** How long a stopping server tries to take itself out of the endpoints. */
const STOP_TIMEOUT_MS = 5000;

/** Test hooks for the controllers below (Kubernetes' timings otherwise). */
export interface ApiServerControllerHooks {
  /** The host name hashed into the identity Lease's name (the OS host name otherwise). */
  hostname?: string;
  identity?: Partial<IdentityTiming>;
  /** How often the `svc` Service and its endpoints are reconciled (10 s). */
  endpointIntervalMs?: number;
  /** TTL of each server's key for the `lease` endpoint reconciler (15 s). */
  masterLeaseTtlSeconds?: number;
}

/**
 * The API server's own controllers, started once the post-start hooks are done (the system
 * namespaces exist): the identity Lease and its collector (gate APIServerIdentity), the
 * `svc` Service with its endpoints, and the legacy token tracking ConfigMap. They run until the server stops; `stop` first takes this
 * server out of the Service's endpoints.
 */
export function startApiServerControllers(
  s: Startup,
  d: { stores: Stores; storage: BuiltStorage; port: number; started: Promise<void>; hooks?: ApiServerControllerHooks },
): { stop(): Promise<void> } {
  const { opts, log, catalog } = s;
  const signal = s.stopping.signal;
  const service = new ApiService({
    opts,
    catalog,
    stores: d.stores,
    storage: d.storage,
    log,
    port: () => d.port,
    intervalMs: d.hooks?.endpointIntervalMs,
    leaseTtlSeconds: d.hooks?.masterLeaseTtlSeconds,
  });
  const peerAddress = opts.featureGates.enabled('UnknownVersionInteroperabilityProxy')
    ? joinHostPort(opts.peerAdvertiseIp ?? service.ip, opts.peerAdvertisePort ?? d.port)
    : undefined;
  const identity = opts.featureGates.enabled('APIServerIdentity')
    ? new ApiServerIdentity({
        catalog,
        stores: d.stores,
        log,
        timing: { ...IDENTITY_TIMING, ...d.hooks?.identity },
        hostname: d.hooks?.hostname,
        peerAddress,
      })
    : undefined;
  if (peerAddress)
    log.info(
      'UnknownVersionInteroperabilityProxy: the peer address is published on the identity Lease; this server does not proxy requests to peers',
      {
        peerAddress,
      },
    );
  log.info('API server Service endpoints', { reconciler: opts.endpointReconcilerType, address: service.ip });
  let runningNow = false;
  const running = d.started.then(() => {
    runningNow = !signal.aborted;
    return Promise.all([
      identity?.run(signal),
      runningNow ? service.run(signal) : undefined,
      runningNow ? runLegacyTokenTracking(s, d.stores, signal) : undefined,
    ]);
  });
  running.catch((e: unknown) => log.warn('API server controllers ended', { error: (e as Error).message }));
  return {
    // Bounded, so an unreachable store does not hold the shutdown up.
    stop: async () => {
      if (!runningNow) return;
      const timer = new AbortController();
      await Promise.race([service.stop(), sleep(STOP_TIMEOUT_MS, timer.signal)]);
      timer.abort();
    },
  };
}

function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
