import { Etcd3 } from 'etcd3';
import type { ApiObject } from '@svc/api';
import { startEtcd, type EtcdHandle } from '@svc/testing';
import { cm, runStorageSuite } from './storage-suite.js';
import { CachedStorage } from './cacher/cached-storage.js';
import { ConvertingStorage } from './converting-storage.js';
import { Etcd3Storage } from './etcd3/etcd3-storage.js';

// ConvertingStorage keeps the whole Storage contract: the suite's keys live under another
// prefix, its objects in another shape (`data` stored as `storedData`), and everything goes
// through the watch cache, as events/v1 Events do.
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

async function converting(): Promise<{ storage: ConvertingStorage; raw: Etcd3 }> {
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
    toStored,
    fromStored,
  });
  return { storage, raw };
}

runStorageSuite('ConvertingStorage over CachedStorage', async () => {
  const { storage, raw } = await converting();
  return {
    storage,
    cleanup: () => storage.close(),
    compact: async (revision) => {
      await raw.kv.compact({ revision, physical: true });
    },
  };
});

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
    const { storage } = await converting();
    const p = '/registry/suite/shared/';
    await storage.list(p, { allowStale: true });
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
