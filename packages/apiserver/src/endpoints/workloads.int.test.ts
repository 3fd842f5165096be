// apps/v1 Deployments and ReplicaSets over HTTPS against a real etcd: v1 defaults, each
// validation rule as a 422 with its field path, the immutable selector, generation, the
// status subresource, the `scale` subresource (autoscaling/v1 Scale: get, put, merge / JSON /
// strategic patches), discovery and Table columns.
import { scaleKind } from '@svc/api';
import { decodeProtobufObject, encodeProtobufObject } from '@svc/machinery';
import {
  startTestApiServer,
  type TestApiServer,
  uniqueName,
  expectCode,
  expectFailure,
  type Json,
  MEDIA,
  createNamespace,
} from '@svc/testing';

let t: TestApiServer;
let ns: string;

const path = (plural: string, name = '', sub = ''): string =>
  `/apis/apps/v1/namespaces/${ns}/${plural}${name ? `/${name}` : ''}${sub ? `/${sub}` : ''}`;

function deployment(name: string, spec: Json = {}): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
      ...spec,
    },
  };
}

const replicaSet = (name: string, spec: Json = {}): Json => ({ ...deployment(name, spec), kind: 'ReplicaSet' });

async function create(plural: string, obj: Json): Promise<Json> {
  return expectCode(await t.client.post(path(plural), obj), 201);
}

/** The causes of a 422 Invalid answer as `field reason`. */
async function invalidFields(res: Promise<{ status: number; text: string; json: <T>() => T }>): Promise<string[]> {
  const s = expectFailure(await res, { code: 422, reason: 'Invalid' });
  return (s.details?.causes ?? []).map((c) => `${c.field ?? ''} ${c.reason ?? ''}`);
}

beforeAll(async () => {
  t = await startTestApiServer();
  ns = await createNamespace(t.client, 'apps');
});

afterAll(async () => {
  await t?.stop();
});

describe('create', () => {
  it('a Deployment gets the apps/v1 defaults, generation 1 and an empty status', async () => {
    const name = uniqueName('d');
    const d = await create('deployments', { ...deployment(name), status: { replicas: 5 } });
    expect(d.metadata.generation).toBe(1);
    expect(d.spec).toMatchObject({
      replicas: 1,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: {
        spec: {
          restartPolicy: 'Always',
          dnsPolicy: 'ClusterFirst',
          containers: [{ name: 'c', imagePullPolicy: 'Always', terminationMessagePolicy: 'File' }],
        },
      },
    });
    expect(d.status).toEqual({});
    expect(expectCode(await t.client.get(path('deployments', name)), 200).spec).toEqual(d.spec);
  });

  it('a ReplicaSet gets replicas 1 and the template defaults', async () => {
    const rs = await create('replicasets', replicaSet(uniqueName('rs')));
    expect(rs.spec).toMatchObject({
      replicas: 1,
      template: { spec: { restartPolicy: 'Always', schedulerName: 'default-scheduler' } },
    });
  });

  const bad: Array<[string, string, Json, string[]]> = [
    ['negative replicas', 'deployments', { replicas: -1 }, ['spec.replicas FieldValueInvalid']],
    [
      'missing selector',
      'deployments',
      { selector: undefined },
      ['spec.selector FieldValueRequired', 'spec.template.metadata.labels FieldValueInvalid'],
    ],
    ['empty selector', 'deployments', { selector: {} }, ['spec.selector FieldValueInvalid']],
    [
      'selector not matching template labels',
      'deployments',
      { selector: { matchLabels: { app: 'other' } } },
      ['spec.template.metadata.labels FieldValueInvalid'],
    ],
    [
      'maxSurge and maxUnavailable both 0',
      'deployments',
      { strategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } } },
      ['spec.strategy.rollingUpdate.maxUnavailable FieldValueInvalid'],
    ],
    [
      'unknown strategy type',
      'deployments',
      { strategy: { type: 'BlueGreen' } },
      ['spec.strategy FieldValueNotSupported'],
    ],
    [
      'maxUnavailable not a percent',
      'deployments',
      { strategy: { rollingUpdate: { maxUnavailable: '5' } } },
      ['spec.strategy.rollingUpdate.maxUnavailable FieldValueInvalid'],
    ],
    [
      'restartPolicy OnFailure',
      'deployments',
      {
        template: {
          metadata: { labels: {} },
          spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'i' }] },
        },
        selector: undefined,
      },
      [
        'spec.selector FieldValueRequired',
        'spec.template.metadata.labels FieldValueInvalid',
        'spec.template.spec.restartPolicy FieldValueNotSupported',
      ],
    ],
    ['replicas not an integer (schema)', 'deployments', { replicas: 'two' }, ['spec.replicas FieldValueTypeInvalid']],
    ['ReplicaSet negative replicas', 'replicasets', { replicas: -2 }, ['spec.replicas FieldValueInvalid']],
    [
      'ReplicaSet missing selector',
      'replicasets',
      { selector: undefined },
      ['spec.selector FieldValueRequired', 'spec.template.metadata.labels FieldValueInvalid'],
    ],
    [
      'ReplicaSet empty matchLabels',
      'replicasets',
      { selector: { matchLabels: {} } },
      ['spec.selector FieldValueInvalid'],
    ],
  ];
  // eslint-disable-next-line max-params -- it.each passes each table row's cells as the test's arguments
  it.each(bad)('%s: 422 Invalid at the field', async (_n, plural, spec, fields) => {
    const name = uniqueName('bad');
    const obj = plural === 'deployments' ? deployment(name, spec) : replicaSet(name, spec);
    expect(await invalidFields(t.client.post(path(plural), obj))).toEqual(fields);
    expectFailure(await t.client.get(path(plural, name)), { code: 404, reason: 'NotFound' });
  });

  it("the 422 names the kind and group, and Kubernetes' message", async () => {
    const s = expectFailure(await t.client.post(path('deployments'), deployment('x', { replicas: -1 })), {
      code: 422,
      reason: 'Invalid',
    });
    expect(s.details).toMatchObject({ name: 'x', group: 'apps', kind: 'Deployment' });
    expect(s.message).toBe(
      'Deployment.apps "x" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    );
  });
});

