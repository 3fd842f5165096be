// Server-side apply over HTTPS against a real etcd: one test per row of the spec's
// field-ownership table, one per server-side apply rule, the merge markers of the schema as
// they show through pods (map lists, atomic lists and maps, sets), and the move from
// client-side apply with stock kubectl. Stored state is read back from etcd.
//
// The server runs with `--naming=kubernetes` so that stock kubectl's last-applied annotation
// (`kubectl.kubernetes.io/last-applied-configuration`) is the CLI annotation the server knows
// (rule 12) and kubectl's OpenAPI validation finds its extension names.
import { Etcd3 } from 'etcd3';
import {
  startKubectlEnv,
  type HttpResponse,
  type KubectlEnv,
  type KubectlResult,
  type TestApiServer,
  uniqueName,
  expectCode,
  expectFailure,
  type Json,
  MEDIA,
  createDefaultServiceAccount,
} from '@svc/testing';
import { coreKey, readStored, type StoredObject } from './stored-testing.js';
const MERGE = MEDIA.MERGE;
const JSON_PATCH = MEDIA.JSON_PATCH;
const APPLY = MEDIA.APPLY;

const STRATEGIC = 'application/strategic-merge-patch+json';
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

let env: KubectlEnv;
let t: TestApiServer;
let etcd: Etcd3;
let ns: string;

const path = (resource: string, name = ''): string => `/api/v1/namespaces/${ns}/${resource}${name ? `/${name}` : ''}`;
const cmPath = (name = ''): string => path('configmaps', name);

function stored(resource: string, name: string): Promise<StoredObject | undefined> {
  return readStored(etcd, coreKey(t.storePrefix, resource, { namespace: ns, name }));
}

interface ApplyOpts {
  force?: boolean;
  resource?: string;
  query?: string;
  manager?: string | null;
}

/**
 * PATCH with `application/apply-patch+yaml` (a YAML text or a JSON object body) as the
 * manager `by` names (null: no fieldManager), or as `by.manager` with the other options.
 */
function apply(name: string, body: Json | string, by: string | null | ApplyOpts): Promise<HttpResponse> {
  const o: ApplyOpts = typeof by === 'object' && by !== null ? by : { manager: by };
  const manager = o.manager ?? null;
  const q = new URLSearchParams();
  if (manager !== null) q.set('fieldManager', manager);
  if (o.force !== undefined) q.set('force', String(o.force));
  const qs = [q.toString(), o.query ?? ''].filter((x) => x !== '').join('&');
  return t.client.patch(
    `${path(o.resource ?? 'configmaps', name)}${qs ? `?${qs}` : ''}`,
    typeof body === 'string' ? body : JSON.stringify(body),
    APPLY,
  );
}

const cm = (name: string, data: Record<string, string>, extra: Json = {}): Json => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(extra.metadata as Json | undefined) },
  data,
  ...(extra.top as Json | undefined),
});

/** The managedFields entry of `manager` (and operation), or undefined. */
function entry(obj: Json, manager: string, operation?: 'Apply' | 'Update'): Json | undefined {
  const mf = (obj.metadata?.managedFields ?? []) as Json[];
  return mf.find((e) => e.manager === manager && (operation === undefined || e.operation === operation));
}

function managers(obj: Json): string[] {
  return ((obj.metadata?.managedFields ?? []) as Json[])
    .map((e) => `${e.manager as string}/${e.operation as string}`)
    .sort();
}

