import { randomBytes } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import {
  startEtcd,
  startTestApiServer,
  type EtcdHandle,
  type HttpsClient,
  type TestApiServer,
  type WatchEventJson,
} from '@svc/testing';

// The read path of the spec ("Resource version semantics", "Chunked list procedure",
// "Events"), run against the watch cache and against etcd directly (--watch-cache=false).

let etcd: EtcdHandle;
let raw: Etcd3;
beforeAll(async () => {
  etcd = await startEtcd();
  raw = new Etcd3({ hosts: etcd.endpoints });
});
afterAll(async () => {
  raw.close();
  await etcd.stop();
});

const NS = '/api/v1/namespaces/default/configmaps';

function cm(name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}): object {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data };
}

async function create(c: HttpsClient, name: string, labels: Record<string, string> = {}): Promise<{ rv: string }> {
  const r = await c.post(NS, cm(name, labels));
  expect(r.status).toBe(201);
  return { rv: r.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion };
}

async function setData(c: HttpsClient, name: string, data: Record<string, string>): Promise<string> {
  const r = await c.patch(`${NS}/${name}`, { data }, 'application/merge-patch+json');
  expect(r.status).toBe(200);
  return r.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
}

async function currentRevision(): Promise<number> {
  return Number((await raw.get('/nothing').exec()).header.revision);
}

const names = (events: WatchEventJson[]): string[] => events.map((e) => `${e.type}:${e.object.metadata?.name ?? ''}`);
const items = (r: { json: <T>() => T }): string[] =>
  r.json<{ items: Array<{ metadata: { name: string } }> }>().items.map((i) => i.metadata.name);