describe('update', () => {
  it('spec.selector is immutable (PUT and merge patch): 422 at spec.selector', async () => {
    const name = uniqueName('imm');
    const d = await create('deployments', deployment(name));
    const changed = structuredClone(d);
    changed.spec.selector = { matchLabels: { app: name, tier: 'web' } };
    changed.spec.template.metadata.labels = { app: name, tier: 'web' };
    expect(await invalidFields(t.client.put(path('deployments', name), changed))).toEqual([
      'spec.selector FieldValueInvalid',
    ]);
    expect(
      await invalidFields(
        t.client.patch(
          path('deployments', name),
          { spec: { selector: { matchLabels: { app: 'x' } }, template: { metadata: { labels: { app: 'x' } } } } },
          MEDIA.MERGE,
        ),
      ),
    ).toEqual(['spec.selector FieldValueInvalid']);
    const rs = await create('replicasets', replicaSet(name));
    rs.spec.selector = { matchExpressions: [{ key: 'app', operator: 'Exists' }] };
    expect(await invalidFields(t.client.put(path('replicasets', name), rs))).toEqual([
      'spec.selector FieldValueInvalid',
    ]);
  });

  it('a spec change bumps metadata.generation; a label change does not; status on the main resource is ignored', async () => {
    const name = uniqueName('gen');
    await create('deployments', deployment(name));
    const scaled = expectCode(
      await t.client.patch(path('deployments', name), { spec: { replicas: 3 }, status: { replicas: 3 } }, MEDIA.MERGE),
      200,
    );
    expect(scaled.metadata.generation).toBe(2);
    expect(scaled.status).toEqual({});
    const labelled = expectCode(
      await t.client.patch(path('deployments', name), { metadata: { labels: { a: 'b' } } }, MEDIA.MERGE),
      200,
    );
    expect(labelled.metadata.generation).toBe(2);
  });

  it("a strategy change to Recreate with the defaulted rollingUpdate still set is refused (retainKeys is the client's job)", async () => {
    const name = uniqueName('recreate');
    await create('deployments', deployment(name));
    expect(
      await invalidFields(
        t.client.patch(path('deployments', name), { spec: { strategy: { type: 'Recreate' } } }, MEDIA.MERGE),
      ),
    ).toEqual(['spec.strategy.rollingUpdate FieldValueForbidden']);
    const ok = expectCode(
      await t.client.patch(
        path('deployments', name),
        { spec: { strategy: { type: 'Recreate', rollingUpdate: null } } },
        MEDIA.MERGE,
      ),
      200,
    );
    expect(ok.spec.strategy).toEqual({ type: 'Recreate' });
  });
});

