// Handler tests over HTTPS against a real etcd: every verb on a namespaced core type
// (configmaps), a cluster-scoped type (nodes), a named group (leases), the status
// subresource, deletion in two phases and the namespace lifecycle. Values that matter are
// also read back from etcd directly.
import { request as httpsRequest } from 'node:https';
import { Etcd3 } from 'etcd3';
import YAML from 'yaml';
import { namespaceNameLabel } from '@svc/api';
import {
  startTestApiServer,
  waitFor,
  type HttpResponse,
  type TestApiServer,
  uniqueName,
  expectCode,
  expectFailure,
  type Json,
  MEDIA,
  createNamespace,
} from '@svc/testing';
import { coreKey, readStored, type StoredObject } from './stored-testing.js';
const MERGE = MEDIA.MERGE;
const JSON_PATCH = MEDIA.JSON_PATCH;

const MODIFIED = 'the object has been modified; please apply your changes to the latest version and try again';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const LEASES = 'coordination.svc.io';

let t: TestApiServer;
let etcd: Etcd3;
let ns: string;
let ns2: string;

/** A name no other test uses. */
function body(res: HttpResponse): Json {
  return res.json<Json>();
}

/** Asserts a 2xx/3xx/4xx code with the body shown on mismatch. */
/** Asserts a failure `Status` body of Kubernetes' shape. */
const cmPath = (namespace: string, name = ''): string =>
  `/api/v1/namespaces/${namespace}/configmaps${name ? `/${name}` : ''}`;
const leasePath = (namespace: string, name = ''): string =>
  `/apis/${LEASES}/v1/namespaces/${namespace}/leases${name ? `/${name}` : ''}`;
const nodePath = (name = ''): string => `/api/v1/nodes${name ? `/${name}` : ''}`;

const cmKey = (namespace: string, name: string): string => coreKey(t.storePrefix, 'configmaps', { namespace, name });
const leaseKey = (namespace: string, name: string): string => `${t.storePrefix}/${LEASES}/leases/${namespace}/${name}`;
const nodeKey = (name: string): string => `${t.storePrefix}/core/nodes/${name}`;

/** The value stored in etcd under `key`, parsed, with its mod revision; undefined when absent. */
function stored(key: string): Promise<StoredObject | undefined> {
  return readStored(etcd, key);
}

/**
 * A request that gives up after `ms` (destroying its socket, so the server can still shut
 * down): for calls that must answer promptly, where a hang would otherwise stall the file.
 */
function requestWithin(ms: number, method: string, path: string): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      new URL(path, t.server.url),
      {
        method,
        ca: t.server.caPem,
        agent: false,
        headers: { authorization: `Bearer ${t.adminToken}` },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          clearTimeout(timer);
          const b = Buffer.concat(chunks);
          const text = b.toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: b,
            text,
            json: <T>() => JSON.parse(text) as T,
          });
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`${method} ${path} did not answer within ${ms} ms`));
    }, ms);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end();
  });
}

async function createCm(namespace: string, name: string, extra: Json = {}): Promise<Json> {
  const { metadata, ...rest } = extra;
  return expectCode(
    await t.client.post(cmPath(namespace), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, ...(metadata as Json | undefined) },
      ...rest,
    }),
    201,
  );
}

beforeAll(async () => {
  t = await startTestApiServer();
  etcd = new Etcd3({ hosts: t.etcd.endpoints });
  ns = await createNamespace(t.client, 'verbs');
  ns2 = await createNamespace(t.client, 'verbs-other');
});

afterAll(async () => {
  etcd?.close();
  await t?.stop();
});

