// CustomResourceDefinitions over HTTPS against a real etcd: a CRD becomes Established and its
// custom resources are served with every verb (both scopes), status and scale subresources,
// printer columns, selectable fields, schema validation, no Protobuf, deprecation warnings,
// name conflicts, discovery and OpenAPI, and deletion that cleans up its objects first.
import { group } from '@svc/api';
import {
  crdManifest,
  expectCode,
  expectFailure,
  startTestApiServer,
  uniqueName,
  waitFor,
  type CrdVersionInput,
  type Json,
  type TestApiServer,
  createNamespace,
} from '@svc/testing';

let t: TestApiServer;
let ns: string;
const CRD_PATH = (): string => `/apis/${group('apiextensions')}/v1/customresourcedefinitions`;

/** A namespaced CRD `widgets.<g>` with status and scale, printer columns and a selectable field. */
function widgetCrd(
  g: string,
  o: { versions?: CrdVersionInput[]; scope?: 'Namespaced' | 'Cluster'; plural?: string; kind?: string } = {},
): Json {
  return crdManifest({
    group: g,
    plural: o.plural ?? 'widgets',
    kind: o.kind ?? 'Widget',
    scope: o.scope,
    names: { shortNames: ['wd'], categories: ['all'] },
    versions: o.versions ?? [widgetVersion('v1', { storage: true })],
  });
}

function widgetVersion(
  name: string,
  o: { storage?: boolean; served?: boolean; deprecated?: boolean } = {},
): CrdVersionInput {
  return {
    name,
    served: o.served ?? true,
    storage: o.storage ?? false,
    ...(o.deprecated ? { deprecated: true } : {}),
    schema: {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          required: ['color'],
          properties: {
            color: { type: 'string', enum: ['red', 'green', 'blue'] },
            replicas: { type: 'integer', minimum: 0, default: 1 },
            size: { type: 'string', pattern: '^[0-9]+(cm|m)$' },
            selector: { type: 'string' },
          },
        },
        status: {
          type: 'object',
          properties: { replicas: { type: 'integer' }, phase: { type: 'string' } },
        },
      },
    },
    subresources: {
      status: {},
      scale: {
        specReplicasPath: '.spec.replicas',
        statusReplicasPath: '.status.replicas',
        labelSelectorPath: '.spec.selector',
      },
    },
    additionalPrinterColumns: [
      { name: 'Color', type: 'string', jsonPath: '.spec.color' },
      { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase', priority: 1 },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
    selectableFields: [{ jsonPath: '.spec.color' }],
  };
}

const widget = (g: string, name: string, o: { spec?: Json; version?: string } = {}): Json => ({
  apiVersion: `${g}/${o.version ?? 'v1'}`,
  kind: 'Widget',
  metadata: { name },
  spec: o.spec ?? { color: 'red' },
});

async function createEstablished(crd: Json): Promise<Json> {
  expectCode(await t.client.post(CRD_PATH(), crd), 201);
  return waitFor(
    'the CRD to be Established',
    async () => {
      const got = expectCode(await t.client.get(`${CRD_PATH()}/${crd.metadata.name}`), 200);
      const established = (got.status?.conditions ?? []).find((c: Json) => c.type === 'Established');
      return established?.status === 'True' ? got : undefined;
    },
    { timeoutMs: 5000 },
  );
}

/** A fresh group per test, so CRDs never collide. */
const freshGroup = (): string => `${uniqueName('g')}.example.com`;

beforeAll(async () => {
  t = await startTestApiServer();
  ns = await createNamespace(t.client, 'crd');
});

afterAll(async () => {
  await t?.stop();
});

