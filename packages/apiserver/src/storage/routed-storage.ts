import type { ApiObject } from '@svc/api';
import type {
  DeleteOptions,
  GetOptions,
  ListOptions,
  ListResult,
  Storage,
  StorageEvent,
  UpdateFunc,
  UpdateOptions,
  WatchOptions,
  WriteOptions,
  ChangeProbe,
} from './interface.js';
import { watchBatchesOf } from './watch-batches.js';

/** A store that holds the keys under `prefix` (a resource prefix, ending with `/`). */
export interface StorageRoute {
  prefix: string;
  storage: Storage;
}

/**
 * Sends every keyed call to the store of the first route whose prefix the key starts with,
 * else to `fallback` (`--store-servers-overrides`: some resources live in stores of their
 * own). Each store keeps its own revisions, so a resource's resourceVersions are comparable
 * only with those of resources in the same store. The calls without a key
 * (`currentRevision`, `compact`) are the fallback's; `healthCheck` and `close` reach every store.
 */
export class RoutedStorage implements Storage {
  constructor(
    private readonly fallback: Storage,
    private readonly routes: StorageRoute[],
  ) {}

  /** The store that holds `key` (or every key under the resource prefix `key`). */
  storageFor(key: string): Storage {
    return this.routes.find((r) => key.startsWith(r.prefix))?.storage ?? this.fallback;
  }

  get(key: string, opts?: GetOptions): Promise<ApiObject> {
    return this.storageFor(key).get(key, opts);
  }
  list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    return this.storageFor(prefix).list(prefix, opts);
  }
  create(key: string, obj: ApiObject, opts?: WriteOptions): Promise<ApiObject> {
    return this.storageFor(key).create(key, obj, opts);
  }
  guaranteedUpdate(key: string, tryUpdate: UpdateFunc, opts?: UpdateOptions): Promise<ApiObject> {
    return this.storageFor(key).guaranteedUpdate(key, tryUpdate, opts);
  }
  delete(key: string, opts?: DeleteOptions): Promise<ApiObject> {
    return this.storageFor(key).delete(key, opts);
  }
  count(prefix: string): Promise<number> {
    return this.storageFor(prefix).count(prefix);
  }
  watch(prefix: string, opts: WatchOptions): AsyncIterable<StorageEvent> {
    return this.storageFor(prefix).watch(prefix, opts);
  }
  watchBatches(prefix: string, opts: WatchOptions): AsyncIterable<StorageEvent[]> {
    return watchBatchesOf(this.storageFor(prefix), prefix, opts);
  }
  currentRevision(): Promise<number> {
    return this.fallback.currentRevision();
  }
  probeChanges(prefix: string, sinceRevision: number): Promise<ChangeProbe> {
    return this.storageFor(prefix).probeChanges(prefix, sinceRevision);
  }
  compact(revision: number): Promise<void> {
    return this.fallback.compact(revision);
  }
  async healthCheck(timeoutMs: number): Promise<void> {
    await Promise.all([this.fallback, ...this.routes.map((r) => r.storage)].map((s) => s.healthCheck(timeoutMs)));
  }
  async close(): Promise<void> {
    await Promise.all([this.fallback, ...this.routes.map((r) => r.storage)].map((s) => s.close()));
  }
}
