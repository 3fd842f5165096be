import { startTestApiServer, uniqueName, waitFor, type TestApiServer } from '@svc/testing';
import type { ApiObject, WatchEvent } from '@svc/api';
import {
  Informer,
  RestClient,
  SharedInformerFactory,
  listWatcherFor,
  loadSvcconfig,
  watch,
  type ListerWatcher,
} from './index.js';
import { withServerAndClient } from './server-testing.js';

// Informers against a real server: list then watch, handler order, paging, indices, relist on 410.
const env = withServerAndClient();
let t: TestApiServer;
let c: RestClient;
beforeAll(() => ({ server: t, client: c } = env));

const CM = { group: '', version: 'v1', resource: 'configmaps' };

async function namespace(client = c): Promise<string> {
  const ns = uniqueName('inf');
  const r = await client.request('POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
  });
  expect(r.status).toBe(201);
  return ns;
}

/** A ConfigMap's data and labels, and the client that creates it (default `c`). */
interface CmOptions {
  data?: Record<string, string>;
  labels?: Record<string, string>;
  client?: RestClient;
}

async function createCm(
  ns: string,
  name: string,
  { data = {}, labels, client = c }: CmOptions = {},
): Promise<ApiObject> {
  const r = await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data },
  });
  expect(r.status).toBe(201);
  return r.json<ApiObject>();
}

async function updateCm(ns: string, name: string, data: Record<string, string>): Promise<void> {
  const cur = (await c.request('GET', `/api/v1/namespaces/${ns}/configmaps/${name}`)).json<ApiObject>();
  const r = await c.request('PUT', `/api/v1/namespaces/${ns}/configmaps/${name}`, { body: { ...cur, data } });
  expect(r.status).toBe(200);
}

