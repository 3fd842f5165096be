// Dry run over HTTPS against a real etcd: `dryRun=All` on every writing verb runs every stage
// (decoding, defaulting, merging, validation, conflicts) and answers with the would-be object
// and the normal code, while etcd is untouched: neither its revision nor any key under the
// server's prefix changes. An empty `dryRun` is a normal request; any other value is 400.
import { Etcd3 } from 'etcd3';
import { apiServiceName } from '@svc/api';
import {
  startTestApiServer,
  type HttpResponse,
  type TestApiServer,
  uniqueName,
  expectCode,
  expectFailure,
  type Json,
  MEDIA,
  createNamespace,
  createDefaultServiceAccount,
} from '@svc/testing';
import { coreKey, readStored } from './stored-testing.js';
const MERGE = MEDIA.MERGE;
const SMP = MEDIA.SMP;
const JSON_PATCH = MEDIA.JSON_PATCH;
const APPLY = MEDIA.APPLY;

const DRY = 'dryRun=All';

let t: TestApiServer;
let etcd: Etcd3;
let ns: string;

const path = (resource: string, name = ''): string => `/api/v1/namespaces/${ns}/${resource}${name ? `/${name}` : ''}`;
const cmPath = (name = ''): string => path('configmaps', name);
const key = (resource: string, name: string): string => coreKey(t.storePrefix, resource, { namespace: ns, name });

interface EtcdState {
  revision: string;
  /** Every key under the server's prefix with its mod revision and value. */
  keys: Record<string, { modRevision: string; value: string }>;
}

async function etcdState(): Promise<EtcdState> {
  const res = await etcd.getAll().prefix(`${t.storePrefix}/`).exec();
  const keys: EtcdState['keys'] = {};
  for (const kv of res.kvs)
    keys[kv.key.toString('utf8')] = { modRevision: kv.mod_revision, value: kv.value.toString('utf8') };
  return { revision: res.header.revision, keys };
}

/**
 * Keys the server writes on its own while it runs: Leases (its identity, renewed every 10 s),
 * its own Service's Endpoints and EndpointSlice, the APF objects' status.
 */
const background = (k: string): boolean =>
  /\/(leases|flowschemas|prioritylevelconfigurations)\//.test(k) ||
  new RegExp(`/(endpoints|endpointslices)/default/${apiServiceName()}$`).test(k);

/**
 * Runs `fn` and asserts etcd is as before: every key under the prefix but the server's own
 * background keys unchanged, and the revision unchanged unless only those moved.
 */
async function untouched<T>(fn: () => Promise<T>): Promise<T> {
  const before = await etcdState();
  const out = await fn();
  const after = await etcdState();
  const keys = new Set([...Object.keys(before.keys), ...Object.keys(after.keys)]);
  const changed = [...keys].filter((k) => JSON.stringify(before.keys[k]) !== JSON.stringify(after.keys[k]));
  expect(
    changed.filter((k) => !background(k)).map((k) => ({ key: k, before: before.keys[k], after: after.keys[k] })),
  ).toEqual([]);
  if (changed.length === 0) expect(after.revision).toBe(before.revision);
  return out;
}

async function stored(resource: string, name: string): Promise<Json | undefined> {
  return (await readStored(etcd, key(resource, name)))?.value;
}

const cm = (name: string, data: Record<string, string>, extra: Json = {}): Json => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(extra.metadata as Json | undefined) },
  data,
});

async function createCm(name: string, data: Record<string, string> = { a: '1' }, extra: Json = {}): Promise<Json> {
  return expectCode(await t.client.post(`${cmPath()}?fieldManager=setup`, cm(name, data, extra)), 201);
}

beforeAll(async () => {
  t = await startTestApiServer();
  etcd = new Etcd3({ hosts: t.etcd.endpoints });
  ns = await createNamespace(t.client, 'dry');
  await createDefaultServiceAccount(t.client, ns);
});

afterAll(async () => {
  etcd?.close();
  await t?.stop();
});

