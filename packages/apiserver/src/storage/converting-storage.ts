import type { ApiObject } from '@svc/api';
import type {
  DeleteOptions,
  GetOptions,
  ListOptions,
  ListResult,
  ReadConsistency,
  Storage,
  StorageEvent,
  UpdateFunc,
  UpdateOptions,
  WatchOptions,
  WriteOptions,
  ChangeProbe,
} from './interface.js';
import { watchBatchesOf } from './watch-batches.js';

/** An object converted at once, or later (a conversion webhook). */
export type Converted = ApiObject | Promise<ApiObject>;

export interface Conversion {
  /** Key prefix the served type's store uses (events/v1: `<store prefix>/events.<group suffix>/events/`). */
  servedPrefix: string;
  /** Key prefix the objects really live under (`/registry/core/events/`). */
  storedPrefix: string;
  /** A served object in its stored form. Throwing or rejecting leaves storage untouched. */
  toStored(obj: ApiObject): Converted;
  /** A stored object in its served form. */
  fromStored(obj: ApiObject): Converted;
  /**
   * Several stored objects in their served form, in order, in one go (a list page or a watch
   * batch in one webhook call). Without it each goes through `fromStored`.
   */
  fromStoredAll?(objs: readonly ApiObject[]): ApiObject[] | Promise<ApiObject[]>;
  /**
   * Whether converting `obj` to the stored (`'stored'`) or served (`'served'`) form answers at
   * once. Absent: always. Lets a list run its predicate in the storage below, and a write
   * use a cached copy, without waiting for (or wasting) a call.
   */
  convertsAtOnce?(obj: ApiObject, to: 'stored' | 'served'): boolean;
}

/**
 * Thrown inside a synchronous callback of the storage below (a list predicate, a delete check)
 * when an object must first be converted asynchronously; never leaves this module.
 */
const NEEDS_ASYNC = new Error('ConvertingStorage: the object needs an asynchronous conversion first');

/**
 * A type stored as another type (events/v1 Events as core Events), or in another version (a
 * custom resource's served versions): keys under `servedPrefix` are read and written under
 * `storedPrefix`, objects converted on the way in and out. Reads, lists and watches go
 * through the other type's storage, and so its watch cache.
 *
 * Conversions may be synchronous (events/v1, conversion `None`) or asynchronous (a webhook).
 * Synchronous ones keep the direct path: list predicates run in the storage below on the
 * converted object. Otherwise:
 * - a write converts before it reaches the storage below, so a failed conversion writes nothing;
 * - a list converts its page in one `fromStoredAll`; with a predicate the page is read first,
 *   converted, then filtered, in chunks of what is still missing from `limit` at the first
 *   chunk's revision, so pages and continue keys stay exact;
 * - a watch converts each batch in one `fromStoredAll` and yields batches in order;
 * - a delete's check (synchronous) gets the converted object: a revision not yet converted
 *   is converted and the delete retried.
 *
 * A stored object is converted once (remembered per object, a pending conversion too): the
 * watch cache hands the same object to every watcher, and its JSON is serialized once for
 * all of them. A failed conversion is forgotten, so the next read tries again.
 */
export class ConvertingStorage implements Storage {
  private readonly converted = new WeakMap<ApiObject, Converted>();

  constructor(
    private readonly inner: Storage,
    private readonly c: Conversion,
  ) {}

  async get(key: string, opts?: GetOptions): Promise<ApiObject> {
    return this.out(await this.inner.get(this.stored(key), opts));
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const { predicate } = opts;
    const storedPrefix = this.stored(prefix);
    const startKey = opts.startKey === undefined ? undefined : this.stored(opts.startKey);
    let res: ListResult;
    let items: ApiObject[];
    try {
      res = await this.inner.list(storedPrefix, {
        ...opts,
        startKey,
        predicate: predicate && ((o) => predicate(this.outAtOnce(o))),
      });
      const served = this.outAll(res.items);
      items = isPromise(served) ? await served : served;
    } catch (e) {
      if (e !== NEEDS_ASYNC || !predicate) throw e;
      res = await this.listConvertingFirst(storedPrefix, { ...opts, startKey, predicate });
      items = res.items;
    }
    return {
      ...res,
      items,
      keys: res.keys?.map((k) => this.served(k)),
      nextKey: res.nextKey === undefined ? undefined : this.served(res.nextKey),
    };
  }

