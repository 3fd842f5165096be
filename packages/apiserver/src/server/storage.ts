import type { Catalog } from '@svc/api';
import type { Logger } from '@svc/component-base';
import { ConfigurationError, type ApiServerOptions } from '../options.js';
import type { ApiServerMetrics } from '../metrics/metrics.js';
import { InstrumentedStorage } from '../metrics/instrumented-storage.js';
import { resourcePrefix } from '../registry/keys.js';
import { uncachedPrefixes } from '../watch-cache-sizes.js';
import { CachedStorage } from '../storage/cacher/cached-storage.js';
import { runCompactor } from '../storage/compactor.js';
import { Etcd3Storage } from '../storage/etcd3/etcd3-storage.js';
import type { Storage } from '../storage/interface.js';
import type { RedisStorage } from '../storage/redis/redis-storage.js';
import { RoutedStorage, type StorageRoute } from '../storage/routed-storage.js';
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
 * one watch per served type (not Events by default: `--watch-cache-sizes`), and the compactor.
 * Nothing talks to etcd until `start` (or a request). Types stored as another type (events/v1
 * Events) are served from that type's cache. Stops compacting when `signal` aborts.
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
    /**
     * The Redis store, imported by the caller only when an override names Redis (ioredis
     * costs ~90 ms of every start-up otherwise).
     */
    redis?: typeof RedisStorage;
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
  const overrides = overrideStores(opts, { catalog, tls, redis: deps.redis });
  const main = new InstrumentedStorage(etcd, metrics, opts.storePrefix);
  const instrumented =
    overrides.length === 0
      ? main
      : new RoutedStorage(
          main,
          overrides.map((r) => ({ ...r, storage: new InstrumentedStorage(r.storage, metrics, opts.storePrefix) })),
        );
  const compactOne = (store: Etcd3Storage): void =>
    runCompactor(store, {
      intervalMs: opts.storeCompactionIntervalMs,
      signal: deps.signal,
      onError: (e) => log.warn('compaction failed', { error: (e as Error).message }),
      onCompact: (rev, seconds) => {
        metrics.etcdRequestDuration.observe({ operation: 'compact', type: 'compact' }, seconds);
        log.v(2).info('compacted the store', { revision: rev });
      },
    });
  // Every etcd is compacted by its own rounds; a Redis store compacts its change log itself.
  const compact = (): void => {
    compactOne(etcd);
    for (const r of overrides) if (r.storage instanceof Etcd3Storage) compactOne(r.storage);
  };
  if (!opts.watchCache) return { etcd, storage: instrumented, start: compact };
  const cache = new CachedStorage(instrumented, {
    storePrefix: opts.storePrefix,
    consistentListFromCache: opts.featureGates.enabled('ConsistentListFromCache'),
    uncached: uncachedPrefixes(catalog, opts.storePrefix, opts.watchCacheSizes),
    ...(instrumented instanceof RoutedStorage ? { storeFor: (p: string) => instrumented.storageFor(p) } : {}),
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

/**
 * The stores of `--store-servers-overrides`, one per overridden resource, keyed by the
 * resource's storage prefix (a type stored as another, events/v1 Events, names that type's
 * prefix). Overrides naming the same servers share one client.
 */
function overrideStores(
  opts: ApiServerOptions,
  deps: {
    catalog: Catalog;
    tls?: { caFile?: string; certFile?: string; keyFile?: string };
    redis?: typeof RedisStorage;
  },
): StorageRoute[] {
  const clients = new Map<string, Storage>();
  const routes: StorageRoute[] = [];
  for (const o of opts.storeServersOverrides) {
    const served = deps.catalog.all().find((r) => r.group === o.group && r.plural === o.resource);
    const stored = served?.storedAs ?? { group: o.group, plural: o.resource };
    const prefix = resourcePrefix(opts.storePrefix, stored);
    const id = o.servers.join(';');
    let storage = clients.get(id);
    if (!storage) {
      const Redis = deps.redis;
      if (o.kind === 'redis' && !Redis) throw new Error('the Redis store was not loaded for a redis:// override');
      storage =
        o.kind === 'redis' && Redis
          ? new Redis({
              url: o.servers[0] as string,
              compactionIntervalMs: opts.storeCompactionIntervalMs,
            })
          : new Etcd3Storage({
              endpoints: o.servers,
              tls: deps.tls,
              leaseReuseDurationSeconds: opts.leaseReuseDurationSeconds,
            });
      clients.set(id, storage);
    }
    const same = routes.find((r) => r.prefix === prefix);
    if (same && same.storage !== storage) {
      throw new ConfigurationError(
        `--store-servers-overrides: ${o.group}/${o.resource} is stored with another overridden resource under other servers`,
      );
    }
    if (!same) routes.push({ prefix, storage });
  }
  return routes;
}

/** The served types that have storage of their own (not virtual, not stored as another type). */
export function storedTypes(catalog: Catalog): ReturnType<Catalog['all']> {
  return catalog.all().filter((r) => !r.virtual && !r.storedAs);
}