describe('dryRun=All', () => {
  it('POST answers 201 with the would-be object (defaults, metadata, managedFields) and stores nothing', async () => {
    const name = uniqueName('post');
    const res = await untouched(() =>
      t.client.post(`${path('pods')}?${DRY}&fieldManager=dry`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name },
        spec: { containers: [{ name: 'app', image: 'example/app:1' }] },
      }),
    );
    const obj = expectCode(res, 201);
    expect(obj).toMatchObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: ns },
      spec: { restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' },
      status: { phase: 'Pending' },
    });
    expect(obj.spec.containers[0]).toMatchObject({
      imagePullPolicy: 'IfNotPresent',
      terminationMessagePath: '/dev/termination-log',
    });
    expect(typeof obj.metadata.uid).toBe('string');
    expect(typeof obj.metadata.creationTimestamp).toBe('string');
    expect(obj.metadata.managedFields).toEqual([
      expect.objectContaining({ manager: 'dry', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1' }),
    ]);
    expect(await stored('pods', name)).toBeUndefined();
    expect((await t.client.get(path('pods', name))).status).toBe(404);
  });

  it('POST with generateName answers a generated name and stores nothing', async () => {
    const res = await untouched(() =>
      t.client.post(`${cmPath()}?${DRY}`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { generateName: 'dry-gen-' },
        data: { a: '1' },
      }),
    );
    const obj = expectCode(res, 201);
    expect(obj.metadata.name).toMatch(/^dry-gen-[a-z0-9]{5}$/);
    expect(await stored('configmaps', obj.metadata.name as string)).toBeUndefined();
  });

  it('POST still validates: an invalid object is 422 and nothing is stored', async () => {
    await untouched(async () => {
      expectFailure(await t.client.post(`${cmPath()}?${DRY}`, cm('Bad_Name', {})), { code: 422, reason: 'Invalid' });
    });
  });

  it("POST of an existing name is 409 AlreadyExists, as the real request would be (Kubernetes' dry-run storage checks the key)", async () => {
    const name = uniqueName('exists');
    await createCm(name, { a: 'original' });
    await untouched(async () => {
      expectFailure(await t.client.post(`${cmPath()}?${DRY}`, cm(name, { a: 'dry' })), {
        code: 409,
        reason: 'AlreadyExists',
        message: `configmaps "${name}" already exists`,
      });
    });
    expect((await stored('configmaps', name))?.data).toEqual({ a: 'original' });
  });

  it('PUT answers 200 with the updated object and leaves etcd alone; a stale resourceVersion is still 409', async () => {
    const name = uniqueName('put');
    const created = await createCm(name, { a: '1' });
    const res = await untouched(() =>
      t.client.put(`${cmPath(name)}?${DRY}&fieldManager=putter`, { ...created, data: { a: '2', b: '3' } }),
    );
    const obj = expectCode(res, 200);
    expect(obj.data).toEqual({ a: '2', b: '3' });
    expect(obj.metadata.uid).toBe(created.metadata.uid);
    // Nothing was written, so the answer carries the stored version (kubectl diff shows no change to it).
    expect(obj.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(obj.metadata.managedFields.map((e: Json) => e.manager).sort()).toEqual(['putter', 'setup']);
    expect((await stored('configmaps', name))?.data).toEqual({ a: '1' });

    expectCode(await t.client.put(cmPath(name), { ...created, data: { a: 'real' } }), 200);
    await untouched(async () => {
      expectFailure(await t.client.put(`${cmPath(name)}?${DRY}`, { ...created, data: { a: 'stale' } }), {
        code: 409,
        reason: 'Conflict',
      });
    });
  });

  const patches: Array<{ type: string; contentType: string; body: unknown; query?: string }> = [
    {
      type: 'JSON patch',
      contentType: JSON_PATCH,
      body: [
        { op: 'replace', path: '/data/a', value: '2' },
        { op: 'add', path: '/data/b', value: '3' },
      ],
    },
    { type: 'merge patch', contentType: MERGE, body: { data: { a: '2', b: '3' } } },
    { type: 'strategic merge patch', contentType: SMP, body: { data: { a: '2', b: '3' } } },
    {
      type: 'apply patch',
      contentType: APPLY,
      body: { apiVersion: 'v1', kind: 'ConfigMap', data: { a: '2', b: '3' } },
      query: '&fieldManager=applier&force=true',
    },
  ];

  it.each(patches)('PATCH ($type) answers 200 with the patched object and leaves etcd alone', async (p) => {
    const name = uniqueName('patch');
    const created = await createCm(name, { a: '1' });
    const body = p.contentType === APPLY ? { ...(p.body as Json), metadata: { name } } : p.body;
    const res = await untouched(() =>
      t.client.patch(`${cmPath(name)}?${DRY}${p.query ?? ''}`, JSON.stringify(body), p.contentType),
    );
    const obj = expectCode(res, 200);
    expect(obj.data).toEqual({ a: '2', b: '3' });
    expect(obj.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect((await stored('configmaps', name))?.data).toEqual({ a: '1' });
    expect(expectCode(await t.client.get(cmPath(name)), 200).data).toEqual({ a: '1' });
  });

  it('PATCH (apply) of an absent object answers 201 with the would-be object and creates nothing', async () => {
    const name = uniqueName('apply-new');
    const res = await untouched(() =>
      t.client.patch(`${cmPath(name)}?${DRY}&fieldManager=applier`, JSON.stringify(cm(name, { a: '1' })), APPLY),
    );
    const obj = expectCode(res, 201);
    expect(obj).toMatchObject({ metadata: { name, namespace: ns }, data: { a: '1' } });
    expect(obj.metadata.managedFields).toEqual([expect.objectContaining({ manager: 'applier', operation: 'Apply' })]);
    expect(await stored('configmaps', name)).toBeUndefined();
  });

  it('PATCH (apply) still reports conflicts (409) under dry run', async () => {
    const name = uniqueName('apply-conflict');
    expectCode(
      await t.client.patch(`${cmPath(name)}?fieldManager=a`, JSON.stringify(cm(name, { x: '1' })), APPLY),
      201,
    );
    await untouched(async () => {
      expectFailure(
        await t.client.patch(`${cmPath(name)}?${DRY}&fieldManager=b`, JSON.stringify(cm(name, { x: '2' })), APPLY),
        { code: 409, reason: 'Conflict', message: 'Apply failed with 1 conflict: conflict with "a": .data.x' },
      );
    });
  });

  it('DELETE answers as the real delete would (Status for a configmap, the object for a pod) and deletes nothing', async () => {
    const name = uniqueName('del');
    const created = await createCm(name);
    const status = expectCode(await untouched(() => t.client.delete(`${cmPath(name)}?${DRY}`)), 200);
    expect(status).toMatchObject({
      kind: 'Status',
      status: 'Success',
      details: { name, kind: 'configmaps', uid: created.metadata.uid },
    });
    expect(await stored('configmaps', name)).toBeDefined();

    const pod = uniqueName('del-pod');
    const p = expectCode(
      await t.client.post(path('pods'), {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: pod },
        spec: { containers: [{ name: 'app', image: 'example/app:1' }] },
      }),
      201,
    );
    const deleted = expectCode(await untouched(() => t.client.delete(`${path('pods', pod)}?${DRY}`)), 200);
    expect(deleted).toMatchObject({ kind: 'Pod', metadata: { name: pod, uid: p.metadata.uid } });
    expect(await stored('pods', pod)).toBeDefined();

    await untouched(async () => {
      expectFailure(await t.client.delete(`${cmPath(uniqueName('missing'))}?${DRY}`), {
        code: 404,
        reason: 'NotFound',
      });
    });
  });

  it('DELETE and deletecollection with dryRun in the DeleteOptions body (as kubectl sends it) delete nothing', async () => {
    const name = uniqueName('del-body');
    const batch = uniqueName('batch');
    await createCm(name, { a: '1' }, { metadata: { labels: { batch } } });
    const body = { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background', dryRun: ['All'] };
    const one = await untouched(() =>
      t.client.request('DELETE', cmPath(name), { body, contentType: 'application/json' }),
    );
    expect(expectCode(one, 200)).toMatchObject({ kind: 'Status', status: 'Success', details: { name } });
    const all = await untouched(() =>
      t.client.request('DELETE', `${cmPath()}?labelSelector=${encodeURIComponent(`batch=${batch}`)}`, {
        body,
        contentType: 'application/json',
      }),
    );
    expect((expectCode(all, 200).items as Json[]).map((i) => i.metadata.name)).toEqual([name]);
    expect(await stored('configmaps', name)).toBeDefined();

    await untouched(async () => {
      const bad = await t.client.request('DELETE', cmPath(name), {
        body: { ...body, dryRun: ['Yes'] },
        contentType: 'application/json',
      });
      expectFailure(bad, { code: 400, reason: 'BadRequest' });
    });
  });

  it('DELETE of an object with finalizers answers it with a deletionTimestamp and changes nothing', async () => {
    const name = uniqueName('del-fin');
    await createCm(name, { a: '1' }, { metadata: { finalizers: ['example.com/hold'] } });
    const obj = expectCode(await untouched(() => t.client.delete(`${cmPath(name)}?${DRY}`)), 200);
    expect(obj.metadata.deletionTimestamp).toEqual(expect.any(String));
    expect((await stored('configmaps', name))?.metadata.deletionTimestamp).toBeUndefined();
    expectCode(await t.client.patch(cmPath(name), { metadata: { finalizers: null } }, MERGE), 200);
  });

  it('deletecollection answers the would-be deleted items and deletes nothing', async () => {
    const batch = uniqueName('batch');
    const names = [uniqueName('dc'), uniqueName('dc')];
    for (const n of names) await createCm(n, { a: '1' }, { metadata: { labels: { batch } } });
    const list = expectCode(
      await untouched(() =>
        t.client.delete(`${cmPath()}?${DRY}&labelSelector=${encodeURIComponent(`batch=${batch}`)}`),
      ),
      200,
    );
    expect(list.kind).toBe('ConfigMapList');
    expect((list.items as Json[]).map((i) => i.metadata.name).sort()).toEqual([...names].sort());
    for (const n of names) expect(await stored('configmaps', n)).toBeDefined();
  });
});

