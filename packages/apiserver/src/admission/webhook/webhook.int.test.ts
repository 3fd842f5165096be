// MutatingAdmissionWebhook and ValidatingAdmissionWebhook against real HTTPS webhooks in this
// process (a CA made in the test, its bundle in the configurations), the server on real etcd
// under --naming=kubernetes so stock kubectl sees the warnings: patches applied, denials with
// the webhook's code, timeouts, garbage, 500s, refused connections under failurePolicy Fail and
// Ignore, selectors, matchConditions, reinvocation, dry runs, a Service reference, v1beta1
// reviews, custom resources (also matched through an equivalent version), patches that break
// validation (422), the metrics, and bad configurations as 422s with Kubernetes' paths.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Etcd3 } from 'etcd3';
import { group } from '@svc/api';
import {
  createTestCa,
  expectCode,
  expectFailure,
  closedPort,
  startKubectlEnv,
  uniqueName,
  waitFor,
  type Json,
  type KubectlEnv,
  type TestApiServer,
} from '@svc/testing';

/** What a webhook path answers: a review's response fields, a raw HTTP answer, or nothing (it hangs). */
type Reply = { response: Json } | { status: number; body: string; contentType?: string } | 'hang';
type Behaviour = (review: Json) => Reply;

const behaviours = new Map<string, Behaviour>();
const received = new Map<string, Json[]>();

let env: KubectlEnv;
let t: TestApiServer;
let etcd: Etcd3;
let server: Server;
// Services take ClusterIPs from --service-cluster-ip-range; the server's own Service holds its first
// address (127.0.0.1), so the hook Service gets 127.0.0.2, where a second listener serves the same hooks.
let serviceServer: Server | undefined;
const SERVICE_IP = '127.0.0.2';
let port: number;
let caBundle: string;
let hooksNs: string;

const ADMISSIONREGISTRATION = (): string => `/apis/${group('admissionregistration')}/v1`;
const MUTATING = (): string => `${ADMISSIONREGISTRATION()}/mutatingwebhookconfigurations`;
const VALIDATING = (): string => `${ADMISSIONREGISTRATION()}/validatingwebhookconfigurations`;

const reviewsOf = (path: string): Json[] => received.get(path) ?? [];

function startHooks(certPem: string, keyPem: string, at = { host: '127.0.0.1', port: 0 }): Promise<Server> {
  const s = createServer({ cert: certPem, key: keyPem }, (req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'https://hooks');
      const review = JSON.parse(body) as Json;
      review.timeout = url.searchParams.get('timeout');
      received.set(url.pathname, [...reviewsOf(url.pathname), review]);
      const behave = behaviours.get(url.pathname) ?? (() => allow());
      const reply = behave(review);
      if (reply === 'hang') return;
      if ('response' in reply) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({
            apiVersion: review.apiVersion,
            kind: 'AdmissionReview',
            response: { uid: review.request.uid, ...reply.response },
          }),
        );
        return;
      }
      res.writeHead(reply.status, { 'Content-Type': reply.contentType ?? 'text/plain' });
      res.end(reply.body);
    });
  });
  return new Promise((resolve) => s.listen(at.port, at.host, () => resolve(s)));
}

const allow = (extra: Json = {}): Reply => ({ response: { allowed: true, ...extra } });
const jsonPatch = (ops: Json[], extra: Json = {}): Reply =>
  allow({ patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64'), ...extra });
/** Adds `metadata.labels[key] = value` whether or not the object has labels. */
const addLabel = (review: Json, key: string, value: string): Reply =>
  jsonPatch(
    review.request.object.metadata.labels
      ? [{ op: 'add', path: `/metadata/labels/${key}`, value }]
      : [{ op: 'add', path: '/metadata/labels', value: { [key]: value } }],
  );

const url = (path: string, p = port): string => `https://127.0.0.1:${p}${path}`;

/** A webhook entry: rules on `resources` of the core group by default, in namespaces labelled `test=<ns>`. */
function webhook(name: string, o: Json = {}): Json {
  const { path, ns, resources, groups, versions, operations, ...rest } = o as {
    path?: string;
    ns?: string;
    resources?: string[];
    groups?: string[];
    versions?: string[];
    operations?: string[];
  } & Json;
  return {
    name,
    clientConfig: { url: url(path ?? '/allow'), caBundle },
    rules: [
      {
        operations: operations ?? ['CREATE', 'UPDATE'],
        apiGroups: groups ?? [''],
        apiVersions: versions ?? ['v1'],
        resources: resources ?? ['configmaps'],
      },
    ],
    ...(ns ? { namespaceSelector: { matchLabels: { test: ns } } } : {}),
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...rest,
  };
}

function configuration(kind: 'Mutating' | 'Validating', name: string, webhooks: Json[]): Json {
  return {
    apiVersion: `${group('admissionregistration')}/v1`,
    kind: `${kind}WebhookConfiguration`,
    metadata: { name },
    webhooks,
  };
}

async function install(kind: 'Mutating' | 'Validating', name: string, webhooks: Json[]): Promise<Json> {
  return expectCode(
    await t.client.post(kind === 'Mutating' ? MUTATING() : VALIDATING(), configuration(kind, name, webhooks)),
    201,
  );
}

async function remove(kind: 'Mutating' | 'Validating', name: string): Promise<void> {
  expectCode(await t.client.delete(`${kind === 'Mutating' ? MUTATING() : VALIDATING()}/${name}`), 200);
}

/** A namespace labelled `test=<name>`, which the webhooks of one test select. */
async function namespace(): Promise<string> {
  const name = uniqueName('wh');
  expectCode(
    await t.client.post('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels: { test: name } },
    }),
    201,
  );
  return name;
}

const configMaps = (ns: string): string => `/api/v1/namespaces/${ns}/configmaps`;
const configMap = (name: string, extra: Json = {}): Json => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data: { a: '1' },
  ...extra,
});

