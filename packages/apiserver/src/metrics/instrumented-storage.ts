import type { ApiObject } from '@svc/api';
import type {
  Storage,
  StorageEvent,
  WatchOptions,
  ListOptions,
  ListResult,
  UpdateFunc,
  UpdateOptions,
  DeleteOptions,
  GetOptions,
  WriteOptions,
  ChangeProbe,
} from '../storage/interface.js';
import type { ApiServerMetrics } from './metrics.js';
import { watchBatchesOf } from '../storage/watch-batches.js';

/** Wraps a Storage to observe `etcd_request_duration_seconds` per operation and type. */
export class InstrumentedStorage implements Storage {
  constructor(
    private readonly inner: Storage,
    private readonly metrics: ApiServerMetrics,
    private readonly storePrefix: string,
  ) {}

  /** `/registry/core/configmaps/...` → `configmaps`; named groups → `leases.coordination.<group suffix>`. */
  private typeOf(key: string): string {
    const [group, resource] = key.slice(this.storePrefix.length + 1).split('/');
    return group === 'core' || !group ? (resource ?? '') : `${resource ?? ''}.${group}`;
  }

  private async time<T>(operation: string, key: string, f: () => Promise<T>): Promise<T> {
    const end = this.metrics.etcdRequestDuration.startTimer({ operation, type: this.typeOf(key) });
    try {
      return await f();
    } finally {
      end();
    }
  }

  get(key: string, opts?: GetOptions): Promise<ApiObject> {
    return this.time('get', key, () => this.inner.get(key, opts));
  }
  list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    return this.time('list', prefix, () => this.inner.list(prefix, opts));
  }
  create(key: string, obj: ApiObject, opts?: WriteOptions): Promise<ApiObject> {
    return this.time('create', key, () => this.inner.create(key, obj, opts));
  }
  guaranteedUpdate(key: string, f: UpdateFunc, opts?: UpdateOptions): Promise<ApiObject> {
    return this.time('update', key, () => this.inner.guaranteedUpdate(key, f, opts));
  }
  delete(key: string, opts?: DeleteOptions): Promise<ApiObject> {
    return this.time('delete', key, () => this.inner.delete(key, opts));
  }
  count(prefix: string): Promise<number> {
    return this.time('count', prefix, () => this.inner.count(prefix));
  }
  watch(prefix: string, opts: WatchOptions): AsyncIterable<StorageEvent> {
    return this.inner.watch(prefix, opts);
  }
  watchBatches(prefix: string, opts: WatchOptions): AsyncIterable<StorageEvent[]> {
    return watchBatchesOf(this.inner, prefix, opts);
  }
  currentRevision(): Promise<number> {
    return this.inner.currentRevision();
  }
  probeChanges(prefix: string, since: number): Promise<ChangeProbe> {
    return this.time('probe', prefix, () => this.inner.probeChanges(prefix, since));
  }
  compact(revision: number): Promise<void> {
    return this.inner.compact(revision);
  }
  healthCheck(timeoutMs: number): Promise<void> {
    return this.inner.healthCheck(timeoutMs);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
