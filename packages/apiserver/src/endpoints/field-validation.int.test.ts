// Field validation over HTTPS against a real etcd: {JSON body, YAML body, apply body} ×
// {Ignore, Warn (default), Warn, Strict} with unknown fields, plus PUT and merge patch bodies,
// duplicate keys in JSON text, type errors and missing required fields (always 422 Invalid).
// Warning headers are read from the raw response, one `Warning: 299 - "..."` line per field.
import { request as httpsRequest } from 'node:https';
import { Etcd3 } from 'etcd3';
import {
  startTestApiServer,
  type TestApiServer,
  uniqueName,
  type Json,
  type StatusBody,
  createDefaultServiceAccount,
} from '@svc/testing';
import { coreKey, readStored } from './stored-testing.js';

interface Sent {
  status: number;
  text: string;
  /** The values of every `Warning` header line, in order. */
  warnings: string[];
  json(): Json;
}

type Level = 'Ignore' | 'Warn' | 'Strict' | undefined;
type BodyKind = 'JSON' | 'YAML' | 'apply';

const APPLY = 'application/apply-patch+yaml';
const MERGE = 'application/merge-patch+json';

let t: TestApiServer;
let etcd: Etcd3;
let ns: string;

/** One request with a raw body; collects every Warning header line separately. */
function send(method: string, path: string, content: { body: string; contentType: string }): Promise<Sent> {
  const { body, contentType } = content;
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(body);
    const req = httpsRequest(
      new URL(path, t.server.url),
      {
        method,
        ca: t.server.caPem,
        headers: {
          authorization: `Bearer ${t.adminToken}`,
          'content-type': contentType,
          'content-length': String(payload.length),
          accept: 'application/json',
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const warnings: string[] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            if (res.rawHeaders[i]?.toLowerCase() === 'warning') warnings.push(res.rawHeaders[i + 1] ?? '');
          }
          resolve({ status: res.statusCode ?? 0, text, warnings, json: () => JSON.parse(text) as Json });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function expectCode(res: Sent, code: number): Json {
  if (res.status !== code) throw new Error(`expected HTTP ${code}, got ${res.status}: ${res.text}`);
  return res.json();
}

function expectFailure(res: Sent, code: number, reason: string): StatusBody {
  if (res.status !== code) throw new Error(`expected HTTP ${code} ${reason}, got ${res.status}: ${res.text}`);
  const s = res.json() as StatusBody;
  expect(s).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code });
  return s;
}

const podsPath = (name = ''): string => `/api/v1/namespaces/${ns}/pods${name ? `/${name}` : ''}`;
const cmPath = (name = ''): string => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;
const warning = (field: string): string => `299 - ${JSON.stringify(`unknown field ${JSON.stringify(field)}`)}`;

async function stored(resource: string, name: string): Promise<Json | undefined> {
  return (await readStored(etcd, coreKey(t.storePrefix, resource, { namespace: ns, name })))?.value;
}

/** A pod body with two unknown fields (`spec.foo`, `spec.containers[0].bar`), as JSON or YAML text. */
function podWithUnknownFields(name: string, kind: BodyKind): string {
  if (kind === 'JSON') {
    return JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { foo: 'x', containers: [{ name: 'app', image: 'example/app:1', bar: 1 }] },
    });
  }
  return [
    'apiVersion: v1',
    'kind: Pod',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    '  foo: x',
    '  containers:',
    '  - name: app',
    '    image: example/app:1',
    '    bar: 1',
    '',
  ].join('\n');
}

/** Creates `body` as a pod the way `kind` says: POST JSON, POST YAML, or apply (PATCH), with fieldValidation `level`. */
function write(kind: BodyKind, name: string, o: { body: string; level: Level }): Promise<Sent> {
  const { body, level } = o;
  const q = new URLSearchParams();
  if (level) q.set('fieldValidation', level);
  if (kind === 'apply') {
    q.set('fieldManager', 'fv');
    return send('PATCH', `${podsPath(name)}?${q.toString()}`, { body, contentType: APPLY });
  }
  const qs = q.toString();
  return send('POST', `${podsPath()}${qs ? `?${qs}` : ''}`, {
    body,
    contentType: kind === 'JSON' ? 'application/json' : 'application/yaml',
  });
}

