import { Etcd3 } from 'etcd3';
import { closedPort, startEtcd, type EtcdHandle } from '@svc/testing';
import { isStorageError, type StorageErrorCode, type StorageEvent } from '../interface.js';
import { cm, etcdSuiteTarget, runStorageSuite } from '../storage-suite.js';
import { Etcd3Storage } from './etcd3-storage.js';
import { AesGcmTransformer } from '../value/aes-gcm.js';
import { PrefixTransformers, type ValueTransformer } from '../value/transformer.js';

// One etcd for the whole file; every test uses its own key prefix.
let etcd: EtcdHandle | undefined;
let raw: Etcd3 | undefined;
const storages: Etcd3Storage[] = [];

async function cluster(): Promise<{ etcd: EtcdHandle; raw: Etcd3 }> {
  etcd ??= await startEtcd();
  raw ??= new Etcd3({ hosts: etcd.endpoints });
  return { etcd, raw };
}

async function newStorage(): Promise<Etcd3Storage> {
  const { etcd } = await cluster();
  const storage = new Etcd3Storage({ endpoints: etcd.endpoints });
  storages.push(storage);
  return storage;
}

afterAll(async () => {
  await Promise.all(storages.map((s) => s.close()));
  raw?.close();
  await etcd?.stop();
});

runStorageSuite('Etcd3Storage', async () => {
  const storage = await newStorage();
  const { raw } = await cluster();
  return etcdSuiteTarget(storage, raw);
});

/** Every key encrypted with AES-GCM by the first named key; the others still read. */
function aesGcm(keys: Array<[string, Buffer]>): ValueTransformer {
  return new PrefixTransformers(
    keys.map(([name, k]) => ({
      prefix: Buffer.from(`svc:enc:aesgcm:v1:${name}:`),
      transformer: new AesGcmTransformer(k),
    })),
    'no matching prefix found',
  );
}
const K1 = Buffer.alloc(32, 1);
const K0 = Buffer.alloc(32, 7);

runStorageSuite('Etcd3Storage with encryption at rest', async () => {
  const { etcd, raw } = await cluster();
  const t = aesGcm([['k1', K1]]);
  const storage = new Etcd3Storage({ endpoints: etcd.endpoints, transformers: { forKey: () => t } });
  storages.push(storage);
  return etcdSuiteTarget(storage, raw);
});

