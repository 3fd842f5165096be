// RBAC against real etcd: default roles × verbs × resources, namespace vs cluster bindings,
// resourceNames, non-resource URLs, escalation prevention, immutable roleRef, aggregation,
// access reviews and impersonation.
import { crdManifest, startTestApiServer, waitFor, type HttpsClient, type TestApiServer } from '@svc/testing';
import { group } from '@svc/api';

const RBAC = '/apis/rbac.authorization.svc.io/v1';
const AUTHZ = '/apis/authorization.svc.io/v1';
const USERS = ['alice', 'viewer', 'editor', 'admin-user', 'carol', 'dave', 'esc', 'imp'] as const;
type User = (typeof USERS)[number];

let t: TestApiServer;
const as: Record<string, HttpsClient> = {};
let anon: HttpsClient;
let admin: HttpsClient;

async function post(c: HttpsClient, path: string, body: object): Promise<number> {
  return (await c.post(path, body)).status;
}

function ref(kind: 'Role' | 'ClusterRole', name: string): object {
  return { apiGroup: 'rbac.authorization.svc.io', kind, name };
}
const userSubject = (name: string): object => ({ kind: 'User', apiGroup: 'rbac.authorization.svc.io', name });

async function ok(p: Promise<{ status: number; text: string }>): Promise<void> {
  const r = await p;
  if (r.status >= 300) throw new Error(`${r.status}: ${r.text}`);
}

/** Whether `user` may do it, by a SubjectAccessReview as admin (the cache decides, as requests do). */
async function sar(user: string, attrs: object, groups: string[] = ['system:authenticated']): Promise<boolean> {
  const r = await admin.post(`${AUTHZ}/subjectaccessreviews`, {
    apiVersion: 'authorization.svc.io/v1',
    kind: 'SubjectAccessReview',
    spec: { user, groups, resourceAttributes: attrs },
  });
  expect(r.status).toBe(201);
  return r.json<{ status: { allowed: boolean } }>().status.allowed;
}

async function bindInNs(ns: string, binding: { name: string; roleRef: object; subjects: object[] }): Promise<void> {
  await ok(
    admin.post(`${RBAC}/namespaces/${ns}/rolebindings`, {
      apiVersion: 'rbac.authorization.svc.io/v1',
      kind: 'RoleBinding',
      metadata: { name: binding.name },
      roleRef: binding.roleRef,
      subjects: binding.subjects,
    }),
  );
}

beforeAll(async () => {
  t = await startTestApiServer({
    args: ['--authorization-mode=RBAC'],
    tokens: USERS.map((u) => `${u}-token,${u},${u}-uid${u === 'alice' ? ',"team"' : ''}`),
  });
  admin = t.client;
  anon = t.client.withToken(undefined);
  for (const u of USERS) as[u] = t.client.withToken(`${u}-token`);
  for (const ns of ['m', 'e', 'other'])
    await ok(admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
  await bindInNs('m', { name: 'viewer', roleRef: ref('ClusterRole', 'view'), subjects: [userSubject('viewer')] });
  await bindInNs('m', { name: 'editor', roleRef: ref('ClusterRole', 'edit'), subjects: [userSubject('editor')] });
  await bindInNs('m', {
    name: 'admin-user',
    roleRef: ref('ClusterRole', 'admin'),
    subjects: [userSubject('admin-user')],
  });
  await waitFor(
    'bindings in the RBAC cache',
    async () =>
      await sar('admin-user', {
        namespace: 'm',
        verb: 'create',
        group: 'rbac.authorization.svc.io',
        resource: 'roles',
      }),
  );
}, 60_000);

afterAll(async () => {
  await t?.stop();
});

describe('defaults for anonymous and authenticated users', () => {
  it('anonymous users read health and version only', async () => {
    for (const p of ['/healthz', '/livez', '/readyz', '/version']) expect((await anon.get(p)).status).toBe(200);
    for (const p of ['/api', '/apis', '/metrics', '/api/v1/namespaces']) expect((await anon.get(p)).status).toBe(403);
  });

  it('authenticated users get discovery and self reviews, nothing else', async () => {
    for (const p of ['/api', '/apis', '/api/v1', '/version', '/healthz'])
      expect((await as.alice!.get(p)).status).toBe(200);
    const r = await as.alice!.get('/api/v1/namespaces/default/pods');
    expect(r.status).toBe(403);
    expect(r.json()).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      code: 403,
      message: 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"',
    });
    expect((await as.alice!.get('/metrics')).json().message).toBe('User "alice" cannot get path "/metrics"');
    expect((await as.alice!.get('/api/v1/nodes')).json().message).toBe(
      'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope',
    );
    const ssr = await as.alice!.post('/apis/authentication.svc.io/v1/selfsubjectreviews', {
      apiVersion: 'authentication.svc.io/v1',
      kind: 'SelfSubjectReview',
    });
    expect(ssr.status).toBe(201);
  });

  it('the defaults are labelled and annotated, and listed as a post-start hook', async () => {
    const r = (await admin.get(`${RBAC}/clusterroles/system:basic-user`)).json<{
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
    }>();
    expect(r.metadata.labels['svc.io/bootstrapping']).toBe('rbac-defaults');
    expect(r.metadata.annotations['rbac.authorization.svc.io/autoupdate']).toBe('true');
    expect((await admin.get(`${RBAC}/clusterroles/system:svc-controller-manager`)).status).toBe(200);
    expect((await admin.get(`${RBAC}/clusterroles/system:controller:namespace-controller`)).status).toBe(200);
    expect(
      (await admin.get(`${RBAC}/clusterrolebindings/system:public-info-viewer`))
        .json<{ subjects: Array<{ name: string }> }>()
        .subjects.map((s) => s.name),
    ).toEqual(['system:authenticated', 'system:unauthenticated']);
    expect((await admin.get('/readyz?verbose')).text).toContain('[+]poststarthook/rbac/bootstrap-roles ok');
  });
});