  async create(key: string, obj: ApiObject, opts?: WriteOptions): Promise<ApiObject> {
    const storedKey = this.stored(key);
    return this.out(await this.inner.create(storedKey, await this.c.toStored(obj), opts));
  }

  async guaranteedUpdate(key: string, tryUpdate: UpdateFunc, opts: UpdateOptions = {}): Promise<ApiObject> {
    const { cached } = opts;
    const storedKey = this.stored(key);
    const updated = await this.inner.guaranteedUpdate(
      storedKey,
      async (cur) => {
        // The caller's copy is the served form of this revision: no call needed for it.
        const served = cached && sameRevision(cur, cached) && !this.atOnce(cur, 'served') ? cached : this.out(cur);
        return this.c.toStored(await tryUpdate(await served));
      },
      { ...opts, cached: await this.storedCopy(cached) },
    );
    return this.out(updated);
  }

  async delete(key: string, opts: DeleteOptions = {}): Promise<ApiObject> {
    const { check, cached } = opts;
    const storedKey = this.stored(key);
    const storedCached = await this.storedCopy(cached);
    // Served forms by resourceVersion, for the synchronous check.
    const ready = new Map<string, ApiObject>();
    if (cached?.metadata.resourceVersion) ready.set(cached.metadata.resourceVersion, cached);
    for (;;) {
      const seen: { pending?: ApiObject; checked?: { stored: ApiObject; served: ApiObject } } = {};
      try {
        const deleted = await this.inner.delete(storedKey, {
          ...opts,
          cached: storedCached,
          check:
            check &&
            ((cur) => {
              const served = this.servedNow(cur) ?? ready.get(cur.metadata.resourceVersion ?? '');
              if (!served) {
                seen.pending = cur;
                throw NEEDS_ASYNC;
              }
              check(served);
              seen.checked = { stored: cur, served };
            }),
        });
        return seen.checked?.stored === deleted ? seen.checked.served : await this.out(deleted);
      } catch (e) {
        if (e !== NEEDS_ASYNC || !seen.pending) throw e;
        ready.set(seen.pending.metadata.resourceVersion ?? '', await this.out(seen.pending));
      }
    }
  }

  async count(prefix: string): Promise<number> {
    return this.inner.count(this.stored(prefix));
  }

  async *watch(prefix: string, opts: WatchOptions): AsyncIterable<StorageEvent> {
    for await (const e of this.inner.watch(this.stored(prefix), opts)) {
      const out = this.events([e]);
      yield* isPromise(out) ? await out : out;
    }
  }

  async *watchBatches(prefix: string, opts: WatchOptions): AsyncIterable<StorageEvent[]> {
    for await (const batch of watchBatchesOf(this.inner, this.stored(prefix), opts)) {
      const out = this.events(batch);
      yield isPromise(out) ? await out : out;
    }
  }

  currentRevision(): Promise<number> {
    return this.inner.currentRevision();
  }