/** Asserts a 409 apply conflict with Kubernetes' message and one FieldManagerConflict cause per field. */
function expectConflict(
  res: HttpResponse,
  conflicts: Array<{ manager: string; field: string }>,
  message?: string,
): void {
  const s = expectFailure(res, { code: 409, reason: 'Conflict', message });
  expect(s.details?.causes).toEqual(
    conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${c.manager}`, field: c.field })),
  );
}

beforeAll(async () => {
  env = await startKubectlEnv({ args: ['--naming=kubernetes'] });
  t = env.server;
  etcd = new Etcd3({ hosts: t.etcd.endpoints });
  ns = uniqueName('apply');
  expectCode(
    await t.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
    201,
  );
  await createDefaultServiceAccount(t.client, ns);
});

afterAll(async () => {
  etcd?.close();
  await env?.stop();
});

describe('field ownership (one test per row of the spec table)', () => {
  it('owned by A, B applies a different value without force: 409 Conflict, value and ownership unchanged', async () => {
    const name = uniqueName('conflict');
    const created = expectCode(await apply(name, cm(name, { x: '1' }), 'a'), 201);
    const res = await apply(name, cm(name, { x: '2' }), 'b');
    expectConflict(
      res,
      [{ manager: '"a"', field: '.data.x' }],
      'Apply failed with 1 conflict: conflict with "a": .data.x',
    );
    const s = await stored('configmaps', name);
    expect(s?.modRevision).toBe(created.metadata.resourceVersion);
    expect(s?.value.data).toEqual({ x: '1' });
    expect(managers(s?.value ?? {})).toEqual(['a/Apply']);
    expect(entry(s?.value ?? {}, 'a')?.fieldsV1).toEqual({ 'f:data': { 'f:x': {} } });
  });

  it('a conflict on several fields lists one cause per field and names every manager', async () => {
    const name = uniqueName('conflicts');
    expectCode(await apply(name, cm(name, { x: '1', y: '1' }), 'a'), 201);
    const res = await apply(name, cm(name, { x: '2', y: '2' }), 'b');
    expectConflict(
      res,
      [
        { manager: '"a"', field: '.data.x' },
        { manager: '"a"', field: '.data.y' },
      ],
      'Apply failed with 2 conflicts: conflicts with "a":\n- .data.x\n- .data.y',
    );
  });

  it("owned by A, B applies with force=true: value overwritten, B sole owner, field gone from A's entry", async () => {
    const name = uniqueName('force');
    expectCode(await apply(name, cm(name, { x: '1', y: '1' }), 'a'), 201);
    const forced = expectCode(await apply(name, cm(name, { x: '2' }), { manager: 'b', force: true }), 200);
    expect(forced.data).toEqual({ x: '2', y: '1' });
    expect(managers(forced)).toEqual(['a/Apply', 'b/Apply']);
    expect(entry(forced, 'a')?.fieldsV1).toEqual({ 'f:data': { 'f:y': {} } });
    expect(entry(forced, 'b')?.fieldsV1).toEqual({ 'f:data': { 'f:x': {} } });
    const s = await stored('configmaps', name);
    expect(s?.value.data).toEqual({ x: '2', y: '1' });
    expect(s?.value.metadata.managedFields).toEqual(forced.metadata.managedFields);

    // B is now the only owner: A changing it conflicts with B, and A's entry vanishes when
    // B forces A's last field too.
    expectConflict(await apply(name, cm(name, { x: '3', y: '1' }), 'a'), [{ manager: '"b"', field: '.data.x' }]);
    const second = expectCode(await apply(name, cm(name, { x: '2', y: '9' }), { manager: 'b', force: true }), 200);
    expect(managers(second)).toEqual(['b/Apply']);
    expect(entry(second, 'b')?.fieldsV1).toEqual({ 'f:data': { 'f:x': {}, 'f:y': {} } });
  });

  it('owned by A, B applies the same value: shared by A and B; a later change by either sharer conflicts', async () => {
    const name = uniqueName('share');
    expectCode(await apply(name, cm(name, { x: '1' }), 'a'), 201);
    const shared = expectCode(await apply(name, cm(name, { x: '1' }), 'b'), 200);
    expect(managers(shared)).toEqual(['a/Apply', 'b/Apply']);
    expect(entry(shared, 'a')?.fieldsV1).toEqual({ 'f:data': { 'f:x': {} } });
    expect(entry(shared, 'b')?.fieldsV1).toEqual({ 'f:data': { 'f:x': {} } });
    const before = await stored('configmaps', name);

    expectConflict(
      await apply(name, cm(name, { x: '2' }), 'a'),
      [{ manager: '"b"', field: '.data.x' }],
      'Apply failed with 1 conflict: conflict with "b": .data.x',
    );
    expectConflict(
      await apply(name, cm(name, { x: '3' }), 'b'),
      [{ manager: '"a"', field: '.data.x' }],
      'Apply failed with 1 conflict: conflict with "a": .data.x',
    );
    const after = await stored('configmaps', name);
    expect(after?.modRevision).toBe(before?.modRevision);
    expect(after?.value.data).toEqual({ x: '1' });
  });

  it('shared: a sharer that applies without the field gives up its ownership (the value stays)', async () => {
    const name = uniqueName('giveup');
    expectCode(await apply(name, cm(name, { x: '1' }), 'a'), 201);
    expectCode(await apply(name, cm(name, { x: '1', y: 'b' }), 'b'), 200);
    const gaveUp = expectCode(await apply(name, cm(name, { y: 'b' }), 'b'), 200);
    expect(gaveUp.data).toEqual({ x: '1', y: 'b' });
    expect(entry(gaveUp, 'a')?.fieldsV1).toEqual({ 'f:data': { 'f:x': {} } });
    expect(entry(gaveUp, 'b')?.fieldsV1).toEqual({ 'f:data': { 'f:y': {} } });
    // A is the only owner again: it may change the value without conflict.
    const changed = expectCode(await apply(name, cm(name, { x: '2' }), 'a'), 200);
    expect(changed.data).toEqual({ x: '2', y: 'b' });

    // A manager that gives up its last field disappears from managedFields.
    const gone = expectCode(await apply(name, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }, 'b'), 200);
    expect(managers(gone)).toEqual(['a/Apply']);
    expect(gone.data).toEqual({ x: '2' });
    expect((await stored('configmaps', name))?.value.data).toEqual({ x: '2' });
  });

  it('owned by A only: A applying without the field removes it from the object', async () => {
    const name = uniqueName('remove');
    expectCode(await apply(name, cm(name, { x: '1', y: '1' }, { metadata: { labels: { team: 'a' } } }), 'a'), 201);
    const removed = expectCode(await apply(name, cm(name, { y: '1' }), 'a'), 200);
    expect(removed.data).toEqual({ y: '1' });
    expect(removed.metadata.labels ?? {}).toEqual({});
    expect(entry(removed, 'a')?.fieldsV1).toEqual({ 'f:data': { 'f:y': {} } });
    const s = await stored('configmaps', name);
    expect(s?.value.data).toEqual({ y: '1' });
    expect(s?.value.metadata.labels ?? {}).toEqual({});
  });

  it('owned by A only: A applying without a defaulted field resets it to its default', async () => {
    const name = uniqueName('reset');
    const service = (extra: Json): Json => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name },
      spec: { ports: [{ port: 80, protocol: 'TCP' }], ...extra },
    });
    const created = expectCode(
      await apply(name, service({ sessionAffinity: 'ClientIP' }), { manager: 'a', resource: 'services' }),
      201,
    );
    expect(created.spec.sessionAffinity).toBe('ClientIP');
    const reset = expectCode(await apply(name, service({}), { manager: 'a', resource: 'services' }), 200);
    expect(reset.spec.sessionAffinity).toBe('None');
    expect((await stored('services', name))?.value.spec.sessionAffinity).toBe('None');
    expect(entry(reset, 'a')?.fieldsV1?.['f:spec']?.['f:sessionAffinity']).toBeUndefined();
  });

  it('owned by A: an update (PUT) by B changing the value moves ownership to B without conflict', async () => {
    const name = uniqueName('put');
    const created = expectCode(await apply(name, cm(name, { x: '1', y: '1' }), 'a'), 201);
    const put = expectCode(
      await t.client.put(`${cmPath(name)}?fieldManager=b`, { ...created, data: { x: '2', y: '1' } }),
      200,
    );
    expect(put.data).toEqual({ x: '2', y: '1' });
    expect(entry(put, 'a', 'Apply')?.fieldsV1).toEqual({ 'f:data': { 'f:y': {} } });
    const b = entry(put, 'b', 'Update');
    expect(b).toMatchObject({
      manager: 'b',
      operation: 'Update',
      apiVersion: 'v1',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { 'f:x': {} } },
    });
    expect(b?.time).toMatch(RFC3339);
    expect((await stored('configmaps', name))?.value.metadata.managedFields).toEqual(put.metadata.managedFields);

    // A now conflicts with B, named as an Update manager (`using v1`).
    expectConflict(
      await apply(name, cm(name, { x: '3', y: '1' }), 'a'),
      [{ manager: '"b" using v1', field: '.data.x' }],
      'Apply failed with 1 conflict: conflict with "b" using v1: .data.x',
    );
  });

  it('owned by A: a non-apply patch by B moves ownership to B without conflict (manager from the User-Agent)', async () => {
    const name = uniqueName('patch');
    expectCode(await apply(name, cm(name, { x: '1', y: '1', z: '1' }), 'a'), 201);
    const merged = expectCode(
      await t.client.request('PATCH', cmPath(name), {
        headers: { 'user-agent': 'my-editor/1.4 (linux/amd64) svc/abc' },
        body: { data: { x: '2' } },
        contentType: MERGE,
      }),
      200,
    );
    expect(merged.data).toEqual({ x: '2', y: '1', z: '1' });
    expect(entry(merged, 'my-editor', 'Update')?.fieldsV1).toEqual({ 'f:data': { 'f:x': {} } });
    expect(entry(merged, 'a', 'Apply')?.fieldsV1).toEqual({ 'f:data': { 'f:y': {}, 'f:z': {} } });

    const smp = expectCode(
      await t.client.patch(`${cmPath(name)}?fieldManager=c`, { data: { y: '2' } }, STRATEGIC),
      200,
    );
    expect(entry(smp, 'c', 'Update')?.fieldsV1).toEqual({ 'f:data': { 'f:y': {} } });
    const jp = expectCode(
      await t.client.patch(
        `${cmPath(name)}?fieldManager=d`,
        [{ op: 'replace', path: '/data/z', value: '2' }],
        JSON_PATCH,
      ),
      200,
    );
    expect(entry(jp, 'd', 'Update')?.fieldsV1).toEqual({ 'f:data': { 'f:z': {} } });
    expect(entry(jp, 'a', 'Apply')).toBeUndefined();
    expect(managers(jp)).toEqual(['c/Update', 'd/Update', 'my-editor/Update']);
    expectConflict(await apply(name, cm(name, { x: '3' }), 'a'), [
      { manager: '"my-editor" using v1', field: '.data.x' },
    ]);
  });
});

describe('server-side apply rules', () => {
  it('apply creates the object when absent (201) and patches it otherwise (200), recording an Apply entry', async () => {
    const name = uniqueName('create');
    const created = expectCode(
      await apply(name, cm(name, { x: '1' }, { metadata: { labels: { app: 'web' } } }), 'a'),
      201,
    );
    expect(created).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns, labels: { app: 'web' } },
      data: { x: '1' },
    });
    expect(created.metadata.managedFields).toHaveLength(1);
    const e = entry(created, 'a') ?? {};
    expect(e).toMatchObject({ manager: 'a', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1' });
    expect(e.time).toMatch(RFC3339);
    expect(e.fieldsV1).toEqual({ 'f:data': { 'f:x': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } });
    const s1 = await stored('configmaps', name);
    expect(s1?.modRevision).toBe(created.metadata.resourceVersion);
    expect(s1?.value.metadata.uid).toBe(created.metadata.uid);

    // YAML body (any JSON is valid YAML too).
    const patched = expectCode(
      await apply(
        name,
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  labels:\n    app: web\ndata:\n  x: "1"\n  y: "2"\n`,
        'a',
      ),
      200,
    );
    expect(patched.data).toEqual({ x: '1', y: '2' });
    expect(patched.metadata.uid).toBe(created.metadata.uid);
    expect(patched.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
    expect(entry(patched, 'a')?.fieldsV1).toEqual({
      'f:data': { 'f:x': {}, 'f:y': {} },
      'f:metadata': { 'f:labels': { 'f:app': {} } },
    });
    expect((await stored('configmaps', name))?.value.data).toEqual({ x: '1', y: '2' });
  });

  it('apply without fieldManager is 422 (PatchOptions fieldManager required) and writes nothing', async () => {
    const name = uniqueName('nomanager');
    const s = expectFailure(await apply(name, cm(name, { x: '1' }), null), {
      code: 422,
      reason: 'Invalid',
      message: /fieldManager: Required value: is required for apply patch/,
    });
    expect(s.message).toMatch(/^PatchOptions\.meta\.k8s\.io "" is invalid: /);
    expect(s.details?.causes?.map((c) => c.field)).toEqual(['fieldManager']);
    expect(await stored('configmaps', name)).toBeUndefined();

    // Same for an existing object: unchanged.
    const created = expectCode(await apply(name, cm(name, { x: '1' }), 'a'), 201);
    expectFailure(await apply(name, cm(name, { x: '2' }), null), { code: 422, reason: 'Invalid' });
    expect((await stored('configmaps', name))?.modRevision).toBe(created.metadata.resourceVersion);
  });

  it('force on a non-apply patch is 422 (PatchOptions force forbidden) and leaves the object unchanged', async () => {
    const name = uniqueName('forcenonapply');
    const created = expectCode(await apply(name, cm(name, { x: '1' }), 'a'), 201);
    for (const [body, type] of [
      [{ data: { x: '2' } }, MERGE],
      [{ data: { x: '2' } }, STRATEGIC],
      [[{ op: 'replace', path: '/data/x', value: '2' }], JSON_PATCH],
    ] as const) {
      const res = await t.client.patch(`${cmPath(name)}?force=true`, body, type);
      const s = expectFailure(res, {
        code: 422,
        reason: 'Invalid',
        message: /force: Forbidden: may not be specified for non-apply patch/,
      });
      expect(s.details?.causes?.map((c) => c.field)).toEqual(['force']);
    }
    const s = await stored('configmaps', name);
    expect(s?.modRevision).toBe(created.metadata.resourceVersion);
    expect(s?.value.data).toEqual({ x: '1' });
  });

  it('managedFields in an apply body is 400 and leaves the object unchanged', async () => {
    const name = uniqueName('mfinbody');
    const created = expectCode(await apply(name, cm(name, { x: '1' }), 'a'), 201);
    const body = cm(
      name,
      { x: '2' },
      {
        metadata: {
          managedFields: [
            { manager: 'a', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': {} } },
          ],
        },
      },
    );
    expectFailure(await apply(name, body, 'a'), {
      code: 400,
      reason: 'BadRequest',
      message: 'metadata.managedFields must be nil',
    });
    expect((await stored('configmaps', name))?.modRevision).toBe(created.metadata.resourceVersion);
    // Also when it would create.
    const absent = uniqueName('mfinbody-new');
    expectFailure(await apply(absent, cm(absent, { x: '1' }, { metadata: { managedFields: [] } }), 'a'), {
      code: 400,
      reason: 'BadRequest',
      message: 'metadata.managedFields must be nil',
    });
    expect(await stored('configmaps', absent)).toBeUndefined();
  });

  it('an apply that would make an invalid object fails with 422 and the stored object is unchanged', async () => {
    const name = uniqueName('invalid');
    const created = expectCode(await apply(name, cm(name, { x: '1' }), 'a'), 201);
    const s = expectFailure(await apply(name, cm(name, { x: '1', 'bad key!': 'v' }), 'a'), {
      code: 422,
      reason: 'Invalid',
    });
    expect(s.details?.causes?.map((c) => c.field)).toEqual(['data[bad key!]']);
    const after = await stored('configmaps', name);
    expect(after?.modRevision).toBe(created.metadata.resourceVersion);
    expect(after?.value.data).toEqual({ x: '1' });
    expect(after?.value.metadata.managedFields).toEqual(created.metadata.managedFields);

    // An apply that would create an invalid pod (no image) creates nothing.
    const pod = uniqueName('invalid-pod');
    const res = await apply(
      pod,
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: pod }, spec: { containers: [{ name: 'app' }] } },
      { manager: 'a', resource: 'pods' },
    );
    const ps = expectFailure(res, { code: 422, reason: 'Invalid' });
    expect(ps.details?.causes?.map((c) => c.field)).toContain('spec.containers[0].image');
    expect(await stored('pods', pod)).toBeUndefined();
  });

  it('apply of a different kind or a different name than the URL is 400 and writes nothing', async () => {
    const name = uniqueName('mismatch');
    const created = expectCode(await apply(name, cm(name, { x: '1' }), 'a'), 201);
    expectFailure(
      await apply(name, { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { x: '2' } }, 'a'),
      { code: 400, reason: 'BadRequest', message: /kind/ },
    );
    expectFailure(await apply(name, cm('other-name', { x: '2' }), 'a'), {
      code: 400,
      reason: 'BadRequest',
      message: `the name of the object (other-name) does not match the name on the URL (${name})`,
    });
    expect((await stored('configmaps', name))?.modRevision).toBe(created.metadata.resourceVersion);
    expect(await stored('configmaps', 'other-name')).toBeUndefined();

    const absent = uniqueName('mismatch-new');
    expectFailure(await apply(absent, { apiVersion: 'v1', kind: 'Secret', metadata: { name: absent } }, 'a'), {
      code: 400,
      reason: 'BadRequest',
    });
    expectFailure(await apply(absent, cm(`${absent}-x`, { x: '1' }), 'a'), { code: 400, reason: 'BadRequest' });
    expect(await stored('configmaps', absent)).toBeUndefined();
    expect(await stored('configmaps', `${absent}-x`)).toBeUndefined();
  });

  it('clearing managedFields: a non-apply write of [{}] strips them, an empty list changes nothing', async () => {
    const name = uniqueName('clear');
    const created = expectCode(await apply(name, cm(name, { x: '1' }), 'a'), 201);
    const emptyList = expectCode(
      await t.client.patch(`${cmPath(name)}?fieldManager=p`, { metadata: { managedFields: [] } }, MERGE),
      200,
    );
    expect(emptyList.metadata.managedFields).toEqual(created.metadata.managedFields);
    expect((await stored('configmaps', name))?.value.metadata.managedFields).toEqual(created.metadata.managedFields);

    const cleared = expectCode(
      await t.client.patch(`${cmPath(name)}?fieldManager=p`, { metadata: { managedFields: [{}] } }, MERGE),
      200,
    );
    expect(cleared.metadata.managedFields).toBeUndefined();
    expect(cleared.data).toEqual({ x: '1' });
    expect((await stored('configmaps', name))?.value.metadata.managedFields).toBeUndefined();

    // Combined with other changes, the reset happens first: the writer owns what it changed.
    expectCode(await apply(name, cm(name, { x: '1' }), 'a'), 200);
    const combined = expectCode(
      await t.client.patch(
        `${cmPath(name)}?fieldManager=p`,
        { metadata: { managedFields: [{}] }, data: { y: '2' } },
        MERGE,
      ),
      200,
    );
    expect(combined.data).toEqual({ x: '1', y: '2' });
    expect(managers(combined)).toEqual(['p/Update']);
    expect(entry(combined, 'p')?.fieldsV1).toEqual({ 'f:data': { 'f:y': {} } });
  });

  it('a set (metadata.finalizers) merges items of different managers without conflict', async () => {
    const name = uniqueName('set');
    const withFinalizers = (f?: string[]): Json => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: f ? { name, finalizers: f } : { name },
    });
    expectCode(await apply(name, withFinalizers(['example.com/a']), 'a'), 201);
    const both = expectCode(await apply(name, withFinalizers(['example.com/b']), 'b'), 200);
    expect([...both.metadata.finalizers].sort()).toEqual(['example.com/a', 'example.com/b']);
    expect(entry(both, 'a')?.fieldsV1).toEqual({ 'f:metadata': { 'f:finalizers': { 'v:"example.com/a"': {} } } });
    expect(entry(both, 'b')?.fieldsV1).toEqual({ 'f:metadata': { 'f:finalizers': { 'v:"example.com/b"': {} } } });
    // A stops applying its item: only B's stays, and A's entry is gone.
    const dropped = expectCode(await apply(name, withFinalizers(), 'a'), 200);
    expect(dropped.metadata.finalizers).toEqual(['example.com/b']);
    expect(managers(dropped)).toEqual(['b/Apply']);
    const released = expectCode(await apply(name, withFinalizers(), 'b'), 200);
    expect(released.metadata.finalizers ?? []).toEqual([]);
    expect((await stored('configmaps', name))?.value.metadata.finalizers ?? []).toEqual([]);
  });
});

