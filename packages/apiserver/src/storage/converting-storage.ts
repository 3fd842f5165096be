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
} from './interface.js';
import { watchBatchesOf } from './watch-batches.js';

export interface Conversion {
  /** Key prefix the served type's store uses (events/v1: `<store prefix>/events.<group suffix>/events/`). */
  servedPrefix: string;
  /** Key prefix the objects really live under (`/registry/core/events/`). */
  storedPrefix: string;
  toStored(obj: ApiObject): ApiObject;
  fromStored(obj: ApiObject): ApiObject;
}

/**
 * A type stored as another type (events/v1 Events as core Events): keys under `servedPrefix`
 * are read and written under `storedPrefix`, objects converted on the way in and out.
 * Reads, lists and watches go through the other type's storage, and so its watch cache.
 *
 * A stored object is converted once (remembered per object): the watch cache hands the same
 * object to every watcher, and its JSON is serialized once for all of them.
 */
export class ConvertingStorage implements Storage {
  private readonly converted = new WeakMap<ApiObject, ApiObject>();

  constructor(
    private readonly inner: Storage,
    private readonly c: Conversion,
  ) {}

  async get(key: string, opts?: GetOptions): Promise<ApiObject> {
    return this.out(await this.inner.get(this.stored(key), opts));
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const { predicate } = opts;
    const res = await this.inner.list(this.stored(prefix), {
      ...opts,
      startKey: opts.startKey === undefined ? undefined : this.stored(opts.startKey),
      predicate: predicate && ((o) => predicate(this.out(o))),
    });
    return {
      ...res,
      items: res.items.map((o) => this.out(o)),
      keys: res.keys?.map((k) => this.served(k)),
      nextKey: res.nextKey === undefined ? undefined : this.served(res.nextKey),
    };
  }

  async create(key: string, obj: ApiObject, opts?: WriteOptions): Promise<ApiObject> {
    return this.out(await this.inner.create(this.stored(key), this.c.toStored(obj), opts));
  }

  async guaranteedUpdate(key: string, tryUpdate: UpdateFunc, opts: UpdateOptions = {}): Promise<ApiObject> {
    const updated = await this.inner.guaranteedUpdate(
      this.stored(key),
      async (cur) => this.c.toStored(await tryUpdate(this.out(cur))),
      {
        ...opts,
        cached: opts.cached && this.c.toStored(opts.cached),
      },
    );
    return this.out(updated);
  }

  async delete(key: string, opts: DeleteOptions = {}): Promise<ApiObject> {
    const { check } = opts;
    return this.out(
      await this.inner.delete(this.stored(key), {
        ...opts,
        cached: opts.cached && this.c.toStored(opts.cached),
        check: check && ((cur) => check(this.out(cur))),
      }),
    );
  }

  async count(prefix: string): Promise<number> {
    return this.inner.count(this.stored(prefix));
  }

  async *watch(prefix: string, opts: WatchOptions): AsyncIterable<StorageEvent> {
    for await (const e of this.inner.watch(this.stored(prefix), opts)) yield this.event(e);
  }

  async *watchBatches(prefix: string, opts: WatchOptions): AsyncIterable<StorageEvent[]> {
    for await (const batch of watchBatchesOf(this.inner, this.stored(prefix), opts))
      yield batch.map((e) => this.event(e));
  }

  currentRevision(): Promise<number> {
    return this.inner.currentRevision();
  }

  async probeChanges(
    prefix: string,
    sinceRevision: number,
  ): Promise<{ revision: number; changed: boolean; count: number }> {
    return this.inner.probeChanges(this.stored(prefix), sinceRevision);
  }

  compact(revision: number): Promise<void> {
    return this.inner.compact(revision);
  }

  healthCheck(timeoutMs: number): Promise<void> {
    return this.inner.healthCheck(timeoutMs);
  }

  /** The storage underneath belongs to the server; closing this view leaves it open. */
  async close(): Promise<void> {
    // nothing of its own to release
  }

  private event(e: StorageEvent): StorageEvent {
    if (e.type === 'BOOKMARK') return e;
    return {
      ...e,
      key: e.key === undefined ? undefined : this.served(e.key),
      object: this.out(e.object),
      prevObject: e.prevObject && this.out(e.prevObject),
    };
  }

  private out(o: ApiObject): ApiObject {
    let c = this.converted.get(o);
    if (!c) {
      c = this.c.fromStored(o);
      this.converted.set(o, c);
    }
    return c;
  }

  private stored(key: string): string {
    if (!key.startsWith(this.c.servedPrefix))
      throw new Error(`ConvertingStorage: key ${key} is outside ${this.c.servedPrefix}`);
    return this.c.storedPrefix + key.slice(this.c.servedPrefix.length);
  }

  private served(key: string): string {
    return key.startsWith(this.c.storedPrefix) ? this.c.servedPrefix + key.slice(this.c.storedPrefix.length) : key;
  }
}