describe('configmaps (namespaced, core group)', () => {
  it('create sets uid, creationTimestamp and resourceVersion, defaults the namespace from the URL, and writes to etcd', async () => {
    const name = uniqueName('cm');
    const created = expectCode(
      await t.client.post(cmPath(ns), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } }),
      201,
    );
    expect(created).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns },
      data: { a: '1' },
    });
    expect(created.metadata.uid).toMatch(UUID);
    expect(created.metadata.creationTimestamp).toMatch(RFC3339);
    expect(typeof created.metadata.resourceVersion).toBe('string');
    expect(created.metadata.resourceVersion).not.toBe('');

    const inEtcd = await stored(cmKey(ns, name));
    expect(inEtcd).toBeDefined();
    expect(inEtcd?.value).toMatchObject({
      metadata: { name, namespace: ns, uid: created.metadata.uid },
      data: { a: '1' },
    });
    expect(inEtcd?.modRevision).toBe(created.metadata.resourceVersion);

    const got = expectCode(await t.client.get(cmPath(ns, name)), 200);
    expect(got).toEqual(created);
  });

  it('two creates get different uids', async () => {
    const a = await createCm(ns, uniqueName('uid-a'));
    const b = await createCm(ns, uniqueName('uid-b'));
    expect(a.metadata.uid).not.toBe(b.metadata.uid);
  });

  it('get of a missing object is 404 NotFound with the resource and name', async () => {
    const name = uniqueName('missing');
    const s = expectFailure(await t.client.get(cmPath(ns, name)), {
      code: 404,
      reason: 'NotFound',
      message: `configmaps "${name}" not found`,
    });
    expect(s.details).toMatchObject({ name, kind: 'configmaps' });
    expect(s.details?.group).toBeUndefined();
  });

  it('creating an existing name is 409 AlreadyExists and leaves the stored object alone', async () => {
    const name = uniqueName('dup');
    const first = await createCm(ns, name, { data: { v: 'first' } });
    const res = await t.client.post(cmPath(ns), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name },
      data: { v: 'second' },
    });
    const s = expectFailure(res, {
      code: 409,
      reason: 'AlreadyExists',
      message: `configmaps "${name}" already exists`,
    });
    expect(s.details).toMatchObject({ name, kind: 'configmaps' });
    const inEtcd = await stored(cmKey(ns, name));
    expect(inEtcd?.value.data).toEqual({ v: 'first' });
    expect(inEtcd?.modRevision).toBe(first.metadata.resourceVersion);
  });

  it('generateName produces a unique random name from the prefix', async () => {
    const make = async (): Promise<Json> =>
      expectCode(
        await t.client.post(cmPath(ns), {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { generateName: 'gen-' },
          data: { x: 'y' },
        }),
        201,
      );
    const [a, b] = await Promise.all([make(), make()]);
    expect(a?.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
    expect(b?.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
    expect(a?.metadata.name).not.toBe(b?.metadata.name);
    expect(a?.metadata.generateName).toBe('gen-');
    expect((await stored(cmKey(ns, a?.metadata.name as string)))?.value.data).toEqual({ x: 'y' });
  });

  it('a namespace in the body that differs from the URL is 400 BadRequest and nothing is written', async () => {
    const name = uniqueName('nsmismatch');
    const res = await t.client.post(cmPath(ns), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns2 },
    });
    expectFailure(res, {
      code: 400,
      reason: 'BadRequest',
      message: 'the namespace of the provided object does not match the namespace sent on the request',
    });
    expect(await stored(cmKey(ns, name))).toBeUndefined();
    expect(await stored(cmKey(ns2, name))).toBeUndefined();
  });

  it('lists one namespace and all namespaces', async () => {
    const here = uniqueName('list-here');
    const there = uniqueName('list-there');
    await createCm(ns, here);
    await createCm(ns2, there);

    const one = expectCode(await t.client.get(cmPath(ns)), 200);
    expect(one).toMatchObject({ kind: 'ConfigMapList', apiVersion: 'v1' });
    expect(typeof one.metadata.resourceVersion).toBe('string');
    const oneNames = (one.items as Json[]).map((i) => i.metadata.name as string);
    expect(oneNames).toContain(here);
    expect(oneNames).not.toContain(there);
    expect((one.items as Json[]).every((i) => i.metadata.namespace === ns)).toBe(true);

    const all = expectCode(await t.client.get('/api/v1/configmaps'), 200);
    expect(all).toMatchObject({ kind: 'ConfigMapList', apiVersion: 'v1' });
    const allKeys = (all.items as Json[]).map((i) => `${i.metadata.namespace as string}/${i.metadata.name as string}`);
    expect(allKeys).toEqual(expect.arrayContaining([`${ns}/${here}`, `${ns2}/${there}`]));
  });

  it('list with labelSelector returns only matching objects', async () => {
    const batch = uniqueName('sel');
    const a = uniqueName('sel-a');
    const b = uniqueName('sel-b');
    await createCm(ns, a, { metadata: { labels: { batch } } });
    await createCm(ns, b, { metadata: { labels: { batch: 'other' } } });
    const list = expectCode(
      await t.client.get(`${cmPath(ns)}?labelSelector=${encodeURIComponent(`batch=${batch}`)}`),
      200,
    );
    expect((list.items as Json[]).map((i) => i.metadata.name)).toEqual([a]);
  });

  it('PUT replaces the object and changes resourceVersion; a stale resourceVersion is 409 Conflict', async () => {
    const name = uniqueName('put');
    const created = await createCm(ns, name, { data: { a: '1', b: '2' } });
    const put = expectCode(await t.client.put(cmPath(ns, name), { ...created, data: { c: '3' } }), 200);
    expect(put.data).toEqual({ c: '3' });
    expect(put.metadata.uid).toBe(created.metadata.uid);
    expect(put.metadata.creationTimestamp).toBe(created.metadata.creationTimestamp);
    expect(put.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
    const afterPut = await stored(cmKey(ns, name));
    expect(afterPut?.value.data).toEqual({ c: '3' });
    expect(afterPut?.modRevision).toBe(put.metadata.resourceVersion);

    const stale = await t.client.put(cmPath(ns, name), { ...created, data: { d: '4' } });
    const s = expectFailure(stale, {
      code: 409,
      reason: 'Conflict',
      message: `Operation cannot be fulfilled on configmaps "${name}": ${MODIFIED}`,
    });
    expect(s.details).toMatchObject({ name, kind: 'configmaps' });
    const afterStale = await stored(cmKey(ns, name));
    expect(afterStale?.value.data).toEqual({ c: '3' });
    expect(afterStale?.modRevision).toBe(put.metadata.resourceVersion);
  });

  it('PUT to a missing configmap is 404 NotFound and creates nothing', async () => {
    const name = uniqueName('put-missing');
    const res = await t.client.put(cmPath(ns, name), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name },
      data: { a: '1' },
    });
    expectFailure(res, { code: 404, reason: 'NotFound', message: `configmaps "${name}" not found` });
    expect(await stored(cmKey(ns, name))).toBeUndefined();
  });

  it('JSON patch (RFC 6902) applies its operations', async () => {
    const name = uniqueName('jsonpatch');
    const created = await createCm(ns, name, { data: { a: '1', b: '2' } });
    const patched = expectCode(
      await t.client.patch(
        cmPath(ns, name),
        [
          { op: 'test', path: '/data/a', value: '1' },
          { op: 'replace', path: '/data/a', value: 'one' },
          { op: 'remove', path: '/data/b' },
          { op: 'add', path: '/data/c', value: '3' },
          { op: 'add', path: '/metadata/labels', value: { patched: 'yes' } },
        ],
        JSON_PATCH,
      ),
      200,
    );
    expect(patched.data).toEqual({ a: 'one', c: '3' });
    expect(patched.metadata.labels).toEqual({ patched: 'yes' });
    expect(patched.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
    expect((await stored(cmKey(ns, name)))?.value.data).toEqual({ a: 'one', c: '3' });
  });

  it('a JSON patch whose test op fails is 422 and leaves the object unchanged', async () => {
    const name = uniqueName('jsonpatch-test');
    const created = await createCm(ns, name, { data: { a: '1' } });
    const res = await t.client.patch(
      cmPath(ns, name),
      [
        { op: 'replace', path: '/data/a', value: 'changed' },
        { op: 'test', path: '/data/a', value: 'something-else' },
      ],
      JSON_PATCH,
    );
    expectFailure(res, { code: 422, reason: 'Invalid' });
    const inEtcd = await stored(cmKey(ns, name));
    expect(inEtcd?.value.data).toEqual({ a: '1' });
    expect(inEtcd?.modRevision).toBe(created.metadata.resourceVersion);
    expect(expectCode(await t.client.get(cmPath(ns, name)), 200)).toEqual(created);
  });

  it('merge patch (RFC 7386) merges maps and deletes keys set to null', async () => {
    const name = uniqueName('mergepatch');
    const created = await createCm(ns, name, {
      metadata: { labels: { keep: 'k', drop: 'd' } },
      data: { a: '1', b: '2' },
    });
    const patched = expectCode(
      await t.client.patch(
        cmPath(ns, name),
        {
          metadata: { labels: { drop: null, added: 'x' } },
          data: { b: null, c: '3' },
        },
        MERGE,
      ),
      200,
    );
    expect(patched.data).toEqual({ a: '1', c: '3' });
    expect(patched.metadata.labels).toEqual({ keep: 'k', added: 'x' });
    expect(patched.metadata.uid).toBe(created.metadata.uid);
    expect(patched.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
    const inEtcd = await stored(cmKey(ns, name));
    expect(inEtcd?.value.data).toEqual({ a: '1', c: '3' });
    expect(inEtcd?.value.metadata.labels).toEqual({ keep: 'k', added: 'x' });
  });

  it('PATCH of a missing object is 404 NotFound', async () => {
    const name = uniqueName('patch-missing');
    expectFailure(await t.client.patch(cmPath(ns, name), { data: { a: '1' } }, MERGE), {
      code: 404,
      reason: 'NotFound',
      message: `configmaps "${name}" not found`,
    });
    expect(await stored(cmKey(ns, name))).toBeUndefined();
  });

  it('20 concurrent merge patches each adding a distinct key all land (no lost updates)', async () => {
    const name = uniqueName('concurrent');
    await createCm(ns, name, { data: {} });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.client.patch(cmPath(ns, name), { data: { [`k${i}`]: `v${i}` } }, MERGE)),
    );
    for (const r of results) expectCode(r, 200);
    const expected = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, `v${i}`]));
    expect(expectCode(await t.client.get(cmPath(ns, name)), 200).data).toEqual(expected);
    expect((await stored(cmKey(ns, name)))?.value.data).toEqual(expected);
  });

  it('DELETE removes the object from etcd and answers a Success Status', async () => {
    const name = uniqueName('del');
    const created = await createCm(ns, name);
    const del = expectCode(await t.client.delete(cmPath(ns, name)), 200);
    expect(del).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Success',
      details: { name, kind: 'configmaps', uid: created.metadata.uid },
    });
    expect(await stored(cmKey(ns, name))).toBeUndefined();
    expectFailure(await t.client.get(cmPath(ns, name)), {
      code: 404,
      reason: 'NotFound',
      message: `configmaps "${name}" not found`,
    });
    expectFailure(await t.client.delete(cmPath(ns, name)), {
      code: 404,
      reason: 'NotFound',
      message: `configmaps "${name}" not found`,
    });
  });

  it('deletecollection deletes exactly the objects its labelSelector matches', async () => {
    const batch = uniqueName('dc');
    const a = uniqueName('dc-a');
    const b = uniqueName('dc-b');
    const keep = uniqueName('dc-keep');
    const elsewhere = uniqueName('dc-elsewhere');
    await createCm(ns, a, { metadata: { labels: { batch } } });
    await createCm(ns, b, { metadata: { labels: { batch } } });
    await createCm(ns, keep, { metadata: { labels: { batch: `${batch}-no` } } });
    await createCm(ns2, elsewhere, { metadata: { labels: { batch } } });

    const res = expectCode(
      await t.client.delete(`${cmPath(ns)}?labelSelector=${encodeURIComponent(`batch=${batch}`)}`),
      200,
    );
    expect(res).toMatchObject({ kind: 'ConfigMapList', apiVersion: 'v1' });
    expect((res.items as Json[]).map((i) => i.metadata.name).sort()).toEqual([a, b].sort());

    expect(await stored(cmKey(ns, a))).toBeUndefined();
    expect(await stored(cmKey(ns, b))).toBeUndefined();
    expect(await stored(cmKey(ns, keep))).toBeDefined();
    expect(await stored(cmKey(ns2, elsewhere))).toBeDefined();
  });

  it('labels and annotations are validated: 422 Invalid with one cause per field error, nothing written', async () => {
    const name = uniqueName('badmeta');
    const res = await t.client.post(cmPath(ns), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, labels: { 'bad key!': 'ok', good: 'bad value!' }, annotations: { 'bad annotation!': 'x' } },
    });
    const s = expectFailure(res, {
      code: 422,
      reason: 'Invalid',
      message: new RegExp(`^ConfigMap "${name}" is invalid: \\[`),
    });
    expect(s.details).toMatchObject({ name, kind: 'ConfigMap' });
    const causes = s.details?.causes ?? [];
    expect(causes).toHaveLength(3);
    expect(causes.map((c) => c.field).sort()).toEqual(['metadata.annotations', 'metadata.labels', 'metadata.labels']);
    expect(causes.every((c) => c.reason === 'FieldValueInvalid')).toBe(true);
    expect(causes.map((c) => c.message)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('Invalid value: "bad key!"'),
        expect.stringContaining('Invalid value: "bad value!"'),
        expect.stringContaining('Invalid value: "bad annotation!"'),
      ]),
    );
    expect(await stored(cmKey(ns, name))).toBeUndefined();
  });

  it('annotations over 256 KiB in total are 422 Invalid (TooLong)', async () => {
    const name = uniqueName('bigannot');
    const res = await t.client.post(cmPath(ns), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, annotations: { big: 'x'.repeat(256 * 1024) } },
    });
    const s = expectFailure(res, { code: 422, reason: 'Invalid' });
    expect(s.details?.causes).toEqual([
      expect.objectContaining({ reason: 'FieldValueTooLong', field: 'metadata.annotations' }),
    ]);
    expect(await stored(cmKey(ns, name))).toBeUndefined();
  });

  it('answers YAML when asked and accepts a YAML body', async () => {
    const name = uniqueName('yaml');
    const res = await t.client.post(
      cmPath(ns),
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  k: v\n`,
      {
        contentType: 'application/yaml',
        headers: { accept: 'application/yaml' },
      },
    );
    expect(res.status).toBe(201);
    expect(String(res.headers['content-type'])).toMatch(/^application\/yaml/);
    const obj = YAML.parse(res.text) as Json;
    expect(obj).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns },
      data: { k: 'v' },
    });
    expect((await stored(cmKey(ns, name)))?.value.data).toEqual({ k: 'v' });
  });

  it('dryRun=All answers the object but writes nothing', async () => {
    const name = uniqueName('dryrun');
    const res = expectCode(
      await t.client.post(`${cmPath(ns)}?dryRun=All`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name },
        data: { a: '1' },
      }),
      201,
    );
    expect(res).toMatchObject({ metadata: { name, namespace: ns }, data: { a: '1' } });
    expect(await stored(cmKey(ns, name))).toBeUndefined();
    expectFailure(await t.client.get(cmPath(ns, name)), { code: 404, reason: 'NotFound' });
  });
});

describe('secrets and immutability', () => {
  const secretPath = (name = ''): string => `/api/v1/namespaces/${ns}/secrets${name ? `/${name}` : ''}`;
  const b64 = (s: string): string => Buffer.from(s).toString('base64');

  it('stringData is merged into base64 data (winning over data) and never stored', async () => {
    const name = uniqueName('secret');
    const created = expectCode(
      await t.client.post(secretPath(), {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name },
        data: { a: b64('from-data'), both: b64('data-loses') },
        stringData: { b: 'plain', both: 'stringData-wins' },
      }),
      201,
    );
    expect(created.data).toEqual({ a: b64('from-data'), b: b64('plain'), both: b64('stringData-wins') });
    expect(created.stringData).toBeUndefined();
    expect(created.type).toBe('Opaque');
    const inEtcd = await stored(`${t.storePrefix}/core/secrets/${ns}/${name}`);
    expect(inEtcd?.value.data).toEqual({ a: b64('from-data'), b: b64('plain'), both: b64('stringData-wins') });
    expect(inEtcd?.value).not.toHaveProperty('stringData');

    const patched = expectCode(await t.client.patch(secretPath(name), { stringData: { c: 'later' } }, MERGE), 200);
    expect(patched.data).toEqual({
      a: b64('from-data'),
      b: b64('plain'),
      both: b64('stringData-wins'),
      c: b64('later'),
    });
    expect(patched.stringData).toBeUndefined();
  });

  it('an immutable configmap refuses data changes (422) but accepts metadata changes', async () => {
    const name = uniqueName('immutable-cm');
    const created = await createCm(ns, name, { immutable: true, data: { a: '1' } });
    const put = await t.client.put(cmPath(ns, name), { ...created, data: { a: '2' } });
    const s = expectFailure(put, {
      code: 422,
      reason: 'Invalid',
      message: new RegExp(
        `^ConfigMap "${name}" is invalid: data: Forbidden: field is immutable when \`immutable\` is set`,
      ),
    });
    expect(s.details?.causes).toEqual([expect.objectContaining({ reason: 'FieldValueForbidden', field: 'data' })]);
    expectFailure(await t.client.patch(cmPath(ns, name), { data: { b: '2' } }, MERGE), {
      code: 422,
      reason: 'Invalid',
    });
    expectFailure(await t.client.patch(cmPath(ns, name), { immutable: false }, MERGE), {
      code: 422,
      reason: 'Invalid',
    });
    const inEtcd = await stored(cmKey(ns, name));
    expect(inEtcd?.value.data).toEqual({ a: '1' });
    expect(inEtcd?.modRevision).toBe(created.metadata.resourceVersion);

    const labelled = expectCode(
      await t.client.patch(cmPath(ns, name), { metadata: { labels: { ok: 'yes' } } }, MERGE),
      200,
    );
    expect(labelled.metadata.labels).toEqual({ ok: 'yes' });
    expect(labelled.data).toEqual({ a: '1' });
  });

  it('an immutable secret refuses data changes, also through stringData', async () => {
    const name = uniqueName('immutable-secret');
    const created = expectCode(
      await t.client.post(secretPath(), {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name },
        immutable: true,
        stringData: { a: '1' },
      }),
      201,
    );
    const s = expectFailure(await t.client.patch(secretPath(name), { stringData: { a: '2' } }, MERGE), {
      code: 422,
      reason: 'Invalid',
    });
    expect(s.details?.causes).toEqual(
      expect.arrayContaining([expect.objectContaining({ reason: 'FieldValueForbidden', field: 'data' })]),
    );
    expectFailure(await t.client.put(secretPath(name), { ...created, data: { a: b64('3') } }), {
      code: 422,
      reason: 'Invalid',
    });
    const inEtcd = await stored(`${t.storePrefix}/core/secrets/${ns}/${name}`);
    expect(inEtcd?.value.data).toEqual({ a: b64('1') });
    expect(inEtcd?.modRevision).toBe(created.metadata.resourceVersion);
  });
});

