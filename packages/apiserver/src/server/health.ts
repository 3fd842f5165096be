import {
  logCheck,
  pingCheck,
  storeCheck,
  withGracePeriod,
  type HealthCheck,
  type PostStartHook,
  type ShutdownCheck,
} from '@svc/component-base';
import type { ApiServerOptions } from '../options.js';
import type { BuiltStorage } from './storage.js';

export interface HealthChecks {
  livez: () => readonly HealthCheck[];
  readyz: () => readonly HealthCheck[];
  healthz: () => readonly HealthCheck[];
}

/**
 * The checks of `/livez`, `/readyz` and `/healthz`, as Kubernetes lists them: ping, log, the
 * store (with the live or ready timeout), the post-start hooks (livez gives them
 * `--livez-grace-period` after start), and for readyz also the watch cache and shutdown.
 */
export function healthChecks(o: {
  opts: ApiServerOptions;
  storage: BuiltStorage;
  hooks: readonly PostStartHook[];
  shutdown: ShutdownCheck;
  startedAt: number;
  /** Checks on `/healthz` and `/readyz` only (encryption's `kms-providers`, as Kubernetes adds it). */
  notLivez?: readonly HealthCheck[];
  /** Checks on `/healthz` only: problems to report that must not take the server out of service. */
  healthzOnly?: readonly HealthCheck[];
}): HealthChecks {
  const { opts, storage, hooks } = o;
  const store = (timeoutMs: number): HealthCheck => storeCheck('store', () => storage.storage.healthCheck(timeoutMs));
  const cache = storage.cache;
  const watchCache: HealthCheck[] = cache
    ? [
        {
          name: 'watch-cache',
          check: async () => {
            if (!cache.synced) throw new Error('watch cache not synced');
          },
        },
      ]
    : [];
  const graced = hooks.map((h) => withGracePeriod(h, o.startedAt, opts.livezGracePeriodMs));
  const notLivez = o.notLivez ?? [];
  return {
    livez: () => [pingCheck, logCheck, store(opts.storeHealthcheckTimeoutMs), ...graced],
    readyz: () => [
      pingCheck,
      logCheck,
      store(opts.storeReadycheckTimeoutMs),
      ...notLivez,
      ...watchCache,
      ...hooks,
      o.shutdown,
    ],
    healthz: () => [
      pingCheck,
      logCheck,
      store(opts.storeHealthcheckTimeoutMs),
      ...notLivez,
      ...(o.healthzOnly ?? []),
      ...hooks,
    ],
  };
}
