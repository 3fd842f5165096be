import type { ApiObject } from '@svc/api';
import {
  type ChangeProbe,
  StorageError,
  type DeleteOptions,
  type GetOptions,
  type ListOptions,
  type ListResult,
  type Storage,
  type StorageEvent,
  type UpdateFunc,
  type UpdateOptions,
  type WatchOptions,
  type WriteOptions,
} from '../interface.js';
import { Cacher, type CacherOptions } from './cacher.js';
import { watchBatchesOf } from '../watch-batches.js';

export interface CachedStorageOptions {
  /** Keys look like `<storePrefix>/<group>/<resource>/...`; one cache per `<group>/<resource>`. */
  storePrefix: string;
  /** Serve consistent (Most Recent) lists from the cache once it caught up (ConsistentListFromCache). */
  consistentListFromCache: boolean;
  cacher?: Partial<CacherOptions>;
  /** Resource prefixes with no cache (`--watch-cache-sizes` 0): every call goes to the store behind. */
  uncached?: ReadonlySet<string>;
  /**
   * The store a resource prefix's cache lists and watches, and asks for its current revision
   * (default: the store behind this one). With stores of their own per resource
   * (`--store-servers-overrides`) a cache must compare revisions of its resource's store.
   */
  storeFor?: (prefix: string) => Storage;
}

/**
 * A `Storage` that serves watches and non-exact reads from per-resource watch caches and
 * passes writes (and exact-revision reads) to the store behind it. Read semantics:
 * Any → the cache as it is; Not Older Than n → the cache once it reached n; Most Recent
 * lists → the cache once it caught up with the store's current revision (when enabled);
 * Most Recent gets and Exact reads → the store. Before a cache is ready, reads go to the
 * store; watches from before a cache's window are replayed by the store (410 only once the
 * store compacted that history).
 */
export class CachedStorage implements Storage {
  private readonly cachers = new Map<string, Cacher>();

  constructor(
    private readonly inner: Storage,
    private readonly opts: CachedStorageOptions,
  ) {}

  /** Starts the caches of these resource prefixes now (else each starts on first use). */
  start(prefixes: string[]): void {
    for (const p of prefixes) this.cacherFor(p);
  }

  /**
   * Stops and forgets the cache of a resource prefix (its type is no longer served: a
   * deleted CRD); its watchers end. A later use starts a fresh one.
   */
  stop(prefix: string): void {
    const c = this.cachers.get(prefix);
    if (!c) return;
    c.stop();
    this.cachers.delete(prefix);
  }

  /** True when every started cache holds a complete state (the `/readyz` cache check). */
  get synced(): boolean {
    return [...this.cachers.values()].every((c) => c.ready);
  }

  private cacherFor(key: string): Cacher | undefined {
    const base = `${this.opts.storePrefix}/`;
    if (!key.startsWith(base)) return undefined;
    const [group, resource] = key.slice(base.length).split('/');
    if (!group || !resource) return undefined;
    const prefix = `${base}${group}/${resource}/`;
    if (this.opts.uncached?.has(prefix)) return undefined;
    let c = this.cachers.get(prefix);
    if (!c) {
      c = new Cacher(this.opts.storeFor?.(prefix) ?? this.inner, prefix, this.opts.cacher);
      this.cachers.set(prefix, c);
    }
    return c;
  }

  async get(key: string, opts: GetOptions = {}): Promise<ApiObject> {
    const c = this.cacherFor(key);
    if (!c || !c.ready || opts.revision || (!opts.allowStale && opts.minRevision === undefined))
      return this.inner.get(key, opts);
    if (opts.minRevision !== undefined) await c.waitFresh(opts.minRevision);
    const obj = c.get(key);
    if (!obj) throw new StorageError('KeyNotFound', key);
    return obj;
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const c = this.cacherFor(prefix);
    if (!c || opts.revision || opts.startKey) return this.inner.list(prefix, opts);
    // A list any revision answers (resourceVersion 0) waits briefly for a cache that is still
    // filling, as Kubernetes' cacher does, so that an informer started with the server lists
    // and then watches the cache instead of holding its own copies from the store.
    if (!c.ready && !(opts.allowStale && (await readyWithin(c, this.opts.cacher?.freshnessTimeoutMs ?? 3000))))
      return this.inner.list(prefix, opts);
    if (opts.minRevision !== undefined) await c.waitFresh(opts.minRevision);
    else if (!opts.allowStale) {
      if (!this.opts.consistentListFromCache) return this.inner.list(prefix, opts);
      try {
        await c.syncWithStore();
      } catch (e) {
        // Kubernetes 1.32's cacher: a consistent list the cache cannot serve within the
        // freshness timeout is read from the store instead (a 504 only for not-older-than reads).
        if (e instanceof StorageError && e.code === 'FutureRevision') return this.inner.list(prefix, opts);
        throw e;
      }
    }
    return c.list(prefix, opts);
  }

  create(key: string, obj: ApiObject, opts?: WriteOptions): Promise<ApiObject> {
    return this.inner.create(key, obj, opts);
  }

  guaranteedUpdate(key: string, tryUpdate: UpdateFunc, opts?: UpdateOptions): Promise<ApiObject> {
    return this.inner.guaranteedUpdate(key, tryUpdate, opts);
  }

  delete(key: string, opts?: DeleteOptions): Promise<ApiObject> {
    return this.inner.delete(key, opts);
  }

  count(prefix: string): Promise<number> {
    return this.inner.count(prefix);
  }

  watch(prefix: string, opts: WatchOptions): AsyncIterable<StorageEvent> {
    const c = this.cacherFor(prefix);
    // Older than the cache's window (or before it is ready): the store replays its history.
    if (!c || !c.canWatchFrom(opts.fromRevision)) return this.inner.watch(prefix, opts);
    return c.watch(prefix, opts);
  }

  watchBatches(prefix: string, opts: WatchOptions): AsyncIterable<StorageEvent[]> {
    const c = this.cacherFor(prefix);
    if (!c || !c.canWatchFrom(opts.fromRevision)) return watchBatchesOf(this.inner, prefix, opts);
    return c.watchBatches(prefix, opts);
  }

  currentRevision(): Promise<number> {
    return this.inner.currentRevision();
  }

  probeChanges(prefix: string, sinceRevision: number): Promise<ChangeProbe> {
    return this.inner.probeChanges(prefix, sinceRevision);
  }

  compact(revision: number): Promise<void> {
    return this.inner.compact(revision);
  }

  healthCheck(timeoutMs: number): Promise<void> {
    return this.inner.healthCheck(timeoutMs);
  }

  async close(): Promise<void> {
    for (const c of this.cachers.values()) c.stop();
    this.cachers.clear();
    await this.inner.close();
  }
}

/** Whether `c` is ready within `ms` (false after it, the cache still filling). */
function readyWithin(c: Cacher, ms: number): Promise<boolean> {
  return c.waitReady(AbortSignal.timeout(ms)).then(
    () => true,
    () => false,
  );
}