describe('admin, edit and view bound in one namespace', () => {
  // [user, method, path, allowed]; allowed requests may still fail for other reasons (404 for types not served).
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'c-' } };
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { generateName: 's-' } };
  const role = {
    apiVersion: 'rbac.authorization.svc.io/v1',
    kind: 'Role',
    metadata: { generateName: 'r-' },
    rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
  };
  const rb = {
    apiVersion: 'rbac.authorization.svc.io/v1',
    kind: 'RoleBinding',
    metadata: { generateName: 'rb-' },
    roleRef: ref('ClusterRole', 'view'),
    subjects: [userSubject('x')],
  };
  const quota = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' } };
  const endpoints = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'ep' } };
  type Row = [User, string, 'GET' | 'POST' | 'PUT' | 'DELETE', string, boolean, object?];
  const nsBody = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'm' } };
  const rows: Row[] = [];
  const table: Array<
    [string, 'GET' | 'POST' | 'PUT' | 'DELETE', string, object | undefined, boolean, boolean, boolean]
  > = [
    // what, method, path, body, view, edit, admin
    ['list pods', 'GET', '/api/v1/namespaces/m/pods', undefined, true, true, true],
    [
      'watch configmaps',
      'GET',
      '/api/v1/namespaces/m/configmaps?watch=1&timeoutSeconds=1',
      undefined,
      true,
      true,
      true,
    ],
    ['create configmaps', 'POST', '/api/v1/namespaces/m/configmaps', cm, false, true, true],
    ['list secrets', 'GET', '/api/v1/namespaces/m/secrets', undefined, false, true, true],
    ['get a secret', 'GET', '/api/v1/namespaces/m/secrets/nope', undefined, false, true, true],
    ['create secrets', 'POST', '/api/v1/namespaces/m/secrets', secret, false, true, true],
    ['list roles', 'GET', `${RBAC}/namespaces/m/roles`, undefined, false, false, true],
    ['create roles', 'POST', `${RBAC}/namespaces/m/roles`, role, false, false, true],
    ['list rolebindings', 'GET', `${RBAC}/namespaces/m/rolebindings`, undefined, false, false, true],
    ['create rolebindings', 'POST', `${RBAC}/namespaces/m/rolebindings`, rb, false, false, true],
    ['list resourcequotas', 'GET', '/api/v1/namespaces/m/resourcequotas', undefined, true, true, true],
    ['create resourcequotas', 'POST', '/api/v1/namespaces/m/resourcequotas', quota, false, false, false],
    ['delete resourcequotas', 'DELETE', '/api/v1/namespaces/m/resourcequotas/q', undefined, false, false, false],
    ['list endpoints', 'GET', '/api/v1/namespaces/m/endpoints', undefined, true, true, true],
    ['create endpoints', 'POST', '/api/v1/namespaces/m/endpoints', endpoints, false, false, false],
    [
      'create endpointslices',
      'POST',
      '/apis/discovery.svc.io/v1/namespaces/m/endpointslices',
      endpoints,
      false,
      false,
      false,
    ],
    ['get the namespace', 'GET', '/api/v1/namespaces/m', undefined, true, true, true],
    ['update the namespace', 'PUT', '/api/v1/namespaces/m', nsBody, false, false, false],
    ['delete the namespace', 'DELETE', '/api/v1/namespaces/m', undefined, false, false, false],
    ['list pods in another namespace', 'GET', '/api/v1/namespaces/other/pods', undefined, false, false, false],
    ['list pods in all namespaces', 'GET', '/api/v1/pods', undefined, false, false, false],
    ['list nodes', 'GET', '/api/v1/nodes', undefined, false, false, false],
    ['list clusterroles', 'GET', `${RBAC}/clusterroles`, undefined, false, false, false],
  ];
  for (const [what, method, path, body, v, e, a] of table) {
    rows.push(
      ['viewer', what, method, path, v, body],
      ['editor', what, method, path, e, body],
      ['admin-user', what, method, path, a, body],
    );
  }
  const cases = rows.map(([user, what, method, path, allowed, body]) => ({
    user,
    what,
    expected: allowed ? 'allowed' : 'forbidden',
    method,
    path,
    body,
  }));
  it.each(cases)('$user: $what → $expected', async ({ user, expected, method, path, body }) => {
    const r = await as[user]!.request(method, path, body ? { body } : {});
    if (expected === 'allowed') expect(r.status).not.toBe(403);
    else {
      expect(r.status).toBe(403);
      expect(r.json()).toMatchObject({ reason: 'Forbidden' });
    }
  });

  it("edit may impersonate the namespace's service accounts; view may not", async () => {
    const h = { 'Impersonate-User': 'system:serviceaccount:m:default' };
    expect((await as.editor!.get('/apis/authentication.svc.io/v1', { headers: h })).status).not.toBe(403);
    const r = await as.editor!.post(
      '/apis/authentication.svc.io/v1/selfsubjectreviews',
      { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' },
      { headers: h },
    );
    expect(r.json<{ status: { userInfo: unknown } }>().status.userInfo).toEqual({
      username: 'system:serviceaccount:m:default',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:m', 'system:authenticated'],
    });
    const denied = await as.viewer!.get('/api', { headers: h });
    expect(denied.status).toBe(403);
    expect(denied.json().message).toBe(
      'serviceaccounts "default" is forbidden: User "viewer" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "m"',
    );
  });
});

