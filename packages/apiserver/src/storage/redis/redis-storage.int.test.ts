import type { ApiObject } from '@svc/api';
import { startRedis, type RedisHandle } from '@svc/testing';
import { cm, runStorageSuite } from '../storage-suite.js';
import { RedisStorage } from './redis-storage.js';
import type { StorageEvent } from '../interface.js';

// One Redis for the whole file (appendonly yes, appendfsync always); every test its own keys.
let redis: RedisHandle | undefined;
const storages: RedisStorage[] = [];

async function server(): Promise<RedisHandle> {
  redis ??= await startRedis();
  return redis;
}

function newStorage(url: string, namespace: string): RedisStorage {
  const s = new RedisStorage({ url, namespace, expiryIntervalMs: 100, compactionIntervalMs: 0 });
  storages.push(s);
  return s;
}

afterAll(async () => {
  await Promise.all(storages.map((s) => s.close()));
  await redis?.stop();
});

runStorageSuite('RedisStorage', async () => {
  const storage = newStorage((await server()).url, 'suite:');
  return { storage, cleanup: () => storage.close(), compact: (revision) => storage.compact(revision) };
});

describe('RedisStorage specifics', () => {
  it('delivers a DELETED event when a key written with a TTL expires', async () => {
    const s = newStorage((await server()).url, 'ttl:');
    const p = '/registry/core/events/default/';
    // A first write, so that the watch's start revision is not 0 ("from now").
    await s.create('/registry/core/configmaps/default/first', cm('first'));
    const from = await s.currentRevision();
    const created = await s.create(`${p}e1`, cm('e1'), { ttlSeconds: 1 });
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 10_000);
    const got: StorageEvent[] = [];
    try {
      for await (const ev of s.watch(p, { fromRevision: from, recursive: true, signal: ac.signal })) {
        got.push(ev);
        if (got.length === 2) break;
      }
    } finally {
      clearTimeout(timer);
      ac.abort();
    }
    expect(got.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
    expect(got[1]?.prevObject).toEqual(created);
    expect(got[1]?.revision).toBeGreaterThan(Number(created.metadata.resourceVersion));
  });

  it('keeps every acknowledged write across a Redis restart (SIGTERM, same directory and port)', async () => {
    const r = await server();
    const s = newStorage(r.url, 'restart:');
    const p = '/registry/core/events/default/';
    const acked: ApiObject[] = [];
    for (let i = 0; i < 50; i++) acked.push(await s.create(`${p}e${i}`, cm(`e${i}`, { i: String(i) })));
    const before = await s.currentRevision();
    await r.restart();
    const after = await s.list(p);
    expect(after.items).toEqual(
      [...acked].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '')),
    );
    expect(after.revision).toBe(before);
    // Revisions go on from where they were, and a watch from before the restart replays without a gap.
    const next = await s.create(`${p}after`, cm('after'));
    expect(Number(next.metadata.resourceVersion)).toBe(before + 1);
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 10_000);
    const names: unknown[] = [];
    try {
      for await (const ev of s.watch(p, { fromRevision: before - 2, recursive: true, signal: ac.signal })) {
        names.push(ev.object.metadata.name);
        if (names.length === 3) break;
      }
    } finally {
      clearTimeout(timer);
      ac.abort();
    }
    expect(names).toEqual(['e48', 'e49', 'after']);
  });
});
