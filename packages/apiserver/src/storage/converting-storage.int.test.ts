import { Etcd3 } from 'etcd3';
import type { ApiObject } from '@svc/api';
import { startEtcd, waitFor, type EtcdHandle } from '@svc/testing';
import { cm, etcdSuiteTarget, runStorageSuite } from './storage-suite.js';
import { CachedStorage } from './cacher/cached-storage.js';
import { ConvertingStorage } from './converting-storage.js';
import { Etcd3Storage } from './etcd3/etcd3-storage.js';

// ConvertingStorage keeps the whole Storage contract: the suite's keys live under another
// prefix, its objects in another shape (`data` stored as `storedData`), and everything goes
// through the watch cache, as events/v1 Events do. Then the same with conversions that answer
// later (as a conversion webhook does), lists and watch batches converted in one call.
let etcd: EtcdHandle | undefined;
let raw: Etcd3 | undefined;
const closers: Array<() => Promise<void>> = [];

const toStored = ({ data, ...rest }: ApiObject): ApiObject =>
  (data === undefined ? rest : { ...rest, storedData: data }) as ApiObject;
const fromStored = ({ storedData, ...rest }: ApiObject): ApiObject =>
  (storedData === undefined ? rest : { ...rest, data: storedData }) as ApiObject;

afterAll(async () => {
  for (const c of closers) await c();
  raw?.close();
  await etcd?.stop();
});

/** Conversions that answer on a later turn of the event loop; counts the batch calls. */
const later = <T>(f: () => T): Promise<T> =>
  new Promise((resolve, reject) =>
    setImmediate(() => {
      try {
        resolve(f());
      } catch (e) {
        reject(e as Error);
      }
    }),
  );
const calls = { batches: 0, single: 0, failStored: false };
const asyncConversion = {
  toStored: (o: ApiObject): Promise<ApiObject> =>
    later(() => {
      if (calls.failStored) throw new Error('webhook down');
      return toStored(o);
    }),
  fromStored: (o: ApiObject): Promise<ApiObject> => {
    calls.single++;
    return later(() => fromStored(o));
  },
  fromStoredAll: (objs: readonly ApiObject[]): Promise<ApiObject[]> => {
    calls.batches++;
    return later(() => objs.map(fromStored));
  },
  convertsAtOnce: (): boolean => false,
};

async function converting(
  o: { async?: boolean } = {},
): Promise<{ storage: ConvertingStorage; raw: Etcd3; cached: CachedStorage }> {
  etcd ??= await startEtcd();
  raw ??= new Etcd3({ hosts: etcd.endpoints });
  const cached = new CachedStorage(new Etcd3Storage({ endpoints: etcd.endpoints }), {
    storePrefix: '/registry',
    consistentListFromCache: true,
  });
  closers.push(() => cached.close());
  const storage = new ConvertingStorage(cached, {
    servedPrefix: '/registry/suite/',
    storedPrefix: '/registry/converted/',
    ...(o.async ? asyncConversion : { toStored, fromStored }),
  });
  return { storage, raw, cached };
}

runStorageSuite(
  'ConvertingStorage over CachedStorage',
  async () => {
    const { storage, raw } = await converting();
    return etcdSuiteTarget(storage, raw);
  },
  { keepsPrevious: true },
);

runStorageSuite(
  'ConvertingStorage with asynchronous conversions over CachedStorage',
  async () => {
    const { storage, raw } = await converting({ async: true });
    return etcdSuiteTarget(storage, raw);
  },
  { keepsPrevious: true },
);

