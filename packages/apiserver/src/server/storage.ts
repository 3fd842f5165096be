import type { Catalog } from '@svc/api';
import type { Logger } from '@svc/component-base';
import type { ApiServerOptions } from '../options.js';
import type { ApiServerMetrics } from '../metrics/metrics.js';
import { InstrumentedStorage } from '../metrics/instrumented-storage.js';
import { resourcePrefix } from '../registry/keys.js';
import { CachedStorage } from '../storage/cacher/cached-storage.js';
import { runCompactor } from '../storage/compactor.js';
import { Etcd3Storage } from '../storage/etcd3/etcd3-storage.js';
import type { Storage } from '../storage/interface.js';
import type { KeyTransformers } from '../storage/value/resource-transformers.js';

export interface BuiltStorage {
  etcd: Etcd3Storage;
  /** What the stores use: the watch cache over etcd (`--watch-cache`), else etcd, both instrumented. */
  storage: Storage;
  /** The watch cache (its `synced` is a readyz check); present when `--watch-cache` is on. */
  cache?: CachedStorage;
  /** Starts the background work: the watch cache's watches and the compactor. */
  start(): void;
}

/**
 * The storage stack: etcd (`--store-*`), request metrics on every call, the watch cache with
 * one watch per served type, and the compactor. Nothing talks to etcd until `start` (or a
 * request). Types stored as another type (events/v1 Events) are served from that type's
 * cache. Stops compacting when `signal` aborts.
 */
export function buildStorage(
  opts: ApiServerOptions,
  deps: {
    catalog: Catalog;
    metrics: ApiServerMetrics;
    log: Logger;
    signal: AbortSignal;
    /** Encryption at rest (`--encryption-provider-config`), between the store and etcd. */
    transformers?: KeyTransformers;
  },
): BuiltStorage {
  const { catalog, metrics, log } = deps;
  const tls =
    opts.storeCaFile || opts.storeCertFile
      ? { caFile: opts.storeCaFile, certFile: opts.storeCertFile, keyFile: opts.storeKeyFile }
      : undefined;
  const etcd = new Etcd3Storage({
    endpoints: opts.storeServers,
    tls,
    leaseReuseDurationSeconds: opts.leaseReuseDurationSeconds,
    transformers: deps.transformers,
  });
  const instrumented = new InstrumentedStorage(etcd, metrics, opts.storePrefix);
  const compact = (): void =>
    runCompactor(etcd, {
      intervalMs: opts.storeCompactionIntervalMs,
      signal: deps.signal,
      onError: (e) => log.warn('compaction failed', { error: (e as Error).message }),
      onCompact: (rev, seconds) => {
        metrics.etcdRequestDuration.observe({ operation: 'compact', type: 'compact' }, seconds);
        log.v(2).info('compacted the store', { revision: rev });
      },
    });
  if (!opts.watchCache) return { etcd, storage: instrumented, start: compact };
  const cache = new CachedStorage(instrumented, {
    storePrefix: opts.storePrefix,
    consistentListFromCache: opts.featureGates.enabled('ConsistentListFromCache'),
    cacher: {
      onError: (e) => log.warn('watch cache: store watch failed; restarting', { error: (e as Error).message }),
      onCorrupt: (keys) => log.error('watch cache: stored values that cannot be decoded; reads of them fail', { keys }),
    },
  });
  const start = (): void => {
    cache.start(storedTypes(catalog).map((r) => resourcePrefix(opts.storePrefix, r)));
    compact();
  };
  return { etcd, storage: cache, cache, start };
}

/** The served types that have storage of their own (not virtual, not stored as another type). */
export function storedTypes(catalog: Catalog): ReturnType<Catalog['all']> {
  return catalog.all().filter((r) => !r.virtual && !r.storedAs);
}
