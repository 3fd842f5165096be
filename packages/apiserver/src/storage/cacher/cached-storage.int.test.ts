import { setMaxListeners } from 'node:events';
import { Etcd3 } from 'etcd3';
import { startEtcd, waitFor, type EtcdHandle } from '@svc/testing';
import type { StorageEvent } from '../interface.js';
import { cm, etcdSuiteTarget, expectStorageError, runStorageSuite } from '../storage-suite.js';
import { Etcd3Storage } from '../etcd3/etcd3-storage.js';
import { CachedStorage } from './cached-storage.js';
import { Cacher } from './cacher.js';

let etcd: EtcdHandle | undefined;
let raw: Etcd3 | undefined;
const closers: Array<() => Promise<void>> = [];

async function cluster(): Promise<{ etcd: EtcdHandle; raw: Etcd3 }> {
  etcd ??= await startEtcd();
  raw ??= new Etcd3({ hosts: etcd.endpoints });
  return { etcd, raw };
}

async function newCached(opts: { historyWindowMs?: number; minEvents?: number } = {}): Promise<CachedStorage> {
  const { etcd } = await cluster();
  const storage = new CachedStorage(new Etcd3Storage({ endpoints: etcd.endpoints }), {
    storePrefix: '/registry',
    consistentListFromCache: true,
    cacher: { historyWindowMs: opts.historyWindowMs, minEvents: opts.minEvents },
  });
  closers.push(() => storage.close());
  return storage;
}

afterAll(async () => {
  for (const c of closers) await c();
  raw?.close();
  await etcd?.stop();
});

runStorageSuite(
  'CachedStorage',
  async () => {
    const storage = await newCached();
    const { raw } = await cluster();
    return etcdSuiteTarget(storage, raw);
  },
  { keepsPrevious: true },
);

