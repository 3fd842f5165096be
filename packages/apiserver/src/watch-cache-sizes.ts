import { group, type Catalog } from '@svc/api';
import { resourcePrefix } from './registry/keys.js';

/**
 * `--watch-cache-sizes`: `resource[.group]#size` entries (the core group omitted). As in
 * Kubernetes 1.32 the size is not a size (the cache sizes itself); 0 turns the watch cache off
 * for that built-in resource, any other value leaves it on.
 */
export type WatchCacheSizes = ReadonlyMap<string, number>;

/** Parses the flag's entries with Kubernetes' messages; throws an Error whose message is the line to print. */
export function parseWatchCacheSizes(entries: string[]): WatchCacheSizes {
  const sizes = new Map<string, number>();
  for (const entry of entries) {
    const fail = (what: string): never => {
      throw new Error(`--watch-cache-sizes: ${what}: ${entry}`);
    };
    const tokens = entry.split('#');
    if (tokens.length !== 2) fail('invalid value of watch cache size');
    const [resource = '', size = ''] = tokens;
    if (!/^[+-]?\d+$/.test(size)) fail('invalid size of watch cache size');
    if (Number(size) < 0) fail('watch cache size cannot be negative');
    sizes.set(resource, Number(size));
  }
  return sizes;
}

/**
 * Kubernetes' default: no watch cache for Events (core and events/v1), the highest-churn
 * resource, read by few (`kubectl describe`, `get events`), which then read the store.
 */
function defaultSizes(): Map<string, number> {
  return new Map([
    ['events', 0],
    [`events.${group('events')}`, 0],
  ]);
}

/**
 * The storage prefixes of the built-in resources whose watch cache is off: the defaults with
 * the flag's entries over them. A resource stored as another (events/v1 Events as core Events)
 * shares that resource's prefix and cache, which is on when any resource stored there is on
 * (`events#100` alone turns the Events cache back on). Entries naming no built-in resource are
 * ignored, as Kubernetes ignores them.
 */
export function uncachedPrefixes(catalog: Catalog, storePrefix: string, given: WatchCacheSizes): Set<string> {
  const sizes = defaultSizes();
  for (const [resource, size] of given) sizes.set(resource, size);
  const off = new Set<string>();
  const on = new Set<string>();
  for (const r of catalog.all()) {
    if (r.custom || r.virtual) continue;
    const prefix = resourcePrefix(storePrefix, r.storedAs ?? r);
    if (sizes.get(r.group ? `${r.plural}.${r.group}` : r.plural) === 0) off.add(prefix);
    else on.add(prefix);
  }
  for (const prefix of on) off.delete(prefix);
  return off;
}
