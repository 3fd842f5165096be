import { Etcd3 } from 'etcd3';
import { startEtcd, type EtcdHandle } from '@svc/testing';
import { cm } from '../storage-suite.js';
import { Etcd3Storage } from './etcd3-storage.js';
import { LeaseManager } from './lease-manager.js';

let etcd: EtcdHandle | undefined;
let raw: Etcd3 | undefined;

beforeAll(async () => {
  etcd = await startEtcd();
  raw = new Etcd3({ hosts: etcd.endpoints });
});

afterAll(async () => {
  raw?.close();
  await etcd?.stop();
});

/** A manager granting real etcd leases, on a clock the test moves; records each grant's TTL. */
function manager(
  reuseDurationSeconds: number,
  maxObjects?: number,
): { m: LeaseManager; grants: number[]; clock: { t: number } } {
  const grants: number[] = [];
  const clock = { t: 1_000_000 };
  const m = new LeaseManager(
    async (ttl) => {
      grants.push(ttl);
      return (await (raw as Etcd3).leaseClient.leaseGrant({ TTL: ttl })).ID;
    },
    { reuseDurationSeconds, maxObjects, now: () => clock.t },
  );
  return { m, grants, clock };
}

describe('LeaseManager', () => {
  it('grants ttl + min(5 % of ttl, reuse duration) and reuses that lease within the reuse window', async () => {
    const { m, grants, clock } = manager(60);
    const first = await m.lease(3600);
    expect(grants).toEqual([3660]); // 5 % of an hour is 180 s, capped at 60
    const ttl = await (raw as Etcd3).leaseClient.leaseTimeToLive({ ID: first, keys: false });
    expect(Number(ttl.grantedTTL)).toBe(3660);
    clock.t += 59_000;
    expect(await m.lease(3600)).toBe(first);
    clock.t += 2_000; // 61 s after the grant: a key written now would outlive the lease
    const second = await m.lease(3600);
    expect(second).not.toBe(first);
    expect(grants).toEqual([3660, 3660]);
  });

  it('caps the extra time at 5 % of the TTL and never reuses for a TTL under 20 s', async () => {
    const a = manager(60);
    await a.m.lease(100);
    expect(a.grants).toEqual([105]);
    a.clock.t += 4_000;
    await a.m.lease(100);
    expect(a.grants).toEqual([105]);
    a.clock.t += 2_000;
    await a.m.lease(100);
    expect(a.grants).toEqual([105, 105]);

    const b = manager(60);
    const ids = [await b.m.lease(10), await b.m.lease(10)];
    expect(b.grants).toEqual([10, 10]);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it('does not reuse a lease that would expire before a longer TTL, or one already holding maxObjects keys', async () => {
    const { m, grants } = manager(60, 3);
    const ids = [
      await m.lease(3600),
      await m.lease(7200),
      await m.lease(7200),
      await m.lease(7200),
      await m.lease(7200),
    ];
    expect(grants).toEqual([3660, 7260, 7260]);
    expect(new Set(ids).size).toBe(3);
    expect(ids[1]).toBe(ids[2]);
    expect(ids[2]).toBe(ids[3]);
  });

  it('serves concurrent requests from one grant', async () => {
    const { m, grants } = manager(60);
    const ids = await Promise.all(Array.from({ length: 20 }, () => m.lease(3600)));
    expect(grants).toEqual([3660]);
    expect(new Set(ids).size).toBe(1);
  });

  it('passes a failed grant on and grants afresh for the next write', async () => {
    let fail = true;
    const m = new LeaseManager(
      async (ttl) => {
        if (fail) throw new Error('etcd unavailable');
        return (await (raw as Etcd3).leaseClient.leaseGrant({ TTL: ttl })).ID;
      },
      { reuseDurationSeconds: 60 },
    );
    await expect(m.lease(3600)).rejects.toThrow('etcd unavailable');
    fail = false;
    await expect(m.lease(3600)).resolves.toMatch(/^\d+$/);
  });
});

describe('Etcd3Storage with TTLs', () => {
  it('attaches keys written with the same TTL within the reuse window to one lease, an update too; keys without a TTL to none', async () => {
    const storage = new Etcd3Storage({ endpoints: (etcd as EtcdHandle).endpoints, leaseReuseDurationSeconds: 60 });
    try {
      const p = `/registry/lease-reuse/${Date.now()}/`;
      for (const n of ['a', 'b', 'c']) await storage.create(`${p}${n}`, cm(n), { ttlSeconds: 3600 });
      await storage.create(`${p}plain`, cm('plain'));
      await storage.guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '2' } }), { ttlSeconds: 3600 });
      const kvs = (await (raw as Etcd3).getAll().prefix(p).exec()).kvs;
      const lease = (n: string): string => String(kvs.find((kv) => kv.key.toString() === `${p}${n}`)?.lease);
      expect(lease('a')).not.toBe('0');
      expect(lease('b')).toBe(lease('a'));
      expect(lease('c')).toBe(lease('a'));
      expect(lease('plain')).toBe('0');
      const ttl = await (raw as Etcd3).leaseClient.leaseTimeToLive({ ID: lease('a'), keys: true });
      expect(Number(ttl.grantedTTL)).toBe(3660);
      expect(ttl.keys.map((k) => k.toString()).sort()).toEqual([`${p}a`, `${p}b`, `${p}c`]);
    } finally {
      await storage.close();
    }
  });
});
