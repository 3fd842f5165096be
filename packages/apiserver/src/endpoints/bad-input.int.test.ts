// Bad input, as a table: every case is answered with the right 4xx Status, the server still
// serves afterwards, and nothing was written (checked through the API and in etcd).
import { randomBytes } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import { startTestApiServer, type HttpResponse, type TestApiServer, type Json, type StatusBody } from '@svc/testing';

interface Case {
  name: string;
  send: () => Promise<HttpResponse>;
  code: number;
  reason: string;
  message?: string | RegExp;
  /** The cause fields of a 422, in order. */
  causeFields?: string[];
  /** A path that must still answer 404 afterwards. */
  absent?: string;
}

const SYSTEM_NAMESPACES = ['default', 'svc-system', 'svc-public', 'svc-node-lease'];
const FIXTURE = 'fixture';

let t: TestApiServer;
let etcd: Etcd3;
const ns = `bad-${randomBytes(3).toString('hex')}`;
let fixture: Json;

const cmPath = (name = ''): string => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;
const cm = (name: string, extra: Json = {}): Json => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  ...extra,
});
const post = (body: string | Buffer | object, contentType = 'application/json', query = ''): Promise<HttpResponse> =>
  t.client.post(`${cmPath()}${query}`, body, { contentType });

beforeAll(async () => {
  t = await startTestApiServer();
  etcd = new Etcd3({ hosts: t.etcd.endpoints });
  const nsRes = await t.client.post('/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: ns },
  });
  expect(nsRes.status).toBe(201);
  const res = await t.client.post(
    cmPath(),
    cm(FIXTURE, { metadata: { name: FIXTURE, labels: { app: 'fixture' } }, data: { a: '1' } }),
  );
  expect(res.status).toBe(201);
  fixture = res.json<Json>();
});

afterAll(async () => {
  etcd?.close();
  await t?.stop();
});