describe('bindings, rules and validation', () => {
  it('a ClusterRoleBinding grants everywhere, a RoleBinding to the same role only in its namespace', async () => {
    await ok(
      admin.post(`${RBAC}/clusterrolebindings`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'carol-view' },
        roleRef: ref('ClusterRole', 'view'),
        subjects: [userSubject('carol')],
      }),
    );
    await waitFor(
      'carol may list pods',
      async () => (await as.carol!.get('/api/v1/namespaces/other/pods')).status === 200,
    );
    expect((await as.carol!.get('/api/v1/pods')).status).toBe(200);
    expect((await as.carol!.get('/api/v1/namespaces/m/secrets')).status).toBe(403);
    expect((await as.viewer!.get('/api/v1/namespaces/default/pods')).status).toBe(403);
  });

  it('groups and service accounts are subjects', async () => {
    await bindInNs('other', {
      name: 'team-view',
      roleRef: ref('ClusterRole', 'view'),
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.svc.io', name: 'team' }],
    });
    await bindInNs('other', {
      name: 'sa-edit',
      roleRef: ref('ClusterRole', 'edit'),
      subjects: [{ kind: 'ServiceAccount', name: 'builder', namespace: 'other' }],
    });
    await waitFor(
      'team may list pods in other',
      async () => (await as.alice!.get('/api/v1/namespaces/other/pods')).status === 200,
    );
    expect(
      await sar('system:serviceaccount:other:builder', { namespace: 'other', verb: 'create', resource: 'secrets' }),
    ).toBe(true);
    expect(
      await sar('system:serviceaccount:m:builder', { namespace: 'other', verb: 'create', resource: 'secrets' }),
    ).toBe(false);
  });

  it('resourceNames restrict a rule to the named objects', async () => {
    await ok(
      admin.post(`${RBAC}/namespaces/other/roles`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'Role',
        metadata: { name: 'one-cm' },
        rules: [{ verbs: ['get', 'update'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['cm1'] }],
      }),
    );
    await bindInNs('other', { name: 'dave-one-cm', roleRef: ref('Role', 'one-cm'), subjects: [userSubject('dave')] });
    await ok(
      admin.post('/api/v1/namespaces/other/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'cm1' },
      }),
    );
    await ok(
      admin.post('/api/v1/namespaces/other/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'cm2' },
      }),
    );
    await waitFor(
      'dave may get cm1',
      async () => (await as.dave!.get('/api/v1/namespaces/other/configmaps/cm1')).status === 200,
    );
    expect((await as.dave!.get('/api/v1/namespaces/other/configmaps/cm2')).status).toBe(403);
    expect((await as.dave!.get('/api/v1/namespaces/other/configmaps')).status).toBe(403);
    expect((await as.dave!.get('/api/v1/namespaces/other/configmaps/nope')).status).toBe(403);
  });

  it('subresources are written <resource>/<subresource>, wildcards match', async () => {
    await ok(
      admin.post(`${RBAC}/clusterroles`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'ns-status' },
        rules: [
          { verbs: ['get'], apiGroups: [''], resources: ['namespaces/status'] },
          { verbs: ['*'], apiGroups: ['*'], resources: ['*/finalize'] },
        ],
      }),
    );
    await ok(
      admin.post(`${RBAC}/clusterrolebindings`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'dave-ns-status' },
        roleRef: ref('ClusterRole', 'ns-status'),
        subjects: [userSubject('dave')],
      }),
    );
    await waitFor(
      'dave may get namespaces/status',
      async () => (await as.dave!.get('/api/v1/namespaces/m/status')).status === 200,
    );
    expect((await as.dave!.get('/api/v1/namespaces/m')).status).toBe(403);
    expect(await sar('dave', { verb: 'update', resource: 'namespaces', subresource: 'finalize', name: 'm' })).toBe(
      true,
    );
  });

  it('non-resource URLs: granted by ClusterRoles, trailing * only, refused in Roles', async () => {
    await ok(
      admin.post(`${RBAC}/clusterroles`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'metrics-reader' },
        rules: [{ verbs: ['get'], nonResourceURLs: ['/metrics', '/livez/*'] }],
      }),
    );
    await ok(
      admin.post(`${RBAC}/clusterrolebindings`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'dave-metrics' },
        roleRef: ref('ClusterRole', 'metrics-reader'),
        subjects: [userSubject('dave')],
      }),
    );
    await waitFor('dave may get /metrics', async () => (await as.dave!.get('/metrics')).status === 200);
    expect((await as.dave!.get('/livez/ping')).status).toBe(200);
    expect((await as.alice!.get('/livez/ping')).status).toBe(403);
    const role = await admin.post(`${RBAC}/namespaces/m/roles`, {
      apiVersion: 'rbac.authorization.svc.io/v1',
      kind: 'Role',
      metadata: { name: 'urls' },
      rules: [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }],
    });
    expect(role.status).toBe(422);
    expect(role.json().message).toContain('namespaced rules cannot apply to non-resource URLs');
    const star = await admin.post(`${RBAC}/clusterroles`, {
      apiVersion: 'rbac.authorization.svc.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'bad-star' },
      rules: [{ verbs: ['get'], nonResourceURLs: ['/a*/b'] }],
    });
    expect(star.status).toBe(422);
  });

  it('validation: path-segment names, rules, subjects, roleRef', async () => {
    const bad = async (path: string, body: object): Promise<string> => {
      const r = await admin.post(path, body);
      expect(r.status).toBe(422);
      return r.json<{ message: string }>().message;
    };
    expect(
      await bad(`${RBAC}/clusterroles`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'a/b' },
      }),
    ).toContain('metadata.name');
    expect(
      await bad(`${RBAC}/clusterroles`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'r' },
        rules: [{ verbs: ['get'], resources: ['pods'] }],
      }),
    ).toContain('rules[0].apiGroups');
    expect(
      await bad(`${RBAC}/clusterroles`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'r' },
        rules: [{ verbs: [], apiGroups: [''], resources: ['pods'] }],
      }),
    ).toContain('rules[0].verbs');
    expect(
      await bad(`${RBAC}/clusterrolebindings`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'b' },
        roleRef: ref('Role', 'x'),
        subjects: [],
      }),
    ).toContain('roleRef.kind');
    expect(
      await bad(`${RBAC}/clusterrolebindings`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'b' },
        roleRef: ref('ClusterRole', 'view'),
        subjects: [{ kind: 'ServiceAccount', name: 'x' }],
      }),
    ).toContain('subjects[0].namespace');
    expect(
      await bad(`${RBAC}/clusterrolebindings`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'b' },
        roleRef: ref('ClusterRole', 'view'),
        subjects: [{ kind: 'User', name: 'x' }],
      }),
    ).toContain('subjects[0].apiGroup');
    expect(
      await bad(`${RBAC}/clusterrolebindings`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'b' },
        roleRef: ref('ClusterRole', 'view'),
        subjects: [{ kind: 'Robot', name: 'x' }],
      }),
    ).toContain('subjects[0].kind');
  });

  it('roleRef is immutable (422); subjects may change', async () => {
    await bindInNs('other', { name: 'immutable', roleRef: ref('ClusterRole', 'view'), subjects: [userSubject('x')] });
    const path = `${RBAC}/namespaces/other/rolebindings/immutable`;
    const cur = (await admin.get(path)).json<Record<string, unknown>>();
    const changed = await admin.put(path, { ...cur, roleRef: ref('ClusterRole', 'edit') });
    expect(changed.status).toBe(422);
    expect(changed.json()).toMatchObject({
      reason: 'Invalid',
      details: { causes: [{ field: 'roleRef', reason: 'FieldValueInvalid' }] },
    });
    expect(changed.json().message).toContain('cannot change roleRef');
    expect((await admin.put(path, { ...cur, subjects: [userSubject('y')] })).status).toBe(200);
    expect((await admin.patch(path, { roleRef: { name: 'admin' } }, 'application/merge-patch+json')).status).toBe(422);
  });
});

