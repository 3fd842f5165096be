// --watch-cache-sizes against a real etcd: Events are read from the store by default
// (Kubernetes' DefaultWatchCacheSizes), other resources from their watch cache; `events#100`
// caches Events too (here with Events on a real Redis: the cache in front of another store),
// and `configmaps#0` reads ConfigMaps from etcd. Seen in the server's own count of store
// requests (etcd_request_duration_seconds_count{operation="list",type=...}).
import {
  startEtcd,
  startRedis,
  startTestApiServer,
  waitFor,
  type EtcdHandle,
  type RedisHandle,
  type TestApiServer,
} from '@svc/testing';

let etcd: EtcdHandle;
let redis: RedisHandle;
let byDefault: TestApiServer;
let flipped: TestApiServer;

beforeAll(async () => {
  [etcd, redis] = await Promise.all([startEtcd(), startRedis()]);
  [byDefault, flipped] = await Promise.all([
    startTestApiServer({ etcd }),
    startTestApiServer({
      etcd,
      args: [
        '--watch-cache-sizes=events#100,configmaps#0',
        `--store-servers-overrides=/events#${redis.url},events.svc.io/events#${redis.url}`,
      ],
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([byDefault?.stop(), flipped?.stop()]);
  await Promise.all([etcd?.stop(), redis?.stop()]);
});

/** How many lists of `type` the server has sent etcd. */
async function etcdLists(t: TestApiServer, type: string): Promise<number> {
  const metrics = (await t.client.get('/metrics')).text;
  const line = metrics
    .split('\n')
    .find(
      (l) =>
        l.startsWith('etcd_request_duration_seconds_count{') &&
        l.includes('operation="list"') &&
        l.includes(`type="${type}"`),
    );
  return Number(line?.split(' ').at(-1) ?? 0);
}

/** The etcd lists that one `resourceVersion=0` list of `path` (read from the cache when there is one) costs. */
async function etcdListsOf(t: TestApiServer, type: string, path: string): Promise<number> {
  const before = await etcdLists(t, type);
  const r = await t.client.get(`${path}?resourceVersion=0`);
  expect(r.status).toBe(200);
  return (await etcdLists(t, type)) - before;
}

describe('--watch-cache-sizes', () => {
  it('by default reads Events (core and events/v1) from etcd and ConfigMaps from the watch cache', async () => {
    expect(await etcdListsOf(byDefault, 'events', '/api/v1/events')).toBe(1);
    expect(await etcdListsOf(byDefault, 'events', '/apis/events.svc.io/v1/events')).toBe(1);
    expect(await etcdListsOf(byDefault, 'configmaps', '/api/v1/configmaps')).toBe(0);
  });

  it('events#100 caches Events; configmaps#0 reads ConfigMaps from etcd', async () => {
    expect(await etcdListsOf(flipped, 'events', '/api/v1/events')).toBe(0);
    expect(await etcdListsOf(flipped, 'events', '/apis/events.svc.io/v1/events')).toBe(0);
    expect(await etcdListsOf(flipped, 'configmaps', '/api/v1/configmaps')).toBe(1);
  });

  it.each([
    ['from etcd without a cache', () => byDefault],
    ['from the cache in front of Redis', () => flipped],
  ])('lists and watches an Event written (%s)', async (_how, server) => {
    const t = server();
    const path = '/api/v1/namespaces/default/events';
    const name = `written-${t === byDefault ? 'etcd' : 'redis'}`;
    const list = (await t.client.get(path)).json<{ metadata: { resourceVersion: string } }>();
    const ev = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name },
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' },
      reason: 'Tested',
      message: 'written',
    };
    expect((await t.client.post(path, ev)).status).toBe(201);
    const w = await t.client.get(`${path}?watch=1&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=1`);
    expect(w.text).toContain('"type":"ADDED"');
    expect(w.text).toContain(`"name":"${name}"`);
    await waitFor('the Event in a resourceVersion=0 list', async () =>
      (await t.client.get(`${path}?resourceVersion=0`))
        .json<{ items: Array<{ metadata: { name: string } }> }>()
        .items.some((i) => i.metadata.name === name),
    );
  });
});
