// CRD conversion `Webhook` against a real HTTPS webhook (a CA made in the test, its bundle in
// the CRD): a CRD with v1 (storage) and v2, where v2 renames `spec.color` to `spec.colour`.
// Objects written in one version are read in the other, lists and watches are served in v2
// (a list converted in one review), field selectors run on v2, a `service` reference is
// resolved, a new storage version shows in `status.storedVersions`, and every failure of the
// webhook is a 500 InternalError with Kubernetes' message and nothing written (etcd is read
// directly, in the storage version).
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Etcd3 } from 'etcd3';
import { group, isStatusError, type ApiObject } from '@svc/api';
import {
  crdManifest,
  createTestCa,
  expectCode,
  expectFailure,
  closedPort,
  openWatch,
  startTestApiServer,
  uniqueName,
  waitFor,
  type CrdVersionInput,
  type Json,
  type TestApiServer,
  createNamespace,
} from '@svc/testing';
import { Etcd3Storage } from '../storage/etcd3/etcd3-storage.js';
import { customResourceStorage } from './version-conversion.js';

type Mode =
  | 'ok'
  | 'meddle'
  | 'status500'
  | 'garbage'
  | 'no-response'
  | 'wrong-review-kind'
  | 'wrong-uid'
  | 'wrong-count'
  | 'failure'
  | 'failure-without-message'
  | 'wrong-version'
  | 'wrong-kind'
  | 'renamed'
  | 'bad-label'
  | 'reset'
  | 'hang';

/** The webhook's behaviour: `mode` applies to reviews asking for `onlyTo` (every review when unset). */
const hook: { mode: Mode; onlyTo?: string } = { mode: 'ok' };
const reviews: Array<{ apiVersion: string; desired: string; objects: Json[] }> = [];

let t: TestApiServer;
let etcd: Etcd3;
let server: Server;
// Services take ClusterIPs from --service-cluster-ip-range; the server's own Service holds its first
// address (127.0.0.1), so the hook Service gets 127.0.0.2, where a second listener serves the same hooks.
let serviceServer: Server | undefined;
const SERVICE_IP = '127.0.0.2';
let port: number;
let caBundle: string;
let ns: string;
const CRD_PATH = (): string => `/apis/${group('apiextensions')}/v1/customresourcedefinitions`;
const SERVICE = 'conversion-hook';

/** v2's spec.colour is v1's spec.color; everything else is copied. */
function convert(obj: Json, desired: string): Json {
  const out = structuredClone(obj);
  const spec = out.spec ?? {};
  if (desired.endsWith('/v2') && 'color' in spec) {
    spec.colour = spec.color;
    delete spec.color;
  }
  if (desired.endsWith('/v1') && 'colour' in spec) {
    spec.color = spec.colour;
    delete spec.colour;
  }
  out.apiVersion = desired;
  return out;
}

/** The answer to a review in the current mode: [HTTP status, body, content type]. */
function answer(review: Json): [number, string, string] | undefined {
  const {
    uid,
    desiredAPIVersion: desired,
    objects,
  } = review.request as {
    uid: string;
    desiredAPIVersion: string;
    objects: Json[];
  };
  const mode = hook.onlyTo === undefined || desired.endsWith(`/${hook.onlyTo}`) ? hook.mode : 'ok';
  let converted = objects.map((o) => convert(o, desired));
  let result: Json = { status: 'Success' };
  const json = (response: Json, o: { apiVersion?: string; kind?: string } = {}): [number, string, string] => [
    200,
    JSON.stringify({ apiVersion: o.apiVersion ?? review.apiVersion, kind: o.kind ?? 'ConversionReview', response }),
    'application/json',
  ];
  switch (mode) {
    case 'hang':
      return undefined;
    case 'status500':
      return [500, 'boom', 'text/plain'];
    case 'garbage':
      return [200, 'this is not json', 'application/json'];
    case 'no-response':
      return json(undefined as unknown as Json);
    case 'wrong-review-kind':
      return json({ uid, convertedObjects: converted, result }, { kind: 'SomethingElse' });
    case 'wrong-uid':
      return json({ uid: 'nope', convertedObjects: converted, result });
    case 'wrong-count':
      converted = [];
      break;
    case 'failure':
      result = { status: 'Failure', message: 'custom webhook conversion error' };
      break;
    case 'failure-without-message':
      result = { status: 'Failure' };
      break;
    case 'wrong-version':
      converted = objects;
      break;
    case 'wrong-kind':
      for (const o of converted) o.kind = 'Gadget';
      break;
    case 'renamed':
      for (const o of converted) o.metadata.name = `${String(o.metadata.name)}-renamed`;
      break;
    case 'bad-label':
      for (const o of converted) o.metadata.labels = { 'bad key!': 'x' };
      break;
    case 'meddle':
      // Labels and annotations may change; the rest of metadata is restored; unknown fields are pruned.
      for (const o of converted) {
        o.metadata.labels = { ...o.metadata.labels, converted: 'yes' };
        o.metadata.annotations = { ...o.metadata.annotations, 'hook/seen': desired };
        o.metadata.generation = 99;
        o.metadata.uid = o.metadata.uid ?? '';
        o.spec.junk = 'dropped';
      }
      break;
    default:
      break;
  }
  return json({ uid, convertedObjects: converted, result });
}