describe('Etcd3Storage with encryption at rest', () => {
  const prefix = `/registry/etcd3-encrypted/${Date.now()}/`;

  it('stores ciphertext, reads plaintext, rewrites a stale value even when the object is unchanged', async () => {
    const { etcd, raw } = await cluster();
    const old = new Etcd3Storage({ endpoints: etcd.endpoints, transformers: { forKey: () => aesGcm([['k0', K0]]) } });
    storages.push(old);
    await old.create(`${prefix}a`, cm('a', { v: 'plain-text' }));
    const first = (await raw.get(`${prefix}a`).exec()).kvs[0];
    expect(first?.value.toString('latin1')).toMatch(/^svc:enc:aesgcm:v1:k0:/);
    expect(first?.value.includes('plain-text')).toBe(false);
    // The new key first, the old one second: the value reads (stale) and an unchanged write re-encrypts it.
    const rotated = new Etcd3Storage({
      endpoints: etcd.endpoints,
      transformers: {
        forKey: () =>
          aesGcm([
            ['k1', K1],
            ['k0', K0],
          ]),
      },
    });
    storages.push(rotated);
    const got = await rotated.get(`${prefix}a`);
    expect(got.data).toEqual({ v: 'plain-text' });
    const same = await rotated.guaranteedUpdate(`${prefix}a`, (cur) => cur, { cached: got });
    expect(Number(same.metadata.resourceVersion)).toBeGreaterThan(Number(got.metadata.resourceVersion));
    const again = await rotated.guaranteedUpdate(`${prefix}a`, (cur) => cur);
    expect(again.metadata.resourceVersion).toBe(same.metadata.resourceVersion); // no longer stale: no write
    // Only K1 now: the old server's key is gone, the value still reads.
    const only = new Etcd3Storage({ endpoints: etcd.endpoints, transformers: { forKey: () => aesGcm([['k1', K1]]) } });
    storages.push(only);
    expect((await only.get(`${prefix}a`)).data).toEqual({ v: 'plain-text' });
  });

  it('a value no key decrypts fails its get and the list with InternalError; onCorruptObject leaves it out', async () => {
    const { etcd } = await cluster();
    const p = `${prefix}corrupt/`;
    const writer = new Etcd3Storage({
      endpoints: etcd.endpoints,
      transformers: { forKey: () => aesGcm([['k1', K0]]) },
    });
    const reader = new Etcd3Storage({
      endpoints: etcd.endpoints,
      transformers: { forKey: () => aesGcm([['k1', K1]]) },
    });
    storages.push(writer, reader);
    await writer.create(`${p}bad`, cm('bad'));
    await reader.create(`${p}good`, cm('good'));
    await expectCode(reader.get(`${p}bad`), 'InternalError');
    await expect(reader.get(`${p}bad`)).rejects.toThrow('cipher: message authentication failed');
    await expect(reader.list(p)).rejects.toThrow(
      `unable to transform key "${p}bad": cipher: message authentication failed`,
    );
    const corrupt: string[] = [];
    const res = await reader.list(p, { onCorruptObject: (k) => corrupt.push(k) });
    expect(res.items.map((o) => o.metadata.name)).toEqual(['good']);
    expect(corrupt).toEqual([`${p}bad`]);
    expect((await reader.get(`${p}good`)).metadata.name).toBe('good');
  });
});