describe('a CustomResourceDefinition', () => {
  it("is Established with its accepted names, conditions and stored version, and served (the time to serve is pnpm bench crd's figure)", async () => {
    const g = freshGroup();
    const started = Date.now();
    const crd = await createEstablished(widgetCrd(g));
    expect(crd.status.acceptedNames).toEqual({
      plural: 'widgets',
      singular: 'widget',
      shortNames: ['wd'],
      kind: 'Widget',
      listKind: 'WidgetList',
      categories: ['all'],
    });
    const types = Object.fromEntries(crd.status.conditions.map((c: Json) => [c.type, c]));
    expect(types.NamesAccepted).toMatchObject({ status: 'True', reason: 'NoConflicts', message: 'no conflicts found' });
    expect(types.Established).toMatchObject({ status: 'True', reason: 'InitialNamesAccepted' });
    expect(crd.status.storedVersions).toEqual(['v1']);
    expect(crd.spec.names.listKind).toBe('WidgetList');
    expect(crd.spec.conversion).toEqual({ strategy: 'None' });
    expectCode(await t.client.post(`/apis/${g}/v1/namespaces/${ns}/widgets`, widget(g, 'first')), 201);
    console.log(`CRD create to first custom resource served: ${Date.now() - started} ms`);
  });

  it('is refused with one cause per field when invalid (422)', async () => {
    const g = freshGroup();
    const bad = widgetCrd(g);
    bad.metadata.name = 'wrong.name';
    delete bad.spec.scope;
    bad.spec.versions = [];
    const s = expectFailure(await t.client.post(CRD_PATH(), bad), { code: 422, reason: 'Invalid' });
    const fields = (s.details?.causes ?? []).map((c) => c.field);
    expect(fields).toEqual(expect.arrayContaining(['metadata.name', 'spec.scope', 'spec.versions']));
  });

  it('refuses preserveUnknownFields: true on create', async () => {
    const crd = widgetCrd(freshGroup());
    crd.spec.preserveUnknownFields = true;
    const s = expectFailure(await t.client.post(CRD_PATH(), crd), { code: 422, reason: 'Invalid' });
    expect((s.details?.causes ?? []).map((c) => c.field)).toContain('spec.preserveUnknownFields');
  });

  it('does not accept names another CRD of the group holds (NamesAccepted False)', async () => {
    const g = freshGroup();
    await createEstablished(widgetCrd(g));
    const other = widgetCrd(g, { plural: 'gadgets', kind: 'Gadget' });
    other.spec.names.shortNames = ['wd'];
    expectCode(await t.client.post(CRD_PATH(), other), 201);
    const got = await waitFor('NamesAccepted=False', async () => {
      const c = expectCode(await t.client.get(`${CRD_PATH()}/gadgets.${g}`), 200);
      const cond = (c.status?.conditions ?? []).find((x: Json) => x.type === 'NamesAccepted');
      return cond?.status === 'False' ? c : undefined;
    });
    const cond = got.status.conditions.find((x: Json) => x.type === 'NamesAccepted');
    expect(cond).toMatchObject({ reason: 'ShortNamesConflict', message: '"wd" is already in use' });
    expect(got.status.conditions.find((x: Json) => x.type === 'Established')).toMatchObject({ status: 'False' });
    expectFailure(await t.client.get(`/apis/${g}/v1/namespaces/${ns}/gadgets`), { code: 404, reason: 'NotFound' });
  });
});