function startHook(certPem: string, keyPem: string, at = { host: '127.0.0.1', port: 0 }): Promise<Server> {
  const s = createServer({ cert: certPem, key: keyPem }, (req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
    });
    req.on('end', () => {
      const review = JSON.parse(body) as Json;
      reviews.push({
        apiVersion: review.apiVersion,
        desired: review.request.desiredAPIVersion,
        objects: review.request.objects,
      });
      if (
        hook.mode === 'reset' &&
        (hook.onlyTo === undefined || review.request.desiredAPIVersion.endsWith(`/${hook.onlyTo}`))
      ) {
        req.socket.destroy();
        return;
      }
      const a = answer(review);
      if (!a) return; // hang: the client's deadline ends it
      res.writeHead(a[0], { 'Content-Type': a[2] });
      res.end(a[1]);
    });
  });
  return new Promise((resolve) => s.listen(at.port, at.host, () => resolve(s)));
}

function widgetVersion(name: string, o: { field: string; storage: boolean }): CrdVersionInput {
  return {
    name,
    storage: o.storage,
    schema: {
      type: 'object',
      properties: {
        spec: { type: 'object', properties: { [o.field]: { type: 'string' }, size: { type: 'integer' } } },
      },
    },
    selectableFields: [{ jsonPath: `.spec.${o.field}` }],
  };
}

function widgetCrd(g: string, o: { clientConfig: Json; reviewVersions?: string[] }): Json {
  return crdManifest({
    group: g,
    plural: 'widgets',
    kind: 'Widget',
    versions: [
      widgetVersion('v1', { field: 'color', storage: true }),
      widgetVersion('v2', { field: 'colour', storage: false }),
    ],
    spec: {
      conversion: {
        strategy: 'Webhook',
        webhook: { clientConfig: o.clientConfig, conversionReviewVersions: o.reviewVersions ?? ['v1'] },
      },
    },
  });
}

const urlConfig = (path = '/convert', p = port): Json => ({ url: `https://127.0.0.1:${p}${path}`, caBundle });

/** Creates the CRD and waits until both versions are served. */
async function served(crd: Json): Promise<string> {
  const g = crd.spec.group as string;
  expectCode(await t.client.post(CRD_PATH(), crd), 201);
  for (const v of ['v1', 'v2'])
    await waitFor(`${g}/${v} to be served`, async () => (await t.client.get(base(g, v))).status === 200);
  return g;
}

const freshGroup = (): string => `${uniqueName('conv')}.example.com`;
const base = (g: string, v: string): string => `/apis/${g}/${v}/namespaces/${ns}/widgets`;

function widget(g: string, o: { name: string; version: string; paint?: string }): Json {
  const field = o.version === 'v1' ? 'color' : 'colour';
  return {
    apiVersion: `${g}/${o.version}`,
    kind: 'Widget',
    metadata: { name: o.name },
    spec: { [field]: o.paint ?? 'red' },
  };
}

/** The object as etcd holds it (the storage version), or undefined. */
async function inEtcd(g: string, name: string): Promise<Json | undefined> {
  const res = await etcd.get(`${t.storePrefix}/${g}/widgets/${ns}/${name}`).exec();
  const kv = res.kvs[0];
  return kv && { ...(JSON.parse(kv.value.toString()) as Json), modRevision: kv.mod_revision };
}