describe('ConvertingStorage specifics', () => {
  it('stores under the other prefix in the stored shape, and refuses keys outside its own prefix', async () => {
    const { storage, raw } = await converting();
    const created = await storage.create('/registry/suite/specific/a', cm('a', { k: 'v' }));
    expect(created.data).toEqual({ k: 'v' });
    const stored = JSON.parse(
      (await raw.get('/registry/converted/specific/a').exec()).kvs[0]?.value.toString() ?? '{}',
    ) as ApiObject;
    expect(stored.storedData).toEqual({ k: 'v' });
    expect(stored.data).toBeUndefined();
    expect((await raw.get('/registry/suite/specific/a').exec()).kvs).toHaveLength(0);
    await expect(storage.get('/registry/elsewhere/a')).rejects.toThrow(/outside/);
  });

  it('hands every watcher the same converted object for one stored event', async () => {
    const { storage, cached } = await converting();
    const p = '/registry/suite/shared/';
    // Only the watch cache shares objects between watchers: until it is ready, a watch reads
    // the store, and each watcher decodes its own copy.
    await storage.list(p, { allowStale: true });
    await waitFor('the watch cache ready', () => cached.synced);
    const from = await storage.currentRevision();
    const ac = new AbortController();
    const take = async (): Promise<ApiObject> => {
      for await (const e of storage.watch(p, { fromRevision: from, recursive: true, signal: ac.signal }))
        return e.object;
      throw new Error('watch ended');
    };
    const both = Promise.all([take(), take()]);
    await storage.create(`${p}x`, cm('x', { k: 'v' }));
    const [a, b] = await both;
    ac.abort();
    expect(a.data).toEqual({ k: 'v' });
    expect(a).toBe(b);
  });
});

const field = (o: ApiObject, k: string): string => (o.data as Record<string, string> | undefined)?.[k] ?? '';

describe('ConvertingStorage with asynchronous conversions', () => {
  it('converts a list page, a filtered list and a watch batch in one call each', async () => {
    const { storage } = await converting({ async: true });
    const p = '/registry/suite/batched/';
    for (let i = 0; i < 6; i++) await storage.create(`${p}k${i}`, cm(`k${i}`, { even: String(i % 2 === 0) }));
    const from = await storage.currentRevision();
    calls.batches = 0;
    calls.single = 0;
    const all = await storage.list(p);
    expect(all.items.map((o) => o.data)).toEqual([0, 1, 2, 3, 4, 5].map((i) => ({ even: String(i % 2 === 0) })));
    expect(calls).toMatchObject({ batches: 1, single: 0 });
    // A fresh read from etcd: new objects, one more call; the predicate sees the served form.
    const even = await storage.list(p, { revision: all.revision, predicate: (o) => field(o, 'even') === 'true' });
    expect(even.items.map((o) => o.metadata.name)).toEqual(['k0', 'k2', 'k4']);
    expect(calls).toMatchObject({ batches: 2, single: 0 });
    const replay = new AbortController();
    const events: string[] = [];
    for await (const e of storage.watch(p, { fromRevision: from - 6, recursive: true, signal: replay.signal })) {
      events.push(`${e.type} ${e.object.metadata.name ?? ''} ${field(e.object, 'even')}`);
      if (events.length === 6) break;
    }
    replay.abort();
    expect(events).toEqual([0, 1, 2, 3, 4, 5].map((i) => `ADDED k${i} ${String(i % 2 === 0)}`));
  });

  it('writes nothing when the conversion to the stored form fails', async () => {
    const { storage, raw } = await converting({ async: true });
    const p = '/registry/suite/failing/';
    const created = await storage.create(`${p}a`, cm('a', { v: '1' }));
    calls.failStored = true;
    try {
      await expect(storage.create(`${p}b`, cm('b'))).rejects.toThrow('webhook down');
      await expect(
        storage.guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '2' } }), { cached: created }),
      ).rejects.toThrow('webhook down');
    } finally {
      calls.failStored = false;
    }
    expect((await raw.get('/registry/converted/failing/b').exec()).kvs).toHaveLength(0);
    expect(await storage.get(`${p}a`)).toEqual(created);
  });

  it('pages a filtered list exactly when matches are sparse', async () => {
    const { storage } = await converting({ async: true });
    const p = '/registry/suite/sparse/';
    for (let i = 0; i < 10; i++) await storage.create(`${p}k${i}`, cm(`k${i}`, { hit: String(i % 4 === 1) }));
    const predicate = (o: ApiObject): boolean => field(o, 'hit') === 'true';
    const names: string[] = [];
    let startKey: string | undefined;
    let revision: number | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await storage.list(p, { limit: 1, predicate, startKey, revision });
      names.push(...page.items.map((o) => o.metadata.name ?? ''));
      if (!page.nextKey) break;
      expect(page.nextKey.startsWith(p)).toBe(true);
      startKey = page.nextKey;
      revision = page.revision;
    }
    expect(names).toEqual(['k1', 'k5', 'k9']);
  });
});