describe('status subresource', () => {
  it('changes only status, keeps the generation; spec in the body is ignored', async () => {
    const name = uniqueName('st');
    const d = await create('deployments', deployment(name));
    const body = {
      ...d,
      spec: { ...d.spec, replicas: 7 },
      status: { observedGeneration: 1, replicas: 1, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 1 },
    };
    const put = expectCode(await t.client.put(path('deployments', name, 'status'), body), 200);
    expect(put.status).toEqual(body.status);
    expect(put.spec.replicas).toBe(1);
    expect(put.metadata.generation).toBe(1);
    const rs = await create('replicasets', replicaSet(name));
    const patched = expectCode(
      await t.client.patch(
        path('replicasets', name, 'status'),
        { spec: { replicas: 9 }, status: { replicas: 1, readyReplicas: 1 } },
        MEDIA.MERGE,
      ),
      200,
    );
    expect(patched).toMatchObject({
      spec: { replicas: 1 },
      status: { replicas: 1, readyReplicas: 1 },
      metadata: { generation: rs.metadata.generation },
    });
    expect(expectCode(await t.client.get(path('replicasets', name, 'status')), 200).status).toEqual({
      replicas: 1,
      readyReplicas: 1,
    });
  });

  it('bad counts: 422 at the status field', async () => {
    const name = uniqueName('stbad');
    await create('deployments', deployment(name));
    expect(
      await invalidFields(
        t.client.patch(
          path('deployments', name, 'status'),
          { status: { replicas: 1, readyReplicas: 2, availableReplicas: -1 } },
          MEDIA.MERGE,
        ),
      ),
    ).toEqual(['status.availableReplicas FieldValueInvalid', 'status.readyReplicas FieldValueInvalid']);
  });
});