  async probeChanges(prefix: string, sinceRevision: number): Promise<ChangeProbe> {
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

  /**
   * A filtered list whose objects cannot all be converted at once: pages of the storage
   * below (no predicate), each converted in one go and then filtered, until `limit` matches;
   * every page after the first is read at the first one's revision. A page asks for no more
   * than the matches still missing, so the last match is never followed by skipped objects
   * and `nextKey` is the storage's own. Items come back converted (and remembered).
   */
  private async listConvertingFirst(
    storedPrefix: string,
    opts: ListOptions & { predicate: (o: ApiObject) => boolean },
  ): Promise<ListResult> {
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    const items: ApiObject[] = [];
    let read: ReadConsistency = { revision: opts.revision, minRevision: opts.minRevision, allowStale: opts.allowStale };
    let startKey = opts.startKey;
    for (;;) {
      const page = await this.inner.list(storedPrefix, {
        ...read,
        startKey,
        limit: limit ? limit - items.length : undefined,
      });
      for (const o of await this.outAll(page.items)) if (opts.predicate(o)) items.push(o);
      const full = limit > 0 && items.length === limit;
      if (full || page.nextKey === undefined) return { items, revision: page.revision, nextKey: page.nextKey };
      read = { revision: page.revision };
      startKey = page.nextKey;
    }
  }

  private events(batch: readonly StorageEvent[]): StorageEvent[] | Promise<StorageEvent[]> {
    const objs: ApiObject[] = [];
    for (const e of batch) {
      if (e.type === 'BOOKMARK') continue;
      objs.push(e.object);
      if (e.prevObject) objs.push(e.prevObject);
    }
    const build = (served: readonly ApiObject[]): StorageEvent[] => {
      let i = 0;
      return batch.map((e) => {
        if (e.type === 'BOOKMARK') return e;
        const object = served[i++] as ApiObject;
        const prevObject = e.prevObject && (served[i++] as ApiObject);
        return { ...e, key: e.key === undefined ? undefined : this.served(e.key), object, prevObject };
      });
    };
    const served = this.outAll(objs);
    return isPromise(served) ? served.then(build) : build(served);
  }

  /** One stored object in its served form (remembered). */
  private out(o: ApiObject): Converted {
    const hit = this.converted.get(o);
    if (hit) return hit;
    const c = this.c.fromStored(o);
    this.remember(o, c);
    return c;
  }

  /**
   * Stored objects in their served form, in order: at once when each is remembered or
   * converts at once, else one `fromStoredAll` for those still to convert.
   */
  private outAll(objs: readonly ApiObject[]): ApiObject[] | Promise<ApiObject[]> {
    const missing = [...new Set(objs.filter((o) => !this.converted.has(o)))];
    const all = this.c.fromStoredAll;
    if (all && missing.length > 1) {
      const converted = all(missing);
      missing.forEach((o, i) => {
        this.remember(o, isPromise(converted) ? converted.then((a) => nth(a, i)) : nth(converted, i));
      });
    } else {
      for (const o of missing) this.remember(o, this.c.fromStored(o));
    }
    const out = objs.map((o) => this.converted.get(o) as Converted);
    return out.some(isPromise) ? Promise.all(out) : (out as ApiObject[]);
  }

  private remember(o: ApiObject, c: Converted): void {
    this.converted.set(o, c);
    if (isPromise(c)) {
      void c.then(
        (done) => {
          if (this.converted.get(o) === c) this.converted.set(o, done);
        },
        () => {
          if (this.converted.get(o) === c) this.converted.delete(o);
        },
      );
    }
  }

  /** The served form if it is ready now, else undefined. */
  private servedNow(o: ApiObject): ApiObject | undefined {
    const hit = this.converted.get(o);
    if (hit !== undefined) return isPromise(hit) ? undefined : hit;
    if (!this.atOnce(o, 'served')) return undefined;
    const c = this.out(o);
    return isPromise(c) ? undefined : c;
  }

  /** For a list predicate run by the storage below: the served form now, or abandon that list. */
  private outAtOnce(o: ApiObject): ApiObject {
    const c = this.servedNow(o);
    if (!c) throw NEEDS_ASYNC;
    return c;
  }

  /** A caller's cached copy in stored form, when that needs no call (else none: the storage below reads). */
  private async storedCopy(cached: ApiObject | undefined): Promise<ApiObject | undefined> {
    if (!cached || !this.atOnce(cached, 'stored')) return undefined;
    const c = this.c.toStored(cached);
    return isPromise(c) ? c.catch(() => undefined) : c;
  }

  private atOnce(o: ApiObject, to: 'stored' | 'served'): boolean {
    return this.c.convertsAtOnce?.(o, to) ?? true;
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

function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return v instanceof Promise;
}

function sameRevision(a: ApiObject, b: ApiObject): boolean {
  return !!a.metadata.resourceVersion && a.metadata.resourceVersion === b.metadata.resourceVersion;
}

function nth(objs: readonly ApiObject[], i: number): ApiObject {
  const o = objs[i];
  if (!o) throw new Error(`conversion returned ${objs.length} objects for more`);
  return o;
}