describe('deletion in two phases', () => {
  it('with finalizers the first DELETE only sets deletionTimestamp; removing the last finalizer removes the object', async () => {
    const name = uniqueName('fin');
    await createCm(ns, name, { metadata: { finalizers: ['example.com/hold-a', 'example.com/hold-b'] } });

    const del = expectCode(await t.client.delete(cmPath(ns, name)), 200);
    expect(del).toMatchObject({
      kind: 'ConfigMap',
      metadata: { name, finalizers: ['example.com/hold-a', 'example.com/hold-b'] },
    });
    expect(del.metadata.deletionTimestamp).toMatch(RFC3339);
    const got = expectCode(await t.client.get(cmPath(ns, name)), 200);
    expect(got.metadata.deletionTimestamp).toBe(del.metadata.deletionTimestamp);
    expect((await stored(cmKey(ns, name)))?.value.metadata.deletionTimestamp).toBe(del.metadata.deletionTimestamp);

    // A second DELETE keeps the first deletionTimestamp and the object.
    const again = expectCode(await t.client.delete(cmPath(ns, name)), 200);
    expect(again.metadata.deletionTimestamp).toBe(del.metadata.deletionTimestamp);

    // No new finalizers while terminating.
    expectFailure(
      await t.client.patch(
        cmPath(ns, name),
        { metadata: { finalizers: ['example.com/hold-a', 'example.com/hold-b', 'example.com/new'] } },
        MERGE,
      ),
      { code: 422, reason: 'Invalid' },
    );

    // Removing one finalizer keeps it; removing the last one removes it.
    const one = expectCode(
      await t.client.patch(cmPath(ns, name), { metadata: { finalizers: ['example.com/hold-b'] } }, MERGE),
      200,
    );
    expect(one.metadata.finalizers).toEqual(['example.com/hold-b']);
    expect(await stored(cmKey(ns, name))).toBeDefined();
    expectCode(
      await t.client.patch(cmPath(ns, name), [{ op: 'remove', path: '/metadata/finalizers' }], JSON_PATCH),
      200,
    );
    expect(await stored(cmKey(ns, name))).toBeUndefined();
    expectFailure(await t.client.get(cmPath(ns, name)), { code: 404, reason: 'NotFound' });
  });

  it('a uid precondition that does not match is 409 Conflict and deletes nothing', async () => {
    const name = uniqueName('precond');
    const created = await createCm(ns, name);
    const wrong = await t.client.request('DELETE', cmPath(ns, name), {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-the-uid' } },
    });
    const s = expectFailure(wrong, {
      code: 409,
      reason: 'Conflict',
      message: `Operation cannot be fulfilled on configmaps "${name}": Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${created.metadata.uid as string}`,
    });
    expect(s.details).toMatchObject({ name, kind: 'configmaps' });
    expect(await stored(cmKey(ns, name))).toBeDefined();

    const staleRv = await t.client.request('DELETE', cmPath(ns, name), {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: '1' } },
    });
    expectFailure(staleRv, {
      code: 409,
      reason: 'Conflict',
      message: /Precondition failed: ResourceVersion in precondition: 1/,
    });
    expect(await stored(cmKey(ns, name))).toBeDefined();

    const right = await t.client.request('DELETE', cmPath(ns, name), {
      body: {
        kind: 'DeleteOptions',
        apiVersion: 'v1',
        preconditions: { uid: created.metadata.uid, resourceVersion: created.metadata.resourceVersion },
      },
    });
    expectCode(right, 200);
    expect(await stored(cmKey(ns, name))).toBeUndefined();
  });

  it('propagationPolicy=Orphan adds the orphan finalizer; Foreground adds foregroundDeletion', async () => {
    const orphan = uniqueName('orphan');
    await createCm(ns, orphan);
    const del = expectCode(await t.client.delete(`${cmPath(ns, orphan)}?propagationPolicy=Orphan`), 200);
    expect(del.metadata.finalizers).toEqual(['orphan']);
    expect(del.metadata.deletionTimestamp).toMatch(RFC3339);
    expect((await stored(cmKey(ns, orphan)))?.value.metadata.finalizers).toEqual(['orphan']);

    const fg = uniqueName('foreground');
    await createCm(ns, fg);
    const delFg = expectCode(
      await t.client.request('DELETE', cmPath(ns, fg), {
        body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' },
      }),
      200,
    );
    expect(delFg.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect(delFg.metadata.deletionTimestamp).toMatch(RFC3339);

    // The garbage collector's part, done by hand: the objects go once the finalizers do.
    for (const n of [orphan, fg]) {
      expectCode(await t.client.patch(cmPath(ns, n), { metadata: { finalizers: null } }, MERGE), 200);
      expect(await stored(cmKey(ns, n))).toBeUndefined();
    }
  });
});