beforeAll(async () => {
  t = await startTestApiServer();
  etcd = new Etcd3({ hosts: t.etcd.endpoints });
  ns = uniqueName('fv');
  const res = await send('POST', '/api/v1/namespaces', {
    body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
    contentType: 'application/json',
  });
  expectCode(res, 201);
  await createDefaultServiceAccount(t.client, ns);
});

afterAll(async () => {
  etcd?.close();
  await t?.stop();
});

const KINDS: BodyKind[] = ['JSON', 'YAML', 'apply'];
/** A level with its name in test titles (unset means the default, Warn). */
const withLabel = (level: Level): { level: Level; label: string } => ({ level, label: level ?? 'unset (Warn)' });
const matrix = KINDS.flatMap((kind) =>
  (['Ignore', undefined, 'Warn', 'Strict'] as Level[]).map((level) => ({ kind, ...withLabel(level) })),
);

describe('unknown fields: {JSON, YAML, apply} × {Ignore, Warn (default), Warn, Strict}', () => {
  it.each(matrix)('$kind body, fieldValidation=$label', async ({ kind, level }) => {
    const name = uniqueName(`${kind.toLowerCase()}-${(level ?? 'default').toLowerCase()}`);
    const res = await write(kind, name, { body: podWithUnknownFields(name, kind), level });
    if (level === 'Strict') {
      const s = expectFailure(res, 400, 'BadRequest');
      expect(s.message).toMatch(/^strict decoding error: /);
      expect(s.message).toContain('unknown field "spec.foo"');
      expect(s.message).toContain('unknown field "spec.containers[0].bar"');
      expect(res.warnings).toEqual([]);
      expect(await stored('pods', name)).toBeUndefined();
      return;
    }
    const obj = expectCode(res, 201);
    if (level === 'Ignore') expect(res.warnings).toEqual([]);
    else expect([...res.warnings].sort()).toEqual([warning('spec.containers[0].bar'), warning('spec.foo')].sort());
    // The unknown fields are dropped, in the answer and in etcd.
    expect(obj.spec.foo).toBeUndefined();
    expect(obj.spec.containers[0].bar).toBeUndefined();
    expect(obj.spec.containers[0].image).toBe('example/app:1');
    const s = await stored('pods', name);
    expect(s?.spec.foo).toBeUndefined();
    expect(s?.spec.containers[0].bar).toBeUndefined();
  });
});

describe('unknown fields on updates (PUT and merge patch)', () => {
  it.each((['Ignore', undefined, 'Strict'] as Level[]).map(withLabel))(
    'PUT and merge patch with fieldValidation=$label',
    async ({ level }) => {
      const name = uniqueName('update');
      const created = expectCode(
        await send('POST', cmPath(), {
          body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } }),
          contentType: 'application/json',
        }),
        201,
      );
      const q = level ? `?fieldValidation=${level}` : '';
      const put = await send('PUT', `${cmPath(name)}${q}`, {
        body: JSON.stringify({ ...created, data: { a: '2' }, extra: true }),
        contentType: 'application/json',
      });
      const patch = await send('PATCH', `${cmPath(name)}${q}`, {
        body: JSON.stringify({ data: { a: '3' }, metadata: { bogus: 'x' } }),
        contentType: MERGE,
      });
      if (level === 'Strict') {
        expect(expectFailure(put, 400, 'BadRequest').message).toBe('strict decoding error: unknown field "extra"');
        expect(expectFailure(patch, 400, 'BadRequest').message).toContain('unknown field "metadata.bogus"');
        expect((await stored('configmaps', name))?.data).toEqual({ a: '1' });
        return;
      }
      expect(expectCode(put, 200).data).toEqual({ a: '2' });
      expect(expectCode(patch, 200).data).toEqual({ a: '3' });
      expect(put.warnings).toEqual(level === 'Ignore' ? [] : [warning('extra')]);
      expect(patch.warnings).toEqual(level === 'Ignore' ? [] : [warning('metadata.bogus')]);
      const s = await stored('configmaps', name);
      expect(s?.extra).toBeUndefined();
      expect(s?.metadata.bogus).toBeUndefined();
    },
  );
});

