import type { ApiObject } from '@svc/api';
import { StorageError, type Storage, type StorageEvent } from '../interface.js';
import { sleep } from '@svc/machinery';
import { atRevision } from '../stored-object.js';
import { shareUnchanged } from './share-unchanged.js';
import { SubtreeInterner } from './subtree-interner.js';

export interface CacherOptions {
  /**
   * How long events stay replayable for watches (Kubernetes 1.32's watch cache keeps 75 s:
   * its bookmark period plus 15 s); older ones are dropped as new events arrive. A watch from
   * an older revision is replayed by the store.
   */
  historyWindowMs: number;
  /** Lower bound on kept events, whatever their age (Kubernetes' 100). */
  minEvents: number;
  /** Upper bound on kept events, whatever their age (Kubernetes' 100 × 1024). */
  maxEvents: number;
  /** How long a read waits for the cache to reach a revision before `FutureRevision`. */
  freshnessTimeoutMs: number;
  /** A watcher whose queue grows past this is ended (it reconnects and relists). */
  maxWatcherQueue: number;
  onError?: (err: unknown) => void;
  /** The keys a (re)list could not decode (they are kept aside; see `Cacher`). */
  onCorrupt?: (keys: string[]) => void;
}

export const DEFAULT_CACHER_OPTIONS: CacherOptions = {
  historyWindowMs: 75_000,
  minEvents: 100,
  maxEvents: 100 * 1024,
  freshnessTimeoutMs: 3000,
  maxWatcherQueue: 50_000,
};

interface WindowEvent extends StorageEvent {
  key: string;
  time: number;
}

/** Queue entry of a cache watcher: an event, or a bookmark marker taken at `revision`. */
type Queued = WindowEvent | { type: 'BOOKMARK'; revision: number };

class CacheWatcher {
  readonly queue: Queued[] = [];
  private wake: (() => void) | undefined;
  ended: StorageError | 'closed' | undefined;

  constructor(
    readonly keyPrefix: string,
    readonly exactKey: boolean,
  ) {}

  matches(key: string): boolean {
    return this.exactKey ? key === this.keyPrefix : key.startsWith(this.keyPrefix);
  }

  push(e: Queued): void {
    this.queue.push(e);
    this.notify();
  }

  end(reason: StorageError | 'closed'): void {
    this.ended ??= reason;
    this.notify();
  }

  notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  waitForWork(): Promise<void> {
    if (this.queue.length > 0 || this.ended) return Promise.resolve();
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }
}

/**
 * The watch cache of one resource prefix: the current objects (from one list, then one
 * watch on the store), a window of recent events, and the watchers it fans out to.
 * Objects it holds are shared with callers and must never be mutated.
 *
 * Guarantees: `revision` only grows; the objects always equal the store's state at
 * `revision`; every watcher receives each event after its start revision exactly once,
 * in revision order. When the store's watch breaks without losing events (reconnection)
 * nothing is visible to watchers; when events may have been lost (compaction), the cache
 * relists and ends every watcher with `ResourceVersionCompacted` so clients start again.
 */
export class Cacher {
  private objects = new Map<string, ApiObject>();
  /**
   * Keys whose stored value could not be decoded at the last list (a value no configured
   * key decrypts): reads that reach them fail with the store's error, as a read from the
   * store would, and every other key is served. An event for such a key replaces the entry.
   */
  private corrupt = new Map<string, StorageError>();
  private sorted: string[] | undefined;
  private rev = 0;
  /** Recent events; those before `windowStart` have left the window (see `trimWindow`). */
  private window: WindowEvent[] = [];
  private windowStart = 0;
  /** A watch may start at any revision ≥ this one (the window holds everything after it). */
  private oldestWatchable = 0;
  private readonly watchers = new Set<CacheWatcher>();
  private freshnessWaiters: Array<{ rev: number; resolve: () => void }> = [];
  private isReady = false;
  private readyWaiters: Array<() => void> = [];
  private readonly stopped = new AbortController();
  private readonly opts: CacherOptions;
  /** The small parts objects share across keys (`SubtreeInterner`). */
  private readonly interner = new SubtreeInterner();

  constructor(
    private readonly inner: Storage,
    readonly prefix: string,
    opts: Partial<CacherOptions> = {},
  ) {
    this.opts = { ...DEFAULT_CACHER_OPTIONS, ...opts };
    void this.run();
  }