describe('scale subresource', () => {
  it('GET answers an autoscaling/v1 Scale', async () => {
    const name = uniqueName('sc');
    const d = await create('deployments', deployment(name, { replicas: 2 }));
    expect(expectCode(await t.client.get(path('deployments', name, 'scale')), 200)).toEqual({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: {
        name,
        namespace: ns,
        uid: d.metadata.uid,
        resourceVersion: d.metadata.resourceVersion,
        creationTimestamp: d.metadata.creationTimestamp,
      },
      spec: { replicas: 2 },
      status: { replicas: 0, selector: `app=${name}` },
    });
  });

  it('GET and PUT in Protobuf use the Scale message', async () => {
    const name = uniqueName('scpb');
    await create('deployments', deployment(name, { replicas: 2 }));
    const pb = 'application/vnd.kubernetes.protobuf';
    const got = await t.client.get(path('deployments', name, 'scale'), { headers: { accept: pb } });
    expect(got.headers['content-type']).toBe(pb);
    const scale = decodeProtobufObject(got.body, scaleKind().schema);
    expect(scale).toMatchObject({
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name },
      spec: { replicas: 2 },
    });
    const body = encodeProtobufObject({ ...scale, spec: { replicas: 6 } }, scaleKind().schema, {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
    });
    const put = await t.client.put(path('deployments', name, 'scale'), body, { contentType: pb });
    expect(expectCode(put, 200).spec).toEqual({ replicas: 6 });
  });

  it('PUT sets spec.replicas (generation bumped, a managedFields entry for the scale subresource)', async () => {
    const name = uniqueName('scput');
    await create('deployments', deployment(name));
    const scale = expectCode(await t.client.get(path('deployments', name, 'scale')), 200);
    const put = expectCode(
      await t.client.put(path('deployments', name, 'scale'), { ...scale, spec: { replicas: 4 } }),
      200,
    );
    expect(put).toMatchObject({ kind: 'Scale', spec: { replicas: 4 } });
    const d = expectCode(await t.client.get(path('deployments', name)), 200);
    expect(d.spec.replicas).toBe(4);
    expect(d.metadata.generation).toBe(2);
    expect(put.metadata.resourceVersion).toBe(d.metadata.resourceVersion);
    expect((d.metadata.managedFields as Json[]).some((e) => e.subresource === 'scale')).toBe(true);
  });

  it("a PUT without Content-Type is read as JSON (client-go's scale client sends none); a PATCH without one is 415", async () => {
    const name = uniqueName('scnoct');
    await create('deployments', deployment(name));
    const body = Buffer.from(
      JSON.stringify({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name }, spec: { replicas: 2 } }),
    );
    const noType = { headers: { 'content-type': '' } };
    expect(expectCode(await t.client.put(path('deployments', name, 'scale'), body, noType), 200).spec).toEqual({
      replicas: 2,
    });
    expectFailure(await t.client.request('PATCH', path('deployments', name, 'scale'), { body, ...noType }), {
      code: 415,
      reason: 'UnsupportedMediaType',
    });
  });

  it('merge, JSON and strategic merge patches; ReplicaSets too', async () => {
    const name = uniqueName('scpatch');
    await create('replicasets', replicaSet(name));
    const p = path('replicasets', name, 'scale');
    expect(expectCode(await t.client.patch(p, { spec: { replicas: 5 } }, MEDIA.MERGE), 200).spec).toEqual({
      replicas: 5,
    });
    expect(
      expectCode(await t.client.patch(p, [{ op: 'replace', path: '/spec/replicas', value: 6 }], MEDIA.JSON_PATCH), 200)
        .spec,
    ).toEqual({ replicas: 6 });
    expect(expectCode(await t.client.patch(p, { spec: { replicas: 0 } }, MEDIA.SMP), 200).spec).toEqual({});
    expect(expectCode(await t.client.get(path('replicasets', name)), 200).spec.replicas).toBe(0);
  });

  it('bad input: negative replicas 422 (Scale), stale resourceVersion 409, wrong kind 400, apply 415, other name 400', async () => {
    const name = uniqueName('scbad');
    await create('deployments', deployment(name));
    const p = path('deployments', name, 'scale');
    const s = expectFailure(await t.client.patch(p, { spec: { replicas: -1 } }, MEDIA.MERGE), {
      code: 422,
      reason: 'Invalid',
    });
    expect(s.details).toMatchObject({
      group: 'autoscaling',
      kind: 'Scale',
      causes: [{ field: 'spec.replicas', reason: 'FieldValueInvalid' }],
    });
    expectFailure(
      await t.client.put(p, {
        apiVersion: 'autoscaling/v1',
        kind: 'Scale',
        metadata: { name, resourceVersion: '1' },
        spec: { replicas: 2 },
      }),
      { code: 409, reason: 'Conflict' },
    );
    expectFailure(await t.client.put(p, { ...deployment(name) }), { code: 400, reason: 'BadRequest' });
    expectFailure(await t.client.patch(`${p}?fieldManager=x`, { spec: { replicas: 2 } }, MEDIA.APPLY), {
      code: 415,
      reason: 'UnsupportedMediaType',
    });
    expectFailure(
      await t.client.put(p, {
        apiVersion: 'autoscaling/v1',
        kind: 'Scale',
        metadata: { name: 'other' },
        spec: { replicas: 2 },
      }),
      { code: 400, reason: 'BadRequest' },
    );
    expect(expectCode(await t.client.get(path('deployments', name)), 200).spec.replicas).toBe(1);
  });

  it('a missing object: 404 for get, put and patch', async () => {
    const p = path('deployments', 'missing', 'scale');
    const s = expectFailure(await t.client.get(p), {
      code: 404,
      reason: 'NotFound',
      message: 'deployments.apps "missing" not found',
    });
    expect(s.details).toMatchObject({ name: 'missing', group: 'apps', kind: 'deployments' });
    expectFailure(
      await t.client.put(p, {
        apiVersion: 'autoscaling/v1',
        kind: 'Scale',
        metadata: { name: 'missing' },
        spec: { replicas: 1 },
      }),
      { code: 404, reason: 'NotFound' },
    );
    expectFailure(await t.client.patch(p, { spec: { replicas: 1 } }, MEDIA.MERGE), { code: 404, reason: 'NotFound' });
  });

  it('other verbs and types: 405 for POST/DELETE, 404 for pods/scale', async () => {
    const name = uniqueName('scverbs');
    await create('deployments', deployment(name));
    expect((await t.client.delete(path('deployments', name, 'scale'))).status).toBe(405);
    expectFailure(await t.client.get(`/api/v1/namespaces/${ns}/pods/x/scale`), { code: 404, reason: 'NotFound' });
  });

  it('dry run changes nothing', async () => {
    const name = uniqueName('scdry');
    await create('deployments', deployment(name));
    const res = expectCode(
      await t.client.patch(`${path('deployments', name, 'scale')}?dryRun=All`, { spec: { replicas: 8 } }, MEDIA.MERGE),
      200,
    );
    expect(res.spec).toEqual({ replicas: 8 });
    expect(expectCode(await t.client.get(path('deployments', name)), 200).spec.replicas).toBe(1);
  });
});