describe('escalation prevention', () => {
  beforeAll(async () => {
    // esc manages roles and bindings in namespace e and may read pods there, nothing more.
    await ok(
      admin.post(`${RBAC}/namespaces/e/roles`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'Role',
        metadata: { name: 'rbac-manager' },
        rules: [
          {
            verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
            apiGroups: ['rbac.authorization.svc.io'],
            resources: ['roles', 'rolebindings'],
          },
          { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] },
        ],
      }),
    );
    await bindInNs('e', { name: 'esc', roleRef: ref('Role', 'rbac-manager'), subjects: [userSubject('esc')] });
    await waitFor('esc may list roles', async () => (await as.esc!.get(`${RBAC}/namespaces/e/roles`)).status === 200);
  });
  const role = (name: string, rules: object[]): object => ({
    apiVersion: 'rbac.authorization.svc.io/v1',
    kind: 'Role',
    metadata: { name },
    rules,
  });

  it('a role with permissions the user holds may be created; one with more may not', async () => {
    expect(
      await post(
        as.esc!,
        `${RBAC}/namespaces/e/roles`,
        role('pod-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]),
      ),
    ).toBe(201);
    const r = await as.esc!.post(
      `${RBAC}/namespaces/e/roles`,
      role('secret-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }]),
    );
    expect(r.status).toBe(403);
    expect(r.json().message).toContain('is attempting to grant RBAC permissions not currently held');
    expect(r.json().message).toContain('{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}');
    // Same permissions, other namespace: not held there.
    expect(
      await post(
        as.esc!,
        `${RBAC}/namespaces/m/roles`,
        role('pod-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]),
      ),
    ).toBe(403);
    // Updating a role to add permissions is checked too.
    const cur = (await admin.get(`${RBAC}/namespaces/e/roles/pod-reader`)).json<Record<string, unknown>>();
    expect(
      (
        await as.esc!.put(`${RBAC}/namespaces/e/roles/pod-reader`, {
          ...cur,
          rules: [{ verbs: ['delete'], apiGroups: [''], resources: ['pods'] }],
        })
      ).status,
    ).toBe(403);
  });

  it('with the escalate verb the same role may be created', async () => {
    await ok(
      admin.post(
        `${RBAC}/namespaces/e/roles`,
        role('escalator', [{ verbs: ['escalate'], apiGroups: ['rbac.authorization.svc.io'], resources: ['roles'] }]),
      ),
    );
    await bindInNs('e', { name: 'esc-escalate', roleRef: ref('Role', 'escalator'), subjects: [userSubject('esc')] });
    await waitFor(
      'esc may escalate',
      async () =>
        await sar(
          'esc',
          { namespace: 'e', verb: 'escalate', group: 'rbac.authorization.svc.io', resource: 'roles' },
          [],
        ),
    );
    expect(
      await post(
        as.esc!,
        `${RBAC}/namespaces/e/roles`,
        role('secret-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }]),
      ),
    ).toBe(201);
  });

  it("a binding needs the role's permissions, or bind on it", async () => {
    const rb = (name: string, roleRef: object): object => ({
      apiVersion: 'rbac.authorization.svc.io/v1',
      kind: 'RoleBinding',
      metadata: { name },
      roleRef,
      subjects: [userSubject('alice')],
    });
    expect(await post(as.esc!, `${RBAC}/namespaces/e/rolebindings`, rb('pods', ref('Role', 'pod-reader')))).toBe(201);
    const denied = await as.esc!.post(`${RBAC}/namespaces/e/rolebindings`, rb('edit', ref('ClusterRole', 'edit')));
    expect(denied.status).toBe(403);
    expect(denied.json().message).toContain('is attempting to grant RBAC permissions not currently held');
    expect(await post(as.esc!, `${RBAC}/namespaces/e/rolebindings`, rb('missing', ref('ClusterRole', 'missing')))).toBe(
      403,
    );
    await ok(
      admin.post(
        `${RBAC}/namespaces/e/roles`,
        role('binder', [
          {
            verbs: ['bind'],
            apiGroups: ['rbac.authorization.svc.io'],
            resources: ['clusterroles'],
            resourceNames: ['edit'],
          },
        ]),
      ),
    );
    await bindInNs('e', { name: 'esc-bind', roleRef: ref('Role', 'binder'), subjects: [userSubject('esc')] });
    await waitFor(
      'esc may bind edit',
      async () =>
        await sar(
          'esc',
          { namespace: 'e', verb: 'bind', group: 'rbac.authorization.svc.io', resource: 'clusterroles', name: 'edit' },
          [],
        ),
    );
    expect(await post(as.esc!, `${RBAC}/namespaces/e/rolebindings`, rb('edit', ref('ClusterRole', 'edit')))).toBe(201);
    // bind on edit says nothing about admin.
    expect(await post(as.esc!, `${RBAC}/namespaces/e/rolebindings`, rb('admin', ref('ClusterRole', 'admin')))).toBe(
      403,
    );
  });

  it('aggregationRule needs cluster-admin privileges', async () => {
    await ok(
      admin.post(`${RBAC}/clusterroles`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'cr-writer' },
        rules: [{ verbs: ['create'], apiGroups: ['rbac.authorization.svc.io'], resources: ['clusterroles'] }],
      }),
    );
    await ok(
      admin.post(`${RBAC}/clusterrolebindings`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'esc-cr-writer' },
        roleRef: ref('ClusterRole', 'cr-writer'),
        subjects: [userSubject('esc')],
      }),
    );
    await waitFor(
      'esc may create clusterroles',
      async () =>
        await sar('esc', { verb: 'create', group: 'rbac.authorization.svc.io', resource: 'clusterroles' }, []),
    );
    const r = await as.esc!.post(`${RBAC}/clusterroles`, {
      apiVersion: 'rbac.authorization.svc.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'sneaky' },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] },
    });
    expect(r.status).toBe(403);
    expect(r.json().message).toContain('must have cluster-admin privileges to use the aggregationRule');
  });
});

