import type { ApiObject } from '@svc/api';
import type { RestClient } from './rest-client.js';
import {
  Reflector,
  listWatcherFor,
  type CollectionOptions,
  type GroupVersionResource,
  type ListerWatcher,
  type ReflectorOptions,
  type ReflectorSink,
} from './reflector.js';
import { silentClientLogger, sleep, type ClientLogger } from './logger.js';

/** `namespace/name`, or `name` for cluster-scoped objects (Kubernetes' MetaNamespaceKeyFunc). */
export function objectKey(o: ApiObject): string {
  const { namespace, name = '' } = o.metadata;
  return namespace ? `${namespace}/${name}` : name;
}

/** Splits a key made by `objectKey`. */
export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** The values an object is indexed under. */
export type IndexFunc<T> = (obj: T) => string[];

export const NAMESPACE_INDEX = 'namespace';

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

/**
 * Objects by key with secondary indices (always `namespace`, plus custom index functions).
 * Objects are deep-frozen on the way in: readers share them and must copy to change them.
 */
export class Indexer<T extends ApiObject = ApiObject> {
  private readonly items = new Map<string, T>();
  private readonly indexFuncs = new Map<string, IndexFunc<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Record<string, IndexFunc<T>> = {}) {
    this.addIndexers({ [NAMESPACE_INDEX]: (o) => [o.metadata.namespace ?? ''], ...indexers });
  }

  /** Adds index functions; existing items are indexed at once. */
  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.indexFuncs.has(name)) throw new Error(`index ${name} already exists`);
      this.indexFuncs.set(name, fn);
      this.indices.set(name, new Map());
      for (const [k, o] of this.items) this.indexOne([name, fn], k, o);
    }
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  get size(): number {
    return this.items.size;
  }

  /** The objects whose index `indexName` has `value`. */
  byIndex(indexName: string, value: string): T[] {
    const idx = this.indices.get(indexName);
    if (!idx) throw new Error(`no index ${indexName}`);
    return [...(idx.get(value) ?? [])].map((k) => this.items.get(k)).filter((o): o is T => o !== undefined);
  }

  /** Stores `obj` (frozen) and returns the object it replaced. */
  set(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    deepFreeze(obj);
    this.items.set(key, obj);
    for (const index of this.indexFuncs) this.indexOne(index, key, obj);
    return old;
  }

  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  private indexOne([name, fn]: [name: string, fn: IndexFunc<T>], key: string, obj: T): void {
    const idx = this.indices.get(name);
    if (!idx) return;
    for (const v of fn(obj)) {
      let s = idx.get(v);
      if (!s) idx.set(v, (s = new Set()));
      s.add(key);
    }
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.indexFuncs) {
      const idx = this.indices.get(name);
      if (!idx) continue;
      for (const v of fn(obj)) {
        const s = idx.get(v);
        s?.delete(key);
        if (s && s.size === 0) idx.delete(v);
      }
    }
  }
}

/**
 * Called synchronously, one event at a time, in the order the store changed. The objects are
 * the store's (frozen): never mutate them. A handler that throws is logged and skipped.
 */
export interface EventHandlers<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

export interface InformerOptions<T extends ApiObject> extends ReflectorOptions {
  indexers?: Record<string, IndexFunc<T>>;
  /**
   * Resync: every this many ms (0/absent: never), each stored object is handed to
   * `onUpdate(obj, obj)` again, so level-based controllers revisit everything.
   */
  resyncPeriodMs?: number;
}

/**
 * A store kept in step with one collection by a reflector, feeding any number of handlers.
 * After a relist, objects with a new resourceVersion are reported as updates, new ones as
 * adds and vanished ones as deletes; unchanged ones are not reported (a resync, when
 * configured, reports every object as an update with the same old and new object).
 */
export class Informer<T extends ApiObject = ApiObject> implements ReflectorSink<T> {
  readonly store: Indexer<T>;
  readonly reflector: Reflector<T>;
  private readonly handlers: EventHandlers<T>[] = [];
  private synced = false;
  private running: Promise<void> | undefined;
  private readonly logger: ClientLogger;
  private readonly resyncPeriodMs: number;

  constructor(lw: ListerWatcher<T>, o: InformerOptions<T> = {}) {
    this.store = new Indexer<T>(o.indexers);
    this.logger = o.logger ?? silentClientLogger;
    this.resyncPeriodMs = o.resyncPeriodMs ?? 0;
    this.reflector = new Reflector(lw, this, o);
  }