describe('custom resources', () => {
  let g: string;
  const base = (name = '', sub = ''): string =>
    `/apis/${g}/v1/namespaces/${ns}/widgets${name ? `/${name}` : ''}${sub ? `/${sub}` : ''}`;

  beforeAll(async () => {
    g = freshGroup();
    await createEstablished(widgetCrd(g));
  });

  it('serve create, get, list, update, patch and delete, with defaults and generation', async () => {
    const created = expectCode(await t.client.post(base(), widget(g, 'a', { spec: { color: 'red' } })), 201);
    expect(created).toMatchObject({ apiVersion: `${g}/v1`, kind: 'Widget', spec: { color: 'red', replicas: 1 } });
    expect(created.metadata.generation).toBe(1);
    expect(expectCode(await t.client.get(base('a')), 200).spec).toEqual({ color: 'red', replicas: 1 });
    const list = expectCode(await t.client.get(base()), 200);
    expect(list.kind).toBe('WidgetList');
    expect(list.items.map((i: Json) => i.metadata.name)).toContain('a');
    const updated = expectCode(
      await t.client.put(base('a'), { ...created, spec: { color: 'green', replicas: 3 } }),
      200,
    );
    expect(updated.metadata.generation).toBe(2);
    const merged = expectCode(
      await t.client.patch(base('a'), { spec: { color: 'blue' } }, 'application/merge-patch+json'),
      200,
    );
    expect(merged.spec).toEqual({ color: 'blue', replicas: 3 });
    const jsonPatched = expectCode(
      await t.client.patch(
        base('a'),
        [{ op: 'replace', path: '/spec/replicas', value: 4 }],
        'application/json-patch+json',
      ),
      200,
    );
    expect(jsonPatched.spec.replicas).toBe(4);
    expectFailure(
      await t.client.patch(base('a'), { spec: { color: 'red' } }, 'application/strategic-merge-patch+json'),
      { code: 415, reason: 'UnsupportedMediaType' },
    );
    expectCode(await t.client.delete(base('a')), 200);
    expectFailure(await t.client.get(base('a')), { code: 404, reason: 'NotFound' });
  });

  it('refuses an update without resourceVersion, as Kubernetes does for custom resources', async () => {
    expectCode(await t.client.post(base(), widget(g, 'norv')), 201);
    const s = expectFailure(await t.client.put(base('norv'), widget(g, 'norv', { spec: { color: 'green' } })), {
      code: 422,
      reason: 'Invalid',
    });
    expect(s.details?.causes?.[0]?.field).toBe('metadata.resourceVersion');
  });

  it('validate against the schema: one 422 listing every cause', async () => {
    const s = expectFailure(
      await t.client.post(base(), widget(g, 'bad', { spec: { color: 'pink', replicas: -1, size: 'big' } })),
      { code: 422, reason: 'Invalid' },
    );
    expect((s.details?.causes ?? []).map((c) => c.field).sort()).toEqual(['spec.color', 'spec.replicas', 'spec.size']);
    expect(s.message).toContain('Unsupported value: "pink"');
    const missing = expectFailure(await t.client.post(base(), widget(g, 'bad2', { spec: {} })), {
      code: 422,
      reason: 'Invalid',
    });
    expect(missing.details?.causes).toEqual([
      expect.objectContaining({ field: 'spec.color', reason: 'FieldValueRequired' }),
    ]);
  });

  it('prune unknown fields, or refuse them with fieldValidation=Strict', async () => {
    const created = expectCode(
      await t.client.post(base(), { ...widget(g, 'pruned'), extra: 1, spec: { color: 'red', nope: true } }),
      201,
    );
    expect(created.extra).toBeUndefined();
    expect(created.spec.nope).toBeUndefined();
    const s = expectFailure(
      await t.client.post(`${base()}?fieldValidation=Strict`, {
        ...widget(g, 'strict'),
        spec: { color: 'red', nope: 1 },
      }),
      { code: 400, reason: 'BadRequest' },
    );
    expect(s.message).toContain('unknown field "spec.nope"');
  });

  it('keep status on main writes and everything else on status writes', async () => {
    const created = expectCode(await t.client.post(base(), { ...widget(g, 'st'), status: { phase: 'Ignored' } }), 201);
    expect(created.status).toBeUndefined();
    const withStatus = expectCode(
      await t.client.put(base('st', 'status'), {
        ...created,
        spec: { color: 'green' },
        status: { phase: 'Ready', replicas: 1 },
      }),
      200,
    );
    expect(withStatus.spec.color).toBe('red');
    expect(withStatus.status).toEqual({ phase: 'Ready', replicas: 1 });
    expect(withStatus.metadata.generation).toBe(1);
    const main = expectCode(
      await t.client.put(base('st'), { ...withStatus, spec: { color: 'blue' }, status: { phase: 'Lost' } }),
      200,
    );
    expect(main.status.phase).toBe('Ready');
    expect(main.metadata.generation).toBe(2);
  });

  it('serve the scale subresource from the schema paths', async () => {
    expectCode(
      await t.client.post(base(), widget(g, 'sc', { spec: { color: 'red', replicas: 2, selector: 'app=sc' } })),
      201,
    );
    const scale = expectCode(await t.client.get(base('sc', 'scale')), 200);
    expect(scale).toMatchObject({ kind: 'Scale', spec: { replicas: 2 }, status: { selector: 'app=sc' } });
    expectCode(await t.client.put(base('sc', 'scale'), { ...scale, spec: { replicas: 5 } }), 200);
    expect(expectCode(await t.client.get(base('sc')), 200).spec.replicas).toBe(5);
  });

  it('print their columns in the Table form (priority 1 only in wide output)', async () => {
    expectCode(await t.client.post(base(), widget(g, 'tbl', { spec: { color: 'green', replicas: 7 } })), 201);
    const table = expectCode(
      await t.client.get(base(), { headers: { accept: `application/json;as=Table;v=v1;g=${group('meta')}` } }),
      200,
    );
    expect(table.columnDefinitions.map((c: Json) => [c.name, c.type, c.priority ?? 0])).toEqual([
      ['Name', 'string', 0],
      ['Color', 'string', 0],
      ['Replicas', 'integer', 0],
      ['Phase', 'string', 1],
      ['Age', 'date', 0],
    ]);
    const row = table.rows.find((r: Json) => r.cells[0] === 'tbl');
    expect(row.cells.slice(0, 4)).toEqual(['tbl', 'green', 7, null]);
  });

  it('select by their selectable fields', async () => {
    expectCode(await t.client.post(base(), widget(g, 'sel-blue', { spec: { color: 'blue' } })), 201);
    const list = expectCode(await t.client.get(`${base()}?fieldSelector=spec.color%3Dblue`), 200);
    expect(list.items.length).toBeGreaterThan(0);
    expect(list.items.every((i: Json) => i.spec.color === 'blue')).toBe(true);
    expectFailure(await t.client.get(`${base()}?fieldSelector=spec.size%3D1m`), { code: 400, reason: 'BadRequest' });
  });

  it('have no Protobuf form: 406 for Protobuf alone, the JSON fallback otherwise, 415 for a Protobuf body', async () => {
    expectCode(await t.client.post(base(), widget(g, 'pb')), 201);
    const pb = 'application/vnd.kubernetes.protobuf';
    expectFailure(await t.client.get(base('pb'), { headers: { accept: pb } }), { code: 406, reason: 'NotAcceptable' });
    const fallback = await t.client.get(base('pb'), { headers: { accept: `${pb},application/json` } });
    expect(fallback.status).toBe(200);
    expect(fallback.headers['content-type']).toContain('application/json');
    expectFailure(
      await t.client.post(base(), Buffer.from([0x6b, 0x38, 0x73, 0x00]), { headers: { 'content-type': pb } }),
      { code: 415, reason: 'UnsupportedMediaType' },
    );
  });

  it('watch from the watch cache', async () => {
    const list = expectCode(await t.client.get(base()), 200);
    const w = await t.client.watch(`${base()}?watch=true&resourceVersion=${list.metadata.resourceVersion}`);
    try {
      expectCode(await t.client.post(base(), widget(g, 'watched')), 201);
      const e = await w.next();
      expect(e?.type).toBe('ADDED');
      expect(e?.object.metadata?.name).toBe('watched');
    } finally {
      w.close();
    }
  });

  it('appear in discovery, with short names and categories', async () => {
    const rl = expectCode(await t.client.get(`/apis/${g}/v1`), 200);
    const widgets = rl.resources.find((r: Json) => r.name === 'widgets');
    expect(widgets).toMatchObject({ kind: 'Widget', namespaced: true, shortNames: ['wd'], categories: ['all'] });
    expect(rl.resources.map((r: Json) => r.name)).toEqual(expect.arrayContaining(['widgets/status', 'widgets/scale']));
    const groups = expectCode(await t.client.get('/apis'), 200);
    expect(groups.groups.map((x: Json) => x.name)).toContain(g);
  });
});

