import { randomBytes } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { builtinCatalog, type ObjectSchema } from '@svc/api';
import {
  decodeEnvelope,
  decodeMessage,
  decodeProtobufObject,
  decodeWatchFrames,
  encodeProtobufObject,
  listSchemaOf,
  statusSchema,
} from '@svc/machinery';
import {
  startKubectlEnv,
  startTestApiServer,
  type HttpsClient,
  type KubectlEnv,
  type TestApiServer,
  waitFor,
  createDefaultServiceAccount,
} from '@svc/testing';

// Protobuf answers (the spec's envelope, Kubernetes' field numbers), Accept fallbacks and
// 406, Protobuf watch framing, bad Protobuf bodies, /openapi/v2, and kubectl on top.

const PB = 'application/vnd.svc.protobuf';
const K8S_PB = 'application/vnd.kubernetes.protobuf';
const NS = '/api/v1/namespaces/default/configmaps';
const schemaOf = (plural: string): ObjectSchema => builtinCatalog().lookup('', 'v1', plural)?.schema as ObjectSchema;

type Obj = Record<string, unknown> & { metadata: Record<string, unknown> };

/** A watch read as it arrives (HttpsClient answers only once the body ended, WatchStream reads JSON lines). */
function streamWatch(
  t: TestApiServer,
  path: string,
  accept: string,
): {
  /** Resolves once a whole frame arrived; throws when none did within 10 s. */
  firstFrame(): Promise<void>;
  /** The answer once the server ended the stream. */
  ended: Promise<{ status: number; contentType: string | undefined; body: Buffer }>;
} {
  const chunks: Buffer[] = [];
  const ended = new Promise<{ status: number; contentType: string | undefined; body: Buffer }>((resolve, reject) => {
    const headers = { accept, authorization: `Bearer ${t.adminToken}` };
    const req = httpsRequest(new URL(path, t.server.url), { headers, ca: t.server.caPem }, (res) => {
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
  const firstFrame = async (): Promise<void> => {
    await waitFor('a first watch frame', () => decodeWatchFrames(Buffer.concat(chunks)).events.length > 0);
  };
  return { firstFrame, ended };
}

describe('Protobuf answers under the default naming', () => {
  let t: TestApiServer;
  let c: HttpsClient;
  let name: string;
  beforeAll(async () => {
    t = await startTestApiServer();
    c = t.client;
    await createDefaultServiceAccount(c, 'default');
  });
  afterAll(async () => {
    await t.stop();
  });
  beforeEach(() => {
    name = `pb-${randomBytes(4).toString('hex')}`;
  });

  const cm = (n: string): Obj => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: n, labels: { app: 'web' } },
    data: { a: 'b', empty: '' },
    binaryData: { bin: 'AQID' },
  });

  it.each([PB, K8S_PB])('get in %s decodes to the JSON answer', async (accept) => {
    expect((await c.post(NS, cm(name))).status).toBe(201);
    const json = (await c.get(`${NS}/${name}`)).json<Obj>();
    const r = await c.get(`${NS}/${name}`, { headers: { accept } });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe(accept);
    expect(decodeProtobufObject(r.body, schemaOf('configmaps'))).toEqual(json);
  });

  it('list in Protobuf: {metadata, items} of the list kind, items equal to the JSON list', async () => {
    expect((await c.post(NS, cm(name))).status).toBe(201);
    const json = (await c.get(`${NS}?labelSelector=app=web`)).json<{ metadata: Obj['metadata']; items: Obj[] }>();
    // The same list at the JSON list's revision: the server writes in the background (leases,
    // status), so a second most-recent list may carry a later resourceVersion.
    const at = `resourceVersion=${json.metadata?.resourceVersion ?? ''}&resourceVersionMatch=Exact`;
    const r = await c.get(`${NS}?labelSelector=app=web&${at}`, { headers: { accept: PB } });
    expect(r.status).toBe(200);
    const env = decodeEnvelope(r.body);
    expect([env.apiVersion, env.kind]).toEqual(['v1', 'ConfigMapList']);
    const list = decodeMessage(env.raw, listSchemaOf(schemaOf('configmaps'))) as { metadata: unknown; items: Obj[] };
    expect(list.metadata).toEqual(json.metadata);
    const strip = (o: Obj): Obj => {
      const { apiVersion: _a, kind: _k, ...rest } = o;
      return rest as Obj;
    };
    expect(list.items).toEqual(json.items.map(strip));
  });

  it('create with a Protobuf body and a Protobuf answer; JSON body with Protobuf answer; Protobuf body with JSON answer', async () => {
    const body = encodeProtobufObject(cm(name), schemaOf('configmaps'), { apiVersion: 'v1', kind: 'ConfigMap' });
    const created = await c.post(NS, body, { contentType: PB, headers: { accept: PB } });
    expect(created.status).toBe(201);
    const decoded = decodeProtobufObject(created.body, schemaOf('configmaps')) as Obj;
    expect(decoded).toEqual((await c.get(`${NS}/${name}`)).json());
    expect(decoded.data).toEqual({ a: 'b', empty: '' });

    const second = await c.post(NS, cm(`${name}-2`), { headers: { accept: K8S_PB } });
    expect(second.status).toBe(201);
    expect(decodeProtobufObject(second.body, schemaOf('configmaps')).metadata).toMatchObject({ name: `${name}-2` });

    const third = await c.post(
      NS,
      encodeProtobufObject(cm(`${name}-3`), schemaOf('configmaps'), { apiVersion: 'v1', kind: 'ConfigMap' }),
      {
        contentType: K8S_PB,
        headers: { accept: 'application/json' },
      },
    );
    expect(third.status).toBe(201);
    expect(third.json<Obj>().metadata.name).toBe(`${name}-3`);
  });

  it('update, patch and delete answer in Protobuf (delete of a configmap: the Status)', async () => {
    expect((await c.post(NS, cm(name))).status).toBe(201);
    const current = (await c.get(`${NS}/${name}`)).json<Obj>();
    const put = await c.put(`${NS}/${name}`, { ...current, data: { x: 'y' } }, { headers: { accept: PB } });
    expect(put.status).toBe(200);
    expect(decodeProtobufObject(put.body, schemaOf('configmaps')).data).toEqual({ x: 'y' });
    const patched = await c.request('PATCH', `${NS}/${name}`, {
      headers: { accept: PB },
      body: { data: { z: '1' } },
      contentType: 'application/merge-patch+json',
    });
    expect(patched.status).toBe(200);
    expect(decodeProtobufObject(patched.body, schemaOf('configmaps')).data).toEqual({ x: 'y', z: '1' });
    const del = await c.delete(`${NS}/${name}`, { headers: { accept: PB } });
    expect(del.status).toBe(200);
    const env = decodeEnvelope(del.body);
    if (env.kind === 'Status') expect(decodeMessage(env.raw, statusSchema)).toMatchObject({ status: 'Success' });
    else expect(decodeMessage(env.raw, schemaOf('configmaps')).metadata).toMatchObject({ name });
  });

  it('errors answer their Status in the negotiated type: Protobuf, YAML, JSON for Table requests and by default', async () => {
    const missing = `${NS}/${name}-missing`;
    for (const accept of [PB, K8S_PB, `${PB}, application/json`]) {
      const r = await c.get(missing, { headers: { accept } });
      expect([r.status, r.headers['content-type']]).toEqual([404, accept.split(',')[0]]);
      const env = decodeEnvelope(r.body);
      expect([env.apiVersion, env.kind]).toEqual(['v1', 'Status']);
      expect(decodeMessage(env.raw, statusSchema)).toMatchObject({
        status: 'Failure',
        reason: 'NotFound',
        code: 404,
        message: `configmaps "${name}-missing" not found`,
        details: { name: `${name}-missing`, kind: 'configmaps' },
      });
    }
    // A bad body is a Protobuf 400/422 too: the client asked for Protobuf.
    const invalid = await c.post(
      NS,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Not_Valid' } },
      { headers: { accept: PB } },
    );
    expect([invalid.status, invalid.headers['content-type']]).toEqual([422, PB]);
    expect(decodeMessage(decodeEnvelope(invalid.body).raw, statusSchema)).toMatchObject({
      reason: 'Invalid',
      code: 422,
    });
    const yaml = await c.get(missing, { headers: { accept: 'application/yaml' } });
    expect([yaml.status, yaml.headers['content-type']]).toEqual([404, 'application/yaml']);
    expect(yaml.text).toMatch(/^reason: NotFound$/m);
    const table = await c.get(missing, {
      headers: { accept: 'application/json;as=Table;v=v1;g=meta.svc.io,application/json' },
    });
    expect([table.status, table.headers['content-type']]).toEqual([404, 'application/json']);
    expect(table.json<{ reason: string }>().reason).toBe('NotFound');
    const plain = await c.get(missing);
    expect([plain.status, plain.headers['content-type'], plain.json<{ kind: string }>().kind]).toEqual([
      404,
      'application/json',
      'Status',
    ]);
  });

  it('Accept lists: Protobuf first, fallbacks honoured; a pod with every kind of field answers in Protobuf', async () => {
    expect((await c.post(NS, cm(name))).status).toBe(201);
    const yaml = await c.get(`${NS}/${name}`, {
      headers: { accept: 'text/html, application/yaml;q=0.9, application/json;q=0.5' },
    });
    expect(yaml.headers['content-type']).toBe('application/yaml');
    const first = await c.get(`${NS}/${name}`, { headers: { accept: `${PB}, application/json` } });
    expect(first.headers['content-type']).toBe(PB);
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        containers: [
          { name: 'c', image: 'busybox', resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }] },
        ],
        volumes: [
          { name: 'data', nfs: { server: 'nfs.local', path: '/export' } },
          { name: 'img', image: { reference: 'busybox' } },
        ],
      },
    };
    expect((await c.post('/api/v1/namespaces/default/pods', pod)).status).toBe(201);
    const answered = await c.get(`/api/v1/namespaces/default/pods/${name}`, {
      headers: { accept: `${K8S_PB}, application/json` },
    });
    expect([answered.status, answered.headers['content-type']]).toEqual([200, K8S_PB]);
    const decoded = decodeProtobufObject(answered.body, schemaOf('pods')) as {
      spec: { volumes: unknown[]; containers: Array<{ resizePolicy: unknown }> };
    };
    expect(decoded.spec.volumes).toEqual(
      expect.arrayContaining([{ name: 'data', nfs: { server: 'nfs.local', path: '/export' } }]),
    );
    expect(decoded.spec.containers[0]?.resizePolicy).toEqual([{ resourceName: 'cpu', restartPolicy: 'NotRequired' }]);
  });

  it('406 when nothing acceptable', async () => {
    expect((await c.post(NS, cm(name))).status).toBe(201);
    const r = await c.get(`${NS}/${name}`, { headers: { accept: 'text/html, application/xml' } });
    expect(r.status).toBe(406);
    expect(r.json<{ reason: string }>().reason).toBe('NotAcceptable');
    const table = await c.get(`${NS}/${name}`, { headers: { accept: `${PB};as=Table;g=meta.svc.io;v=v1` } });
    expect(table.status).toBe(406);
  });

  it('Protobuf watch: length-prefixed WatchEvent frames holding envelope-encoded objects', async () => {
    const list = await c.get(`${NS}?labelSelector=w=${name}`);
    const rv = list.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    // Under a 3 s timeout the server sends a BOOKMARK every second: the first one shows the
    // watch is open before the writes, which must all fall inside its 3 s.
    const watching = streamWatch(
      t,
      `${NS}?watch=1&resourceVersion=${rv}&labelSelector=w=${name}&allowWatchBookmarks=true&timeoutSeconds=3`,
      `${K8S_PB};stream=watch`,
    );
    await watching.firstFrame();
    expect((await c.post(NS, { ...cm(name), metadata: { name, labels: { w: name } } })).status).toBe(201);
    expect((await c.patch(`${NS}/${name}`, { data: { n: '1' } }, 'application/merge-patch+json')).status).toBe(200);
    expect((await c.delete(`${NS}/${name}`)).status).toBe(200);
    const r = await watching.ended;
    expect(r.status).toBe(200);
    expect(r.contentType).toBe(`${K8S_PB};stream=watch`);
    const { events: frames, used } = decodeWatchFrames(r.body);
    expect(used).toBe(r.body.length);
    expect(frames[0]?.type).toBe('BOOKMARK');
    const bookmark = decodeProtobufObject(frames[0]?.object ?? new Uint8Array(), schemaOf('configmaps')) as Obj;
    expect(Number(bookmark.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(rv));
    const events = frames.filter((e) => e.type !== 'BOOKMARK');
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    const objs = events.map((e) => decodeProtobufObject(e.object, schemaOf('configmaps')) as Obj);
    expect(objs.map((o) => [o.kind, o.metadata.name])).toEqual([
      ['ConfigMap', name],
      ['ConfigMap', name],
      ['ConfigMap', name],
    ]);
    expect(objs[1]?.data).toEqual({ a: 'b', empty: '', n: '1' });
  });

  it.each([
    ['a wrong magic number', Buffer.from('k8s!not-protobuf')],
    ['truncated bytes', Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x12, 0x7f, 0x0a])],
    [
      'a truncated object message',
      encodeProtobufObject({ metadata: { name: 'x' }, data: { a: 'b' } }, schemaOf('configmaps'), {
        apiVersion: 'v1',
        kind: 'ConfigMap',
      }).subarray(0, 20),
    ],
  ])('a Protobuf body with %s is a 400 and the stored object is unchanged', async (_what, body) => {
    expect((await c.post(NS, cm(name))).status).toBe(201);
    const before = (await c.get(`${NS}/${name}`)).text;
    const put = await c.put(`${NS}/${name}`, body, { contentType: PB, headers: { accept: PB } });
    expect([put.status, put.headers['content-type']]).toEqual([400, PB]);
    expect(decodeMessage(decodeEnvelope(put.body).raw, statusSchema)).toMatchObject({
      reason: 'BadRequest',
      code: 400,
    });
    const post = await c.post(NS, body, { contentType: PB });
    expect(post.status).toBe(400);
    expect((await c.get(`${NS}/${name}`)).text).toBe(before);
  });

  it('/openapi/v2 is a Swagger 2.0 JSON document with group-version-kind extensions; its Protobuf form is a 406', async () => {
    const r = await c.get('/openapi/v2', { headers: { accept: 'application/json' } });
    expect(r.status).toBe(200);
    const doc = r.json<{
      swagger: string;
      definitions: Record<string, Record<string, unknown>>;
      paths: Record<string, Record<string, Record<string, unknown>>>;
    }>();
    expect(doc.swagger).toBe('2.0');
    const cmDef = Object.entries(doc.definitions).find(([k]) => k.endsWith('.api.core.v1.ConfigMap'));
    expect(cmDef?.[1]['x-svc-group-version-kind']).toEqual([{ group: '', version: 'v1', kind: 'ConfigMap' }]);
    const patch = doc.paths['/api/v1/namespaces/{namespace}/configmaps/{name}']?.patch as Record<string, unknown>;
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: '', version: 'v1', kind: 'ConfigMap' });
    expect((patch.parameters as Array<{ name: string; in: string }>).map((p) => p.name)).toEqual(
      expect.arrayContaining(['body', 'fieldValidation', 'fieldManager']),
    );
    expect(r.text).not.toContain('#/components/');
    const finalizers = JSON.stringify(doc.definitions).includes('"x-svc-list-type"');
    expect(finalizers).toBe(true);
    const pb = await c.get('/openapi/v2', {
      headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' },
    });
    // The Protobuf form (gnostic's openapi.v2.Document) is what kubectl replace/apply of a List asks for.
    expect(pb.status).toBe(200);
    expect(pb.headers['content-type']).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
  });
});