describe('aggregation', () => {
  it('a ClusterRole with an aggregationRule collects the rules of matching ClusterRoles, and reacts to new ones', async () => {
    await ok(
      admin.post(`${RBAC}/clusterroles`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'agg-target' },
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/agg': 'yes' } }] },
      }),
    );
    await ok(
      admin.post(`${RBAC}/clusterroles`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'agg-a', labels: { 'example.com/agg': 'yes' } },
        rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
      }),
    );
    const rulesOf = async (name: string): Promise<unknown[]> =>
      (await admin.get(`${RBAC}/clusterroles/${name}`)).json<{ rules?: unknown[] }>().rules ?? [];
    await waitFor("agg-target has agg-a's rules", async () => (await rulesOf('agg-target')).length === 1);
    await ok(
      admin.post(`${RBAC}/clusterroles`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'agg-b', labels: { 'example.com/agg': 'yes' } },
        rules: [{ verbs: ['list'], apiGroups: [''], resources: ['configmaps'] }],
      }),
    );
    await waitFor("agg-target has agg-b's rules", async () => (await rulesOf('agg-target')).length === 2);
    expect(await rulesOf('agg-target')).toEqual([
      { verbs: ['get'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['list'], apiGroups: [''], resources: ['configmaps'] },
    ]);
    expect((await admin.delete(`${RBAC}/clusterroles/agg-a`)).status).toBe(200);
    await waitFor("agg-a's rules leave agg-target", async () => (await rulesOf('agg-target')).length === 1);
  });

  it('a ClusterRole labelled aggregate-to-view extends view, edit and admin', async () => {
    await ok(
      admin.post(`${RBAC}/clusterroles`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'widgets-view', labels: { 'rbac.authorization.svc.io/aggregate-to-view': 'true' } },
        rules: [{ verbs: ['get', 'list'], apiGroups: ['example.com'], resources: ['widgets'] }],
      }),
    );
    for (const u of ['viewer', 'editor', 'admin-user']) {
      await waitFor(
        `${u} may list widgets`,
        async () => await sar(u, { namespace: 'm', verb: 'list', group: 'example.com', resource: 'widgets' }, []),
      );
    }
    expect(await sar('viewer', { namespace: 'm', verb: 'create', group: 'example.com', resource: 'widgets' }, [])).toBe(
      false,
    );
  });
});