describe('merge markers observed through pods', () => {
  const podBody = (name: string, spec: Json): Json => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec });
  const applyPod = (
    name: string,
    spec: Json,
    by: string | { manager: string; force: boolean },
  ): Promise<HttpResponse> =>
    apply(name, podBody(name, spec), { ...(typeof by === 'string' ? { manager: by } : by), resource: 'pods' });

  it('containers are a map list keyed by name, ports a map list keyed by containerPort and protocol', async () => {
    const name = uniqueName('pod-keys');
    const spec = {
      containers: [
        {
          name: 'web',
          image: 'example/web:1',
          ports: [
            { containerPort: 53, protocol: 'TCP' },
            { containerPort: 53, protocol: 'UDP' },
          ],
        },
        { name: 'side', image: 'example/side:1' },
      ],
    };
    const created = expectCode(await applyPod(name, spec, 'a'), 201);
    const fields = entry(created, 'a')?.fieldsV1 ?? {};
    expect(Object.keys(fields['f:spec']['f:containers']).sort()).toEqual(['k:{"name":"side"}', 'k:{"name":"web"}']);
    expect(fields['f:spec']['f:containers']['k:{"name":"web"}']).toEqual({
      '.': {},
      'f:name': {},
      'f:image': {},
      'f:ports': {
        'k:{"containerPort":53,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} },
        'k:{"containerPort":53,"protocol":"UDP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} },
      },
    });

    // B applies only the `side` container with a new image: the conflict is on that item alone.
    const sideOnly = { containers: [{ name: 'side', image: 'example/side:2' }] };
    expectConflict(
      await applyPod(name, sideOnly, 'b'),
      [{ manager: '"a"', field: '.spec.containers[name="side"].image' }],
      'Apply failed with 1 conflict: conflict with "a": .spec.containers[name="side"].image',
    );
    const forced = expectCode(await applyPod(name, sideOnly, { manager: 'b', force: true }), 200);
    // B's apply without `web` does not remove it: items merge by key.
    expect((forced.spec.containers as Json[]).map((c) => `${c.name as string}=${c.image as string}`)).toEqual([
      'web=example/web:1',
      'side=example/side:2',
    ]);
    expect(entry(forced, 'b')?.fieldsV1).toEqual({
      'f:spec': { 'f:containers': { 'k:{"name":"side"}': { '.': {}, 'f:name': {}, 'f:image': {} } } },
    });
    const aFields = entry(forced, 'a')?.fieldsV1 ?? {};
    expect(aFields['f:spec']['f:containers']['k:{"name":"side"}']).toEqual({ '.': {}, 'f:name': {} });
    expect((await stored('pods', name))?.value.spec.containers[1].image).toBe('example/side:2');
  });

  it('nodeSelector is an atomic map: owned whole, so another manager adding a different key conflicts', async () => {
    const name = uniqueName('pod-nodeselector');
    const base = { containers: [{ name: 'app', image: 'example/app:1' }] };
    const created = expectCode(await applyPod(name, { ...base, nodeSelector: { disk: 'ssd' } }, 'a'), 201);
    expect(entry(created, 'a')?.fieldsV1['f:spec']['f:nodeSelector']).toEqual({});
    const res = await applyPod(name, { ...base, nodeSelector: { zone: 'z1' } }, 'b');
    expectConflict(
      res,
      [{ manager: '"a"', field: '.spec.nodeSelector' }],
      'Apply failed with 1 conflict: conflict with "a": .spec.nodeSelector',
    );
    expect((await stored('pods', name))?.value.spec.nodeSelector).toEqual({ disk: 'ssd' });
  });

  it('imagePullSecrets items are atomic structs: owned whole, by their key', async () => {
    const name = uniqueName('pod-pullsecrets');
    const created = expectCode(
      await applyPod(
        name,
        { containers: [{ name: 'app', image: 'example/app:1' }], imagePullSecrets: [{ name: 'regcred' }] },
        'a',
      ),
      201,
    );
    expect(entry(created, 'a')?.fieldsV1['f:spec']['f:imagePullSecrets']).toEqual({ 'k:{"name":"regcred"}': {} });
  });

  it('ownerReferences items are atomic structs in a map list keyed by uid: a different value anywhere in the item conflicts on the whole item', async () => {
    const name = uniqueName('owners');
    const uid = '0b7c1a52-5d8e-4a8e-9d0e-000000000001';
    const ref = (owner: string): Json => ({ apiVersion: 'v1', kind: 'ConfigMap', name: owner, uid });
    const withOwner = (owner: string): Json => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, ownerReferences: [ref(owner)] },
    });
    const created = expectCode(await apply(name, withOwner('first'), 'a'), 201);
    expect(entry(created, 'a')?.fieldsV1).toEqual({
      'f:metadata': { 'f:ownerReferences': { [`k:{"uid":"${uid}"}`]: {} } },
    });
    expectConflict(await apply(name, withOwner('second'), 'b'), [
      { manager: '"a"', field: `.metadata.ownerReferences[uid="${uid}"]` },
    ]);
  });

  it('tolerations are an atomic list: replaced whole by the forcing manager, who becomes its only owner', async () => {
    const name = uniqueName('pod-tolerations');
    const base = { containers: [{ name: 'app', image: 'example/app:1' }] };
    const created = expectCode(
      await applyPod(name, { ...base, tolerations: [{ key: 'k1', operator: 'Exists' }] }, 'a'),
      201,
    );
    expect(entry(created, 'a')?.fieldsV1['f:spec']['f:tolerations']).toEqual({});
    const other = {
      containers: [{ name: 'app', image: 'example/app:1' }],
      tolerations: [{ key: 'k2', operator: 'Exists' }],
    };
    expectConflict(await applyPod(name, other, 'b'), [{ manager: '"a"', field: '.spec.tolerations' }]);
    const forced = expectCode(await applyPod(name, other, { manager: 'b', force: true }), 200);
    // DefaultTolerationSeconds admission adds its not-ready/unreachable tolerations after every write.
    const defaults = ['not-ready', 'unreachable'].map((k) => ({
      key: `node.kubernetes.io/${k}`,
      operator: 'Exists',
      effect: 'NoExecute',
      tolerationSeconds: 300,
    }));
    expect(forced.spec.tolerations).toEqual([{ key: 'k2', operator: 'Exists' }, ...defaults]);
    expect(entry(forced, 'b')?.fieldsV1['f:spec']['f:tolerations']).toEqual({});
    expect(entry(forced, 'a')?.fieldsV1['f:spec']['f:tolerations']).toBeUndefined();
    expect((await stored('pods', name))?.value.spec.tolerations).toEqual([
      { key: 'k2', operator: 'Exists' },
      ...defaults,
    ]);
  });
});