  get ready(): boolean {
    return this.isReady;
  }

  get revision(): number {
    return this.rev;
  }

  get size(): number {
    return this.objects.size;
  }

  stop(): void {
    this.stopped.abort();
    this.interner.stop();
    for (const w of this.watchers) w.end('closed');
    this.watchers.clear();
  }

  /** Resolves once the cache holds a complete state, or rejects when `signal` aborts. */
  waitReady(signal?: AbortSignal): Promise<void> {
    if (this.isReady) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const done = (): void => resolve();
      this.readyWaiters.push(done);
      // A waiter that gives up leaves the list (a cache that cannot fill would gather them).
      signal?.addEventListener(
        'abort',
        () => {
          this.readyWaiters = this.readyWaiters.filter((w) => w !== done);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  /** Waits until the cache reflects at least `rev`; throws `FutureRevision` after the freshness timeout. */
  async waitFresh(rev: number): Promise<void> {
    if (this.rev >= rev) return;
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        rev,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.freshnessWaiters = this.freshnessWaiters.filter((w) => w !== waiter);
        reject(
          new StorageError('FutureRevision', this.prefix, {
            message: `${rev}, current: ${this.rev}`,
            revision: this.rev,
          }),
        );
      }, this.opts.freshnessTimeoutMs);
      this.freshnessWaiters.push(waiter);
    });
  }

  /**
   * Makes the cache at least as fresh as the store is now (a consistent read): when the
   * store's revision is the cache's, it is current; otherwise it asks the store what changed
   * under the prefix since the cache's revision; when nothing did, the cache is current and
   * moves its revision forward, else it waits for the events.
   */
  async syncWithStore(): Promise<void> {
    const since = this.rev;
    const count = this.objects.size + this.corrupt.size;
    // Cheap first: nothing was written anywhere since the cache's revision.
    if ((await this.inner.currentRevision()) <= since) return;
    const probe = await this.inner.probeChanges(this.prefix, since);
    if (!probe.changed && probe.count === count && this.rev === since) {
      this.advance(probe.revision);
      return;
    }
    // Writes under the prefix up to `latest`: once the cache has their events and holds as many
    // keys as the store, nothing else under the prefix changed up to the probe's revision (a
    // later write would be newer than `latest`, a later delete would show in the count). The
    // store's revision moves on with every other resource's writes, whose events never reach
    // this cache, so waiting for that revision itself would only end at the timeout.
    if (probe.latest !== undefined) {
      await this.waitFresh(probe.latest);
      if (this.objects.size + this.corrupt.size === probe.count) {
        this.advance(probe.revision);
        return;
      }
    }
    await this.waitFresh(probe.revision);
  }

  /** Throws the store's error for a key whose value cannot be decoded. */
  get(key: string): ApiObject | undefined {
    const bad = this.corrupt.get(key);
    if (bad) throw bad;
    return this.objects.get(key);
  }

  /** Objects under `prefix` from `startKey` on, in key order; `limit` counts matching items. */
  list(
    prefix: string,
    opts: { startKey?: string; limit?: number; predicate?: (o: ApiObject) => boolean },
  ): { items: ApiObject[]; nextKey?: string; remainingItemCount?: number; revision: number } {
    for (const [key, bad] of this.corrupt) {
      if (key.startsWith(prefix))
        throw new StorageError(bad.code, key, {
          message: `unable to transform key ${JSON.stringify(key)}: ${bad.message}`,
        });
    }
    const keys = this.sortedKeys();
    const from = opts.startKey && opts.startKey > prefix ? opts.startKey : prefix;
    let i = lowerBound(keys, from);
    const items: ApiObject[] = [];
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    for (; i < keys.length; i++) {
      const key = keys[i] as string;
      if (!key.startsWith(prefix)) break;
      const obj = this.objects.get(key) as ApiObject;
      if (opts.predicate && !opts.predicate(obj)) continue;
      items.push(obj);
      if (items.length === limit) {
        const next = keys[i + 1];
        if (next === undefined || !next.startsWith(prefix)) break;
        const result = { items, nextKey: `${key}\0`, revision: this.rev } as {
          items: ApiObject[];
          nextKey?: string;
          remainingItemCount?: number;
          revision: number;
        };
        if (!opts.predicate) result.remainingItemCount = lowerBound(keys, prefixEnd(prefix)) - (i + 1);
        return result;
      }
    }
    return { items, revision: this.rev };
  }

  /** Whether a watch from `rev` can be served from the window (else the store must replay it). */
  canWatchFrom(rev: number): boolean {
    return this.isReady && (rev === 0 || rev >= this.oldestWatchable);
  }

  /**
   * Events for `key` (or every key under it when `recursive`) after `fromRevision` (0: from
   * now), from the window and then live; bookmarks every `bookmarkEveryMs` when asked.
   * Throws `ResourceVersionCompacted` when `fromRevision` is older than the window.
   */
  async *watch(
    key: string,
    opts: { fromRevision: number; recursive: boolean; signal: AbortSignal; bookmarkEveryMs?: number },
  ): AsyncGenerator<StorageEvent> {
    for await (const batch of this.watchBatches(key, opts)) yield* batch;
  }

  /** `watch` in batches: everything queued for the watcher since its last turn. */
  async *watchBatches(
    key: string,
    opts: { fromRevision: number; recursive: boolean; signal: AbortSignal; bookmarkEveryMs?: number },
  ): AsyncGenerator<StorageEvent[]> {
    if (opts.signal.aborted) return;
    await this.waitReady(opts.signal);
    if (opts.fromRevision === 0) opts = { ...opts, fromRevision: this.rev };
    if (opts.fromRevision > this.rev) await this.waitFresh(opts.fromRevision);
    if (opts.fromRevision < this.oldestWatchable) {
      throw new StorageError('ResourceVersionCompacted', key, {
        message: `${opts.fromRevision} (${this.oldestWatchable})`,
        revision: this.oldestWatchable,
      });
    }
    const w = new CacheWatcher(key, !opts.recursive);
    // Replay and registration happen in one synchronous step, so no event is missed or doubled.
    for (let i = firstAfter(this.window, this.windowStart, opts.fromRevision); i < this.window.length; i++) {
      const e = this.window[i] as WindowEvent;
      if (w.matches(e.key)) w.queue.push(e);
    }
    this.watchers.add(w);
    const onAbort = (): void => w.end('closed');
    opts.signal.addEventListener('abort', onAbort, { once: true });
    const timer = opts.bookmarkEveryMs
      ? setInterval(() => w.push({ type: 'BOOKMARK', revision: this.rev }), opts.bookmarkEveryMs)
      : undefined;
    let delivered = opts.fromRevision;
    try {
      for (;;) {
        await w.waitForWork();
        if (w.ended) {
          if (w.ended !== 'closed') throw w.ended;
          return;
        }
        const queued = w.queue.splice(0, w.queue.length);
        const batch: StorageEvent[] = [];
        for (const e of queued) {
          if (e.type === 'BOOKMARK') {
            delivered = Math.max(delivered, e.revision);
            batch.push({ type: 'BOOKMARK', object: bookmarkObject(delivered), revision: delivered });
          } else {
            delivered = e.revision;
            batch.push(e);
          }
        }
        yield batch;
        if (w.ended === 'closed') return;
      }
    } finally {
      if (timer) clearInterval(timer);
      opts.signal.removeEventListener('abort', onAbort);
      this.watchers.delete(w);
    }
  }

  private sortedKeys(): string[] {
    this.sorted ??= [...this.objects.keys()].sort();
    return this.sorted;
  }

  private advance(rev: number): void {
    if (rev <= this.rev) return;
    this.rev = rev;
    const due = this.freshnessWaiters.filter((w) => w.rev <= rev);
    if (due.length === 0) return;
    this.freshnessWaiters = this.freshnessWaiters.filter((w) => w.rev > rev);
    for (const w of due) w.resolve();
  }

  /**
   * Applies one event of the store's watch, which comes without the previous version of a
   * MODIFIED object: that is the cache's own copy, so the event, the window and the map share
   * one object per version (and the store decodes one version per event). A new version
   * shares with the one before it every part that did not change (`shareUnchanged`), and its
   * small parts with every other object (`SubtreeInterner`).
   */
  private apply(e: StorageEvent, key: string): void {
    this.corrupt.delete(key);
    const before = this.objects.get(key);
    const we: WindowEvent = { ...e, key, time: Date.now() };
    if (e.type === 'DELETED') {
      if (this.objects.delete(key)) this.sorted = undefined;
      if (before) {
        we.object = atRevision(before, e.revision);
        we.prevObject = before;
      }
    } else {
      if (!before) this.sorted = undefined;
      this.interner.internParts(we.object);
      if (e.type === 'MODIFIED' && before) {
        we.object = shareUnchanged(before, e.object);
        we.prevObject = before;
      }
      this.objects.set(key, we.object);
    }
    this.window.push(we);
    this.trimWindow(we.time);
    for (const w of this.watchers) {
      if (!w.matches(key)) continue;
      if (w.queue.length >= this.opts.maxWatcherQueue) {
        w.end(new StorageError('ResourceVersionCompacted', key, { message: 'watcher fell too far behind' }));
        this.watchers.delete(w);
        continue;
      }
      w.push(we);
    }
    this.advance(e.revision);
  }

  /**
   * Drops the events older than the history window (beyond the newest `minEvents`) or beyond
   * `maxEvents`. They are skipped
   * by moving `windowStart`, and the array is compacted only once they are half of it: a
   * full window under steady writes would otherwise be copied on every event.
   */
  private trimWindow(now: number): void {
    let start = this.windowStart;
    while (
      start < this.window.length &&
      ((now - (this.window[start] as WindowEvent).time > this.opts.historyWindowMs &&
        this.window.length - start > this.opts.minEvents) ||
        this.window.length - start > this.opts.maxEvents)
    )
      start++;
    if (start === this.windowStart) return;
    this.oldestWatchable = (this.window[start - 1] as WindowEvent).revision;
    if (start * 2 >= this.window.length) {
      this.window = this.window.slice(start);
      start = 0;
    }
    this.windowStart = start;
  }

  /** List, then watch from the list's revision; on a broken history, relist. */
  private async run(): Promise<void> {
    let backoff = 50;
    while (!this.stopped.signal.aborted) {
      try {
        const corrupt = new Map<string, StorageError>();
        const res = await this.inner.list(this.prefix, { onCorruptObject: (k, e) => corrupt.set(k, e) });
        if (corrupt.size > 0) this.opts.onCorrupt?.([...corrupt.keys()]);
        const objects = new Map<string, ApiObject>();
        res.items.forEach((o, i) => {
          this.interner.internParts(o);
          objects.set(res.keys?.[i] ?? keyOf(this.prefix, o), o);
        });
        if (this.isReady) {
          // History was lost: watchers cannot be continued consistently.
          for (const w of this.watchers)
            w.end(
              new StorageError('ResourceVersionCompacted', this.prefix, { message: 'watch cache was re-initialized' }),
            );
          this.watchers.clear();
        }
        this.objects = objects;
        this.corrupt = corrupt;
        this.sorted = undefined;
        this.window = [];
        this.windowStart = 0;
        this.oldestWatchable = res.revision;
        this.rev = 0;
        this.advance(res.revision);
        this.isReady = true;
        for (const r of this.readyWaiters.splice(0)) r();
        backoff = 50;
        for await (const e of this.inner.watch(this.prefix, {
          fromRevision: res.revision,
          recursive: true,
          signal: this.stopped.signal,
          previous: false,
        })) {
          this.apply(e, keyFromEvent(this.prefix, e));
        }
      } catch (err) {
        if (this.stopped.signal.aborted) return;
        this.opts.onError?.(err);
        await sleep(backoff, this.stopped.signal);
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }
}

/** The key of an object under a resource prefix: `<prefix><namespace>/<name>` or `<prefix><name>`. */
function keyOf(prefix: string, o: ApiObject): string {
  const m = o.metadata;
  return m.namespace ? `${prefix}${m.namespace}/${m.name ?? ''}` : `${prefix}${m.name ?? ''}`;
}

function keyFromEvent(prefix: string, e: StorageEvent): string {
  return e.key ?? keyOf(prefix, e.object);
}

export function bookmarkObject(rev: number): ApiObject {
  return { metadata: { resourceVersion: String(rev) } };
}

function lowerBound(keys: string[], target: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as string) < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/** The index of the first event in `window[start…]` after revision `rev`. */
function firstAfter(window: WindowEvent[], start: number, rev: number): number {
  let lo = start;
  let hi = window.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((window[mid] as WindowEvent).revision <= rev) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