describe('dryRun values', () => {
  it('an empty dryRun value is a normal request (the object is stored)', async () => {
    const name = uniqueName('empty');
    const created = expectCode(await t.client.post(`${cmPath()}?dryRun=`, cm(name, { a: '1' })), 201);
    expect((await stored('configmaps', name))?.metadata.uid).toBe(created.metadata.uid);
    expectCode(await t.client.patch(`${cmPath(name)}?dryRun=`, { data: { a: '2' } }, MERGE), 200);
    expect((await stored('configmaps', name))?.data).toEqual({ a: '2' });
    expectCode(await t.client.delete(`${cmPath(name)}?dryRun=`), 200);
    expect(await stored('configmaps', name)).toBeUndefined();
  });

  it.each(['Yes', 'all', 'true', 'None'])(
    'dryRun=%s is 400 BadRequest on every verb and writes nothing',
    async (value) => {
      const name = uniqueName('badvalue');
      const existing = await createCm(name, { a: '1' });
      const q = `dryRun=${encodeURIComponent(value)}`;
      await untouched(async () => {
        const calls: Array<[string, Promise<HttpResponse>]> = [
          ['POST', t.client.post(`${cmPath()}?${q}`, cm(uniqueName('new'), { a: '1' }))],
          ['PUT', t.client.put(`${cmPath(name)}?${q}`, { ...existing, data: { a: '2' } })],
          ['PATCH merge', t.client.patch(`${cmPath(name)}?${q}`, { data: { a: '2' } }, MERGE)],
          [
            'PATCH apply',
            t.client.patch(`${cmPath(name)}?${q}&fieldManager=m`, JSON.stringify(cm(name, { a: '2' })), APPLY),
          ],
          ['DELETE', t.client.delete(`${cmPath(name)}?${q}`)],
          ['DELETE collection', t.client.delete(`${cmPath()}?${q}`)],
        ];
        for (const [verb, call] of calls) {
          const res = await call;
          if (res.status !== 400) throw new Error(`${verb} with ${q}: expected 400, got ${res.status}: ${res.text}`);
          const s = expectFailure(res, { code: 400, reason: 'BadRequest' });
          expect(s.message).toContain(value);
        }
      });
    },
  );
});