describe('nodes (cluster-scoped)', () => {
  it('create, get, list, update, patch and delete', async () => {
    const name = uniqueName('node');
    const created = expectCode(
      await t.client.post(nodePath(), {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name, labels: { role: 'test' } },
        spec: { podCIDR: '10.0.0.0/24' },
      }),
      201,
    );
    expect(created).toMatchObject({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { role: 'test' } } });
    expect(created.metadata.namespace).toBeUndefined();
    expect(created.metadata.uid).toMatch(UUID);
    expect(created.metadata.creationTimestamp).toMatch(RFC3339);
    const inEtcd = await stored(nodeKey(name));
    // TaintNodesByCondition (default-enabled) registers new nodes not ready.
    expect(inEtcd?.value.spec).toEqual({
      podCIDR: '10.0.0.0/24',
      taints: [{ key: 'node.svc.io/not-ready', effect: 'NoSchedule' }],
    });
    expect(inEtcd?.modRevision).toBe(created.metadata.resourceVersion);

    expect(expectCode(await t.client.get(nodePath(name)), 200)).toEqual(created);
    const list = expectCode(await t.client.get(nodePath()), 200);
    expect(list).toMatchObject({ kind: 'NodeList', apiVersion: 'v1' });
    expect((list.items as Json[]).map((i) => i.metadata.name)).toContain(name);

    const put = expectCode(
      await t.client.put(nodePath(name), { ...created, spec: { podCIDR: '10.0.0.0/24', unschedulable: true } }),
      200,
    );
    expect(put.spec.unschedulable).toBe(true);
    expect(put.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
    expectFailure(await t.client.put(nodePath(name), created), {
      code: 409,
      reason: 'Conflict',
      message: `Operation cannot be fulfilled on nodes "${name}": ${MODIFIED}`,
    });

    const patched = expectCode(
      await t.client.patch(nodePath(name), { metadata: { labels: { role: 'patched' } } }, MERGE),
      200,
    );
    expect(patched.metadata.labels).toEqual({ role: 'patched' });
    expect((await stored(nodeKey(name)))?.value.metadata.labels).toEqual({ role: 'patched' });

    const del = expectCode(await t.client.delete(nodePath(name)), 200);
    expect(del).toMatchObject({ kind: 'Status', status: 'Success', details: { name, kind: 'nodes' } });
    expect(await stored(nodeKey(name))).toBeUndefined();
    expectFailure(await t.client.get(nodePath(name)), {
      code: 404,
      reason: 'NotFound',
      message: `nodes "${name}" not found`,
    });
  });

  it('deletecollection with a labelSelector deletes only matching nodes', async () => {
    const batch = uniqueName('nodes');
    const [a, b, keep] = [uniqueName('dcn-a'), uniqueName('dcn-b'), uniqueName('dcn-keep')];
    for (const [name, value] of [
      [a, batch],
      [b, batch],
      [keep, `${batch}-no`],
    ] as const) {
      expectCode(
        await t.client.post(nodePath(), {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: { name, labels: { batch: value } },
        }),
        201,
      );
    }
    const res = expectCode(
      await t.client.delete(`${nodePath()}?labelSelector=${encodeURIComponent(`batch=${batch}`)}`),
      200,
    );
    expect(res).toMatchObject({ kind: 'NodeList', apiVersion: 'v1' });
    expect((res.items as Json[]).map((i) => i.metadata.name).sort()).toEqual([a, b].sort());
    expect(await stored(nodeKey(a))).toBeUndefined();
    expect(await stored(nodeKey(b))).toBeUndefined();
    expect(await stored(nodeKey(keep))).toBeDefined();
  });

  it('a cluster-scoped type is not served under a namespace', async () => {
    expectFailure(await t.client.get(`/api/v1/namespaces/${ns}/nodes`), { code: 404, reason: 'NotFound' });
    const name = uniqueName('node-ns');
    expectFailure(
      await t.client.post(`/api/v1/namespaces/${ns}/nodes`, { apiVersion: 'v1', kind: 'Node', metadata: { name } }),
      { code: 404, reason: 'NotFound' },
    );
    expect(await stored(nodeKey(name))).toBeUndefined();
  });

  it('the status subresource: writes to the main resource keep status, writes to /status change only status', async () => {
    const name = uniqueName('node-status');
    const created = expectCode(
      await t.client.post(nodePath(), {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name },
        spec: { podCIDR: '10.1.0.0/24' },
      }),
      201,
    );

    // PATCH /status: status changes, spec and labels do not.
    const st = expectCode(
      await t.client.patch(
        nodePath(`${name}/status`),
        {
          metadata: { labels: { sneaky: 'yes' } },
          spec: { unschedulable: true },
          status: { phase: 'Running', nodeInfo: { kernelVersion: '6.1' } },
        },
        MERGE,
      ),
      200,
    );
    expect(st.status).toEqual({ phase: 'Running', nodeInfo: { kernelVersion: '6.1' } });
    expect(st.spec).toEqual(created.spec);
    expect(st.metadata.labels).toBeUndefined();
    expect(st.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);

    // GET /status answers the object.
    expect(expectCode(await t.client.get(nodePath(`${name}/status`)), 200).status).toEqual(st.status);

    // PUT on the main resource: spec and labels change, status does not.
    const main = expectCode(
      await t.client.put(nodePath(name), {
        ...st,
        metadata: { ...st.metadata, labels: { a: 'b' } },
        spec: { podCIDR: '10.1.0.0/24', unschedulable: true },
        status: { phase: 'Terminated' },
      }),
      200,
    );
    expect(main.spec).toEqual({ podCIDR: '10.1.0.0/24', unschedulable: true });
    expect(main.metadata.labels).toEqual({ a: 'b' });
    expect(main.status).toEqual({ phase: 'Running', nodeInfo: { kernelVersion: '6.1' } });

    // PATCH on the main resource: status ignored.
    const mainPatch = expectCode(await t.client.patch(nodePath(name), { status: { phase: 'Pending' } }, MERGE), 200);
    expect(mainPatch.status).toEqual({ phase: 'Running', nodeInfo: { kernelVersion: '6.1' } });

    // PUT /status: only status changes.
    const putStatus = expectCode(
      await t.client.put(nodePath(`${name}/status`), {
        ...mainPatch,
        metadata: { ...mainPatch.metadata, labels: { other: 'x' } },
        spec: { podCIDR: '10.9.0.0/24' },
        status: { phase: 'Pending' },
      }),
      200,
    );
    expect(putStatus.status).toEqual({ phase: 'Pending' });
    expect(putStatus.spec).toEqual({ podCIDR: '10.1.0.0/24', unschedulable: true });
    expect(putStatus.metadata.labels).toEqual({ a: 'b' });

    const inEtcd = await stored(nodeKey(name));
    expect(inEtcd?.value.status).toEqual({ phase: 'Pending' });
    expect(inEtcd?.value.spec).toEqual({ podCIDR: '10.1.0.0/24', unschedulable: true });
    expect(inEtcd?.value.metadata.labels).toEqual({ a: 'b' });
  });
});