describe('versions', () => {
  it('serve every served version from one storage version, with a warning for a deprecated one', async () => {
    const g = freshGroup();
    await createEstablished(
      widgetCrd(g, {
        versions: [widgetVersion('v1beta1', { deprecated: true }), widgetVersion('v1', { storage: true })],
      }),
    );
    const res = await t.client.post(
      `/apis/${g}/v1beta1/namespaces/${ns}/widgets`,
      widget(g, 'old', { spec: { color: 'red' }, version: 'v1beta1' }),
    );
    expect(res.status).toBe(201);
    expect(res.headers.warning).toBe(`299 - "${g}/v1beta1 Widget is deprecated; use ${g}/v1 Widget"`);
    expect(res.json<Json>().apiVersion).toBe(`${g}/v1beta1`);
    const asV1 = expectCode(await t.client.get(`/apis/${g}/v1/namespaces/${ns}/widgets/old`), 200);
    expect(asV1.apiVersion).toBe(`${g}/v1`);
    const metrics = (await t.client.get('/metrics')).text;
    expect(metrics).toContain(
      `apiserver_requested_deprecated_apis{group="${g}",version="v1beta1",resource="widgets",subresource="",removed_release=""} 1`,
    );
    const groupDoc = expectCode(await t.client.get(`/apis/${g}`), 200);
    expect(groupDoc.preferredVersion.version).toBe('v1');
  });
});