describe('access reviews', () => {
  it('SubjectAccessReview evaluates any user, groups included', async () => {
    expect(await sar('viewer', { namespace: 'm', verb: 'list', resource: 'pods' })).toBe(true);
    expect(await sar('viewer', { namespace: 'm', verb: 'list', resource: 'secrets' })).toBe(false);
    expect(await sar('anyone', { verb: 'delete', resource: 'nodes' }, ['system:masters'])).toBe(true);
    const r = await admin.post(`${AUTHZ}/subjectaccessreviews`, {
      apiVersion: 'authorization.svc.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user: 'nobody', nonResourceAttributes: { path: '/healthz', verb: 'get' } },
    });
    expect(r.json()).toMatchObject({ kind: 'SubjectAccessReview', status: { allowed: false } });
    const both = await admin.post(`${AUTHZ}/subjectaccessreviews`, {
      apiVersion: 'authorization.svc.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: 'x',
        nonResourceAttributes: { path: '/', verb: 'get' },
        resourceAttributes: { verb: 'get', resource: 'pods' },
      },
    });
    expect(both.status).toBe(422);
    const nobody = await admin.post(`${AUTHZ}/subjectaccessreviews`, {
      apiVersion: 'authorization.svc.io/v1',
      kind: 'SubjectAccessReview',
      spec: { resourceAttributes: { verb: 'get', resource: 'pods' } },
    });
    expect(nobody.status).toBe(422);
    // Nothing is stored.
    expect((await admin.get(`${AUTHZ}/subjectaccessreviews`)).status).toBe(405);
    // Ordinary users may not ask about others.
    expect(
      (
        await as.alice!.post(`${AUTHZ}/subjectaccessreviews`, {
          apiVersion: 'authorization.svc.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user: 'x', resourceAttributes: { verb: 'get', resource: 'pods' } },
        })
      ).status,
    ).toBe(403);
  });

  it('SelfSubjectAccessReview answers for the caller', async () => {
    const ssar = async (c: HttpsClient, attrs: object): Promise<{ allowed: boolean; denied?: boolean }> => {
      const r = await c.post(`${AUTHZ}/selfsubjectaccessreviews`, {
        apiVersion: 'authorization.svc.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: attrs },
      });
      expect(r.status).toBe(201);
      return r.json<{ status: { allowed: boolean; denied?: boolean } }>().status;
    };
    expect(await ssar(as.editor!, { namespace: 'm', verb: 'get', resource: 'secrets' })).toEqual({ allowed: true });
    expect(await ssar(as.viewer!, { namespace: 'm', verb: 'get', resource: 'secrets' })).toEqual({ allowed: false });
    expect(await ssar(admin, { verb: 'delete', resource: 'nodes' })).toEqual({ allowed: true });
  });

  it("LocalSubjectAccessReview is limited to the URL's namespace", async () => {
    const body = (ns: string): object => ({
      apiVersion: 'authorization.svc.io/v1',
      kind: 'LocalSubjectAccessReview',
      spec: { user: 'editor', resourceAttributes: { namespace: ns, verb: 'create', resource: 'secrets' } },
    });
    const r = await admin.post(`${AUTHZ}/namespaces/m/localsubjectaccessreviews`, body('m'));
    expect(r.status).toBe(201);
    expect(r.json()).toMatchObject({ metadata: { namespace: 'm' }, status: { allowed: true } });
    const mismatch = await admin.post(`${AUTHZ}/namespaces/m/localsubjectaccessreviews`, body('other'));
    expect(mismatch.status).toBe(400);
    expect(mismatch.json().message).toBe('spec.resourceAttributes.namespace must match namespace: m');
    // admin (the role) may create them in its namespace.
    expect((await as['admin-user']!.post(`${AUTHZ}/namespaces/m/localsubjectaccessreviews`, body('m'))).status).toBe(
      201,
    );
    expect((await as.editor!.post(`${AUTHZ}/namespaces/m/localsubjectaccessreviews`, body('m'))).status).toBe(403);
  });

  it('SelfSubjectRulesReview lists what the caller may do in a namespace', async () => {
    const r = await as.viewer!.post(`${AUTHZ}/selfsubjectrulesreviews`, {
      apiVersion: 'authorization.svc.io/v1',
      kind: 'SelfSubjectRulesReview',
      spec: { namespace: 'm' },
    });
    expect(r.status).toBe(201);
    const st = r.json<{
      status: {
        resourceRules: Array<{ verbs: string[]; resources: string[] }>;
        nonResourceRules: Array<{ nonResourceURLs: string[] }>;
        incomplete: boolean;
      };
    }>().status;
    expect(st.incomplete).toBe(false);
    expect(st.resourceRules.some((x) => x.resources.includes('pods') && x.verbs.includes('list'))).toBe(true);
    expect(st.resourceRules.some((x) => x.resources.includes('selfsubjectaccessreviews'))).toBe(true);
    expect(st.resourceRules.some((x) => x.resources.includes('secrets'))).toBe(false);
    expect(st.nonResourceRules.some((x) => x.nonResourceURLs.includes('/api'))).toBe(true);
    const elsewhere = (
      await as.viewer!.post(`${AUTHZ}/selfsubjectrulesreviews`, {
        apiVersion: 'authorization.svc.io/v1',
        kind: 'SelfSubjectRulesReview',
        spec: { namespace: 'default' },
      })
    ).json<{ status: { resourceRules: Array<{ resources: string[] }> } }>();
    expect(elsewhere.status.resourceRules.some((x) => x.resources.includes('pods'))).toBe(false);
  });
});