describe('leases (named group coordination.svc.io/v1)', () => {
  it('create, get, list, update, patch and delete with the group in messages and details', async () => {
    const name = uniqueName('lease');
    const created = expectCode(
      await t.client.post(leasePath(ns), {
        apiVersion: `${LEASES}/v1`,
        kind: 'Lease',
        metadata: { name },
        spec: { holderIdentity: 'a', leaseDurationSeconds: 10 },
      }),
      201,
    );
    expect(created).toMatchObject({
      apiVersion: `${LEASES}/v1`,
      kind: 'Lease',
      metadata: { name, namespace: ns, generation: 1 },
      spec: { holderIdentity: 'a' },
    });
    expect(created.metadata.uid).toMatch(UUID);
    const inEtcd = await stored(leaseKey(ns, name));
    expect(inEtcd?.value.spec).toEqual({ holderIdentity: 'a', leaseDurationSeconds: 10 });
    expect(inEtcd?.modRevision).toBe(created.metadata.resourceVersion);

    expect(expectCode(await t.client.get(leasePath(ns, name)), 200)).toEqual(created);
    const all = expectCode(await t.client.get(`/apis/${LEASES}/v1/leases`), 200);
    expect(all).toMatchObject({ kind: 'LeaseList', apiVersion: `${LEASES}/v1` });
    expect(
      (all.items as Json[]).map((i) => `${i.metadata.namespace as string}/${i.metadata.name as string}`),
    ).toContain(`${ns}/${name}`);
    const one = expectCode(await t.client.get(leasePath(ns)), 200);
    expect((one.items as Json[]).map((i) => i.metadata.name)).toContain(name);

    const put = expectCode(
      await t.client.put(leasePath(ns, name), { ...created, spec: { holderIdentity: 'b', leaseDurationSeconds: 10 } }),
      200,
    );
    expect(put.spec.holderIdentity).toBe('b');
    expectFailure(await t.client.put(leasePath(ns, name), created), {
      code: 409,
      reason: 'Conflict',
      message: `Operation cannot be fulfilled on leases.${LEASES} "${name}": ${MODIFIED}`,
    });

    const jp = expectCode(
      await t.client.patch(
        leasePath(ns, name),
        [{ op: 'replace', path: '/spec/holderIdentity', value: 'c' }],
        JSON_PATCH,
      ),
      200,
    );
    expect(jp.spec.holderIdentity).toBe('c');
    expect((await stored(leaseKey(ns, name)))?.value.spec.holderIdentity).toBe('c');

    const del = expectCode(await t.client.delete(leasePath(ns, name)), 200);
    expect(del).toMatchObject({ kind: 'Status', status: 'Success', details: { name, group: LEASES, kind: 'leases' } });
    expect(await stored(leaseKey(ns, name))).toBeUndefined();
    const s = expectFailure(await t.client.get(leasePath(ns, name)), {
      code: 404,
      reason: 'NotFound',
      message: `leases.${LEASES} "${name}" not found`,
    });
    expect(s.details).toEqual({ name, group: LEASES, kind: 'leases' });
  });

  it('deletecollection with a labelSelector deletes only matching leases of the namespace', async () => {
    const batch = uniqueName('leases');
    const [a, keep, elsewhere] = [uniqueName('dcl-a'), uniqueName('dcl-keep'), uniqueName('dcl-elsewhere')];
    const make = async (namespace: string, name: string, value: string): Promise<void> => {
      expectCode(
        await t.client.post(leasePath(namespace), {
          apiVersion: `${LEASES}/v1`,
          kind: 'Lease',
          metadata: { name, labels: { batch: value } },
        }),
        201,
      );
    };
    await make(ns, a, batch);
    await make(ns, keep, `${batch}-no`);
    await make(ns2, elsewhere, batch);
    const res = expectCode(
      await t.client.delete(`${leasePath(ns)}?labelSelector=${encodeURIComponent(`batch=${batch}`)}`),
      200,
    );
    expect(res).toMatchObject({ kind: 'LeaseList', apiVersion: `${LEASES}/v1` });
    expect((res.items as Json[]).map((i) => i.metadata.name)).toEqual([a]);
    expect(await stored(leaseKey(ns, a))).toBeUndefined();
    expect(await stored(leaseKey(ns, keep))).toBeDefined();
    expect(await stored(leaseKey(ns2, elsewhere))).toBeDefined();
  });

  it('generation starts at 1 and is bumped on spec changes only', async () => {
    const name = uniqueName('gen');
    const created = expectCode(
      await t.client.post(leasePath(ns), {
        apiVersion: `${LEASES}/v1`,
        kind: 'Lease',
        metadata: { name },
        spec: { holderIdentity: 'a' },
      }),
      201,
    );
    expect(created.metadata.generation).toBe(1);
    const spec = expectCode(
      await t.client.put(leasePath(ns, name), { ...created, spec: { holderIdentity: 'b' } }),
      200,
    );
    expect(spec.metadata.generation).toBe(2);
    const labels = expectCode(
      await t.client.patch(leasePath(ns, name), { metadata: { labels: { x: 'y' } } }, MERGE),
      200,
    );
    expect(labels.metadata.generation).toBe(2);
    expect(labels.metadata.resourceVersion).not.toBe(spec.metadata.resourceVersion);
    const forged = expectCode(await t.client.patch(leasePath(ns, name), { metadata: { generation: 40 } }, MERGE), 200);
    expect(forged.metadata.generation).toBe(2);
    const spec2 = expectCode(
      await t.client.patch(leasePath(ns, name), { spec: { leaseDurationSeconds: 5 } }, MERGE),
      200,
    );
    expect(spec2.metadata.generation).toBe(3);
    expect((await stored(leaseKey(ns, name)))?.value.metadata.generation).toBe(3);
  });
});