describe.each([
  ['the watch cache', [] as string[]],
  ['etcd directly', ['--watch-cache=false']],
])('read path served by %s', (_mode, args) => {
  let t: TestApiServer;
  let c: HttpsClient;
  let label: string;
  beforeAll(async () => {
    t = await startTestApiServer({ etcd, args });
    c = t.client;
  });
  afterAll(async () => {
    await t.stop();
  });
  beforeEach(() => {
    label = `t${randomBytes(4).toString('hex')}`;
  });

  describe('watch', () => {
    it('observes add, update and delete of configmaps in order', async () => {
      const list = await c.get(`${NS}?labelSelector=test=${label}`);
      const rv = list.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
      const w = await c.watch(`${NS}?watch=1&labelSelector=test=${label}&resourceVersion=${rv}`);
      expect(w.status).toBe(200);
      expect(w.res.headers['content-type']).toMatch(/^application\/json/);
      await create(c, `${label}-a`, { test: label });
      await setData(c, `${label}-a`, { k: 'v' });
      expect((await c.delete(`${NS}/${label}-a`)).status).toBe(200);
      const ev = await w.take(3);
      w.close();
      expect(names(ev)).toEqual([`ADDED:${label}-a`, `MODIFIED:${label}-a`, `DELETED:${label}-a`]);
      expect(ev[1]?.object.data).toEqual({ k: 'v' });
      // DELETED carries the object as it was just before deletion.
      expect(ev[2]?.object.data).toEqual({ k: 'v' });
      const rvs = ev.map((e) => Number(e.object.metadata?.resourceVersion));
      expect(rvs[0]).toBeLessThan(rvs[1] ?? 0);
      expect(rvs[1]).toBeLessThan(rvs[2] ?? 0);
    });

    it('starts watching from a specific version', async () => {
      await create(c, `${label}-a`, { test: label });
      const rv1 = await setData(c, `${label}-a`, { n: '1' });
      await setData(c, `${label}-a`, { n: '2' });
      await setData(c, `${label}-a`, { n: '3' });
      const w = await c.watch(`${NS}?watch=1&labelSelector=test=${label}&resourceVersion=${rv1}`);
      const ev = await w.take(2);
      w.close();
      expect(ev.map((e) => [e.type, (e.object.data as Record<string, string>).n])).toEqual([
        ['MODIFIED', '2'],
        ['MODIFIED', '3'],
      ]);
    });

    it('restarts from the last observed version of a previous watch without loss or duplicates', async () => {
      const rv0 = (await c.get(NS)).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
      const w1 = await c.watch(`${NS}?watch=1&labelSelector=test=${label}&resourceVersion=${rv0}`);
      await create(c, `${label}-a`, { test: label });
      await create(c, `${label}-b`, { test: label });
      const first = await w1.take(2);
      w1.close();
      const last = first[1]?.object.metadata?.resourceVersion;
      await create(c, `${label}-c`, { test: label });
      await setData(c, `${label}-a`, { x: '1' });
      const w2 = await c.watch(`${NS}?watch=1&labelSelector=test=${label}&resourceVersion=${last}`);
      const second = await w2.take(2);
      w2.close();
      expect(names([...first, ...second])).toEqual([
        `ADDED:${label}-a`,
        `ADDED:${label}-b`,
        `ADDED:${label}-c`,
        `MODIFIED:${label}-a`,
      ]);
    });

    it('sends DELETED when an object stops matching the selector and ADDED when it matches again', async () => {
      const { rv } = await create(c, `${label}-a`, { test: label, sel: 'yes' });
      const w = await c.watch(`${NS}?watch=1&labelSelector=test=${label},sel=yes&resourceVersion=${rv}`);
      await c.patch(`${NS}/${label}-a`, { metadata: { labels: { sel: 'no' } } }, 'application/merge-patch+json');
      await c.patch(`${NS}/${label}-a`, { metadata: { labels: { sel: 'yes' } } }, 'application/merge-patch+json');
      const ev = await w.take(2);
      w.close();
      expect(names(ev)).toEqual([`DELETED:${label}-a`, `ADDED:${label}-a`]);
    });

    it('gives concurrent watches the same events in the same order', async () => {
      const rv0 = (await c.get(NS)).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
      const watches = await Promise.all(
        Array.from({ length: 5 }, () => c.watch(`${NS}?watch=1&labelSelector=test=${label}&resourceVersion=${rv0}`)),
      );
      await Promise.all(Array.from({ length: 10 }, (_, i) => create(c, `${label}-${i}`, { test: label })));
      const logs = await Promise.all(
        watches.map(async (w) => {
          const ev = await w.take(10);
          w.close();
          return ev.map((e) => `${e.object.metadata?.name}@${e.object.metadata?.resourceVersion}`);
        }),
      );
      for (const log of logs) expect(log).toEqual(logs[0]);
      const revs = (logs[0] ?? []).map((x) => Number(x.split('@')[1]));
      expect([...revs].sort((a, b) => a - b)).toEqual(revs);
    });

    it('begins with synthetic ADDED events for existing objects when resourceVersion is unset or 0', async () => {
      await create(c, `${label}-a`, { test: label });
      await create(c, `${label}-b`, { test: label });
      for (const rv of ['', '&resourceVersion=0']) {
        const w = await c.watch(`${NS}?watch=1&labelSelector=test=${label}${rv}`);
        const ev = await w.take(2);
        await create(c, `${label}-c${rv ? '0' : ''}`, { test: label });
        const next = await w.take(1);
        w.close();
        expect(names(ev).sort()).toEqual([`ADDED:${label}-a`, `ADDED:${label}-b`]);
        expect(next[0]?.type).toBe('ADDED');
      }
    });

    it('watches one object by URL name and by metadata.name field selector', async () => {
      const { rv } = await create(c, `${label}-a`, { test: label });
      await create(c, `${label}-b`, { test: label });
      const byName = await c.watch(`${NS}/${label}-a?watch=1&resourceVersion=${rv}`);
      const bySelector = await c.watch(`${NS}?watch=1&fieldSelector=metadata.name=${label}-a&resourceVersion=${rv}`);
      await setData(c, `${label}-b`, { x: '1' });
      await setData(c, `${label}-a`, { x: '2' });
      for (const w of [byName, bySelector]) {
        const ev = await w.take(1);
        w.close();
        expect(names(ev)).toEqual([`MODIFIED:${label}-a`]);
      }
    });

    it('ends the stream after timeoutSeconds', async () => {
      const started = Date.now();
      const w = await c.watch(`${NS}?watch=1&labelSelector=test=${label}&timeoutSeconds=1`);
      await w.waitEnd(5000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    });

    it('refuses sendInitialEvents while the WatchList gate is off', async () => {
      const r = await c.get(`${NS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`);
      expect(r.status).toBe(422);
      expect(r.json<{ reason: string; message: string }>().message).toContain(
        'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
      );
    });

    it('refuses resourceVersionMatch on a watch without sendInitialEvents', async () => {
      const r = await c.get(`${NS}?watch=1&resourceVersionMatch=NotOlderThan&resourceVersion=1`);
      expect(r.status).toBe(422);
      expect(r.json<{ reason: string }>().reason).toBe('Invalid');
    });
  });

  describe('chunked lists', () => {
    it('lists 7 objects in chunks of 2 at one collection resourceVersion', async () => {
      for (let i = 0; i < 7; i++) await create(c, `${label}-${i}`, { test: label });
      const seen: string[] = [];
      const rvs = new Set<string>();
      const remaining: Array<number | undefined> = [];
      let cont = '';
      let pages = 0;
      do {
        const r = await c.get(
          `${NS}?labelSelector=test=${label}&limit=2${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
        );
        expect(r.status).toBe(200);
        const body = r.json<{
          metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
          items: Array<{ metadata: { name: string } }>;
        }>();
        seen.push(...body.items.map((i) => i.metadata.name));
        rvs.add(body.metadata.resourceVersion);
        remaining.push(body.metadata.remainingItemCount);
        cont = body.metadata.continue ?? '';
        // A write between chunks is not part of this list.
        if (pages === 0) await create(c, `${label}-zz`, { test: label });
        pages++;
      } while (cont);
      expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `${label}-${i}`));
      expect(pages).toBe(4);
      expect(rvs.size).toBe(1);
      // With a selector remainingItemCount is omitted.
      expect(remaining.every((x) => x === undefined)).toBe(true);
    });

    it('reports remainingItemCount without selectors and omits it on the last chunk', async () => {
      const ns = `/api/v1/namespaces/${label}`;
      expect((await c.post('/api/v1/namespaces', { metadata: { name: label } })).status).toBe(201);
      for (let i = 0; i < 5; i++) expect((await c.post(`${ns}/configmaps`, cm(`c${i}`))).status).toBe(201);
      const first = (await c.get(`${ns}/configmaps?limit=2`)).json<{
        metadata: { continue?: string; remainingItemCount?: number };
      }>();
      expect(first.metadata.remainingItemCount).toBe(3);
      const last = (
        await c.get(`${ns}/configmaps?limit=3&continue=${encodeURIComponent(first.metadata.continue ?? '')}`)
      ).json<{ metadata: { continue?: string; remainingItemCount?: number } }>();
      expect(last.metadata.continue).toBeUndefined();
      expect(last.metadata.remainingItemCount).toBeUndefined();
    });

    it('answers an inconsistent continue after compaction with 410 and a token to carry on', async () => {
      for (let i = 0; i < 4; i++) await create(c, `${label}-${i}`, { test: label });
      const first = (await c.get(`${NS}?labelSelector=test=${label}&limit=2`)).json<{
        metadata: { continue: string };
      }>();
      await create(c, `${label}-9`, { test: label });
      await raw.kv.compact({ revision: String(await currentRevision()), physical: true });
      const r = await c.get(
        `${NS}?labelSelector=test=${label}&limit=2&continue=${encodeURIComponent(first.metadata.continue)}`,
      );
      expect(r.status).toBe(410);
      const status = r.json<{ reason: string; metadata: { continue?: string } }>();
      expect(status.reason).toBe('Expired');
      expect(status.metadata.continue).toBeTruthy();
      const rest = await c.get(
        `${NS}?labelSelector=test=${label}&limit=10&continue=${encodeURIComponent(status.metadata.continue ?? '')}`,
      );
      expect(rest.status).toBe(200);
      expect(items(rest)).toEqual([`${label}-2`, `${label}-3`, `${label}-9`]);
    });
  });

  describe('resourceVersion semantics', () => {
    it('get: unset, 0 and a known version return the object; a version far ahead is 504', async () => {
      const { rv } = await create(c, `${label}-a`);
      for (const q of ['', '?resourceVersion=0', `?resourceVersion=${rv}`]) {
        const r = await c.get(`${NS}/${label}-a${q}`);
        expect(r.status).toBe(200);
      }
      const ahead = await c.get(`${NS}/${label}-a?resourceVersion=${(await currentRevision()) + 1000}`);
      expect(ahead.status).toBe(504);
      expect(ahead.json<{ reason: string; message: string }>().message).toContain('Too large resource version');
    }, 20_000);

    it('list without match: unset = most recent, 0 = any, n = not older than n, n with limit = exact', async () => {
      const { rv } = await create(c, `${label}-a`, { test: label });
      await create(c, `${label}-b`, { test: label });
      const sel = `labelSelector=test=${label}`;
      expect(items(await c.get(`${NS}?${sel}`))).toEqual([`${label}-a`, `${label}-b`]);
      expect((await c.get(`${NS}?${sel}&resourceVersion=0`)).status).toBe(200);
      const nto = await c.get(`${NS}?${sel}&resourceVersion=${rv}`);
      expect(
        Number(nto.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion),
      ).toBeGreaterThanOrEqual(Number(rv));
      const exact = await c.get(`${NS}?${sel}&resourceVersion=${rv}&limit=10`);
      expect(exact.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion).toBe(rv);
      expect(items(exact)).toEqual([`${label}-a`]);
    });

    it('list with continue: resourceVersion 0 is treated as the token; another version is a 400', async () => {
      for (let i = 0; i < 3; i++) await create(c, `${label}-${i}`, { test: label });
      const first = (await c.get(`${NS}?labelSelector=test=${label}&limit=1`)).json<{
        metadata: { continue: string; resourceVersion: string };
      }>();
      const tok = encodeURIComponent(first.metadata.continue);
      const zero = await c.get(`${NS}?labelSelector=test=${label}&limit=1&resourceVersion=0&continue=${tok}`);
      expect(zero.status).toBe(200);
      expect(zero.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion).toBe(
        first.metadata.resourceVersion,
      );
      const bad = await c.get(
        `${NS}?labelSelector=test=${label}&limit=1&resourceVersion=${first.metadata.resourceVersion}&continue=${tok}`,
      );
      expect(bad.status).toBe(400);
      expect(bad.json<{ reason: string }>().reason).toBe('BadRequest');
    });

    it('list with resourceVersionMatch=Exact: the collection is at exactly that version; unset and 0 are invalid', async () => {
      const { rv } = await create(c, `${label}-a`, { test: label });
      await create(c, `${label}-b`, { test: label });
      const exact = await c.get(`${NS}?labelSelector=test=${label}&resourceVersion=${rv}&resourceVersionMatch=Exact`);
      expect(exact.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion).toBe(rv);
      expect(items(exact)).toEqual([`${label}-a`]);
      for (const q of ['resourceVersionMatch=Exact', 'resourceVersionMatch=Exact&resourceVersion=0']) {
        const r = await c.get(`${NS}?${q}`);
        expect(r.status).toBe(422);
        expect(r.json<{ details: { kind: string } }>().details.kind).toBe('ListOptions');
      }
    });

    it('list with resourceVersionMatch=NotOlderThan: 0 = any, n = at least n, unset is invalid, far ahead is 504', async () => {
      const { rv } = await create(c, `${label}-a`, { test: label });
      expect((await c.get(`${NS}?resourceVersionMatch=NotOlderThan&resourceVersion=0`)).status).toBe(200);
      const r = await c.get(
        `${NS}?labelSelector=test=${label}&resourceVersionMatch=NotOlderThan&resourceVersion=${rv}`,
      );
      expect(
        Number(r.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion),
      ).toBeGreaterThanOrEqual(Number(rv));
      expect((await c.get(`${NS}?resourceVersionMatch=NotOlderThan`)).status).toBe(422);
      const ahead = await c.get(
        `${NS}?resourceVersionMatch=NotOlderThan&resourceVersion=${(await currentRevision()) + 1000}`,
      );
      expect(ahead.status).toBe(504);
      expect(ahead.json<{ message: string }>().message).toContain('Too large resource version');
    }, 20_000);

    it('list at an exact version that was compacted is 410 Expired', async () => {
      const { rv } = await create(c, `${label}-a`);
      await create(c, `${label}-b`);
      await raw.kv.compact({ revision: String(await currentRevision()), physical: true });
      const r = await c.get(`${NS}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
      expect(r.status).toBe(410);
      expect(r.json<{ reason: string }>().reason).toBe('Expired');
    });

    it('watch from a compacted version older than the kept history gets a 410 ERROR event', async () => {
      await create(c, `${label}-a`);
      await raw.kv.compact({ revision: String(await currentRevision()), physical: true });
      // A server started now keeps no history before this point, in its cache or in etcd.
      const fresh = await startTestApiServer({ etcd, args });
      const w = await fresh.client.watch(`${NS}?watch=1&resourceVersion=1`);
      const ev = await w.next();
      w.close();
      await fresh.stop();
      expect(ev?.type).toBe('ERROR');
      expect(ev?.object.code).toBe(410);
      expect(ev?.object.reason).toBe('Expired');
      expect(ev?.object.message).toContain('too old resource version');
    });
  });

  describe('bad input', () => {
    it.each([
      ['labelSelector=a in (', 400],
      ['labelSelector=!!', 400],
      ['fieldSelector=spec.foo=x', 400],
      ['fieldSelector=metadata.name', 400],
      ['resourceVersion=abc', 400],
      ['resourceVersion=-1', 400],
      ['limit=x', 400],
      ['limit=-1', 400],
      ['continue=garbage', 400],
      ['continue=eyJ2IjoibWV0YS5zdmMuaW8vdjEifQ', 400],
      ['resourceVersionMatch=Sometimes&resourceVersion=1', 422],
    ])('GET ?%s → %d with a Status', async (q, code) => {
      const r = await c.get(`${NS}?${q}`);
      expect(r.status).toBe(code);
      const s = r.json<{ kind: string; status: string; message: string }>();
      expect(s.kind).toBe('Status');
      expect(s.status).toBe('Failure');
      expect(s.message.length).toBeGreaterThan(5);
      expect((await c.get('/readyz')).status).toBe(200);
    });

    it('refuses a continue token issued for another resource type', async () => {
      for (let i = 0; i < 2; i++)
        expect(
          (await c.post('/api/v1/namespaces/default/secrets', { metadata: { name: `${label}-${i}` } })).status,
        ).toBe(201);
      const tok = (await c.get('/api/v1/namespaces/default/secrets?limit=1')).json<{ metadata: { continue: string } }>()
        .metadata.continue;
      expect(tok).toBeTruthy();
      const r = await c.get(`${NS}?limit=1&continue=${encodeURIComponent(tok)}`);
      expect(r.status).toBe(400);
      expect(r.json<{ message: string }>().message).toContain('another resource');
    });
  });
});

describe('watch cache specifics', () => {
  let t: TestApiServer;
  beforeAll(async () => {
    t = await startTestApiServer({ etcd, args: ['--feature-gates=WatchList=true'] });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('sends bookmarks when asked, before the server-side timeout', async () => {
    const w = await t.client.watch(`${NS}?watch=1&allowWatchBookmarks=true&timeoutSeconds=3&labelSelector=none=here`);
    const rest = await w.waitEnd(6000);
    const bookmarks = rest.filter((e) => e.type === 'BOOKMARK');
    expect(bookmarks.length).toBeGreaterThanOrEqual(1);
    expect(Object.keys(bookmarks[0]?.object.metadata ?? {})).toEqual(['resourceVersion']);
    expect(bookmarks[0]?.object.kind).toBe('ConfigMap');
  });

  it('with WatchList: initial ADDED events, then a bookmark marking their end at the synced version', async () => {
    const label = `t${randomBytes(4).toString('hex')}`;
    await create(t.client, `${label}-a`, { test: label });
    await create(t.client, `${label}-b`, { test: label });
    const w = await t.client.watch(
      `${NS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=test=${label}`,
    );
    const ev = await w.take(3, { withBookmarks: true });
    w.close();
    expect(names(ev.slice(0, 2)).sort()).toEqual([`ADDED:${label}-a`, `ADDED:${label}-b`]);
    expect(ev[2]?.type).toBe('BOOKMARK');
    expect(ev[2]?.object.metadata?.annotations).toEqual({ 'svc.io/initial-events-end': 'true' });
  });
});