async function deleteCm(ns: string, name: string): Promise<void> {
  expect((await c.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/${name}`)).status).toBe(200);
}

/** The etcd revision now, through etcd's JSON gateway. */
async function etcdCall(path: string, body: object): Promise<{ header: { revision: string } }> {
  const r = await fetch(`${t.etcd.endpoints[0]}${path}`, { method: 'POST', body: JSON.stringify(body) });
  expect(r.status).toBe(200);
  return (await r.json()) as { header: { revision: string } };
}

it('watch: streams ADDED/MODIFIED/DELETED from a resourceVersion and ends on abort', async () => {
  const ns = await namespace();
  const rv = (await c.request('GET', `/api/v1/namespaces/${ns}/configmaps`)).json<{
    metadata: { resourceVersion: string };
  }>().metadata.resourceVersion;
  const ac = new AbortController();
  const events: WatchEvent[] = [];
  const it = await watch(c, `/api/v1/namespaces/${ns}/configmaps`, { resourceVersion: rv, signal: ac.signal });
  const reading = (async () => {
    for await (const e of it) if (e.type !== 'BOOKMARK') events.push(e);
  })();
  await createCm(ns, 'a');
  await updateCm(ns, 'a', { x: '1' });
  await deleteCm(ns, 'a');
  await waitFor('three events', () => events.length >= 3);
  ac.abort();
  await reading;
  expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
});

it('watch: a refused watch throws the server Status', async () => {
  await expect(watch(c, '/api/v1/namespaces/x/nosuchresources')).rejects.toMatchObject({ code: 404 });
});

it('informer: lists (paged) then sees add/update/delete in order; the store is indexed and frozen', async () => {
  const ns = await namespace();
  for (let i = 0; i < 5; i++) await createCm(ns, `pre-${i}`, { labels: { tier: i % 2 ? 'odd' : 'even' } });
  const pages: (string | undefined)[] = [];
  const base = listWatcherFor(c, CM, { namespace: ns });
  const lw: ListerWatcher = {
    list: async (o) => {
      pages.push(o.continue);
      return base.list(o);
    },
    watch: (o) => base.watch(o),
  };
  const inf = new Informer(lw, { pageSize: 2, indexers: { tier: (o) => [o.metadata.labels?.tier ?? ''] } });
  const log: string[] = [];
  inf.addEventHandler({
    onAdd: (o) => log.push(`add ${o.metadata.name}`),
    onUpdate: (a, b) => log.push(`update ${b.metadata.name} ${JSON.stringify(a.data)}->${JSON.stringify(b.data)}`),
    onDelete: (o) => log.push(`delete ${o.metadata.name}`),
  });
  const ac = new AbortController();
  const run = inf.run(ac.signal);
  await inf.waitForSync({ timeoutMs: 10_000 });
  expect(pages).toHaveLength(3);
  expect(inf.store.size).toBe(5);
  expect(inf.store.byIndex('namespace', ns)).toHaveLength(5);
  expect(
    inf.store
      .byIndex('tier', 'odd')
      .map((o) => o.metadata.name)
      .sort(),
  ).toEqual(['pre-1', 'pre-3']);
  const obj = inf.store.get(`${ns}/pre-0`);
  expect(Object.isFrozen(obj)).toBe(true);
  expect(Object.isFrozen(obj?.metadata)).toBe(true);
  log.length = 0;

  await createCm(ns, 'a', { data: { v: '1' } });
  await updateCm(ns, 'a', { v: '2' });
  await deleteCm(ns, 'a');
  await deleteCm(ns, 'pre-1');
  await waitFor('four events', () => log.length >= 4);
  expect(log).toEqual(['add a', 'update a {"v":"1"}->{"v":"2"}', 'delete a', 'delete pre-1']);
  expect(inf.store.get(`${ns}/a`)).toBeUndefined();
  expect(inf.store.byIndex('tier', 'odd').map((o) => o.metadata.name)).toEqual(['pre-3']);
  expect(inf.reflector.listCount).toBe(1);

  // A handler added after sync gets the current objects as adds.
  const late: string[] = [];
  inf.addEventHandler({ onAdd: (o) => late.push(o.metadata.name ?? '') });
  expect(late.sort()).toEqual(['pre-0', 'pre-2', 'pre-3', 'pre-4']);
  ac.abort();
  await run;
});

it('shared informer factory: one informer per resource feeds many handlers', async () => {
  const ns = await namespace();
  const f = new SharedInformerFactory(c, { namespace: ns });
  const a = f.informerFor(CM);
  expect(f.informerFor(CM)).toBe(a);
  const seen1: string[] = [];
  const seen2: string[] = [];
  a.addEventHandler({ onAdd: (o) => seen1.push(o.metadata.name ?? '') });
  f.informerFor(CM).addEventHandler({ onAdd: (o) => seen2.push(o.metadata.name ?? '') });
  const ac = new AbortController();
  f.start(ac.signal);
  await f.waitForCacheSync({ timeoutMs: 10_000 });
  await createCm(ns, 'x');
  await waitFor('both handlers', () => seen1.includes('x') && seen2.includes('x'));
  ac.abort();
  await f.stopped();
});

it('relists after a 410 ERROR event (watch from a compacted resourceVersion), then keeps watching', async () => {
  // A server started after the etcd's first revisions has no cached history back to revision 1.
  const fresh = await startTestApiServer({ etcd: t.etcd });
  const fc = new RestClient(loadSvcconfig(fresh.svcconfigPath));
  try {
    await relistScenario(fc);
  } finally {
    fc.close();
    await fresh.stop();
  }
});

/** The 410 scenario against a server whose cache starts after the compacted history. */
async function relistScenario(fc: RestClient): Promise<void> {
  const ns = await namespace(fc);
  await createCm(ns, 'before', { client: fc });
  await createCm(ns, 'also-before', { client: fc });
  const { header } = await etcdCall('/v3/kv/range', { key: Buffer.from('/nothing').toString('base64') });
  await etcdCall('/v3/kv/compaction', { revision: header.revision, physical: true });
  const base = listWatcherFor(fc, CM, { namespace: ns });
  let watches = 0;
  const lw: ListerWatcher = {
    list: (o) => base.list(o),
    // The first watch starts from resourceVersion 1, long compacted: the server answers 410.
    watch: (o) => base.watch(++watches === 1 ? { ...o, resourceVersion: '1' } : o),
  };
  const inf = new Informer(lw, { backoffInitialMs: 50 });
  const log: string[] = [];
  inf.addEventHandler({
    onAdd: (o) => log.push(`add ${o.metadata.name}`),
    onUpdate: (_a, b) => log.push(`update ${b.metadata.name}`),
    onDelete: (o) => log.push(`delete ${o.metadata.name}`),
  });
  const ac = new AbortController();
  const run = inf.run(ac.signal);
  try {
    await waitFor('a relist', () => inf.reflector.listCount >= 2);
    expect(watches).toBeGreaterThanOrEqual(2);
    await createCm(ns, 'after', { client: fc });
    await waitFor('the object created after the relist', () => inf.store.get(`${ns}/after`));
    // The relist found nothing new: each object was reported once.
    expect(log.sort()).toEqual(['add after', 'add also-before', 'add before']);
  } finally {
    ac.abort();
    await run;
  }
}

it('resyncs: every stored object is handed to onUpdate(obj, obj) once per period', async () => {
  const ns = await namespace();
  await createCm(ns, 'one');
  await createCm(ns, 'two');
  const inf = new Informer(listWatcherFor(c, CM, { namespace: ns }), { resyncPeriodMs: 150 });
  const resynced: string[] = [];
  inf.addEventHandler({
    onUpdate: (o, n) => {
      if (o === n) resynced.push(n.metadata.name ?? '');
    },
  });
  const ac = new AbortController();
  const run = inf.run(ac.signal);
  try {
    await waitFor('two resync rounds', () => resynced.length >= 4, { timeoutMs: 5000 });
    expect(resynced.slice(0, 4).sort()).toEqual(['one', 'one', 'two', 'two']);
  } finally {
    ac.abort();
    await run;
  }
});
