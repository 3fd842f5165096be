import type { ApiServerOptions } from '../options.js';
import type { StoreClient } from '../registry/component-status.js';
import { Etcd3Storage } from '../storage/etcd3/etcd3-storage.js';

/**
 * The store configurations componentstatuses checks, as Kubernetes' StorageFactory.Configs():
 * the main `--store-servers` first, then each distinct set of etcd servers named by
 * `--store-servers-overrides` (Redis overrides are not etcd and are not listed). Each probe
 * connects anew with the store's TLS files (`--store-cafile`, `--store-certfile`, `--store-keyfile`).
 */
export function storeClients(opts: ApiServerOptions): Array<() => StoreClient> {
  const tls =
    opts.storeCaFile || opts.storeCertFile
      ? { caFile: opts.storeCaFile, certFile: opts.storeCertFile, keyFile: opts.storeKeyFile }
      : undefined;
  const sets: string[][] = [opts.storeServers];
  for (const o of opts.storeServersOverrides) {
    if (o.kind === 'redis') continue;
    if (!sets.some((s) => s.join(';') === o.servers.join(';'))) sets.push(o.servers);
  }
  return sets.map((endpoints) => () => new Etcd3Storage({ endpoints, tls }));
}