const cases: Case[] = [
  {
    name: 'malformed JSON',
    send: () => post('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad-json"'),
    code: 400,
    reason: 'BadRequest',
    message: /json parse error/,
  },
  {
    name: 'malformed YAML',
    send: () =>
      post('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [bad-yaml\n  labels: {a: b\n', 'application/yaml'),
    code: 400,
    reason: 'BadRequest',
    message: /^error converting YAML to JSON/,
  },
  {
    name: 'body is a JSON array',
    send: () => post('[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"in-array"}}]'),
    code: 400,
    reason: 'BadRequest',
  },
  { name: 'body is JSON null', send: () => post('null'), code: 400, reason: 'BadRequest' },
  { name: 'body is empty', send: () => post(''), code: 400, reason: 'BadRequest' },
  {
    name: 'body kind does not match the URL',
    send: () => post({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'kind-mismatch' } }),
    code: 400,
    reason: 'BadRequest',
    message: /kind/,
  },
  {
    name: 'body apiVersion does not match the URL',
    send: () =>
      post({ apiVersion: 'coordination.svc.io/v1', kind: 'ConfigMap', metadata: { name: 'version-mismatch' } }),
    code: 400,
    reason: 'BadRequest',
    message: 'the API version in the data (coordination.svc.io/v1) does not match the expected API version (v1)',
  },
  {
    name: 'name in the body differs from the URL on PUT',
    send: () =>
      t.client.put(cmPath(FIXTURE), {
        ...fixture,
        metadata: { ...fixture.metadata, name: 'other' },
        data: { a: 'changed' },
      }),
    code: 400,
    reason: 'BadRequest',
    message: `the name of the object (other) does not match the name on the URL (${FIXTURE})`,
  },
  {
    name: 'namespace in the body differs from the URL on POST',
    send: () => post(cm('ns-mismatch', { metadata: { name: 'ns-mismatch', namespace: 'default' } })),
    code: 400,
    reason: 'BadRequest',
    message: 'the namespace of the provided object does not match the namespace sent on the request',
  },
  {
    name: 'namespace in the body differs from the URL on PUT',
    send: () =>
      t.client.put(cmPath(FIXTURE), {
        ...fixture,
        metadata: { ...fixture.metadata, namespace: 'default' },
        data: { a: 'changed' },
      }),
    code: 400,
    reason: 'BadRequest',
    message: 'the namespace of the provided object does not match the namespace sent on the request',
  },
  {
    name: 'uppercase name',
    send: () => post(cm('Bad-Name')),
    code: 422,
    reason: 'Invalid',
    causeFields: ['metadata.name'],
    message:
      /^ConfigMap "Bad-Name" is invalid: metadata\.name: Invalid value: "Bad-Name": a lowercase RFC 1123 subdomain must consist of/,
  },
  {
    name: 'name longer than 253 characters',
    send: () => post(cm('a'.repeat(254))),
    code: 422,
    reason: 'Invalid',
    causeFields: ['metadata.name'],
    message: /must be no more than 253 characters/,
  },
  {
    name: 'namespace name that is not a DNS label',
    send: () =>
      t.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dotted.name' } }),
    code: 422,
    reason: 'Invalid',
    causeFields: ['metadata.name'],
    absent: '/api/v1/namespaces/dotted.name',
    message: /^Namespace "dotted\.name" is invalid: metadata\.name: Invalid value: "dotted\.name": /,
  },
  {
    name: 'invalid label key',
    send: () =>
      post(cm('bad-label-key', { metadata: { name: 'bad-label-key', labels: { 'no spaces allowed': 'x' } } })),
    code: 422,
    reason: 'Invalid',
    causeFields: ['metadata.labels'],
    message: /metadata\.labels: Invalid value: "no spaces allowed"/,
  },
  {
    name: 'invalid label value',
    send: () => post(cm('bad-label-value', { metadata: { name: 'bad-label-value', labels: { ok: 'v'.repeat(64) } } })),
    code: 422,
    reason: 'Invalid',
    causeFields: ['metadata.labels'],
    message: /must be no more than 63 characters/,
  },
  {
    name: 'invalid label key on PATCH',
    send: () =>
      t.client.patch(cmPath(FIXTURE), { metadata: { labels: { '-bad-': 'x' } } }, 'application/merge-patch+json'),
    code: 422,
    reason: 'Invalid',
    causeFields: ['metadata.labels'],
  },
  {
    name: 'body over 3 MiB',
    send: () => post(cm('too-large', { data: { big: 'x'.repeat(3 * 1024 * 1024 + 1) } })),
    code: 413,
    reason: 'RequestEntityTooLarge',
    message: /^Request entity too large: limit is 3145728/,
  },
  {
    name: 'unknown resource',
    send: () => t.client.get(`/api/v1/namespaces/${ns}/widgets`),
    code: 404,
    reason: 'NotFound',
    message: 'the server could not find the requested resource',
  },
  {
    name: 'create of an unknown resource',
    send: () =>
      t.client.post(`/api/v1/namespaces/${ns}/widgets`, { apiVersion: 'v1', kind: 'Widget', metadata: { name: 'w' } }),
    code: 404,
    reason: 'NotFound',
    message: 'the server could not find the requested resource',
  },
  {
    name: 'unknown group',
    send: () => t.client.get('/apis/nosuch.example.com/v1/things'),
    code: 404,
    reason: 'NotFound',
    message: 'the server could not find the requested resource',
  },
  {
    name: 'unknown group (discovery)',
    send: () => t.client.get('/apis/nosuch.example.com'),
    code: 404,
    reason: 'NotFound',
  },
  {
    name: 'unknown version of the core group',
    send: () => t.client.get(`/api/v2/namespaces/${ns}/configmaps`),
    code: 404,
    reason: 'NotFound',
    message: 'the server could not find the requested resource',
  },
  {
    name: 'unknown version of a named group',
    send: () => t.client.get(`/apis/coordination.svc.io/v9/namespaces/${ns}/leases`),
    code: 404,
    reason: 'NotFound',
    message: 'the server could not find the requested resource',
  },
  {
    name: 'POST to a named object path',
    send: () => t.client.post(cmPath('posted-to-name'), cm('posted-to-name')),
    code: 405,
    reason: 'MethodNotAllowed',
    message: 'the server does not allow this method on the requested resource',
  },
  {
    name: 'PUT to a collection',
    send: () => t.client.put(cmPath(), cm('put-to-collection')),
    code: 405,
    reason: 'MethodNotAllowed',
    message: 'the server does not allow this method on the requested resource',
  },
  {
    name: 'PATCH to a collection',
    send: () => t.client.patch(cmPath(), { metadata: { labels: { x: 'y' } } }, 'application/merge-patch+json'),
    code: 405,
    reason: 'MethodNotAllowed',
    message: 'the server does not allow this method on the requested resource',
  },
  {
    name: 'unsupported Content-Type',
    send: () => post(JSON.stringify(cm('text-plain')), 'text/plain'),
    code: 415,
    reason: 'UnsupportedMediaType',
    message:
      /^the body of the request was in an unknown format - accepted media types include: application\/json, application\/yaml/,
  },
  {
    name: 'unsupported patch Content-Type',
    send: () => t.client.patch(cmPath(FIXTURE), { data: { a: 'changed' } }, 'application/json'),
    code: 415,
    reason: 'UnsupportedMediaType',
    message: /^the body of the request was in an unknown format/,
  },
  {
    name: 'Accept of only an unsupported type (GET)',
    send: () => t.client.get(cmPath(FIXTURE), { headers: { accept: 'text/html' } }),
    code: 406,
    reason: 'NotAcceptable',
    message: /^only the following media types are accepted: application\/json, application\/yaml/,
  },
  {
    name: 'Accept of only an unsupported type (POST)',
    send: () => t.client.post(cmPath(), cm('not-acceptable'), { headers: { accept: 'text/html' } }),
    code: 406,
    reason: 'NotAcceptable',
  },
  {
    name: 'stale resourceVersion on PUT',
    send: () =>
      t.client.put(cmPath(FIXTURE), {
        ...fixture,
        metadata: { ...fixture.metadata, resourceVersion: '2' },
        data: { a: 'changed' },
      }),
    code: 409,
    reason: 'Conflict',
    message: `Operation cannot be fulfilled on configmaps "${FIXTURE}": the object has been modified; please apply your changes to the latest version and try again`,
  },
  {
    name: 'delete of a system namespace',
    send: () => t.client.delete('/api/v1/namespaces/svc-system'),
    code: 403,
    reason: 'Forbidden',
    message: 'namespaces "svc-system" is forbidden: this namespace may not be deleted',
  },
  {
    name: 'bad dryRun value',
    send: () => post(cm('bad-dry-run'), 'application/json', '?dryRun=Yes'),
    code: 400,
    reason: 'BadRequest',
    message: /Yes/,
  },
  {
    name: 'bad fieldValidation value',
    send: () => post(cm('bad-field-validation'), 'application/json', '?fieldValidation=Loud'),
    code: 400,
    reason: 'BadRequest',
    message: /Loud/,
  },
  {
    name: 'unknown field with fieldValidation=Strict',
    send: () =>
      post(
        cm('strict-unknown', { bogus: 1, metadata: { name: 'strict-unknown', bogusMeta: 'x' } }),
        'application/json',
        '?fieldValidation=Strict',
      ),
    code: 400,
    reason: 'BadRequest',
    message: /^strict decoding error: .*unknown field "bogus"/,
  },
  {
    name: 'bad labelSelector',
    send: () => t.client.get(`${cmPath()}?labelSelector=${encodeURIComponent('app in (a')}`),
    code: 400,
    reason: 'BadRequest',
  },
  {
    name: 'bad labelSelector on deletecollection',
    send: () => t.client.delete(`${cmPath()}?labelSelector=${encodeURIComponent('app==(')}`),
    code: 400,
    reason: 'BadRequest',
  },
  {
    name: 'bad limit',
    send: () => t.client.get(`${cmPath()}?limit=ten`),
    code: 400,
    reason: 'BadRequest',
    message: /ten/,
  },
  {
    name: 'bad resourceVersion on list',
    send: () => t.client.get(`${cmPath()}?resourceVersion=latest`),
    code: 400,
    reason: 'BadRequest',
    message: /latest/,
  },
  {
    name: 'bad resourceVersion on get',
    send: () => t.client.get(`${cmPath(FIXTURE)}?resourceVersion=latest`),
    code: 400,
    reason: 'BadRequest',
  },
  {
    name: 'garbage continue token',
    send: () => t.client.get(`${cmPath()}?limit=1&continue=not-a-token!!`),
    code: 400,
    reason: 'BadRequest',
  },
  {
    name: 'unknown propagationPolicy on DELETE',
    send: () => t.client.delete(`${cmPath(FIXTURE)}?propagationPolicy=Sideways`),
    code: 400,
    reason: 'BadRequest',
    message: /Sideways/,
  },
  {
    name: 'malformed DeleteOptions body',
    send: () =>
      t.client.request('DELETE', cmPath(FIXTURE), {
        body: '{"kind":"DeleteOptions",',
        contentType: 'application/json',
      }),
    code: 400,
    reason: 'BadRequest',
  },
];