beforeAll(async () => {
  t = await startTestApiServer({ args: ['--service-cluster-ip-range=127.0.0.0/24'] });
  etcd = new Etcd3({ hosts: t.etcd.endpoints });
  ns = await createNamespace(t.client, 'conv');
  const ca = await createTestCa('conversion-webhook-ca');
  const serving = await ca.issue({
    commonName: 'conversion-webhook',
    usages: ['server'],
    hosts: ['127.0.0.1', `${SERVICE}.${ns}.svc`],
  });
  server = await startHook(serving.certPem, serving.keyPem);
  port = (server.address() as AddressInfo).port;
  serviceServer = await startHook(serving.certPem, serving.keyPem, { host: SERVICE_IP, port });
  caBundle = Buffer.from(ca.certPem).toString('base64');
});

afterEach(() => {
  hook.mode = 'ok';
  hook.onlyTo = undefined;
});

afterAll(async () => {
  await t?.stop();
  etcd?.close();
  for (const s of [server, serviceServer]) {
    s?.closeAllConnections();
    await new Promise((r) => s?.close(r));
  }
});

describe('conversion webhook', () => {
  let g: string;
  beforeAll(async () => {
    g = await served(widgetCrd(freshGroup(), { clientConfig: urlConfig() }));
  });

  it('reads in v2 what was written in v1 and the other way round; etcd holds v1', async () => {
    const before = reviews.length;
    const a = expectCode(
      await t.client.post(base(g, 'v1'), widget(g, { name: 'a', version: 'v1', paint: 'red' })),
      201,
    );
    expect(a.spec).toEqual({ color: 'red' });
    // Same version in and out: the webhook is not called.
    expect(reviews.length).toBe(before);
    expect(await inEtcd(g, 'a')).toMatchObject({ apiVersion: `${g}/v1`, spec: { color: 'red' } });

    const aV2 = expectCode(await t.client.get(`${base(g, 'v2')}/a`), 200);
    expect(aV2).toMatchObject({ apiVersion: `${g}/v2`, kind: 'Widget', spec: { colour: 'red' } });
    expect(aV2.spec.color).toBeUndefined();
    expect(aV2.metadata).toEqual(a.metadata);
    expect(reviews.at(-1)).toMatchObject({ apiVersion: `${group('apiextensions')}/v1`, desired: `${g}/v2` });
    expect(reviews.at(-1)?.objects).toHaveLength(1);

    const b = expectCode(
      await t.client.post(base(g, 'v2'), widget(g, { name: 'b', version: 'v2', paint: 'blue' })),
      201,
    );
    expect(b).toMatchObject({ apiVersion: `${g}/v2`, spec: { colour: 'blue' } });
    expect(await inEtcd(g, 'b')).toMatchObject({ apiVersion: `${g}/v1`, spec: { color: 'blue' } });
    const bV1 = expectCode(await t.client.get(`${base(g, 'v1')}/b`), 200);
    expect(bV1).toMatchObject({ apiVersion: `${g}/v1`, spec: { color: 'blue' } });

    // An update in v2 is converted to v1 before it is stored.
    const updated = expectCode(
      await t.client.put(`${base(g, 'v2')}/b`, { ...b, spec: { colour: 'green', size: 3 } }),
      200,
    );
    expect(updated.spec).toEqual({ colour: 'green', size: 3 });
    expect(await inEtcd(g, 'b')).toMatchObject({ apiVersion: `${g}/v1`, spec: { color: 'green', size: 3 } });
  });

  it('keeps metadata but labels and annotations from the webhook, and prunes unknown fields', async () => {
    expectCode(await t.client.post(base(g, 'v1'), widget(g, { name: 'meddled', version: 'v1' })), 201);
    hook.mode = 'meddle';
    const got = expectCode(await t.client.get(`${base(g, 'v2')}/meddled`), 200);
    expect(got.metadata.labels).toEqual({ converted: 'yes' });
    expect(got.metadata.annotations).toEqual({ 'hook/seen': `${g}/v2` });
    expect(got.metadata.generation).toBe(1);
    expect(got.spec).toEqual({ colour: 'red' });
  });

  it('lists v2 in one review per list, with field selectors on v2 and exact pages', async () => {
    const paints: Array<[string, string]> = [
      ['l1', 'blue'],
      ['l2', 'red'],
      ['l3', 'blue'],
      ['l4', 'red'],
      ['l5', 'blue'],
    ];
    for (const [name, paint] of paints)
      expectCode(await t.client.post(base(g, 'v1'), widget(g, { name, version: 'v1', paint })), 201);
    const before = reviews.length;
    const list = expectCode(await t.client.get(base(g, 'v2')), 200);
    expect(list.apiVersion).toBe(`${g}/v2`);
    expect(list.items.every((o: Json) => o.apiVersion === `${g}/v2` && o.spec.color === undefined)).toBe(true);
    expect(list.items.map((o: Json) => o.metadata.name)).toEqual(
      expect.arrayContaining(['l1', 'l2', 'l3', 'l4', 'l5']),
    );
    expect(reviews.length).toBe(before + 1);
    expect(reviews.at(-1)?.objects.length).toBe(list.items.length);

    const blue = expectCode(await t.client.get(`${base(g, 'v2')}?fieldSelector=spec.colour%3Dblue`), 200);
    expect(blue.items.map((o: Json) => o.metadata.name)).toEqual(['l1', 'l3', 'l5']);

    const names: string[] = [];
    let cont = '';
    for (let i = 0; i < 10; i++) {
      const page = expectCode(
        await t.client.get(
          `${base(g, 'v2')}?fieldSelector=spec.colour%3Dblue&limit=2${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
        ),
        200,
      );
      names.push(...page.items.map((o: Json) => o.metadata.name as string));
      expect(page.items.length).toBeLessThanOrEqual(2);
      cont = (page.metadata.continue as string | undefined) ?? '';
      if (!cont) break;
    }
    expect(names).toEqual(['l1', 'l3', 'l5']);
  });

  it('watches v2: objects written in either version arrive converted, in order', async () => {
    const list = expectCode(await t.client.get(base(g, 'v2')), 200);
    const w = await openWatch(
      { baseUrl: t.server.url, caPem: t.server.caPem, token: t.adminToken },
      `${base(g, 'v2')}?watch=1&resourceVersion=${list.metadata.resourceVersion as string}`,
    );
    try {
      expect(w.status).toBe(200);
      const c = expectCode(
        await t.client.post(base(g, 'v1'), widget(g, { name: 'w1', version: 'v1', paint: 'red' })),
        201,
      );
      expectCode(await t.client.post(base(g, 'v2'), widget(g, { name: 'w2', version: 'v2', paint: 'blue' })), 201);
      expectCode(await t.client.put(`${base(g, 'v1')}/w1`, { ...c, spec: { color: 'green' } }), 200);
      expectCode(await t.client.delete(`${base(g, 'v1')}/w2`), 200);
      const events = await w.take(4);
      expect(
        events.map((e) => [e.type, e.object.metadata?.name, e.object.apiVersion, (e.object.spec as Json).colour]),
      ).toEqual([
        ['ADDED', 'w1', `${g}/v2`, 'red'],
        ['ADDED', 'w2', `${g}/v2`, 'blue'],
        ['MODIFIED', 'w1', `${g}/v2`, 'green'],
        ['DELETED', 'w2', `${g}/v2`, 'blue'],
      ]);
    } finally {
      w.close();
    }
  });

  it('ends a v2 watch with an InternalError event when a conversion fails', async () => {
    const list = expectCode(await t.client.get(base(g, 'v2')), 200);
    const w = await openWatch(
      { baseUrl: t.server.url, caPem: t.server.caPem, token: t.adminToken },
      `${base(g, 'v2')}?watch=1&resourceVersion=${list.metadata.resourceVersion as string}`,
    );
    try {
      hook.mode = 'failure';
      expectCode(await t.client.post(base(g, 'v1'), widget(g, { name: 'wfail', version: 'v1' })), 201);
      const [e] = await w.take(1);
      expect(e?.type).toBe('ERROR');
      expect(e?.object).toMatchObject({ kind: 'Status', code: 500, reason: 'InternalError' });
      expect(e?.object.message).toContain('custom webhook conversion error');
      expect(await w.waitEnd()).toEqual([]);
    } finally {
      w.close();
    }
  });

  const failures: Array<[Mode, (g: string) => string]> = [
    ['status500', () => 'failed: an error on the server ("boom") has prevented the request from succeeding'],
    ['garbage', () => "failed: couldn't get version/kind; json parse error: "],
    ['no-response', () => 'failed: no response provided'],
    [
      'wrong-review-kind',
      () =>
        `failed: expected webhook response of ${group('apiextensions')}/v1, Kind=ConversionReview, got ${group('apiextensions')}/v1, Kind=SomethingElse`,
    ],
    ['wrong-uid', () => 'failed: expected response.uid="'],
    ['wrong-count', () => 'returned 0 objects, expected 1'],
    ['failure', () => 'failed: custom webhook conversion error'],
    ['failure-without-message', () => "failed: response.result.status was 'Failure', not 'Success'"],
    [
      'wrong-version',
      (g) => `returned invalid object at index 0: invalid groupVersion (expected ${g}/v1, received ${g}/v2)`,
    ],
    ['wrong-kind', () => 'returned invalid object at index 0: invalid kind (expected Widget, received Gadget)'],
    ['renamed', () => 'returned invalid object: must have the same name: '],
    ['bad-label', () => 'returned invalid metadata: metadata.labels: Invalid value: "bad key!": '],
    ['reset', () => `failed: Post "https://127.0.0.1:${port}/convert?timeout=30s": `],
  ];

  it.each(failures)(
    'answers a webhook failure (%s) with a 500 InternalError and writes nothing',
    async (mode, message) => {
      // A v1 object no v2 store has converted yet (the watch cache's copy is new).
      const existing = expectCode(
        await t.client.post(base(g, 'v1'), widget(g, { name: `old-${mode}`, version: 'v1' })),
        201,
      );
      const stored = await inEtcd(g, `old-${mode}`);
      hook.mode = mode;
      const prefix = `Internal error occurred: conversion webhook for ${g}/v2, Kind=Widget `;

      const create = expectFailure(
        await t.client.post(base(g, 'v2'), widget(g, { name: `new-${mode}`, version: 'v2' })),
        {
          code: 500,
          reason: 'InternalError',
        },
      );
      expect(create.message).toContain(prefix + message(g));
      expect(await inEtcd(g, `new-${mode}`)).toBeUndefined();

      const readPrefix = `Internal error occurred: conversion webhook for ${g}/v1, Kind=Widget `;
      const get = expectFailure(await t.client.get(`${base(g, 'v2')}/old-${mode}`), {
        code: 500,
        reason: 'InternalError',
      });
      expect(get.message?.startsWith(readPrefix)).toBe(true);
      const list = expectFailure(await t.client.get(base(g, 'v2')), { code: 500, reason: 'InternalError' });
      expect(list.message?.startsWith(readPrefix)).toBe(true);

      // Reading back in v1 needs no conversion; the object is as it was.
      hook.mode = 'ok';
      expect(expectCode(await t.client.get(`${base(g, 'v1')}/old-${mode}`), 200)).toEqual(existing);
      expect(await inEtcd(g, `old-${mode}`)).toEqual(stored);
    },
  );

  it('converts a v2 update to v1 before storing it: when that fails, nothing is written', async () => {
    expectCode(await t.client.post(base(g, 'v1'), widget(g, { name: 'upd', version: 'v1' })), 201);
    const stored = await inEtcd(g, 'upd');
    const current = expectCode(await t.client.get(`${base(g, 'v2')}/upd`), 200);
    hook.mode = 'failure';
    hook.onlyTo = 'v1';
    const put = expectFailure(await t.client.put(`${base(g, 'v2')}/upd`, { ...current, spec: { colour: 'blue' } }), {
      code: 500,
      reason: 'InternalError',
    });
    expect(put.message).toBe(
      `Internal error occurred: conversion webhook for ${g}/v2, Kind=Widget failed: custom webhook conversion error`,
    );
    const patch = await t.client.patch(
      `${base(g, 'v2')}/upd`,
      { spec: { colour: 'blue' } },
      'application/merge-patch+json',
    );
    expectFailure(patch, { code: 500, reason: 'InternalError' });
    expect(await inEtcd(g, 'upd')).toEqual(stored);
  });

  it('times out a webhook that does not answer (Kubernetes: 30 s), writing nothing', async () => {
    const r = t.server.catalog.lookup(g, 'v2', 'widgets');
    if (!r) throw new Error('v2 not served');
    const raw = new Etcd3Storage({ endpoints: t.etcd.endpoints });
    try {
      const storage = customResourceStorage(raw, { storePrefix: t.storePrefix, resource: r, webhookTimeoutMs: 300 });
      hook.mode = 'hang';
      const key = `${t.storePrefix}/${g}/widgets/${ns}/slow`;
      const obj = widget(g, { name: 'slow', version: 'v2' }) as ApiObject;
      const started = Date.now();
      const err = await storage.create(key, { ...obj, metadata: { ...obj.metadata, namespace: ns } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(Date.now() - started).toBeLessThan(5_000);
      if (!isStatusError(err)) throw new Error(`expected a Status error, got ${String(err)}`);
      expect(err.status).toMatchObject({ code: 500, reason: 'InternalError' });
      expect(err.status.message).toBe(
        `Internal error occurred: conversion webhook for ${g}/v2, Kind=Widget failed: Post "https://127.0.0.1:${port}/convert?timeout=300ms": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
      );
      expect(await inEtcd(g, 'slow')).toBeUndefined();
    } finally {
      await raw.close();
    }
  });

  it('records a new storage version in status.storedVersions and stores new objects in it', async () => {
    const crd = expectCode(await t.client.get(`${CRD_PATH()}/widgets.${g}`), 200);
    expect(crd.status.storedVersions).toEqual(['v1']);
    for (const v of crd.spec.versions) v.storage = v.name === 'v2';
    const updated = expectCode(await t.client.put(`${CRD_PATH()}/widgets.${g}`, crd), 200);
    expect(updated.status.storedVersions).toEqual(['v1', 'v2']);
    // The new storage version takes effect once the CRD controller serves the new definition.
    let n = 0;
    await waitFor('objects to be stored in v2', async () => {
      const name = `sv-${++n}`;
      expectCode(await t.client.post(base(g, 'v1'), widget(g, { name, version: 'v1', paint: 'red' })), 201);
      const stored = await inEtcd(g, name);
      return stored?.apiVersion === `${g}/v2` ? stored : undefined;
    });
    expect(await inEtcd(g, `sv-${n}`)).toMatchObject({ spec: { colour: 'red' } });
    // Objects stored before stay in v1 and are read in both versions.
    expect(await inEtcd(g, 'a')).toMatchObject({ apiVersion: `${g}/v1`, spec: { color: 'red' } });
    expect(expectCode(await t.client.get(`${base(g, 'v2')}/a`), 200).spec).toEqual({ colour: 'red' });
    expect(expectCode(await t.client.get(`${base(g, 'v1')}/a`), 200).spec).toEqual({ color: 'red' });
    expect(expectCode(await t.client.get(`${base(g, 'v1')}/sv-${n}`), 200).spec).toEqual({ color: 'red' });
  });
});

describe('conversion webhook clientConfig', () => {
  it('reaches a webhook through a Service reference, with ConversionReview v1beta1 when listed first', async () => {
    expectCode(
      await t.client.post(`/api/v1/namespaces/${ns}/services`, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: SERVICE },
        spec: { clusterIP: SERVICE_IP, ports: [{ port }] },
      }),
      201,
    );
    const g = await served(
      widgetCrd(freshGroup(), {
        clientConfig: { service: { namespace: ns, name: SERVICE, path: '/convert', port }, caBundle },
        reviewVersions: ['v1beta1', 'v1'],
      }),
    );
    const created = expectCode(await t.client.post(base(g, 'v2'), widget(g, { name: 'svc', version: 'v2' })), 201);
    expect(created.spec).toEqual({ colour: 'red' });
    expect(reviews.at(-1)?.apiVersion).toBe(`${group('apiextensions')}/v1beta1`);
    expect(await inEtcd(g, 'svc')).toMatchObject({ apiVersion: `${g}/v1`, spec: { color: 'red' } });
  });

  it('fails clearly for a missing Service, an unreachable URL and an untrusted certificate', async () => {
    const closed = await closedPort();
    const cases: Array<[Json, string]> = [
      [
        { service: { namespace: ns, name: 'missing', path: '/convert', port: 443 }, caBundle },
        `failed: Post "https://missing.${ns}.svc:443/convert?timeout=30s": service "missing" not found`,
      ],
      [
        urlConfig('/convert', closed),
        `failed: Post "https://127.0.0.1:${closed}/convert?timeout=30s": dial tcp 127.0.0.1:${closed}: connect: connection refused`,
      ],
      [
        { url: `https://127.0.0.1:${port}/convert` },
        `failed: Post "https://127.0.0.1:${port}/convert?timeout=30s": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
      ],
    ];
    for (const [clientConfig, message] of cases) {
      const g = await served(widgetCrd(freshGroup(), { clientConfig }));
      const res = await t.client.post(base(g, 'v2'), widget(g, { name: 'x', version: 'v2' }));
      const status = expectFailure(res, { code: 500, reason: 'InternalError' });
      expect(status.message).toBe(`Internal error occurred: conversion webhook for ${g}/v2, Kind=Widget ${message}`);
      expect(await inEtcd(g, 'x')).toBeUndefined();
      // The storage version itself needs no webhook.
      expectCode(await t.client.post(base(g, 'v1'), widget(g, { name: 'y', version: 'v1' })), 201);
    }
  });
});
