import { isNotFound, isConflict, isAlreadyExists, type ApiObject } from '@svc/api';
import { uniqueName, createDefaultServiceAccount } from '@svc/testing';
import { loadSvcconfig } from './svcconfig.js';
import { RestClient, type RequestOptions, type Response } from './rest-client.js';
import { ResourceClient } from './resource-client.js';
import { withServerAndClient } from './server-testing.js';

const env = withServerAndClient();
// No controller manager runs: pods in `default` need its ServiceAccount.
beforeAll(() => createDefaultServiceAccount(env.client, 'default'));

/** The error `p` rejects with (fails the test when it resolves). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

/** A RestClient that remembers the media types of each exchange. */
class RecordingClient extends RestClient {
  readonly exchanges: Array<{ method: string; sent?: string; accept?: string; got?: string }> = [];
  override async request(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const r = await super.request(method, path, opts);
    this.exchanges.push({ method, sent: opts.contentType, accept: opts.accept, got: r.headers['content-type'] });
    return r;
  }
}

const cmGvr = { group: '', version: 'v1', resource: 'configmaps' };
const podGvr = { group: '', version: 'v1', resource: 'pods' };
const PROTOBUF = 'application/vnd.svc.protobuf';

describe.each([['application/json'], [PROTOBUF]])('ResourceClient speaking %s', (contentType) => {
  let client: RecordingClient;
  beforeAll(() => {
    client = new RecordingClient(loadSvcconfig(env.server.svcconfigPath), { contentType });
  });
  afterAll(() => client.close());

  it('creates, gets, lists, updates, patches and deletes a ConfigMap', async () => {
    const ns = 'default';
    const cms = new ResourceClient(client, cmGvr).namespace(ns);
    const name = uniqueName('rc');
    const created = await cms.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name },
      data: { a: '1' },
    } as ApiObject);
    expect(created.metadata.uid).toBeDefined();
    const got = await cms.get(name);
    expect(got.data).toEqual({ a: '1' });
    const updated = await cms.update({ ...got, data: { a: '2' } } as ApiObject);
    expect(updated.data).toEqual({ a: '2' });
    const patched = await cms.patch(name, { data: { b: '3' } }, { type: 'merge' });
    expect(patched.data).toEqual({ a: '2', b: '3' });
    const applied = await cms.apply(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { c: '4' } } as ApiObject,
      { fieldManager: 'test', force: true },
    );
    expect(applied.data).toMatchObject({ c: '4' });
    expect((await cms.find(name))?.data).toMatchObject({ c: '4' });
    const list = await cms.list({ fieldSelector: `metadata.name=${name}` });
    expect(list.items.map((i) => i.metadata.name)).toEqual([name]);
    expect(list.metadata.resourceVersion).toMatch(/^\d+$/);
    await cms.delete(name);
    expect(await cms.find(name)).toBeUndefined();
    expect(isNotFound(await rejection(cms.get(name)))).toBe(true);
    if (contentType === PROTOBUF) {
      // The NotFound Status came in Protobuf too, and was decoded into the StatusError.
      expect(client.exchanges.at(-1)).toMatchObject({ method: 'GET', got: PROTOBUF });
      const writes = client.exchanges.filter((x) => x.method === 'POST' || x.method === 'PUT');
      expect(writes.every((x) => x.sent === PROTOBUF && x.got?.startsWith(PROTOBUF))).toBe(true);
      const reads = client.exchanges.filter((x) => x.method === 'GET' && x.got?.startsWith(PROTOBUF));
      expect(reads.length).toBeGreaterThanOrEqual(2);
    } else {
      expect(client.exchanges.every((x) => x.got?.startsWith('application/json'))).toBe(true);
    }
  });

  it("throws the server's Status for conflicts and duplicates", async () => {
    const cms = new ResourceClient(client, cmGvr).namespace('default');
    const name = uniqueName('rc');
    const first = await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } } as ApiObject);
    expect(
      isAlreadyExists(
        await rejection(cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } } as ApiObject)),
      ),
    ).toBe(true);
    await cms.update({ ...first, data: { x: 'y' } } as ApiObject);
    expect(isConflict(await rejection(cms.update({ ...first, data: { x: 'z' } } as ApiObject)))).toBe(true);
  });

  it('a Pod round-trips too', async () => {
    const pods = new ResourceClient(client, podGvr).namespace('default');
    const name = uniqueName('rc');
    const pod = await pods.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    } as ApiObject);
    expect((pod.spec as { containers: Array<{ image: string }> }).containers[0]?.image).toBe('busybox');
    await pods.delete(name, { gracePeriodSeconds: 0 });
  });
});