  /** Registers handlers; when already synced, `onAdd` is called at once for every stored object. */
  addEventHandler(h: EventHandlers<T>): { remove(): void } {
    this.handlers.push(h);
    if (this.synced) for (const o of this.store.list()) this.call(() => h.onAdd?.(o));
    return {
      remove: () => {
        const i = this.handlers.indexOf(h);
        if (i >= 0) this.handlers.splice(i, 1);
      },
    };
  }

  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    this.store.addIndexers(indexers);
  }

  /** True once the first list has been stored and handed to the handlers. */
  hasSynced(): boolean {
    return this.synced;
  }

  /** Starts the reflector once (later calls return the same run); resolves when `signal` fires. */
  run(signal: AbortSignal): Promise<void> {
    this.running ??= Promise.all([this.reflector.run(signal), this.resyncLoop(signal)]).then(() => undefined);
    return this.running;
  }

  private async resyncLoop(signal: AbortSignal): Promise<void> {
    if (this.resyncPeriodMs <= 0) return;
    while (!signal.aborted) {
      await sleep(this.resyncPeriodMs, signal);
      if (signal.aborted || !this.synced) continue;
      for (const o of this.store.list()) this.emit((h) => h.onUpdate?.(o, o));
    }
  }

  /** Resolves when synced; rejects after `timeoutMs` or when `signal` fires first. */
  async waitForSync(opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<void> {
    const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
    while (!this.synced) {
      if (opts.signal?.aborted) throw new Error('stopped before the informer synced');
      if (Date.now() > deadline) throw new Error('timed out waiting for the informer to sync');
      await sleep(10, opts.signal);
    }
  }

  replace(items: T[], _resourceVersion: string): void {
    const seen = new Set<string>();
    for (const o of items) {
      const key = objectKey(o);
      seen.add(key);
      const old = this.store.get(key);
      if (old && old.metadata.resourceVersion === o.metadata.resourceVersion) continue;
      this.store.set(o);
      if (old) this.emit((h) => h.onUpdate?.(old, o));
      else this.emit((h) => h.onAdd?.(o));
    }
    for (const key of this.store.keys()) {
      if (seen.has(key)) continue;
      const old = this.store.delete(key);
      if (old) this.emit((h) => h.onDelete?.(old));
    }
    this.synced = true;
  }

  apply(ev: { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T }): void {
    if (ev.type === 'DELETED') {
      deepFreeze(ev.object);
      this.store.delete(objectKey(ev.object));
      this.emit((h) => h.onDelete?.(ev.object));
      return;
    }
    const old = this.store.set(ev.object);
    if (old) this.emit((h) => h.onUpdate?.(old, ev.object));
    else this.emit((h) => h.onAdd?.(ev.object));
  }

  private emit(f: (h: EventHandlers<T>) => void): void {
    for (const h of [...this.handlers]) this.call(() => f(h));
  }

  private call(f: () => void): void {
    try {
      f();
    } catch (e) {
      this.logger.error('event handler failed', { error: String(e) });
    }
  }
}

/**
 * One informer per group/version/resource (and namespace), shared by everyone who asks, so
 * one list+watch feeds every handler. `start` runs the informers not yet running.
 */
export class SharedInformerFactory {
  private readonly informers = new Map<string, Informer<ApiObject>>();
  private readonly runs: Promise<void>[] = [];

  constructor(
    private readonly client: RestClient,
    private readonly o: ReflectorOptions & { namespace?: string; resyncPeriodMs?: number } = {},
  ) {}

  informerFor<T extends ApiObject = ApiObject>(gvr: GroupVersionResource, c: CollectionOptions = {}): Informer<T> {
    const opts = { namespace: this.o.namespace, ...c };
    const key = `${gvr.group}/${gvr.version}/${gvr.resource}|${opts.namespace ?? ''}|${opts.labelSelector ?? ''}|${opts.fieldSelector ?? ''}`;
    let inf = this.informers.get(key);
    if (!inf) {
      inf = new Informer<ApiObject>(listWatcherFor(this.client, gvr, opts), this.o);
      this.informers.set(key, inf);
    }
    return inf as unknown as Informer<T>;
  }

  start(signal: AbortSignal): void {
    for (const inf of this.informers.values()) {
      const p = inf.run(signal);
      if (!this.runs.includes(p)) this.runs.push(p);
    }
  }

  async waitForCacheSync(opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync(opts)));
  }

  /** Resolves when every started informer stopped (after the `start` signal fired). */
  async stopped(): Promise<void> {
    await Promise.all(this.runs);
  }
}