/** Waits until the server calls `path` for a dry-run create in `ns` (the configuration reached its informer). */
async function active(path: string, ns: string, probe: Json = configMap('probe')): Promise<void> {
  await waitFor(`webhook ${path} to be called in ${ns}`, async () => {
    const before = reviewsOf(path).length;
    await t.client.post(`${configMaps(ns)}?dryRun=All`, probe);
    return reviewsOf(path).length > before;
  });
}

/** A failure Status with this HTTP code (webhook denials carry the webhook's reason, or none). */
function denied(res: { status: number; text: string; json<T>(): T }, code: number): Json {
  if (res.status !== code) throw new Error(`expected HTTP ${code}, got ${res.status}: ${res.text}`);
  const s = res.json<Json>();
  expect(s).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code });
  return s;
}

beforeAll(async () => {
  env = await startKubectlEnv({ args: ['--naming=kubernetes', '--service-cluster-ip-range=127.0.0.0/24'] });
  t = env.server;
  etcd = new Etcd3({ hosts: t.etcd.endpoints });
  hooksNs = uniqueName('hooks');
  const ca = await createTestCa('admission-webhook-ca');
  const serving = await ca.issue({
    commonName: 'admission-webhook',
    usages: ['server'],
    hosts: ['127.0.0.1', `hooks.${hooksNs}.svc`],
  });
  server = await startHooks(serving.certPem, serving.keyPem);
  port = (server.address() as AddressInfo).port;
  serviceServer = await startHooks(serving.certPem, serving.keyPem, { host: SERVICE_IP, port });
  caBundle = Buffer.from(ca.certPem).toString('base64');
  expectCode(
    await t.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: hooksNs } }),
    201,
  );
});

afterAll(async () => {
  await env?.stop();
  etcd?.close();
  for (const s of [server, serviceServer]) {
    s?.closeAllConnections();
    await new Promise((r) => s?.close(r));
  }
});