describe('CachedStorage specifics', () => {
  let seq = 0;
  const prefix = (): string => `/registry/cache-specific/${++seq}-${Date.now()}/`;

  /** A cached storage whose cache for a fresh prefix has been started (by a list) and is synced. */
  async function syncedCache(
    opts: { historyWindowMs?: number; minEvents?: number } = {},
  ): Promise<{ s: CachedStorage; p: string }> {
    const s = await newCached(opts);
    const p = prefix();
    await s.list(p, { allowStale: true });
    await waitFor('cache ready', () => s.synced);
    return { s, p };
  }

  it('serves the first resourceVersion-0 list from the cache it starts, and a watch from that list too', async () => {
    const s = await newCached();
    const p = prefix();
    await s.create(`${p}a`, cm('a'));
    // The list starts the cache and waits for it (an informer started with the server): its
    // objects are the cache's, not a second decoding, and its revision is one the cache watches from.
    const first = await s.list(p, { allowStale: true });
    expect(s.synced).toBe(true);
    const cached = await s.get(`${p}a`, { allowStale: true });
    expect(first.items[0]).toBe(cached);
    const ac = new AbortController();
    const events: StorageEvent[] = [];
    const run = (async () => {
      for await (const e of s.watch(p, { fromRevision: first.revision, recursive: true, signal: ac.signal })) {
        events.push(e);
        return;
      }
    })();
    await s.guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '2' } }));
    await run;
    ac.abort();
    expect(events[0]?.object).toBe(await s.get(`${p}a`, { minRevision: events[0]?.revision }));
  });

  it('serves a consistent list from the cache that includes a write made just before', async () => {
    const s = await newCached();
    const p = prefix();
    await s.create(`${p}a`, cm('a'));
    await s.list(p, { allowStale: true }); // starts the cache
    const created = await s.create(`${p}b`, cm('b'));
    const list = await s.list(p);
    expect(list.items.map((o) => o.metadata.name)).toEqual(['a', 'b']);
    expect(list.revision).toBeGreaterThanOrEqual(Number(created.metadata.resourceVersion));
  });

  it('catches up without events when the resource is idle but the store moved on', async () => {
    const s = await newCached();
    const p = prefix();
    const other = prefix();
    await s.create(`${p}a`, cm('a'));
    await s.list(p, { allowStale: true });
    await waitFor('cache ready', () => s.synced);
    // Writes elsewhere raise the store's revision; this resource's cache sees no event.
    const last = await s.create(`${other}x`, cm('x'));
    const list = await s.list(p);
    expect(list.revision).toBeGreaterThanOrEqual(Number(last.metadata.resourceVersion));
    expect(list.items.map((o) => o.metadata.name)).toEqual(['a']);
  });

  it('answers a not-older-than read beyond the store revision with FutureRevision', async () => {
    const { s, p } = await syncedCache();
    const rev = await s.currentRevision();
    await expectStorageError(s.list(p, { minRevision: rev + 1000 }), 'FutureRevision');
  }, 10_000);

  it('reads a consistent list from the store when the cache cannot catch up in time (as Kubernetes falls back)', async () => {
    const { etcd } = await cluster();
    const store = new Etcd3Storage({ endpoints: etcd.endpoints });
    // The cache's watch never delivers an event, so the cache stays at its initial list.
    const frozen = new Proxy(store, {
      get(target, prop, receiver): unknown {
        if (prop === 'watch')
          return (_p: string, o: { signal: AbortSignal }) => ({
            [Symbol.asyncIterator]: () => ({
              next: () =>
                new Promise<IteratorResult<StorageEvent>>((resolve) =>
                  o.signal.addEventListener('abort', () => resolve({ done: true, value: undefined }), { once: true }),
                ),
            }),
          });
        const v: unknown = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const s = new CachedStorage(frozen, {
      storePrefix: '/registry',
      consistentListFromCache: true,
      cacher: { freshnessTimeoutMs: 200 },
    });
    closers.push(() => s.close());
    const p = prefix();
    await s.create(`${p}a`, cm('a'));
    await s.list(p, { allowStale: true });
    await waitFor('cache ready', () => s.synced);
    await s.create(`${p}b`, cm('b'));
    expect((await s.list(p, { allowStale: true })).items.map((o) => o.metadata.name)).toEqual(['a']);
    const consistent = await s.list(p);
    expect(consistent.items.map((o) => o.metadata.name)).toEqual(['a', 'b']);
    // A read that names a revision the cache has not reached still waits and then refuses.
    await expectStorageError(s.list(p, { minRevision: consistent.revision }), 'FutureRevision');
  }, 10_000);

  it('fans one event out to many watchers in the same order', async () => {
    const { s, p } = await syncedCache();
    const from = await s.currentRevision();
    const ac = new AbortController();
    const seen: string[][] = Array.from({ length: 20 }, () => []);
    setMaxListeners(seen.length, ac.signal); // one signal ends all 20 watches
    const runs = seen.map(async (log) => {
      for await (const e of s.watch(p, { fromRevision: from, recursive: true, signal: ac.signal })) {
        log.push(`${e.type}:${e.object.metadata.name}:${e.revision}`);
        if (log.length === 6) return;
      }
    });
    for (const n of ['a', 'b', 'c']) await s.create(`${p}${n}`, cm(n));
    for (const n of ['a', 'b', 'c']) await s.delete(`${p}${n}`);
    await Promise.all(runs);
    ac.abort();
    for (const log of seen) expect(log).toEqual(seen[0]);
    expect(seen[0]?.map((x) => x.split(':')[0])).toEqual(['ADDED', 'ADDED', 'ADDED', 'DELETED', 'DELETED', 'DELETED']);
  });

  it('keeps one object per version: the previous version of an event is the object the event before delivered, sharing what did not change', async () => {
    const { s, p } = await syncedCache();
    const from = await s.currentRevision();
    const ac = new AbortController();
    const got: StorageEvent[] = [];
    const run = (async () => {
      for await (const e of s.watch(p, { fromRevision: from, recursive: true, signal: ac.signal })) {
        got.push(e);
        if (got.length === 4) return;
      }
    })();
    const labelled = cm('a', { v: '1' });
    labelled.metadata.labels = { app: 'x' };
    labelled.metadata.managedFields = [
      { manager: 'm', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:v': {} } } },
    ];
    const a = await s.create(`${p}a`, labelled);
    const a2 = await s.guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '2' } }));
    const a3 = await s.guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '3' } }));
    await s.delete(`${p}a`);
    await run;
    ac.abort();
    const [added, m2, m3, del] = got as [StorageEvent, StorageEvent, StorageEvent, StorageEvent];
    expect([added.object, m2.object, m3.object, m3.prevObject, del.prevObject]).toEqual([a, a2, a3, a2, a3]);
    // The cache's own copies, not a second decoding of each previous value.
    expect(m2.prevObject).toBe(added.object);
    expect(m3.prevObject).toBe(m2.object);
    expect(del.prevObject).toBe(m3.object);
    expect(del.object.metadata.resourceVersion).toBe(String(del.revision));
    expect(del.object.data).toBe(m3.object.data);
    // A version shares with the one before it what did not change.
    expect(m2.object.metadata.labels).toBe(added.object.metadata.labels);
    expect(m3.object.metadata.labels).toBe(added.object.metadata.labels);
    expect(m3.object.data).not.toBe(m2.object.data);
    // Small parts are shared across objects, frozen.
    const b = await s.create(`${p}b`, { ...labelled, metadata: { ...labelled.metadata, name: 'b' } });
    const cachedB = await s.get(`${p}b`, { minRevision: Number(b.metadata.resourceVersion) });
    expect(cachedB.metadata.managedFields).toBe(added.object.metadata.managedFields);
    expect(Object.isFrozen(added.object.metadata.labels)).toBe(true);
    expect(Object.isFrozen(added.object.metadata)).toBe(false);
  });

  it('replays a watch from before its history window from the store', async () => {
    const { s, p } = await syncedCache({ historyWindowMs: 0, minEvents: 0 });
    const first = await s.create(`${p}a`, cm('a'));
    await s.create(`${p}b`, cm('b'));
    await s.create(`${p}c`, cm('c'));
    const ac = new AbortController();
    const names: string[] = [];
    for await (const e of s.watch(p, {
      fromRevision: Number(first.metadata.resourceVersion) - 1,
      recursive: true,
      signal: ac.signal,
    })) {
      names.push(String(e.object.metadata.name));
      if (names.length === 3) break;
    }
    ac.abort();
    expect(names).toEqual(['a', 'b', 'c']);
  });

  it('sends bookmarks carrying a revision no older than the events before them', async () => {
    const { s, p } = await syncedCache();
    const from = await s.currentRevision();
    const ac = new AbortController();
    const events: StorageEvent[] = [];
    const created = await s.create(`${p}a`, cm('a'));
    // A bookmark may come before the cache has seen the create (it then carries the cache's older
    // revision); read on until one follows the ADDED event.
    for await (const e of s.watch(p, { fromRevision: from, recursive: true, signal: ac.signal, bookmarkEveryMs: 50 })) {
      events.push(e);
      if (e.type === 'BOOKMARK' && events.some((x) => x.type === 'ADDED')) break;
    }
    ac.abort();
    expect(events.filter((e) => e.type !== 'BOOKMARK').map((e) => e.type)).toEqual(['ADDED']);
    let newest = from;
    for (const e of events) {
      if (e.type === 'BOOKMARK') {
        expect(e.revision).toBeGreaterThanOrEqual(newest);
        expect(e.object).toEqual({ metadata: { resourceVersion: String(e.revision) } });
      }
      newest = Math.max(newest, e.revision);
    }
    const bm = events[events.length - 1];
    expect(bm?.revision).toBeGreaterThanOrEqual(Number(created.metadata.resourceVersion));
  });

  it('keeps at most maxEvents events: watches from inside the window replay it, older ones are refused', async () => {
    const { etcd } = await cluster();
    const inner = new Etcd3Storage({ endpoints: etcd.endpoints });
    const p = prefix();
    const cacher = new Cacher(inner, p, { maxEvents: 5 });
    closers.push(async () => {
      cacher.stop();
      await inner.close();
    });
    await cacher.waitReady();
    const revs: number[] = [];
    // Enough events that the window is trimmed many times and its array compacted several.
    for (let i = 0; i < 23; i++)
      revs.push(Number((await inner.create(`${p}o${i}`, cm(`o${i}`))).metadata.resourceVersion));
    await cacher.waitFresh(revs[revs.length - 1] as number);
    const replay = async (from: number): Promise<string[]> => {
      const ac = new AbortController();
      const names: string[] = [];
      for await (const batch of cacher.watchBatches(p, { fromRevision: from, recursive: true, signal: ac.signal })) {
        names.push(...batch.map((e) => String(e.object.metadata.name)));
        break; // the replay is the first batch
      }
      ac.abort();
      return names;
    };
    // The window holds the last 5 events, so a watch may start at the 6th-to-last revision.
    for (let back = 1; back <= 5; back++) {
      const from = revs[revs.length - 1 - back] as number;
      expect(cacher.canWatchFrom(from)).toBe(true);
      expect(await replay(from)).toEqual(Array.from({ length: back }, (_, k) => `o${23 - back + k}`));
    }
    const tooOld = revs[revs.length - 7] as number;
    expect(cacher.canWatchFrom(tooOld)).toBe(false);
    await expect(replay(tooOld)).rejects.toMatchObject({ code: 'ResourceVersionCompacted' });
  });

  it('drops events older than the history window but keeps the newest minEvents of them', async () => {
    const { etcd } = await cluster();
    const inner = new Etcd3Storage({ endpoints: etcd.endpoints });
    const p = prefix();
    // A negative window: every event is past it, even one from the same millisecond.
    const cacher = new Cacher(inner, p, { historyWindowMs: -1, minEvents: 3 });
    closers.push(async () => {
      cacher.stop();
      await inner.close();
    });
    await cacher.waitReady();
    const revs: number[] = [];
    for (let i = 0; i < 8; i++)
      revs.push(Number((await inner.create(`${p}o${i}`, cm(`o${i}`))).metadata.resourceVersion));
    await cacher.waitFresh(revs[7] as number);
    // Every event is past the window, yet the newest three stay: a watch may start
    // right before them (at the 4th-to-last revision), not earlier.
    expect(cacher.canWatchFrom(revs[4] as number)).toBe(true);
    expect(cacher.canWatchFrom(revs[3] as number)).toBe(false);
  });
});