describe('kubectl with Protobuf answers', () => {
  let env: KubectlEnv;
  beforeAll(async () => {
    env = await startKubectlEnv();
  });
  afterAll(async () => {
    await env.stop();
  });

  it('create configmap (Protobuf body) and get still work under the default naming', async () => {
    const created = await env.run(['create', 'configmap', 'kc', '--from-literal=a=b']);
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    const got = await env.run(['get', 'configmap', 'kc', '-o', 'json']);
    expect(got.code).toBe(0);
    expect((JSON.parse(got.stdout) as Obj).data).toEqual({ a: 'b' });
    const table = await env.run(['get', 'configmaps']);
    expect(table.stdout).toContain('kc');
  });
});

describe('kubectl under --naming=kubernetes', () => {
  let env: KubectlEnv;
  beforeAll(async () => {
    env = await startKubectlEnv({ args: ['--naming=kubernetes'] });
  });
  afterAll(async () => {
    await env.stop();
  });

  it('create, get, apply --server-side --validate=strict and explain', async () => {
    const created = await env.run(['create', 'configmap', 'kc', '--from-literal=a=b']);
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    const got = await env.run(['get', 'configmap', 'kc', '-o', 'json']);
    expect((JSON.parse(got.stdout) as Obj).data).toEqual({ a: 'b' });
    const manifest = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'applied', namespace: 'default' },
      data: { k: 'v' },
    });
    const applied = await env.run(['apply', '--server-side', '--validate=strict', '-f', '-'], { stdin: manifest });
    expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: '' });
    const bad = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'bad', namespace: 'default' },
      data: { k: 'v' },
      bogus: 1,
    });
    const strict = await env.run(['apply', '--server-side', '--validate=strict', '-f', '-'], { stdin: bad });
    expect(strict.code).not.toBe(0);
    expect(strict.stderr).toContain('bogus');
    const explain = await env.run(['explain', 'configmap']);
    expect({ code: explain.code, stderr: explain.stderr }).toEqual({ code: 0, stderr: '' });
    expect(explain.stdout).toContain('ConfigMap');
    expect(explain.stdout).toContain('data');
  });
});
