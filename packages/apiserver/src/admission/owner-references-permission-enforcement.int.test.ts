// OwnerReferencesPermissionEnforcement on a real server (etcd, HTTPS) under RBAC, through stock
// kubectl as a user with a Role: references set on create, changing them needs delete, blocking
// an owner's deletion needs update on its finalizers, and Kubernetes' messages for each refusal.
import {
  createNamespace,
  expectCode,
  startKubectlEnv,
  uniqueName,
  waitFor,
  type Json,
  type KubectlEnv,
} from '@svc/testing';

const ALICE = 'alice-token';
const RBAC = '/apis/rbac.authorization.svc.io/v1';

let env: KubectlEnv;
let ns: string;
let owner: { name: string; uid: string };

beforeAll(async () => {
  env = await startKubectlEnv({
    args: ['--authorization-mode=RBAC', '--enable-admission-plugins=OwnerReferencesPermissionEnforcement'],
    tokens: [`${ALICE},alice,alice-uid,"dev"`],
  });
  const c = env.server.client;
  ns = await createNamespace(c, 'owners');
  await setRules([{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create', 'update', 'patch'] }]);
  expectCode(
    await c.post(`${RBAC}/namespaces/${ns}/rolebindings`, {
      metadata: { name: 'alice' },
      roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'Role', name: 'alice' },
      subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.svc.io' }],
    }),
    201,
  );
  const o = expectCode(await c.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'owner' } }), 201);
  owner = { name: 'owner', uid: o.metadata.uid as string };
  await waitFor('alice to be bound to her Role', async () => (await asAlice(['get', 'configmaps'])).code === 0);
});
afterAll(async () => {
  await env.stop();
});

/** Alice's Role; waits until her access reflects it (RBAC reads from caches). */
async function setRules(rules: Json[]): Promise<void> {
  const c = env.server.client;
  const role = { metadata: { name: 'alice' }, rules };
  const current = await c.get(`${RBAC}/namespaces/${ns}/roles/alice`);
  if (current.status === 404) expectCode(await c.post(`${RBAC}/namespaces/${ns}/roles`, role), 201);
  else
    expectCode(
      await c.put(`${RBAC}/namespaces/${ns}/roles/alice`, { ...role, metadata: current.json<Json>().metadata }),
      200,
    );
}

const asAlice = (args: string[]): ReturnType<KubectlEnv['run']> => env.run(['--token', ALICE, ...args, '-n', ns]);
const ref = (o: Json = {}): Json => ({ apiVersion: 'v1', kind: 'ConfigMap', name: owner.name, uid: owner.uid, ...o });
const configMap = (name: string, ownerReferences?: Json[]): Json => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, ...(ownerReferences ? { ownerReferences } : {}) },
});

async function aliceCreates(name: string, ownerReferences?: Json[]): Promise<{ code: number; stderr: string }> {
  const file = await env.manifest(configMap(name, ownerReferences));
  const r = await asAlice(['create', '-f', file]);
  return { code: r.code, stderr: r.stderr.trim().replace(file, '<file>') };
}

it('lets a user set references when creating, without delete', async () => {
  expect((await aliceCreates(uniqueName('child'), [ref()])).code).toBe(0);
});

it('needs delete on the object to change its references', async () => {
  const name = uniqueName('child');
  expect((await aliceCreates(name)).code).toBe(0);
  const patch = JSON.stringify({ metadata: { ownerReferences: [ref()] } });
  const r = await asAlice(['patch', 'configmap', name, '--type=merge', '-p', patch]);
  expect(r.stderr.trim()).toBe(
    `Error from server (Forbidden): configmaps "${name}" is forbidden: cannot set an ownerRef on a resource you can't delete: , <nil>`,
  );
  // Other changes pass.
  expect((await asAlice(['label', 'configmap', name, 'x=y'])).code).toBe(0);
  await setRules([
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'] },
  ]);
  await waitFor(
    'alice may set references',
    async () => (await asAlice(['patch', 'configmap', name, '--type=merge', '-p', patch])).code === 0,
  );
});

it('needs update on the owner finalizers to block its deletion', async () => {
  await setRules([{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create', 'update', 'patch'] }]);
  const name = uniqueName('blocking');
  const refused = await waitFor('the Role without delete', async () => {
    const r = await aliceCreates(name, [ref({ blockOwnerDeletion: true })]);
    return r.code !== 0 && r;
  });
  expect(refused.stderr).toBe(
    `Error from server (Forbidden): error when creating "<file>": configmaps "${name}" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>`,
  );
  await setRules([
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create', 'update', 'patch'] },
    { apiGroups: [''], resources: ['configmaps/finalizers'], verbs: ['update'], resourceNames: [owner.name] },
  ]);
  await waitFor(
    'alice may block the owner',
    async () => (await aliceCreates(name, [ref({ blockOwnerDeletion: true })])).code === 0,
  );
  // Only the owner named in the Role.
  const other = expectCode(
    await env.server.client.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: uniqueName('o') } }),
    201,
  );
  const r = await aliceCreates(uniqueName('blocking'), [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: other.metadata.name,
      uid: other.metadata.uid,
      blockOwnerDeletion: true,
    },
  ]);
  expect(r.stderr).toContain(
    "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on",
  );
});

it('refuses to block the deletion of a kind the server does not serve', async () => {
  const name = uniqueName('widget-child');
  const r = await aliceCreates(name, [
    { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: 'u-1', blockOwnerDeletion: true },
  ]);
  expect(r.stderr).toBe(
    `Error from server (Forbidden): error when creating "<file>": configmaps "${name}" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion example.com/v1 Kind Widget: no matches for kind "Widget" in version "example.com/v1"`,
  );
});
