// --event-ttl: Events expire that long after their last write (store leases); other kinds do not.
import { Etcd3 } from 'etcd3';
import {
  expectCode,
  openWatch,
  startTestApiServer,
  uniqueName,
  type HttpsClient,
  type TestApiServer,
} from '@svc/testing';

describe('--event-ttl', () => {
  let server: TestApiServer;
  let api: HttpsClient;
  let raw: Etcd3;
  const ns = 'default';
  const events = `/api/v1/namespaces/${ns}/events`;

  beforeAll(async () => {
    server = await startTestApiServer({ args: ['--event-ttl=5s'] });
    api = server.client;
    raw = new Etcd3({ hosts: server.etcd.endpoints });
  });
  afterAll(async () => {
    raw?.close();
    await server?.stop();
  });

  const event = (name: string): object => ({
    metadata: { name },
    involvedObject: { kind: 'ConfigMap', namespace: ns, name: 'x' },
    reason: 'Tested',
    message: 'expires',
    type: 'Normal',
    source: { component: 'test' },
  });
  /** The lease of a stored object's key (0: none) and that lease's granted TTL. */
  async function leaseOf(resource: string, name: string): Promise<{ lease: string; grantedTTL: number }> {
    const kv = (await raw.get(`${server.storePrefix}/core/${resource}/${ns}/${name}`).exec()).kvs[0];
    if (!kv) throw new Error(`${resource}/${name} is not stored`);
    const lease = String(kv.lease);
    if (lease === '0') return { lease, grantedTTL: 0 };
    return {
      lease,
      grantedTTL: Number((await raw.leaseClient.leaseTimeToLive({ ID: lease, keys: false })).grantedTTL),
    };
  }

  it('stores an Event on a lease of the TTL; it is deleted (watchers see DELETED) once the TTL passes', async () => {
    const name = uniqueName('ev');
    const created = expectCode(await api.request('POST', events, { body: event(name) }), 201);
    const cm = uniqueName('cm');
    expectCode(
      await api.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: cm } } }),
      201,
    );
    // Under 20 s, 5 % of the TTL rounds to no reuse time: the lease is exactly the TTL.
    expect(await leaseOf('events', name)).toMatchObject({ grantedTTL: 5 });
    expect(await leaseOf('configmaps', cm)).toEqual({ lease: '0', grantedTTL: 0 });

    const watch = await openWatch(
      { baseUrl: server.server.url, caPem: server.server.caPem, token: server.adminToken },
      `${events}?watch=1&resourceVersion=${created.metadata.resourceVersion as string}&fieldSelector=metadata.name=${name}`,
    );
    try {
      const gone = await watch.next(15_000);
      expect(gone?.type).toBe('DELETED');
      expect(gone?.object.metadata?.name).toBe(name);
      expect(gone?.object.message).toBe('expires');
    } finally {
      watch.close();
    }
    expectCode(await api.request('GET', `${events}/${name}`), 404);
    expectCode(await api.request('GET', `/api/v1/namespaces/${ns}/configmaps/${cm}`), 200);
  });

  it('puts an updated Event on a fresh lease, so the TTL counts from the last write', async () => {
    const name = uniqueName('ev');
    expectCode(await api.request('POST', events, { body: event(name) }), 201);
    const first = await leaseOf('events', name);
    expectCode(
      await api.request('PATCH', `${events}/${name}`, {
        body: { count: 2 },
        headers: { 'content-type': 'application/merge-patch+json' },
      }),
      200,
    );
    const second = await leaseOf('events', name);
    expect(second.grantedTTL).toBe(5);
    expect(second.lease).not.toBe(first.lease);
  });
});