describe('impersonation', () => {
  const whoami = async (
    c: HttpsClient,
    headers: Record<string, string | string[]>,
  ): Promise<{ status: number; user?: unknown; message?: string }> => {
    const r = await c.post(
      '/apis/authentication.svc.io/v1/selfsubjectreviews',
      { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' },
      { headers },
    );
    return r.status === 201
      ? { status: 201, user: r.json<{ status: { userInfo: unknown } }>().status.userInfo }
      : { status: r.status, message: r.json<{ message: string }>().message };
  };

  it('system:masters may impersonate anyone; the impersonated user is then authorized', async () => {
    expect(await whoami(admin, { 'Impersonate-User': 'viewer' })).toEqual({
      status: 201,
      user: { username: 'viewer', groups: ['system:authenticated'] },
    });
    expect((await admin.get('/api/v1/namespaces/m/pods', { headers: { 'Impersonate-User': 'viewer' } })).status).toBe(
      200,
    );
    expect(
      (await admin.get('/api/v1/namespaces/m/secrets', { headers: { 'Impersonate-User': 'viewer' } })).status,
    ).toBe(403);
    expect(
      await whoami(admin, {
        'Impersonate-User': 'u',
        'Impersonate-Group': ['g1', 'g2'],
        'Impersonate-Uid': 'id-1',
        'Impersonate-Extra-Scopes': ['a', 'b'],
      }),
    ).toEqual({
      status: 201,
      user: { username: 'u', uid: 'id-1', groups: ['g1', 'g2', 'system:authenticated'], extra: { scopes: ['a', 'b'] } },
    });
    expect((await admin.get('/api', { headers: { 'Impersonate-Group': 'g' } })).status).toBe(400);
  });

  it('others need the impersonate verb on users, groups, uids and userextras', async () => {
    const denied = await whoami(as.imp!, { 'Impersonate-User': 'viewer' });
    expect(denied).toEqual({
      status: 403,
      message:
        'users "viewer" is forbidden: User "imp" cannot impersonate resource "users" in API group "" at the cluster scope',
    });
    await ok(
      admin.post(`${RBAC}/clusterroles`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'impersonator' },
        rules: [
          { verbs: ['impersonate'], apiGroups: [''], resources: ['users'], resourceNames: ['viewer'] },
          { verbs: ['impersonate'], apiGroups: [''], resources: ['groups'], resourceNames: ['team'] },
          { verbs: ['impersonate'], apiGroups: ['authentication.svc.io'], resources: ['uids'], resourceNames: ['u1'] },
          { verbs: ['impersonate'], apiGroups: ['authentication.svc.io'], resources: ['userextras/scopes'] },
        ],
      }),
    );
    await ok(
      admin.post(`${RBAC}/clusterrolebindings`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'impersonator' },
        roleRef: ref('ClusterRole', 'impersonator'),
        subjects: [userSubject('imp')],
      }),
    );
    await waitFor(
      'imp may impersonate viewer',
      async () => (await whoami(as.imp!, { 'Impersonate-User': 'viewer' })).status === 201,
    );
    expect((await as.imp!.get('/api/v1/namespaces/m/pods', { headers: { 'Impersonate-User': 'viewer' } })).status).toBe(
      200,
    );
    expect((await as.imp!.get('/api/v1/namespaces/m/pods')).status).toBe(403);
    expect((await whoami(as.imp!, { 'Impersonate-User': 'editor' })).status).toBe(403);
    expect(
      await whoami(as.imp!, {
        'Impersonate-User': 'viewer',
        'Impersonate-Group': 'team',
        'Impersonate-Uid': 'u1',
        'Impersonate-Extra-Scopes': 'x',
      }),
    ).toEqual({
      status: 201,
      user: { username: 'viewer', uid: 'u1', groups: ['team', 'system:authenticated'], extra: { scopes: ['x'] } },
    });
    const group = await whoami(as.imp!, { 'Impersonate-User': 'viewer', 'Impersonate-Group': 'system:masters' });
    expect(group).toEqual({
      status: 403,
      message:
        'groups "system:masters" is forbidden: User "imp" cannot impersonate resource "groups" in API group "" at the cluster scope',
    });
    expect((await whoami(as.imp!, { 'Impersonate-User': 'viewer', 'Impersonate-Uid': 'u2' })).message).toBe(
      'uids.authentication.svc.io "u2" is forbidden: User "imp" cannot impersonate resource "uids" in API group "authentication.svc.io" at the cluster scope',
    );
    expect((await whoami(as.imp!, { 'Impersonate-User': 'viewer', 'Impersonate-Extra-Other': 'x' })).message).toBe(
      'userextras.authentication.svc.io "x" is forbidden: User "imp" cannot impersonate resource "userextras/other" in API group "authentication.svc.io" at the cluster scope',
    );
  });
});