describe('namespaces and NamespaceLifecycle', () => {
  const SYSTEM = ['default', 'svc-system', 'svc-public', 'svc-node-lease'];

  it('the system namespaces exist after start and are Active', async () => {
    for (const name of SYSTEM) {
      const got = expectCode(await t.client.get(`/api/v1/namespaces/${name}`), 200);
      expect(got).toMatchObject({ kind: 'Namespace', metadata: { name }, status: { phase: 'Active' } });
      expect(await stored(`${t.storePrefix}/core/namespaces/${name}`)).toBeDefined();
    }
  });

  it('the system namespaces cannot be deleted (403 Forbidden)', async () => {
    for (const name of SYSTEM) {
      const s = expectFailure(await t.client.delete(`/api/v1/namespaces/${name}`), {
        code: 403,
        reason: 'Forbidden',
        message: `namespaces "${name}" is forbidden: this namespace may not be deleted`,
      });
      expect(s.details).toMatchObject({ name, kind: 'namespaces' });
      const got = expectCode(await t.client.get(`/api/v1/namespaces/${name}`), 200);
      expect(got.status.phase).toBe('Active');
      expect(got.metadata.deletionTimestamp).toBeUndefined();
    }
  });

  it('creating in a missing namespace is 404 NotFound for the namespace', async () => {
    const missing = uniqueName('nowhere');
    const name = uniqueName('cm');
    const s = expectFailure(
      await t.client.post(cmPath(missing), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }),
      { code: 404, reason: 'NotFound', message: `namespaces "${missing}" not found` },
    );
    expect(s.details).toMatchObject({ name: missing, kind: 'namespaces' });
    expect(await stored(cmKey(missing, name))).toBeUndefined();
  });

  it('creating in a terminating namespace is 403 Forbidden with a NamespaceTerminating cause', async () => {
    const closing = await createNamespace(t.client, 'closing');
    // Made Terminating in the store directly, so this checks admission alone (not DELETE).
    const key = `${t.storePrefix}/core/namespaces/${closing}`;
    const current = await stored(key);
    expect(current).toBeDefined();
    const terminating = {
      ...current?.value,
      metadata: {
        ...current?.value.metadata,
        deletionTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
        deletionGracePeriodSeconds: 0,
      },
      status: { phase: 'Terminating' },
    };
    await etcd.put(key).value(JSON.stringify(terminating)).exec();
    await waitFor(
      'the namespace to read as Terminating',
      async () => body(await t.client.get(`/api/v1/namespaces/${closing}`)).status?.phase === 'Terminating',
    );

    const name = uniqueName('late');
    const s = expectFailure(
      await t.client.post(cmPath(closing), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }),
      {
        code: 403,
        reason: 'Forbidden',
        message: `configmaps "${name}" is forbidden: unable to create new content in namespace ${closing} because it is being terminated`,
      },
    );
    expect(s.details).toMatchObject({ name, kind: 'configmaps' });
    expect(s.details?.causes).toEqual([
      expect.objectContaining({ reason: 'NamespaceTerminating', field: 'metadata.namespace' }),
    ]);
    expect(await stored(cmKey(closing, name))).toBeUndefined();

    const lease = uniqueName('late-lease');
    const sl = expectFailure(
      await t.client.post(leasePath(closing), { apiVersion: `${LEASES}/v1`, kind: 'Lease', metadata: { name: lease } }),
      {
        code: 403,
        reason: 'Forbidden',
        message: `leases.${LEASES} "${lease}" is forbidden: unable to create new content in namespace ${closing} because it is being terminated`,
      },
    );
    expect(sl.details).toMatchObject({ name: lease, group: LEASES, kind: 'leases' });
    expect(await stored(leaseKey(closing, lease))).toBeUndefined();
  });

  it('deleting a namespace turns it Terminating; creating in it is 403 Forbidden', async () => {
    const doomed = await createNamespace(t.client, 'doomed');
    const del = expectCode(await requestWithin(10_000, 'DELETE', `/api/v1/namespaces/${doomed}`), 200);
    expect(del).toMatchObject({ kind: 'Namespace', metadata: { name: doomed }, status: { phase: 'Terminating' } });
    expect(del.metadata.deletionTimestamp).toMatch(RFC3339);
    const got = expectCode(await t.client.get(`/api/v1/namespaces/${doomed}`), 200);
    expect(got.status.phase).toBe('Terminating');
    expect((await stored(`${t.storePrefix}/core/namespaces/${doomed}`))?.value.status.phase).toBe('Terminating');

    const name = uniqueName('late');
    const s = expectFailure(
      await t.client.post(cmPath(doomed), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }),
      {
        code: 403,
        reason: 'Forbidden',
        message: `configmaps "${name}" is forbidden: unable to create new content in namespace ${doomed} because it is being terminated`,
      },
    );
    expect(s.details).toMatchObject({ name, kind: 'configmaps' });
    expect(s.details?.causes).toEqual([
      expect.objectContaining({ reason: 'NamespaceTerminating', field: 'metadata.namespace' }),
    ]);
    expect(await stored(cmKey(doomed, name))).toBeUndefined();
  });
});

describe('namespaces', () => {
  it('carry a label with their own name, as Kubernetes sets it, kept on update', async () => {
    const name = uniqueName('labelled');
    const label = `${namespaceNameLabel()}`;
    const created = expectCode(
      await t.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
      201,
    );
    expect(created.metadata.labels).toEqual({ [label]: name });
    const updated = expectCode(
      await t.client.put(`/api/v1/namespaces/${name}`, {
        ...created,
        metadata: { ...created.metadata, labels: { a: 'b' } },
      }),
      200,
    );
    expect(updated.metadata.labels).toEqual({ a: 'b', [label]: name });
  });
});