describe('mutating webhooks', () => {
  it('applies a JSON patch, sends Kubernetes’ AdmissionReview v1, and records it', async () => {
    const ns = await namespace();
    behaviours.set('/label', (r) => addLabel(r, 'mutated', 'yes'));
    await install('Mutating', uniqueName('label'), [webhook('label.example.com', { path: '/label', ns })]);
    await active('/label', ns);

    const created = expectCode(await t.client.post(configMaps(ns), configMap('patched')), 201);
    expect(created.metadata.labels).toEqual({ mutated: 'yes' });
    const stored = expectCode(await t.client.get(`${configMaps(ns)}/patched`), 200);
    expect(stored.metadata.labels).toEqual({ mutated: 'yes' });

    const review = reviewsOf('/label').at(-1) as Json;
    expect(review.apiVersion).toBe(`${group('admission')}/v1`);
    expect(review.timeout).toBe('10s');
    expect(review.request).toMatchObject({
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      requestKind: { group: '', version: 'v1', kind: 'ConfigMap' },
      requestResource: { group: '', version: 'v1', resource: 'configmaps' },
      name: 'patched',
      namespace: ns,
      operation: 'CREATE',
      userInfo: { username: 'admin', uid: 'admin-uid', groups: ['system:masters', 'system:authenticated'] },
      object: { kind: 'ConfigMap', metadata: { name: 'patched', namespace: ns }, data: { a: '1' } },
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: `${group('meta')}/v1` },
    });
    expect(review.request.uid).toMatch(/^[0-9a-f-]{36}$/);

    // An update sees the stored object as oldObject; the webhook's patch applies again.
    const updated = expectCode(
      await t.client.put(`${configMaps(ns)}/patched`, { ...stored, metadata: { ...stored.metadata, labels: {} } }),
      200,
    );
    expect(updated.metadata.labels).toEqual({ mutated: 'yes' });
    expect(reviewsOf('/label').at(-1)?.request).toMatchObject({
      operation: 'UPDATE',
      oldObject: { metadata: { labels: { mutated: 'yes' } } },
      options: { kind: 'UpdateOptions' },
    });
  });

  it('reinvokes an IfNeeded webhook once a later webhook changed the object', async () => {
    const ns = await namespace();
    behaviours.set('/first', (r) =>
      addLabel(r, 'first', String(Object.keys(r.request.object.metadata.annotations ?? {}).length)),
    );
    behaviours.set('/second', (r) =>
      r.request.object.metadata.annotations?.second
        ? allow()
        : jsonPatch([{ op: 'add', path: '/metadata/annotations', value: { second: 'yes' } }]),
    );
    // Configurations run in name order: a-... before b-...
    await install('Mutating', `a-${uniqueName('first')}`, [
      webhook('first.example.com', { path: '/first', ns, reinvocationPolicy: 'IfNeeded' }),
    ]);
    await install('Mutating', `b-${uniqueName('second')}`, [webhook('second.example.com', { path: '/second', ns })]);
    await active('/first', ns);
    await active('/second', ns);

    const before = reviewsOf('/first').length;
    const created = expectCode(await t.client.post(configMaps(ns), configMap('again')), 201);
    const calls = reviewsOf('/first').slice(before);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.request.object.metadata.annotations).toEqual({ second: 'yes' });
    // The second call saw its own label and the annotation: it counted one annotation.
    expect(created.metadata).toMatchObject({ labels: { first: '1' }, annotations: { second: 'yes' } });
  });

  it('refuses a patch on DELETE and a patch that breaks the object’s type, whatever the failurePolicy', async () => {
    const ns = await namespace();
    expectCode(await t.client.post(configMaps(ns), configMap('doomed')), 201);
    behaviours.set('/patch-delete', (r) =>
      r.request.operation === 'DELETE' ? jsonPatch([{ op: 'add', path: '/data/x', value: 'y' }]) : allow(),
    );
    behaviours.set('/bad-type', () => jsonPatch([{ op: 'replace', path: '/data', value: 5 }]));
    await install('Mutating', uniqueName('delete'), [
      webhook('delete.example.com', {
        path: '/patch-delete',
        ns,
        failurePolicy: 'Ignore',
        operations: ['DELETE', 'CREATE'],
      }),
    ]);
    await active('/patch-delete', ns);
    const del = expectFailure(await t.client.delete(`${configMaps(ns)}/doomed`), {
      code: 500,
      reason: 'InternalError',
    });
    expect(del.message).toBe(
      'Internal error occurred: admission webhook "delete.example.com" attempted to modify the object, which is not supported for this operation',
    );
    expectCode(await t.client.get(`${configMaps(ns)}/doomed`), 200);

    await install('Mutating', uniqueName('badtype'), [
      webhook('badtype.example.com', { path: '/bad-type', ns, failurePolicy: 'Ignore' }),
    ]);
    await active('/bad-type', ns);
    const bad = expectFailure(await t.client.post(configMaps(ns), configMap('typed')), {
      code: 500,
      reason: 'InternalError',
    });
    expect(bad.message).toBe('Internal error occurred: data: Invalid value: "integer": must be of type object');
  });

  it('lets validation fail a patch that changes an immutable field (422)', async () => {
    const ns = await namespace();
    expectCode(await t.client.post(configMaps(ns), configMap('frozen', { immutable: true })), 201);
    behaviours.set('/thaw', (r) =>
      r.request.operation === 'UPDATE' ? jsonPatch([{ op: 'replace', path: '/data/a', value: '2' }]) : allow(),
    );
    await install('Mutating', uniqueName('thaw'), [webhook('thaw.example.com', { path: '/thaw', ns })]);
    await active('/thaw', ns);
    const current = expectCode(await t.client.get(`${configMaps(ns)}/frozen`), 200);
    const res = await t.client.put(`${configMaps(ns)}/frozen`, {
      ...current,
      metadata: { ...current.metadata, labels: { touched: 'yes' } },
    });
    const status = expectFailure(res, { code: 422, reason: 'Invalid' });
    expect(status.message).toBe(
      'ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set',
    );
  });

  it('admits custom resources, also through an equivalent version of the CRD', async () => {
    const ns = await namespace();
    const g = `${uniqueName('gadgets')}.example.com`;
    const version = (name: string, storage: boolean): Json => ({
      name,
      served: true,
      storage,
      schema: {
        openAPIV3Schema: {
          type: 'object',
          properties: { spec: { type: 'object', properties: { size: { type: 'integer' }, tag: { type: 'string' } } } },
        },
      },
    });
    expectCode(
      await t.client.post(`/apis/${group('apiextensions')}/v1/customresourcedefinitions`, {
        apiVersion: `${group('apiextensions')}/v1`,
        kind: 'CustomResourceDefinition',
        metadata: { name: `gadgets.${g}` },
        spec: {
          group: g,
          scope: 'Namespaced',
          names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
          versions: [version('v1', true), version('v2', false)],
        },
      }),
      201,
    );
    for (const v of ['v1', 'v2'])
      await waitFor(`${g}/${v} served`, async () => (await t.client.get(`/apis/${g}/${v}/gadgets`)).status === 200);
    behaviours.set('/gadget', () => jsonPatch([{ op: 'add', path: '/spec/tag', value: 'tagged' }]));
    await install('Mutating', uniqueName('gadget'), [
      webhook('gadget.example.com', { path: '/gadget', ns, groups: [g], versions: ['v1'], resources: ['gadgets'] }),
    ]);
    const gadgets = (v: string): string => `/apis/${g}/${v}/namespaces/${ns}/gadgets`;
    const gadget = (v: string, name: string): Json => ({
      apiVersion: `${g}/${v}`,
      kind: 'Gadget',
      metadata: { name },
      spec: { size: 1 },
    });
    await waitFor('the gadget webhook', async () => {
      const r = await t.client.post(`${gadgets('v1')}?dryRun=All`, gadget('v1', 'probe'));
      return r.status === 201 && r.json<Json>().spec.tag === 'tagged';
    });
    const v1 = expectCode(await t.client.post(gadgets('v1'), gadget('v1', 'one')), 201);
    expect(v1.spec).toEqual({ size: 1, tag: 'tagged' });

    // The rule names v1 only; a v2 request matches through the equivalent v1 (matchPolicy Equivalent).
    const v2 = expectCode(await t.client.post(gadgets('v2'), gadget('v2', 'two')), 201);
    expect(v2).toMatchObject({ apiVersion: `${g}/v2`, spec: { size: 1, tag: 'tagged' } });
    expect(reviewsOf('/gadget').at(-1)?.request).toMatchObject({
      kind: { group: g, version: 'v1', kind: 'Gadget' },
      resource: { group: g, version: 'v1', resource: 'gadgets' },
      requestKind: { group: g, version: 'v2', kind: 'Gadget' },
      requestResource: { group: g, version: 'v2', resource: 'gadgets' },
      object: { apiVersion: `${g}/v1`, kind: 'Gadget', spec: { size: 1 } },
    });
  });
});

