// The default RBAC policy on apps/v1 workloads: the aggregated view / edit roles on
// deployments, replicasets and their scale subresource (real requests), and the deployment and
// replicaset controllers' roles (access reviews), as Kubernetes' bootstrap policy has them.
import { group, naming } from '@svc/api';
import { startTestApiServer, waitFor, expectCode, type HttpsClient, type TestApiServer } from '@svc/testing';

let t: TestApiServer;
let viewer: HttpsClient;
let editor: HttpsClient;
const ns = 'apps-rbac';
const rbac = (): string => group('rbac.authorization');
const scalePath = `/apis/apps/v1/namespaces/${ns}/deployments/web/scale`;

/** Whether `user` may do it, by a SubjectAccessReview as admin. */
async function allowed(user: string, groups: string[], attrs: object): Promise<boolean> {
  const authz = group('authorization');
  const r = await t.client.post(`/apis/${authz}/v1/subjectaccessreviews`, {
    apiVersion: `${authz}/v1`,
    kind: 'SubjectAccessReview',
    spec: { user, groups, resourceAttributes: attrs },
  });
  return expectCode(r, 201).status.allowed as boolean;
}

beforeAll(async () => {
  t = await startTestApiServer({
    args: ['--authorization-mode=RBAC'],
    tokens: ['viewer-token,viewer,viewer-uid', 'editor-token,editor,editor-uid'],
  });
  viewer = t.client.withToken('viewer-token');
  editor = t.client.withToken('editor-token');
  expectCode(
    await t.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
    201,
  );
  for (const [user, role] of [
    ['viewer', 'view'],
    ['editor', 'edit'],
  ] as const) {
    expectCode(
      await t.client.post(`/apis/${rbac()}/v1/namespaces/${ns}/rolebindings`, {
        apiVersion: `${rbac()}/v1`,
        kind: 'RoleBinding',
        metadata: { name: user },
        roleRef: { apiGroup: rbac(), kind: 'ClusterRole', name: role },
        subjects: [{ kind: 'User', apiGroup: rbac(), name: user }],
      }),
      201,
    );
  }
  await waitFor(
    'aggregated roles in the RBAC cache',
    async () =>
      await allowed('editor', [], {
        namespace: ns,
        verb: 'patch',
        group: 'apps',
        resource: 'deployments',
        subresource: 'scale',
      }),
  );
}, 60_000);

afterAll(async () => {
  await t?.stop();
});

it('edit creates and scales deployments; view reads them and their scale but may not change either', async () => {
  const d = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    },
  };
  expectCode(await viewer.post(`/apis/apps/v1/namespaces/${ns}/deployments`, d), 403);
  expectCode(await editor.post(`/apis/apps/v1/namespaces/${ns}/deployments`, d), 201);
  expect(
    expectCode(await editor.patch(scalePath, { spec: { replicas: 3 } }, 'application/merge-patch+json'), 200).spec,
  ).toEqual({ replicas: 3 });
  expect(expectCode(await viewer.get(scalePath), 200).spec).toEqual({ replicas: 3 });
  const denied = expectCode(
    await viewer.patch(scalePath, { spec: { replicas: 1 } }, 'application/merge-patch+json'),
    403,
  );
  expect(denied.message).toBe(
    `deployments.apps "web" is forbidden: User "viewer" cannot patch resource "deployments/scale" in API group "apps" in the namespace "${ns}"`,
  );
  expectCode(await viewer.get(`/apis/apps/v1/namespaces/${ns}/replicasets`), 200);
  expect(
    await allowed('editor', [], {
      namespace: ns,
      verb: 'update',
      group: 'apps',
      resource: 'replicasets',
      subresource: 'scale',
    }),
  ).toBe(true);
  expect(
    await allowed('editor', [], {
      namespace: ns,
      verb: 'update',
      group: 'apps',
      resource: 'deployments',
      subresource: 'status',
    }),
  ).toBe(false);
});

it("the deployment and replicaset controllers have Kubernetes' permissions, and no more", async () => {
  const sa = (name: string): [string, string[]] => [
    `system:serviceaccount:${naming().systemNamespace}:${name}`,
    ['system:serviceaccounts', `system:serviceaccounts:${naming().systemNamespace}`],
  ];
  const can = async (
    who: [string, string[]],
    verb: string,
    what: { resource: string; subresource?: string; apiGroup?: string },
  ): Promise<boolean> =>
    allowed(who[0], who[1], {
      namespace: ns,
      verb,
      group: what.apiGroup ?? 'apps',
      resource: what.resource,
      subresource: what.subresource ?? '',
    });
  const deployments = sa('deployment-controller');
  const replicasets = sa('replicaset-controller');
  expect(await can(deployments, 'update', { resource: 'deployments', subresource: 'status' })).toBe(true);
  expect(await can(deployments, 'create', { resource: 'replicasets' })).toBe(true);
  expect(await can(deployments, 'deletecollection', { resource: 'replicasets' })).toBe(false);
  expect(await can(deployments, 'delete', { resource: 'deployments' })).toBe(false);
  expect(await can(deployments, 'update', { resource: 'pods', apiGroup: '' })).toBe(true);
  expect(await can(replicasets, 'update', { resource: 'replicasets', subresource: 'status' })).toBe(true);
  expect(await can(replicasets, 'create', { resource: 'pods', apiGroup: '' })).toBe(true);
  expect(await can(replicasets, 'update', { resource: 'deployments' })).toBe(false);
});