describe('discovery and tables', () => {
  it('apps/v1 lists deployments and replicasets with short names, category all, status and scale (kind Scale, autoscaling/v1)', async () => {
    const list = expectCode(await t.client.get('/apis/apps/v1'), 200);
    const byName = Object.fromEntries((list.resources as Json[]).map((r) => [r.name, r]));
    expect(byName.deployments).toMatchObject({
      kind: 'Deployment',
      namespaced: true,
      shortNames: ['deploy'],
      categories: ['all'],
      singularName: 'deployment',
    });
    expect(byName.replicasets).toMatchObject({ kind: 'ReplicaSet', shortNames: ['rs'], categories: ['all'] });
    expect(byName['deployments/status']).toEqual({
      name: 'deployments/status',
      singularName: '',
      namespaced: true,
      kind: 'Deployment',
      verbs: ['get', 'patch', 'update'],
    });
    expect(byName['deployments/scale']).toEqual({
      name: 'deployments/scale',
      singularName: '',
      namespaced: true,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    });
    expect(byName['replicasets/scale']).toMatchObject({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
    expect(expectCode(await t.client.get('/apis'), 200).groups).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'apps', preferredVersion: { groupVersion: 'apps/v1', version: 'v1' } }),
      ]),
    );
  });

  it('aggregated discovery carries the Scale response kind', async () => {
    const doc = expectCode(
      await t.client.get('/apis', {
        headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' },
      }),
      200,
    );
    const apps = (doc.items as Json[]).find((g) => g.metadata.name === 'apps');
    const deployments = (apps?.versions[0].resources as Json[]).find((r) => r.resource === 'deployments');
    expect(deployments?.subresources).toEqual([
      {
        subresource: 'status',
        responseKind: { group: 'apps', version: 'v1', kind: 'Deployment' },
        verbs: ['get', 'patch', 'update'],
      },
      {
        subresource: 'scale',
        responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
        verbs: ['get', 'patch', 'update'],
      },
    ]);
  });

  it("Table columns are kubectl's", async () => {
    const name = uniqueName('tbl');
    await create('deployments', deployment(name, { replicas: 2 }));
    await create('replicasets', replicaSet(name, { replicas: 3 }));
    const accept = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
    const dt = expectCode(await t.client.get(path('deployments', name), { headers: accept }), 200);
    expect((dt.columnDefinitions as Json[]).map((c) => `${c.name as string}:${c.priority as number}`)).toEqual([
      'Name:0',
      'Ready:0',
      'Up-to-date:0',
      'Available:0',
      'Age:0',
      'Containers:1',
      'Images:1',
      'Selector:1',
    ]);
    expect(dt.rows[0].cells.slice(0, 4)).toEqual([name, '0/2', 0, 0]);
    expect(dt.rows[0].cells.slice(5)).toEqual(['c', 'busybox', `app=${name}`]);
    const rt = expectCode(await t.client.get(path('replicasets', name), { headers: accept }), 200);
    expect((rt.columnDefinitions as Json[]).map((c) => c.name)).toEqual([
      'Name',
      'Desired',
      'Current',
      'Ready',
      'Age',
      'Containers',
      'Images',
      'Selector',
    ]);
    expect(rt.rows[0].cells.slice(0, 4)).toEqual([name, 3, 0, 0]);
  });
});