describe('migration from client-side apply (stock kubectl)', () => {
  const k = (args: string[]): Promise<KubectlResult> => env.ok(args);

  it('apply -f twice, then apply --server-side changing a value: no conflict, kubectl owns the fields', async () => {
    const name = uniqueName('migrate');
    // Keys that YAML 1.1 (kubectl's parser) reads as plain strings (`y` would be a boolean).
    const v = (alpha: string, beta: string): Json => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns },
      data: { alpha, beta },
    });
    expect((await k(['apply', '-f', await env.manifest(v('1', '1'))])).stdout.trim()).toBe(`configmap/${name} created`);
    expect((await k(['apply', '-f', await env.manifest(v('2', '1'))])).stdout.trim()).toBe(
      `configmap/${name} configured`,
    );
    const csa = (await stored('configmaps', name))?.value ?? {};
    expect(csa.metadata.annotations?.[LAST_APPLIED]).toBeDefined();
    expect(managers(csa)).toEqual(['kubectl-client-side-apply/Update']);

    // The migration is for kubectl's default manager only: another manager name conflicts
    // with the client-side apply manager and changes nothing.
    const before = await stored('configmaps', name);
    const other = await env.run(
      ['apply', '--server-side', '--field-manager=not-kubectl', '-f', await env.manifest(v('3', '1'))],
      { timeoutMs: 60_000 },
    );
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain('conflict with "kubectl-client-side-apply" using v1');
    expect(other.stderr).toContain('.data.alpha');
    expect((await stored('configmaps', name))?.modRevision).toBe(before?.modRevision);

    const r = await k(['apply', '--server-side', '-f', await env.manifest(v('3', '1'))]);
    expect(r.stdout.trim()).toBe(`configmap/${name} serverside-applied`);
    const ssa = (await stored('configmaps', name))?.value ?? {};
    expect(ssa.data).toEqual({ alpha: '3', beta: '1' });
    expect(entry(ssa, 'kubectl', 'Apply')?.fieldsV1?.['f:data']).toEqual({ 'f:alpha': {}, 'f:beta': {} });
    // The last-applied annotation now holds the server-side applied configuration.
    expect(JSON.parse(ssa.metadata.annotations?.[LAST_APPLIED] as string)).toMatchObject({
      data: { alpha: '3', beta: '1' },
    });

    // Another manager applying a different value still conflicts with kubectl.
    expectConflict(await apply(name, cm(name, { alpha: '4' }), 'someone-else'), [
      { manager: '"kubectl"', field: '.data.alpha' },
    ]);
  });
});