describe('validating webhooks', () => {
  it('denies with the webhook’s code and message, or 400 without explanation', async () => {
    const ns = await namespace();
    behaviours.set('/deny', (r) =>
      r.request.name === 'quiet'
        ? { response: { allowed: false } }
        : {
            response: {
              allowed: false,
              status: { code: 403, reason: 'Forbidden', message: `no ${String(r.request.name)} here` },
            },
          },
    );
    await install('Validating', uniqueName('deny'), [webhook('deny.example.com', { path: '/deny', ns })]);
    await active('/deny', ns);
    const loud = expectFailure(await t.client.post(configMaps(ns), configMap('loud')), {
      code: 403,
      reason: 'Forbidden',
    });
    expect(loud.message).toBe('admission webhook "deny.example.com" denied the request: no loud here');
    const quiet = denied(await t.client.post(configMaps(ns), configMap('quiet')), 400);
    expect(quiet.reason).toBeUndefined();
    expect(quiet.message).toBe('admission webhook "deny.example.com" denied the request without explanation');
    expect((await t.client.get(`${configMaps(ns)}/loud`)).status).toBe(404);
  });

  it('fails closed on a timeout, garbage, a 500 and a refused connection, and open under Ignore', async () => {
    const ns = await namespace();
    const closed = await closedPort();
    behaviours.set('/hang', () => 'hang');
    behaviours.set('/garbage', () => ({ status: 200, body: '<html>oops</html>', contentType: 'application/json' }));
    behaviours.set('/boom', () => ({ status: 500, body: 'boom' }));
    behaviours.set('/wrong-uid', () => ({ response: { uid: 'nope', allowed: true } }));
    const cases: Array<[string, Json, string]> = [
      [
        'hang',
        { path: '/hang', timeoutSeconds: 1 },
        `failed to call webhook: Post "${url('/hang')}?timeout=1s": context deadline exceeded`,
      ],
      [
        'garbage',
        { path: '/garbage' },
        "failed to call webhook: couldn't get version/kind; json parse error: invalid character '<' looking for beginning of value",
      ],
      [
        'boom',
        { path: '/boom' },
        'failed to call webhook: an error on the server ("boom") has prevented the request from succeeding',
      ],
      ['wrong-uid', { path: '/wrong-uid' }, 'received invalid webhook response: expected response.uid="'],
      [
        'refused',
        { clientConfig: { url: url('/allow', closed), caBundle } },
        `failed to call webhook: Post "${url('/allow', closed)}?timeout=10s": dial tcp 127.0.0.1:${closed}: connect: connection refused`,
      ],
    ];
    for (const [what, o, reason] of cases) {
      const name = `${what}.example.com`;
      const config = uniqueName(what);
      await install('Validating', config, [webhook(name, { ns, ...o })]);
      const started = Date.now();
      await waitFor(`${what} to fail closed`, async () => {
        const r = await t.client.post(configMaps(ns), configMap(uniqueName('closed')));
        if (r.status === 201) return false;
        const status = expectFailure(r, { code: 500, reason: 'InternalError' });
        expect(status.message?.startsWith(`Internal error occurred: failed calling webhook "${name}": ${reason}`)).toBe(
          true,
        );
        return true;
      });
      if (what === 'hang') expect(Date.now() - started).toBeLessThan(10_000);
      // Under Ignore the same failure lets the request through.
      const current = expectCode(await t.client.get(`${VALIDATING()}/${config}`), 200);
      current.webhooks[0].failurePolicy = 'Ignore';
      expectCode(await t.client.put(`${VALIDATING()}/${config}`, current), 200);
      await waitFor(`${what} to fail open`, async () => {
        const r = await t.client.post(configMaps(ns), configMap(uniqueName('open')));
        return r.status === 201;
      });
      await remove('Validating', config);
    }
  });

  it('selects by namespace labels and by the labels of the object or the old object', async () => {
    const ns = await namespace();
    const other = uniqueName('other');
    expectCode(
      await t.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: other } }),
      201,
    );
    behaviours.set('/selected', () => ({ response: { allowed: false, status: { message: 'selected' } } }));
    await install('Validating', uniqueName('selected'), [
      webhook('selected.example.com', {
        path: '/selected',
        ns,
        objectSelector: { matchExpressions: [{ key: 'guarded', operator: 'In', values: ['yes'] }] },
      }),
    ]);
    await active('/selected', ns, configMap('probe', { metadata: { name: 'probe', labels: { guarded: 'yes' } } }));

    const guarded = (name: string): Json => configMap(name, { metadata: { name, labels: { guarded: 'yes' } } });
    denied(await t.client.post(configMaps(ns), guarded('g1')), 400);
    expectCode(await t.client.post(configMaps(ns), configMap('free')), 201);
    // Another namespace is not selected.
    expectCode(await t.client.post(configMaps(other), guarded('g2')), 201);
    // An update that removes the label still matches through the old object.
    behaviours.set('/selected', (r) => (r.request.operation === 'UPDATE' ? { response: { allowed: false } } : allow()));
    const g3 = expectCode(await t.client.post(configMaps(ns), guarded('g3')), 201);
    const res = await t.client.put(`${configMaps(ns)}/g3`, { ...g3, metadata: { ...g3.metadata, labels: {} } });
    expect(res.status).toBe(400);
  });

  it('calls a webhook only when its matchConditions hold; an erroring condition fails by failurePolicy', async () => {
    const ns = await namespace();
    behaviours.set('/conditions', () => ({ response: { allowed: false, status: { message: 'conditions held' } } }));
    await install('Validating', uniqueName('conditions'), [
      webhook('conditions.example.com', {
        path: '/conditions',
        ns,
        matchConditions: [
          { name: 'named', expression: 'object.metadata.name.startsWith("match-")' },
          { name: 'create', expression: 'request.operation == "CREATE" && request.userInfo.username == "admin"' },
          { name: 'may-create-pods', expression: 'authorizer.group("").resource("pods").check("create").allowed()' },
        ],
      }),
    ]);
    await active('/conditions', ns, configMap('match-probe'));
    const matched = denied(await t.client.post(configMaps(ns), configMap('match-me')), 400);
    expect(matched.message).toBe('admission webhook "conditions.example.com" denied the request: conditions held');
    const before = reviewsOf('/conditions').length;
    expectCode(await t.client.post(configMaps(ns), configMap('skip-me')), 201);
    expect(reviewsOf('/conditions').length).toBe(before);

    const erroring = uniqueName('erroring');
    await install('Validating', erroring, [
      webhook('erroring.example.com', {
        path: '/allow',
        ns,
        matchConditions: [{ name: 'missing', expression: 'object.data.missing == "x"' }],
      }),
    ]);
    await waitFor('the erroring condition', async () => {
      const r = await t.client.post(configMaps(ns), configMap(uniqueName('err')));
      if (r.status !== 403) return false;
      const s = expectFailure(r, { code: 403, reason: 'Forbidden' });
      expect(s.message).toMatch(/^configmaps "err-[^"]+" is forbidden: no such key: missing$/);
      return true;
    });
    const current = expectCode(await t.client.get(`${VALIDATING()}/${erroring}`), 200);
    current.webhooks[0].failurePolicy = 'Ignore';
    expectCode(await t.client.put(`${VALIDATING()}/${erroring}`, current), 200);
    await waitFor('the erroring condition ignored', async () => {
      return (await t.client.post(configMaps(ns), configMap(uniqueName('ignored')))).status === 201;
    });
  });

  it('reaches a webhook through a Service reference with AdmissionReview v1beta1 when that is listed first', async () => {
    const ns = await namespace();
    expectCode(
      await t.client.post(`/api/v1/namespaces/${hooksNs}/services`, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'hooks' },
        spec: { clusterIP: SERVICE_IP, ports: [{ port }] },
      }),
      201,
    );
    await install('Validating', uniqueName('service'), [
      webhook('service.example.com', {
        ns,
        clientConfig: { service: { namespace: hooksNs, name: 'hooks', path: '/via-service', port }, caBundle },
        admissionReviewVersions: ['v1beta1', 'v1'],
      }),
    ]);
    await active('/via-service', ns);
    expectCode(await t.client.post(configMaps(ns), configMap('served')), 201);
    expect(reviewsOf('/via-service').at(-1)).toMatchObject({
      apiVersion: `${group('admission')}/v1beta1`,
      request: { name: 'served', operation: 'CREATE' },
    });
  });
});

