import { randomBytes } from 'node:crypto';
import type { ApiObject } from '@svc/api';
import { isStorageError, type Storage, type StorageErrorCode, type StorageEvent } from './interface.js';

/** A storage under test, made once per suite. */
export interface StorageSuiteTarget {
  storage: Storage;
  cleanup(): Promise<void>;
  /** Compacts the backing store's history up to `revision` (needed unless `compaction: false`). */
  compact?(revision: number): Promise<void>;
}

/** A suite target over one etcd: closes the storage at the end, compacts through `raw`. */
export function etcdSuiteTarget(
  storage: Storage & { close(): Promise<void> },
  raw: { kv: { compact(req: { revision: number; physical: boolean }): Promise<unknown> } },
): StorageSuiteTarget {
  return {
    storage,
    cleanup: () => storage.close(),
    compact: async (revision) => {
      await raw.kv.compact({ revision, physical: true });
    },
  };
}

export interface StorageSuiteOptions {
  /** Declare the tests that compact history (default true; `make` must then supply `compact`). */
  compaction?: boolean;
  /**
   * The store's watches may carry `prevObject` even when asked not to (a watch cache, which
   * holds it anyway); otherwise the suite checks that a MODIFIED event then comes without it.
   */
  keepsPrevious?: boolean;
}

const WAIT_MS = 10_000;

/**
 * Declares jest tests of the `Storage` contract, run against whatever `make` returns (once,
 * in `beforeAll`). Tests run one after another and each uses its own key prefix, so one
 * backing store serves the whole suite; compaction tests compact only history older than
 * the revisions later tests read.
 */