describe('duplicate fields in JSON text', () => {
  const body = (name: string): string =>
    `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":{"a":"first"},"data":{"a":"second"}}`;

  it.each((['Ignore', undefined, 'Strict'] as Level[]).map(withLabel))(
    'a duplicated key with fieldValidation=$label',
    async ({ level }) => {
      const name = uniqueName('dup');
      const res = await send('POST', `${cmPath()}${level ? `?fieldValidation=${level}` : ''}`, {
        body: body(name),
        contentType: 'application/json',
      });
      if (level === 'Strict') {
        const s = expectFailure(res, 400, 'BadRequest');
        expect(s.message).toBe('strict decoding error: duplicate field "data"');
        expect(await stored('configmaps', name)).toBeUndefined();
        return;
      }
      // The last value wins, as in Go's decoder.
      expect(expectCode(res, 201).data).toEqual({ a: 'second' });
      expect(res.warnings).toEqual(level === 'Ignore' ? [] : [`299 - ${JSON.stringify('duplicate field "data"')}`]);
      expect((await stored('configmaps', name))?.data).toEqual({ a: 'second' });
    },
  );
});

describe('type errors and missing required fields are 422 Invalid at every level', () => {
  const levels: Level[] = ['Ignore', undefined, 'Strict'];
  const cases = KINDS.flatMap((kind) => levels.map((level) => ({ kind, ...withLabel(level) })));

  it.each(cases)('type error: $kind body, fieldValidation=$label', async ({ kind, level }) => {
    const name = uniqueName('type');
    const body =
      kind === 'JSON'
        ? JSON.stringify({
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name },
            spec: { containers: [{ name: 'app', image: 'example/app:1' }], terminationGracePeriodSeconds: 'soon' },
          })
        : `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  terminationGracePeriodSeconds: soon\n  containers:\n  - name: app\n    image: example/app:1\n`;
    const s = expectFailure(await write(kind, name, { body, level }), 422, 'Invalid');
    expect(s.details?.causes?.map((c) => c.field)).toEqual(['spec.terminationGracePeriodSeconds']);
    expect(await stored('pods', name)).toBeUndefined();
  });

  it.each(cases)('missing required field: $kind body, fieldValidation=$label', async ({ kind, level }) => {
    const name = uniqueName('required');
    const body =
      kind === 'JSON'
        ? JSON.stringify({
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name },
            spec: { containers: [{ image: 'example/app:1' }] },
          })
        : `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n  - image: example/app:1\n`;
    const s = expectFailure(await write(kind, name, { body, level }), 422, 'Invalid');
    expect(s.details?.causes?.map((c) => c.field)).toContain('spec.containers[0].name');
    expect(s.details?.causes?.find((c) => c.field === 'spec.containers[0].name')?.reason).toBe('FieldValueRequired');
    expect(await stored('pods', name)).toBeUndefined();
  });
});

it('an unknown fieldValidation value is 400 BadRequest', async () => {
  const name = uniqueName('badlevel');
  const res = await send('POST', `${podsPath()}?fieldValidation=Loud`, {
    body: podWithUnknownFields(name, 'JSON'),
    contentType: 'application/json',
  });
  expect(expectFailure(res, 400, 'BadRequest').message).toContain('Loud');
  expect(await stored('pods', name)).toBeUndefined();
});