describe('Etcd3Storage specifics', () => {
  let storage: Etcd3Storage;
  let seq = 0;
  const prefix = (): string => `/registry/etcd3-specific/${++seq}-${Date.now()}/`;
  beforeAll(async () => {
    storage = await newStorage();
  });

  it('never persists resourceVersion in etcd', async () => {
    const { raw } = await cluster();
    const p = prefix();
    const obj = cm('a', { v: '1' });
    obj.metadata.resourceVersion = '12345';
    const created = await storage.create(`${p}a`, obj);
    const updated = await storage.guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '2' } }));
    expect(updated.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
    const stored = await raw.get(`${p}a`).exec();
    const kv = stored.kvs[0];
    expect(kv).toBeDefined();
    const value = JSON.parse(kv?.value.toString('utf8') ?? '{}') as { metadata: Record<string, unknown> };
    expect(value.metadata).toEqual({ name: 'a', namespace: 'default' });
    expect(kv?.value.toString('utf8')).not.toContain('resourceVersion');
    expect(updated.metadata.resourceVersion).toBe(kv?.mod_revision);
  });

  it('fails reads at a future revision with FutureRevision', async () => {
    const future = (await storage.currentRevision()) + 1000;
    await expectCode(storage.get(`${prefix()}a`, { revision: future }), 'FutureRevision');
    await expectCode(storage.list(prefix(), { revision: future }), 'FutureRevision');
  });

  it('fails on a stored value that is not an API object with InvalidObject', async () => {
    const { raw } = await cluster();
    const p = prefix();
    await raw.put(`${p}bad`).value('{not json');
    await raw.put(`${p}array`).value('[1]');
    await expectCode(storage.get(`${p}bad`), 'InvalidObject');
    await expectCode(storage.get(`${p}array`), 'InvalidObject');
    await expectCode(storage.list(p), 'InvalidObject');
  });

  it('reports an endpoint nobody listens on as Unreachable', async () => {
    const port = await closedPort();
    const dead = new Etcd3Storage({ endpoints: [`http://127.0.0.1:${port}`], requestTimeoutMs: 2000 });
    try {
      await expectCode(dead.get('/registry/x'), 'Unreachable');
      await expectCode(dead.healthCheck(1000), 'Unreachable');
    } finally {
      await dead.close();
    }
  });

  it("lists and watches more than gRPC's default 4 MiB message limit", async () => {
    const p = prefix();
    const from = await storage.currentRevision();
    const big = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 5; i++) await storage.create(`${p}k${i}`, cm(`k${i}`, { big }));
    const res = await storage.list(p);
    expect(res.items).toHaveLength(5);
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 10_000);
    const names: unknown[] = [];
    try {
      for await (const ev of storage.watch(p, { fromRevision: from, recursive: true, signal: ac.signal })) {
        names.push(ev.object.metadata.name);
        if (names.length === 5) break;
      }
    } finally {
      clearTimeout(timer);
    }
    expect(names).toEqual(['k0', 'k1', 'k2', 'k3', 'k4']);
  });

  it('ends its watches on close()', async () => {
    const s = await newStorage();
    const ac = new AbortController();
    const watch = s.watch(prefix(), { fromRevision: await s.currentRevision(), recursive: true, signal: ac.signal });
    const it = watch[Symbol.asyncIterator]();
    const pending = it.next();
    // Make sure the watch is established (an event arrives) before closing.
    const p = prefix();
    const watch2 = s.watch(p, { fromRevision: await s.currentRevision(), recursive: true, signal: ac.signal });
    const it2 = watch2[Symbol.asyncIterator]();
    const first = it2.next();
    await s.create(`${p}a`, cm('a'));
    expect((await first).done).toBe(false);
    await s.close();
    expect((await pending).done).toBe(true);
    expect((await it2.next()).done).toBe(true);
    ac.abort();
  });

  // Runs last in this file: it restarts the shared etcd.
  it('keeps a watch going across an etcd restart without losing or repeating events', async () => {
    const { etcd } = await cluster();
    const p = prefix();
    const ac = new AbortController();
    const deadline = setTimeout(() => ac.abort(), 30_000);
    const seen: StorageEvent[] = [];
    let wake: (() => void) | undefined;
    const from = await storage.currentRevision();
    const watching = (async () => {
      for await (const ev of storage.watch(p, { fromRevision: from, recursive: true, signal: ac.signal })) {
        seen.push(ev);
        wake?.();
      }
    })();
    const until = async (n: number): Promise<void> => {
      while (seen.length < n) {
        if (ac.signal.aborted) {
          throw new Error(
            `only ${seen.length} of ${n} events before the deadline: ${JSON.stringify(seen.map((e) => [e.type, e.object.metadata.name]))}`,
          );
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 100);
        });
      }
    };
    try {
      await storage.create(`${p}a`, cm('a'));
      await until(1);
      await etcd.killMember(0);
      await etcd.restartMember(0);
      // The client may need a moment (circuit breaker, reconnect back-off) to use etcd again.
      const t0 = Date.now();
      for (;;) {
        try {
          await storage.create(`${p}b`, cm('b'));
          break;
        } catch (err) {
          if (!isStorageError(err, 'Unreachable') || Date.now() - t0 > 20_000) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      await storage.create(`${p}c`, cm('c'));
      await until(3);
      expect(seen.map((e) => [e.type, e.object.metadata.name])).toEqual([
        ['ADDED', 'a'],
        ['ADDED', 'b'],
        ['ADDED', 'c'],
      ]);
    } finally {
      clearTimeout(deadline);
      ac.abort();
      await watching;
    }
  });
});

async function expectCode(p: Promise<unknown>, code: StorageErrorCode): Promise<void> {
  let caught: unknown;
  try {
    await p;
  } catch (err) {
    caught = err;
  }
  if (!isStorageError(caught, code)) {
    throw new Error(`expected StorageError ${code}, got ${caught === undefined ? 'success' : String(caught)}`);
  }
}