describe('dry runs, warnings and metrics', () => {
  it('calls side-effect-free webhooks on a dry run and refuses one with side effects', async () => {
    const ns = await namespace();
    await install('Validating', uniqueName('dry'), [
      webhook('dry.example.com', { path: '/dry', ns, sideEffects: 'NoneOnDryRun' }),
    ]);
    await active('/dry', ns);
    expectCode(await t.client.post(`${configMaps(ns)}?dryRun=All`, configMap('dry')), 201);
    expect(reviewsOf('/dry').at(-1)?.request).toMatchObject({ dryRun: true, options: { dryRun: ['All'] } });

    // v1 accepts only None and NoneOnDryRun; an object from an older server may still say Some.
    const name = uniqueName('effects');
    const old = configuration('Validating', name, [
      {
        ...webhook('effects.example.com', { path: '/effects', ns, sideEffects: 'Some' }),
        failurePolicy: 'Fail',
        matchPolicy: 'Equivalent',
        namespaceSelector: { matchLabels: { test: ns } },
        objectSelector: {},
        timeoutSeconds: 10,
      },
    ]);
    old.metadata = {
      name,
      uid: uniqueName('uid'),
      creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    await etcd
      .put(`${t.storePrefix}/${group('admissionregistration')}/validatingwebhookconfigurations/${name}`)
      .value(JSON.stringify(old));
    await waitFor('the webhook with side effects', async () => {
      const r = await t.client.post(`${configMaps(ns)}?dryRun=All`, configMap('dry-effects'));
      if (r.status !== 400) return false;
      const s = expectFailure(r, { code: 400, reason: 'BadRequest' });
      expect(s.message).toBe('admission webhook "effects.example.com" does not support dry run');
      return true;
    });
    // Without dryRun it is called.
    expectCode(await t.client.post(configMaps(ns), configMap('wet')), 201);
    expect(reviewsOf('/effects').at(-1)?.request).toMatchObject({ name: 'wet', dryRun: false });

    // An update may keep the side effects the stored object already had (Kubernetes' ratcheting);
    // the webhooks changed, so the generation moves.
    const stored = expectCode(await t.client.get(`${VALIDATING()}/${name}`), 200);
    stored.webhooks[0].timeoutSeconds = 5;
    const updated = expectCode(await t.client.put(`${VALIDATING()}/${name}`, stored), 200);
    expect(updated.webhooks[0].sideEffects).toBe('Some');
    expect(updated.metadata.generation).toBe((stored.metadata.generation ?? 0) + 1);
    const relabelled = expectCode(
      await t.client.put(`${VALIDATING()}/${name}`, {
        ...updated,
        metadata: { ...updated.metadata, labels: { a: 'b' } },
      }),
      200,
    );
    expect(relabelled.metadata.generation).toBe(updated.metadata.generation);
  });

  it('passes the webhooks’ warnings to the client: stock kubectl prints them', async () => {
    const ns = await namespace();
    behaviours.set('/warn', (r) => allow({ warnings: [`think twice about ${String(r.request.name)}`] }));
    behaviours.set('/warn-too', () => allow({ warnings: ['validated with care'] }));
    await install('Mutating', uniqueName('warn'), [webhook('warn.example.com', { path: '/warn', ns })]);
    await install('Validating', uniqueName('warn'), [webhook('warn-too.example.com', { path: '/warn-too', ns })]);
    await active('/warn', ns);
    await active('/warn-too', ns);
    const r = await env.ok(['create', 'configmap', 'careful', '-n', ns, '--from-literal=a=1']);
    expect(r.stderr).toContain('Warning: think twice about careful');
    expect(r.stderr).toContain('Warning: validated with care');
    expect(r.stdout).toContain('configmap/careful created');
  });

  it('lists configurations with stock kubectl (NAME, WEBHOOKS, AGE) and exports the metrics', async () => {
    const name = uniqueName('listed');
    await install('Validating', name, [webhook('one.listed.example.com'), webhook('two.listed.example.com')]);
    const got = await env.ok(['get', 'validatingwebhookconfigurations', name]);
    expect(got.stdout).toMatch(new RegExp(`^NAME\\s+WEBHOOKS\\s+AGE\\n${name}\\s+2\\s+\\S+\\n$`));
    const stored = expectCode(await t.client.get(`${VALIDATING()}/${name}`), 200);
    expect(stored.metadata.generation).toBe(1);
    expect(stored.webhooks[0]).toMatchObject({
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
      rules: [{ scope: '*' }],
    });
    await remove('Validating', name);

    const metrics = await t.client.get('/metrics');
    expect(metrics.text).toMatch(
      /apiserver_admission_webhook_admission_duration_seconds_count\{name="deny.example.com",type="validating",operation="CREATE",rejected="true"\} \d+/,
    );
    expect(metrics.text).toMatch(
      /apiserver_admission_webhook_rejection_count\{name="deny.example.com",type="validating",operation="CREATE",error_type="no_error",rejection_code="403"\} \d+/,
    );
    expect(metrics.text).toMatch(
      /apiserver_admission_webhook_rejection_count\{name="boom.example.com",type="validating",operation="CREATE",error_type="calling_webhook_error",rejection_code="500"\} \d+/,
    );
    expect(metrics.text).toMatch(
      /apiserver_admission_webhook_fail_open_count\{name="boom.example.com",type="validating"\} \d+/,
    );
    expect(metrics.text).toMatch(
      /apiserver_admission_step_admission_duration_seconds_count\{type="admit",operation="CREATE",rejected="false"\} \d+/,
    );
    expect(metrics.text).toMatch(
      /apiserver_admission_step_admission_duration_seconds_count\{type="validate",operation="CREATE",rejected="true"\} \d+/,
    );
  });
});

describe('bad configurations', () => {
  const cases: Array<[string, (w: Json) => void, string[]]> = [
    ['no name', (w) => delete w.name, ['webhooks[0].name: Required value']],
    [
      'a name of two segments',
      (w) => (w.name = 'two.segments'),
      [
        'webhooks[0].name: Invalid value: "two.segments": should be a domain with at least three segments separated by dots',
      ],
    ],
    [
      'rules with wildcards mixed in',
      (w) =>
        (w.rules = [
          {
            operations: ['*', 'CREATE'],
            apiGroups: ['*', 'apps'],
            apiVersions: ['v1', ''],
            resources: ['*/*', 'pods'],
          },
        ]),
      [
        `webhooks[0].rules[0].operations: Invalid value: ["*","CREATE"]: if '*' is present, must not specify other operations`,
        `webhooks[0].rules[0].apiGroups: Invalid value: ["*","apps"]: if '*' is present, must not specify other API groups`,
        'webhooks[0].rules[0].apiVersions[1]: Required value',
        `webhooks[0].rules[0].resources: Invalid value: ["*/*","pods"]: if '*/*' is present, must not specify other resources`,
      ],
    ],
    [
      'an unknown operation, a subresource wildcard overlap and a bad scope',
      (w) =>
        (w.rules = [
          {
            operations: ['PATCH'],
            apiGroups: [''],
            apiVersions: ['v1'],
            resources: ['pods/*', 'pods/status'],
            scope: 'Everywhere',
          },
        ]),
      [
        'webhooks[0].rules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
        `webhooks[0].rules[0].resources[1]: Invalid value: "pods/status": if 'pods/*' is present, must not specify pods/status`,
        'webhooks[0].rules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced"',
      ],
    ],
    [
      'bad policies and timeout',
      (w) => Object.assign(w, { failurePolicy: 'Maybe', matchPolicy: 'Fuzzy', timeoutSeconds: 31 }),
      [
        'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"',
        'webhooks[0].matchPolicy: Unsupported value: "Fuzzy": supported values: "Equivalent", "Exact"',
        'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds',
      ],
    ],
    [
      'no sideEffects',
      (w) => delete w.sideEffects,
      ['webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun'],
    ],
    [
      'sideEffects Some',
      (w) => (w.sideEffects = 'Some'),
      ['webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'],
    ],
    [
      'no admissionReviewVersions',
      (w) => delete w.admissionReviewVersions,
      ['webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1'],
    ],
    [
      'unknown and duplicate admissionReviewVersions',
      (w) => (w.admissionReviewVersions = ['v2', 'v2']),
      [
        'webhooks[0].admissionReviewVersions[1]: Invalid value: "v2": duplicate version',
        'webhooks[0].admissionReviewVersions: Invalid value: ["v2","v2"]: must include at least one of v1, v1beta1',
      ],
    ],
    [
      'both url and service',
      (w) => (w.clientConfig = { url: 'https://example.com', service: { namespace: 'a', name: 'b' } }),
      ['webhooks[0].clientConfig: Required value: exactly one of url or service is required'],
    ],
    [
      'an http url with a query',
      (w) => (w.clientConfig = { url: 'http://example.com/x?y=1' }),
      [
        `webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
        'webhooks[0].clientConfig.url: Invalid value: "y=1": query parameters are not permitted in the URL',
      ],
    ],
    [
      'a service without a name and with a bad port and path',
      (w) => (w.clientConfig = { service: { namespace: 'a', name: '', port: 0, path: 'x' } }),
      [
        'webhooks[0].clientConfig.service.name: Required value: service name is required',
        'webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive',
        `webhooks[0].clientConfig.service.path: Invalid value: "x": must start with a '/'`,
      ],
    ],
    [
      'bad selectors',
      (w) => {
        w.namespaceSelector = { matchExpressions: [{ key: 'a', operator: 'In' }] };
        w.objectSelector = { matchLabels: { 'bad key!': 'x' } };
      },
      [
        "webhooks[0].namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        'webhooks[0].objectSelector.matchLabels: Invalid value: "bad key!": ',
      ],
    ],
    [
      'matchConditions that do not compile, repeat a name, or are empty',
      (w) =>
        (w.matchConditions = [
          { name: 'one', expression: 'object.metadata.name' },
          { name: 'one', expression: 'params.x == 1' },
          { name: 'bad name!', expression: ' ' },
        ]),
      [
        'webhooks[0].matchConditions[0].expression: Invalid value: "object.metadata.name": must evaluate to bool but got dyn',
        'webhooks[0].matchConditions[1].expression: Invalid value: "params.x == 1": compilation failed: ERROR: <input>:1:1: ',
        'webhooks[0].matchConditions[1].name: Duplicate value: "one"',
        'webhooks[0].matchConditions[2].expression: Required value',
        'webhooks[0].matchConditions[2].name: Invalid value: "bad name!": ',
      ],
    ],
    [
      'more than 64 matchConditions',
      (w) => (w.matchConditions = Array.from({ length: 65 }, (_, i) => ({ name: `c${i}`, expression: 'true' }))),
      ['webhooks[0].matchConditions: Too many: '],
    ],
  ];

  it.each(cases)('refuses %s (422 with Kubernetes’ paths)', async (_what, change, messages) => {
    for (const kind of ['Validating', 'Mutating'] as const) {
      const w = webhook('bad.example.com');
      change(w);
      const res = await t.client.post(
        kind === 'Mutating' ? MUTATING() : VALIDATING(),
        configuration(kind, uniqueName('bad'), [w]),
      );
      const status = expectFailure(res, { code: 422, reason: 'Invalid' });
      const causes = (status.details?.causes ?? []).map((c) => `${c.field ?? ''}: ${c.message ?? ''}`);
      for (const m of messages) expect(causes.some((c) => c.startsWith(m))).toBe(true);
    }
  });

  it('refuses duplicate webhook names and a bad reinvocationPolicy', async () => {
    const validating = await t.client.post(
      VALIDATING(),
      configuration('Validating', uniqueName('dup'), [webhook('same.example.com'), webhook('same.example.com')]),
    );
    expect(expectFailure(validating, { code: 422, reason: 'Invalid' }).message).toContain(
      'webhooks[1].name: Duplicate value: "same.example.com"',
    );
    const mutating = await t.client.post(
      MUTATING(),
      configuration('Mutating', uniqueName('reinvoke'), [webhook('re.example.com', { reinvocationPolicy: 'Always' })]),
    );
    expect(expectFailure(mutating, { code: 422, reason: 'Invalid' }).message).toContain(
      'webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"',
    );
  });
});
