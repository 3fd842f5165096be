// pods/<name>/binding and the bindings collection against a real API server and etcd.
import {
  expectCode,
  expectFailure,
  startTestApiServer,
  uniqueName,
  type HttpsClient,
  type Json,
  type TestApiServer,
  createDefaultServiceAccount,
} from '@svc/testing';

const BINDER = 'binder-token-0123456789';
const NOBODY = 'nobody-token-0123456789';
const RBAC = '/apis/rbac.authorization.svc.io/v1';

describe('pods/binding', () => {
  let server: TestApiServer;
  let api: HttpsClient;
  const ns = 'default';
  const pods = `/api/v1/namespaces/${ns}/pods`;

  beforeAll(async () => {
    server = await startTestApiServer({
      args: ['--authorization-mode=RBAC'],
      tokens: [`${BINDER},binder,uid-b,""`, `${NOBODY},nobody,uid-n,""`],
    });
    api = server.client;
    await createDefaultServiceAccount(api, ns);
    expectCode(
      await api.request('POST', `${RBAC}/clusterroles`, {
        body: {
          metadata: { name: 'binder' },
          rules: [{ apiGroups: [''], resources: ['pods/binding', 'bindings'], verbs: ['create'] }],
        },
      }),
      201,
    );
    expectCode(
      await api.request('POST', `${RBAC}/clusterrolebindings`, {
        body: {
          metadata: { name: 'binder' },
          roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: 'binder' },
          subjects: [{ apiGroup: 'rbac.authorization.svc.io', kind: 'User', name: 'binder' }],
        },
      }),
      201,
    );
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function createPod(extra: Json = {}): Promise<Json> {
    const name = uniqueName('pod');
    return expectCode(
      await api.request('POST', pods, {
        body: { metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...extra } },
      }),
      201,
    );
  }
  const bind = (name: string, node: string, o: { token?: string; body?: Json } = {}) =>
    api.request('POST', `${pods}/${name}/binding`, {
      token: o.token,
      body: o.body ?? { apiVersion: 'v1', kind: 'Binding', metadata: { name }, target: { kind: 'Node', name: node } },
    });

  it('201 sets spec.nodeName and PodScheduled=True, keeping the rest of the pod', async () => {
    const pod = await createPod();
    const name = pod.metadata.name as string;
    const r = expectCode(await bind(name, 'node-a'), 201);
    expect(r).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Success', code: 201 });
    const got = expectCode(await api.request('GET', `${pods}/${name}`), 200);
    expect(got.spec.nodeName).toBe('node-a');
    expect(got.spec.containers).toEqual(pod.spec.containers);
    expect(got.metadata.generation).toBe(pod.metadata.generation);
    expect(got.status.conditions).toEqual([
      { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: expect.any(String) },
    ]);
  });

  it("409 when the pod is already bound (Kubernetes' message), the first binding stays", async () => {
    const name = (await createPod()).metadata.name as string;
    expectCode(await bind(name, 'node-a'), 201);
    const s = expectFailure(await bind(name, 'node-b'), {
      code: 409,
      reason: 'Conflict',
      message: `Operation cannot be fulfilled on pods/binding "${name}": pod ${name} is already assigned to node "node-a"`,
    });
    expect(s.details).toMatchObject({ name, kind: 'pods/binding' });
    expect(expectCode(await api.request('GET', `${pods}/${name}`), 200).spec.nodeName).toBe('node-a');
  });

  it('409 for a pod created with spec.nodeName, and for a uid precondition that does not hold', async () => {
    const bound = (await createPod({ nodeName: 'node-x' })).metadata.name as string;
    expectFailure(await bind(bound, 'node-a'), {
      code: 409,
      reason: 'Conflict',
      message: /already assigned to node "node-x"/,
    });
    const name = (await createPod()).metadata.name as string;
    expectFailure(
      await bind(name, 'n', {
        body: { kind: 'Binding', metadata: { name, uid: 'not-the-uid' }, target: { name: 'n' } },
      }),
      { code: 409, reason: 'Conflict', message: /Precondition failed: UID in precondition: not-the-uid/ },
    );
  });

  it('404 for a missing pod', async () => {
    expectFailure(await bind('no-such-pod', 'node-a'), {
      code: 404,
      reason: 'NotFound',
      message: 'pods "no-such-pod" not found',
    });
  });

  it('403 without RBAC rights on pods/binding; allowed with them', async () => {
    const name = (await createPod()).metadata.name as string;
    expectFailure(await bind(name, 'node-a', { token: NOBODY }), {
      code: 403,
      reason: 'Forbidden',
      message: /User "nobody" cannot create resource "pods\/binding" in API group "" in the namespace "default"/,
    });
    expectCode(await bind(name, 'node-a', { token: BINDER }), 201);
  });

  it('400/422 for bad bodies', async () => {
    const name = (await createPod()).metadata.name as string;
    expectFailure(
      await api.request('POST', `${pods}/${name}/binding`, { body: '{not json', contentType: 'application/json' }),
      { code: 400, reason: 'BadRequest' },
    );
    expectFailure(
      await bind(name, 'x', { body: { kind: 'Binding', metadata: { name: 'other' }, target: { name: 'x' } } }),
      { code: 400, reason: 'BadRequest', message: 'name in URL does not match name in Binding object' },
    );
    expectFailure(await bind(name, 'x', { body: { kind: 'Pod', metadata: { name }, target: { name: 'x' } } }), {
      code: 400,
      reason: 'BadRequest',
      message: /does not match the expected kind \(Binding\)/,
    });
    const noTarget = expectFailure(
      await bind(name, 'x', { body: { kind: 'Binding', metadata: { name }, target: { kind: 'Service' } } }),
      { code: 422, reason: 'Invalid' },
    );
    expect(noTarget.message).toBe(
      `Binding "${name}" is invalid: [target.kind: Unsupported value: "Service": supported values: "Node", "<empty>", target.name: Required value]`,
    );
    expectFailure(await bind(name, 'x', { body: { kind: 'Binding', metadata: { name } } }), {
      code: 422,
      reason: 'Invalid',
      message: /target: Required value/,
    });
    expectFailure(await bind(name, 'x', { body: { kind: 'Binding', metadata: { name }, target: { name: 7 } } }), {
      code: 422,
      reason: 'Invalid',
    });
    expectFailure(await api.request('GET', `${pods}/${name}/binding`), { code: 405, reason: 'MethodNotAllowed' });
    expect(expectCode(await api.request('GET', `${pods}/${name}`), 200).spec.nodeName).toBeUndefined();
  });

  it('dry run binds nothing', async () => {
    const name = (await createPod()).metadata.name as string;
    expectCode(
      await api.request('POST', `${pods}/${name}/binding?dryRun=All`, {
        body: { kind: 'Binding', metadata: { name }, target: { name: 'n' } },
      }),
      201,
    );
    expect(expectCode(await api.request('GET', `${pods}/${name}`), 200).spec.nodeName).toBeUndefined();
  });

  it('POST /bindings binds the pod named in metadata.name', async () => {
    const name = (await createPod()).metadata.name as string;
    const col = `/api/v1/namespaces/${ns}/bindings`;
    expectCode(
      await api.request('POST', col, {
        token: BINDER,
        body: { apiVersion: 'v1', kind: 'Binding', metadata: { name }, target: { kind: 'Node', name: 'node-c' } },
      }),
      201,
    );
    expect(expectCode(await api.request('GET', `${pods}/${name}`), 200).spec.nodeName).toBe('node-c');
    expectFailure(
      await api.request('POST', col, { body: { kind: 'Binding', metadata: { name }, target: { name: 'node-d' } } }),
      { code: 409, reason: 'Conflict' },
    );
    expectFailure(
      await api.request('POST', col, { body: { kind: 'Binding', metadata: {}, target: { name: 'node-d' } } }),
      { code: 422, reason: 'Invalid', message: /metadata.name: Required value/ },
    );
    expectFailure(
      await api.request('POST', col, {
        token: NOBODY,
        body: { kind: 'Binding', metadata: { name }, target: { name: 'n' } },
      }),
      { code: 403, reason: 'Forbidden' },
    );
    expectFailure(await api.request('GET', col), { code: 405, reason: 'MethodNotAllowed' });
  });

  it('discovery lists bindings and pods/binding (create)', async () => {
    const d = expectCode(await api.request('GET', '/api/v1'), 200);
    const byName = (n: string): Json | undefined => (d.resources as Json[]).find((r) => r.name === n);
    expect(byName('bindings')).toMatchObject({ kind: 'Binding', namespaced: true, verbs: ['create'] });
    expect(byName('pods/binding')).toMatchObject({ kind: 'Binding', verbs: ['create'] });
  });
});