describe('deleting a CRD', () => {
  it('deletes its custom resources first, then goes, and its types are no longer served', async () => {
    const g = freshGroup();
    await createEstablished(widgetCrd(g));
    const base = `/apis/${g}/v1/namespaces/${ns}/widgets`;
    for (const n of ['x', 'y', 'z']) expectCode(await t.client.post(base, widget(g, n)), 201);
    expectCode(await t.client.delete(`${CRD_PATH()}/widgets.${g}`), 200);
    await waitFor('the CRD to go', async () => (await t.client.get(`${CRD_PATH()}/widgets.${g}`)).status === 404);
    expectFailure(await t.client.get(base), { code: 404, reason: 'NotFound' });
    // Created again, it starts empty: the instances were deleted, not hidden.
    await createEstablished(widgetCrd(g));
    expect(expectCode(await t.client.get(base), 200).items).toEqual([]);
  });
});

describe('a restart', () => {
  it('serves every existing CRD before readyz turns 200', async () => {
    const g = freshGroup();
    await createEstablished(widgetCrd(g));
    expectCode(await t.client.post(`/apis/${g}/v1/namespaces/${ns}/widgets`, widget(g, 'kept')), 201);
    const again = await startTestApiServer({ etcd: t.etcd, args: ['--store-prefix', t.storePrefix] });
    try {
      // startTestApiServer returns once the post-start hooks are done, crd-informer-synced among them.
      const readyz = await again.client.get('/readyz?verbose');
      expect(readyz.status).toBe(200);
      for (const hook of ['start-apiextensions-informers', 'start-apiextensions-controllers', 'crd-informer-synced']) {
        expect(readyz.text).toContain(`[+]poststarthook/${hook} ok`);
      }
      const got = expectCode(await again.client.get(`/apis/${g}/v1/namespaces/${ns}/widgets/kept`), 200);
      expect(got.spec).toEqual({ color: 'red', replicas: 1 });
    } finally {
      await again.stop();
    }
  });
});