/** Configmaps stored in etcd under the test namespace: key → mod revision. */
async function storedConfigMaps(): Promise<Record<string, string>> {
  const res = await etcd.getAll().prefix(`${t.storePrefix}/core/configmaps/${ns}/`).exec();
  return Object.fromEntries(res.kvs.map((kv) => [kv.key.toString('utf8'), kv.mod_revision]));
}

describe('bad input', () => {
  it.each(cases)('$name → $code $reason', async (c) => {
    const res = await c.send();
    if (res.status !== c.code)
      throw new Error(`expected HTTP ${c.code} ${c.reason}, got ${res.status}: ${res.text.slice(0, 500)}`);
    expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
    const s = res.json<StatusBody>();
    expect(s).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: c.reason, code: c.code });
    if (typeof c.message === 'string') expect(s.message).toBe(c.message);
    else if (c.message) expect(s.message).toMatch(c.message);
    if (c.causeFields) expect((s.details?.causes ?? []).map((x) => x.field)).toEqual(c.causeFields);

    // The server still serves.
    const ready = await t.client.get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.text).toBe('ok');

    if (c.absent) expect((await t.client.get(c.absent)).status).toBe(404);

    // Nothing was written: only the fixture is stored, unchanged, and no namespace is going away.
    expect(await storedConfigMaps()).toEqual({
      [`${t.storePrefix}/core/configmaps/${ns}/${FIXTURE}`]: fixture.metadata.resourceVersion,
    });
    const list = await t.client.get(cmPath());
    expect(list.status).toBe(200);
    expect(list.json<Json>().items).toEqual([fixture]);
    for (const name of [...SYSTEM_NAMESPACES, ns]) {
      const got = (await t.client.get(`/api/v1/namespaces/${name}`)).json<Json>();
      expect(got.status?.phase).toBe('Active');
      expect(got.metadata?.deletionTimestamp).toBeUndefined();
    }
  });
});