export function runStorageSuite(
  name: string,
  make: () => Promise<StorageSuiteTarget>,
  opts: StorageSuiteOptions = {},
): void {
  describe(`Storage contract: ${name}`, () => {
    let target: StorageSuiteTarget | undefined;
    const s = (): Storage => {
      if (!target) throw new Error('storage not made');
      return target.storage;
    };
    let seq = 0;
    /** A fresh key prefix for one test. */
    const prefix = (): string => `/registry/suite/${randomBytes(4).toString('hex')}-${++seq}/`;

    beforeAll(async () => {
      target = await make();
    });
    afterAll(async () => {
      await target?.cleanup();
    });

    describe('create and get', () => {
      it('returns the stored object with a resourceVersion that get agrees with', async () => {
        const p = prefix();
        const created = await s().create(`${p}a`, cm('a', { k: 'v' }));
        expect(created.metadata.resourceVersion).toMatch(/^[1-9][0-9]*$/);
        expect(created.data).toEqual({ k: 'v' });
        const got = await s().get(`${p}a`);
        expect(got).toEqual(created);
        expect(await s().currentRevision()).toBeGreaterThanOrEqual(rv(created));
      });

      it('ignores a resourceVersion on the object to create', async () => {
        const p = prefix();
        const obj = cm('a');
        obj.metadata.resourceVersion = '999999';
        const created = await s().create(`${p}a`, obj);
        expect(created.metadata.resourceVersion).not.toBe('999999');
        expect((await s().get(`${p}a`)).metadata.resourceVersion).toBe(created.metadata.resourceVersion);
      });

      it('refuses to create an existing key with KeyExists and keeps the original', async () => {
        const p = prefix();
        const first = await s().create(`${p}a`, cm('a', { v: '1' }));
        await expectStorageError(s().create(`${p}a`, cm('a', { v: '2' })), 'KeyExists');
        expect(await s().get(`${p}a`)).toEqual(first);
      });

      it('throws KeyNotFound for a missing key', async () => {
        await expectStorageError(s().get(`${prefix()}missing`), 'KeyNotFound');
      });

      it('reads a key at an older revision', async () => {
        const p = prefix();
        const v1 = await s().create(`${p}a`, cm('a', { v: '1' }));
        await s().guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '2' } }));
        const old = await s().get(`${p}a`, { revision: rv(v1) });
        expect(old).toEqual(v1);
        expect((await s().get(`${p}a`)).data).toEqual({ v: '2' });
      });
    });

    describe('guaranteedUpdate', () => {
      it('writes the result, returns it with a new resourceVersion, and persists it', async () => {
        const p = prefix();
        const created = await s().create(`${p}a`, cm('a', { v: '1' }));
        let seen: ApiObject | undefined;
        const updated = await s().guaranteedUpdate(`${p}a`, (cur) => {
          seen = cur;
          return { ...cur, data: { v: '2' } };
        });
        expect(seen).toEqual(created);
        expect(rv(updated)).toBeGreaterThan(rv(created));
        expect(updated.data).toEqual({ v: '2' });
        expect(await s().get(`${p}a`)).toEqual(updated);
      });

      it('does not write an unchanged result and keeps the resourceVersion', async () => {
        const p = prefix();
        const created = await s().create(`${p}a`, cm('a', { v: '1' }));
        const before = await s().currentRevision();
        // A deep-equal copy with different key order, a stale resourceVersion and an
        // undefined field is still "unchanged".
        const same = await s().guaranteedUpdate(`${p}a`, (cur) => ({
          data: { v: '1' },
          extra: undefined,
          ...cur,
          metadata: { ...cur.metadata, resourceVersion: '1' },
        }));
        expect(same).toEqual(created);
        expect(await s().currentRevision()).toBe(before);
      });

      it('aborts without writing when tryUpdate throws', async () => {
        const p = prefix();
        const created = await s().create(`${p}a`, cm('a', { v: '1' }));
        await expect(
          s().guaranteedUpdate(`${p}a`, () => {
            throw new Error('refused');
          }),
        ).rejects.toThrow('refused');
        expect(await s().get(`${p}a`)).toEqual(created);
      });

      it('throws KeyNotFound for a missing key without calling tryUpdate', async () => {
        const tryUpdate = jest.fn((cur: ApiObject) => cur);
        await expectStorageError(s().guaranteedUpdate(`${prefix()}missing`, tryUpdate), 'KeyNotFound');
        expect(tryUpdate).not.toHaveBeenCalled();
      });

      it('loses no update among 20 concurrent read-modify-writes', async () => {
        const p = prefix();
        await s().create(`${p}counter`, cm('counter', { n: '0' }));
        const results = await Promise.all(
          Array.from({ length: 20 }, () =>
            s().guaranteedUpdate(`${p}counter`, (cur) => ({
              ...cur,
              data: { n: String(Number((cur.data as { n: string }).n) + 1) },
            })),
          ),
        );
        const final = await s().get(`${p}counter`);
        expect(final.data).toEqual({ n: '20' });
        const versions = new Set(results.map((r) => r.metadata.resourceVersion));
        expect(versions.size).toBe(20);
        expect(Math.max(...results.map(rv))).toBe(rv(final));
      });

      it('retries from the current state when the cached copy is stale', async () => {
        const p = prefix();
        const stale = await s().create(`${p}a`, cm('a', { v: '1' }));
        await s().guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '2' } }));
        const inputs: unknown[] = [];
        const updated = await s().guaranteedUpdate(
          `${p}a`,
          (cur) => {
            inputs.push(cur.data);
            return { ...cur, data: { ...(cur.data as object), w: 'x' } };
          },
          { cached: stale },
        );
        expect(inputs.at(-1)).toEqual({ v: '2' });
        expect(updated.data).toEqual({ v: '2', w: 'x' });
        expect(await s().get(`${p}a`)).toEqual(updated);
      });

      it('confirms a no-op computed from a stale cached copy against the current state', async () => {
        const p = prefix();
        const stale = await s().create(`${p}a`, cm('a', { v: '1' }));
        const current = await s().guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '2' } }));
        const result = await s().guaranteedUpdate(`${p}a`, (cur) => cur, { cached: stale });
        expect(result).toEqual(current);
      });
    });

    describe('delete', () => {
      it('returns the object as it was just before deletion', async () => {
        const p = prefix();
        await s().create(`${p}a`, cm('a', { v: '1' }));
        const last = await s().guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '2' } }));
        const deleted = await s().delete(`${p}a`);
        expect(deleted).toEqual(last);
        await expectStorageError(s().get(`${p}a`), 'KeyNotFound');
      });

      it('leaves the object when check throws', async () => {
        const p = prefix();
        const created = await s().create(`${p}a`, cm('a'));
        await expect(
          s().delete(`${p}a`, {
            check: () => {
              throw new Error('precondition');
            },
          }),
        ).rejects.toThrow('precondition');
        expect(await s().get(`${p}a`)).toEqual(created);
      });

      it('checks and returns the current state when the cached copy is stale', async () => {
        const p = prefix();
        const stale = await s().create(`${p}a`, cm('a', { v: '1' }));
        const current = await s().guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '2' } }));
        const checked: unknown[] = [];
        const deleted = await s().delete(`${p}a`, {
          cached: stale,
          check: (obj) => {
            checked.push(obj.data);
            if (obj.metadata.resourceVersion !== current.metadata.resourceVersion) throw new Error('stale');
          },
        });
        expect(deleted).toEqual(current);
        expect(checked.at(-1)).toEqual({ v: '2' });
        await expectStorageError(s().get(`${p}a`), 'KeyNotFound');
      });

      it('throws KeyNotFound for a missing key', async () => {
        await expectStorageError(s().delete(`${prefix()}missing`), 'KeyNotFound');
      });

      it('throws KeyNotFound when only a cached copy remains', async () => {
        const p = prefix();
        const created = await s().create(`${p}a`, cm('a'));
        await s().delete(`${p}a`);
        await expectStorageError(s().delete(`${p}a`, { cached: created }), 'KeyNotFound');
      });
    });

    describe('list and count', () => {
      it('lists only keys under the prefix, in key order, at the read revision', async () => {
        const p = prefix();
        for (const n of ['c', 'a', 'b']) await s().create(`${p}${n}`, cm(n));
        await s().create(`${p.slice(0, -1)}x/other`, cm('other')); // shares the string prefix minus '/'
        const res = await s().list(p);
        expect(res.items.map((o) => o.metadata.name)).toEqual(['a', 'b', 'c']);
        expect(res.revision).toBe(await s().currentRevision());
        expect(res.nextKey).toBeUndefined();
        expect(res.remainingItemCount).toBeUndefined();
        for (const o of res.items) expect(o).toEqual(await s().get(`${p}${o.metadata.name}`));
      });

      it('lists an older revision as it was', async () => {
        const p = prefix();
        await s().create(`${p}a`, cm('a', { v: '1' }));
        await s().create(`${p}b`, cm('b'));
        const then = await s().currentRevision();
        await s().guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '2' } }));
        await s().delete(`${p}b`);
        await s().create(`${p}c`, cm('c'));
        const old = await s().list(p, { revision: then });
        expect(old.revision).toBe(then);
        expect(old.items.map((o) => [o.metadata.name, o.data])).toEqual([
          ['a', { v: '1' }],
          ['b', {}],
        ]);
        const now = await s().list(p);
        expect(now.items.map((o) => [o.metadata.name, o.data])).toEqual([
          ['a', { v: '2' }],
          ['c', {}],
        ]);
      });

      it('pages with limit and nextKey at one revision, ignoring writes between pages', async () => {
        const p = prefix();
        for (let i = 0; i < 7; i++) await s().create(`${p}k${i}`, cm(`k${i}`));
        const first = await s().list(p, { limit: 3 });
        expect(first.items.map((o) => o.metadata.name)).toEqual(['k0', 'k1', 'k2']);
        expect(first.nextKey).toBeDefined();
        expect(first.remainingItemCount).toBe(4);
        // Writes after the first page must not show in later pages read at its revision.
        await s().delete(`${p}k3`);
        await s().create(`${p}k35`, cm('k35'));
        await s().guaranteedUpdate(`${p}k4`, (cur) => ({ ...cur, data: { changed: 'yes' } }));
        const second = await s().list(p, { limit: 3, revision: first.revision, startKey: first.nextKey });
        expect(second.revision).toBe(first.revision);
        expect(second.items.map((o) => o.metadata.name)).toEqual(['k3', 'k4', 'k5']);
        expect(second.items[1]?.data).toEqual({});
        expect(second.remainingItemCount).toBe(1);
        const third = await s().list(p, { limit: 3, revision: first.revision, startKey: second.nextKey });
        expect(third.items.map((o) => o.metadata.name)).toEqual(['k6']);
        expect(third.nextKey).toBeUndefined();
        expect(third.remainingItemCount).toBeUndefined();
      });

      it('returns no nextKey when the limit is exactly the number of items', async () => {
        const p = prefix();
        for (const n of ['a', 'b']) await s().create(`${p}${n}`, cm(n));
        const res = await s().list(p, { limit: 2 });
        expect(res.items).toHaveLength(2);
        expect(res.nextKey).toBeUndefined();
        expect(res.remainingItemCount).toBeUndefined();
      });

      it('counts only predicate matches against the limit and reports no remainingItemCount', async () => {
        const p = prefix();
        for (let i = 0; i < 12; i++)
          await s().create(`${p}k${String(i).padStart(2, '0')}`, cm(`k${i}`, { even: String(i % 2 === 0) }));
        const predicate = (o: ApiObject): boolean => (o.data as { even: string }).even === 'true';
        const page1 = await s().list(p, { limit: 4, predicate });
        expect(page1.items.map((o) => o.metadata.name)).toEqual(['k0', 'k2', 'k4', 'k6']);
        expect(page1.remainingItemCount).toBeUndefined();
        expect(page1.nextKey).toBeDefined();
        const page2 = await s().list(p, { limit: 4, predicate, revision: page1.revision, startKey: page1.nextKey });
        expect(page2.items.map((o) => o.metadata.name)).toEqual(['k8', 'k10']);
        expect(page2.nextKey).toBeUndefined();
        const all = await s().list(p, { predicate });
        expect(all.items).toHaveLength(6);
      });

      it('counts keys under a prefix', async () => {
        const p = prefix();
        expect(await s().count(p)).toBe(0);
        for (const n of ['a', 'b', 'c']) await s().create(`${p}${n}`, cm(n));
        await s().delete(`${p}b`);
        expect(await s().count(p)).toBe(2);
      });
    });

    describe('watch', () => {
      it('delivers ADDED, MODIFIED and DELETED in order with objects and revisions', async () => {
        const p = prefix();
        const from = await s().currentRevision();
        const events = collect(s(), p, { fromRevision: from, recursive: true, count: 4 });
        const a = await s().create(`${p}a`, cm('a', { v: '1' }));
        const a2 = await s().guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '2' } }));
        const b = await s().create(`${p}b`, cm('b'));
        const deleted = await s().delete(`${p}a`);
        const got = await events;
        expect(got.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'ADDED', 'DELETED']);
        expect(got[0]?.object).toEqual(a);
        expect(got[0]?.revision).toBe(rv(a));
        expect(got[1]?.object).toEqual(a2);
        expect(got[1]?.prevObject).toEqual(a);
        expect(got[1]?.revision).toBe(rv(a2));
        expect(got[2]?.object).toEqual(b);
        const del = got[3];
        expect(del?.object.data).toEqual({ v: '2' });
        expect(deleted).toEqual(a2);
        // A DELETED object carries the delete's revision as its resourceVersion (as Kubernetes does).
        expect(del?.revision).toBeGreaterThan(rv(b));
        expect(del?.object.metadata.resourceVersion).toBe(String(del?.revision));
        expect(del?.prevObject).toEqual(a2);
      });

      it('without previous versions asked for, still carries both versions of a DELETED object', async () => {
        const p = prefix();
        const from = await s().currentRevision();
        const events = collect(s(), p, { fromRevision: from, recursive: true, count: 3, previous: false });
        const a = await s().create(`${p}a`, cm('a', { v: '1' }));
        const a2 = await s().guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '2' } }));
        await s().delete(`${p}a`);
        const [added, modified, del] = await events;
        expect(added?.object).toEqual(a);
        expect(modified?.object).toEqual(a2);
        expect(opts.keepsPrevious ? [undefined, a] : [undefined]).toContainEqual(modified?.prevObject);
        expect(del?.type).toBe('DELETED');
        expect(del?.prevObject).toEqual(a2);
        expect(del?.object).toEqual({ ...a2, metadata: { ...a2.metadata, resourceVersion: String(del?.revision) } });
      });

      it('replays history from an older revision', async () => {
        const p = prefix();
        const from = await s().currentRevision();
        const created = [];
        for (const n of ['a', 'b', 'c']) created.push(await s().create(`${p}${n}`, cm(n)));
        const mid = rv(created[0] as ApiObject);
        const got = await collect(s(), p, { fromRevision: mid, recursive: true, count: 2 });
        expect(got.map((e) => [e.type, e.object.metadata.name, e.revision])).toEqual([
          ['ADDED', 'b', rv(created[1] as ApiObject)],
          ['ADDED', 'c', rv(created[2] as ApiObject)],
        ]);
        const all = await collect(s(), p, { fromRevision: from, recursive: true, count: 3 });
        expect(all.map((e) => e.object)).toEqual(created);
      });

      it('watches a single key when not recursive', async () => {
        const p = prefix();
        const from = await s().currentRevision();
        await s().create(`${p}a`, cm('a'));
        await s().create(`${p}ab`, cm('ab'));
        await s().create(`${p}b`, cm('b'));
        const a2 = await s().guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '2' } }));
        const got = await collect(s(), `${p}a`, { fromRevision: from, recursive: false, count: 2 });
        expect(got.map((e) => [e.type, e.object.metadata.name])).toEqual([
          ['ADDED', 'a'],
          ['MODIFIED', 'a'],
        ]);
        expect(got[1]?.object).toEqual(a2);
      });

      it('watches from now when fromRevision is 0', async () => {
        const p = prefix();
        await s().create(`${p}before`, cm('before'));
        const ac = new AbortController();
        const timer = setTimeout(() => ac.abort(), WAIT_MS);
        try {
          const it = s().watch(p, { fromRevision: 0, recursive: true, signal: ac.signal })[Symbol.asyncIterator]();
          const first = it.next();
          // The watch starts asynchronously: write until it reports something.
          let settled = false;
          void first.finally(() => {
            settled = true;
          });
          let i = 0;
          while (!settled && !ac.signal.aborted) {
            const n = `after-${i++}`;
            await s().create(`${p}${n}`, cm(n));
            await Promise.race([first, new Promise((r) => setTimeout(r, 50))]);
          }
          const res = await first;
          expect(res.done).toBe(false);
          expect(res.value?.object.metadata.name).toMatch(/^after-/);
          await it.return?.();
        } finally {
          clearTimeout(timer);
          ac.abort();
        }
      });

      it('ends the iteration when the signal aborts', async () => {
        const p = prefix();
        const ac = new AbortController();
        const watch = s().watch(p, { fromRevision: await s().currentRevision(), recursive: true, signal: ac.signal });
        const it = watch[Symbol.asyncIterator]();
        const pending = it.next();
        await s().create(`${p}a`, cm('a'));
        expect((await withDeadline(pending)).value?.type).toBe('ADDED');
        const waiting = it.next();
        ac.abort();
        expect((await withDeadline(waiting)).done).toBe(true);
        expect((await withDeadline(it.next())).done).toBe(true);
      });

      it('yields nothing for an already aborted signal', async () => {
        const ac = new AbortController();
        ac.abort();
        const got: StorageEvent[] = [];
        for await (const ev of s().watch(prefix(), { fromRevision: 0, recursive: true, signal: ac.signal }))
          got.push(ev);
        expect(got).toEqual([]);
      });
    });

    describe('leases', () => {
      it('removes a key written with ttlSeconds after the TTL', async () => {
        const p = prefix();
        await s().create(`${p}short`, cm('short'), { ttlSeconds: 1 });
        await s().create(`${p}kept`, cm('kept'));
        await waitFor(async () => {
          try {
            await s().get(`${p}short`);
            return false;
          } catch (err) {
            if (isStorageError(err, 'KeyNotFound')) return true;
            throw err;
          }
        }, 'the key with a 1 s TTL to expire');
        expect((await s().get(`${p}kept`)).metadata.name).toBe('kept');
      });
    });

    describe('health', () => {
      it('answers a health check and a current revision', async () => {
        await s().healthCheck(5000);
        const r1 = await s().currentRevision();
        await s().create(`${prefix()}a`, cm('a'));
        expect(await s().currentRevision()).toBeGreaterThan(r1);
      });
    });

    if (opts.compaction ?? true) {
      describe('compaction', () => {
        const compact = async (revision: number): Promise<void> => {
          if (!target?.compact) throw new Error('runStorageSuite: compaction tests need make() to supply compact()');
          await target.compact(revision);
        };

        it('fails get and list at a compacted revision with ResourceVersionCompacted', async () => {
          const p = prefix();
          const v1 = await s().create(`${p}a`, cm('a', { v: '1' }));
          await s().guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '2' } }));
          await compact(await s().currentRevision());
          await expectStorageError(s().get(`${p}a`, { revision: rv(v1) }), 'ResourceVersionCompacted');
          await expectStorageError(s().list(p, { revision: rv(v1) }), 'ResourceVersionCompacted');
          expect((await s().get(`${p}a`)).data).toEqual({ v: '2' });
        });

        it('fails a watch from a compacted revision with ResourceVersionCompacted', async () => {
          const p = prefix();
          const v1 = await s().create(`${p}a`, cm('a', { v: '1' }));
          await s().guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '2' } }));
          await s().guaranteedUpdate(`${p}a`, (cur) => ({ ...cur, data: { v: '3' } }));
          // Watching from v1 starts at v1 + 1, which compacting at the current revision removes.
          await compact(await s().currentRevision());
          const ac = new AbortController();
          const timer = setTimeout(() => ac.abort(), WAIT_MS);
          try {
            const watch = s().watch(p, { fromRevision: rv(v1), recursive: true, signal: ac.signal });
            const it = watch[Symbol.asyncIterator]();
            await expectStorageError(it.next(), 'ResourceVersionCompacted');
          } finally {
            clearTimeout(timer);
            ac.abort();
          }
        });
      });
    }
  });
}

/** A ConfigMap-shaped object. */
export function cm(name: string, data: Record<string, string> = {}): ApiObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data };
}

function rv(obj: ApiObject): number {
  return Number(obj.metadata.resourceVersion);
}

export async function expectStorageError(p: Promise<unknown>, code: StorageErrorCode): Promise<void> {
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

/** Collects `count` events of a watch, failing if they do not arrive within WAIT_MS. */
async function collect(
  storage: Storage,
  prefix: string,
  opts: { fromRevision: number; recursive: boolean; count: number; previous?: boolean },
): Promise<StorageEvent[]> {
  const { count, ...watchOpts } = opts;
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), WAIT_MS);
  const got: StorageEvent[] = [];
  try {
    for await (const ev of storage.watch(prefix, { ...watchOpts, signal: ac.signal })) {
      got.push(ev);
      if (got.length >= count) break;
    }
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  if (got.length < count) {
    throw new Error(
      `watch ${prefix}: ${got.length} of ${count} events within ${WAIT_MS} ms: ${JSON.stringify(got.map((e) => [e.type, e.revision]))}`,
    );
  }
  return got;
}

async function withDeadline<T>(p: Promise<T>, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function waitFor(cond: () => Promise<boolean>, what: string, ms = WAIT_MS): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