describe('custom resources', () => {
  it('are authorized by RBAC like built-in types, as soon as their CRD is served', async () => {
    const crd = crdManifest({
      group: 'rbac-test.example.com',
      plural: 'gizmos',
      kind: 'Gizmo',
      versions: [{ name: 'v1', schema: { type: 'object' } }],
    });
    await ok(admin.post(`/apis/${group('apiextensions')}/v1/customresourcedefinitions`, crd));
    const path = '/apis/rbac-test.example.com/v1/namespaces/m/gizmos';
    await waitFor('gizmos to be served', async () => (await admin.get(path)).status === 200);
    const denied = await as.carol!.get(path);
    expect(denied.status).toBe(403);
    expect(denied.json<{ message: string }>().message).toBe(
      'gizmos.rbac-test.example.com is forbidden: User "carol" cannot list resource "gizmos" in API group "rbac-test.example.com" in the namespace "m"',
    );
    await ok(
      admin.post(`${RBAC}/namespaces/m/roles`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'Role',
        metadata: { name: 'gizmo-reader' },
        rules: [{ apiGroups: ['rbac-test.example.com'], resources: ['gizmos'], verbs: ['get', 'list'] }],
      }),
    );
    await bindInNs('m', {
      name: 'carol-gizmos',
      roleRef: ref('Role', 'gizmo-reader'),
      subjects: [userSubject('carol')],
    });
    await waitFor('carol to list gizmos', async () => (await as.carol!.get(path)).status === 200);
    expect(
      (await as.carol!.post(path, { apiVersion: 'rbac-test.example.com/v1', kind: 'Gizmo', metadata: { name: 'g' } }))
        .status,
    ).toBe(403);
  });
});
