// Stock kubectl against RBAC (--naming=kubernetes: kubectl's RBAC and authorization commands
// name rbac.authorization.k8s.io): `auth can-i` for several users, with --as/--as-group,
// `create role`/`create rolebinding`/`create clusterrolebinding`, and `auth reconcile`.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { kubectl, startKubectlEnv, svcconfigYaml, waitFor, type KubectlEnv, type KubectlResult } from '@svc/testing';

let env: KubectlEnv;
const configs: Record<string, string> = {};

async function as(user: string, args: string[], stdin?: string): Promise<KubectlResult> {
  return kubectl(configs[user] ?? env.server.svcconfigPath, args, { home: env.home, timeoutMs: 60_000, stdin });
}

async function ok(user: string, args: string[], stdin?: string): Promise<string> {
  const r = await as(user, args, stdin);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

async function canI(user: string, args: string[]): Promise<string> {
  const r = await as(user, ['auth', 'can-i', ...args]);
  return r.stdout.trim();
}

beforeAll(async () => {
  env = await startKubectlEnv({
    args: ['--naming=kubernetes', '--authorization-mode=RBAC'],
    tokens: ['ann-token,ann,ann-uid', 'ben-token,ben,ben-uid,"qa"', 'cat-token,cat,cat-uid'],
  });
  for (const u of ['ann', 'ben', 'cat']) {
    configs[u] = join(env.server.dir, `${u}.svcconfig`);
    await writeFile(
      configs[u]!,
      svcconfigYaml({ server: env.server.server.url, caPem: env.server.server.caPem, token: `${u}-token`, user: u }),
    );
  }
  await ok('admin', ['create', 'namespace', 'team']);
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

it('create role and rolebinding, then auth can-i for several users', async () => {
  await ok('admin', ['create', 'role', 'pod-reader', '-n', 'team', '--verb=get,list,watch', '--resource=pods']);
  await ok('admin', ['create', 'rolebinding', 'ann-reads', '-n', 'team', '--role=pod-reader', '--user=ann']);
  await ok('admin', ['create', 'rolebinding', 'qa-edit', '-n', 'team', '--clusterrole=edit', '--group=qa']);
  const role = JSON.parse(await ok('admin', ['get', 'role', 'pod-reader', '-n', 'team', '-o', 'json']));
  expect(role.rules).toEqual([{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] }]);

  await waitFor('ann may list pods', async () => (await canI('ann', ['list', 'pods', '-n', 'team'])) === 'yes', {
    timeoutMs: 20_000,
  });
  expect(await canI('ann', ['delete', 'pods', '-n', 'team'])).toBe('no');
  expect(await canI('ann', ['list', 'pods', '-n', 'default'])).toBe('no');
  expect(await canI('ann', ['create', 'selfsubjectaccessreviews.authorization.k8s.io'])).toBe('yes');
  await waitFor(
    'ben (qa) may create secrets',
    async () => (await canI('ben', ['create', 'secrets', '-n', 'team'])) === 'yes',
    { timeoutMs: 20_000 },
  );
  expect(await canI('ben', ['get', 'secrets', '-n', 'team'])).toBe('yes');
  expect(await canI('ben', ['create', 'roles.rbac.authorization.k8s.io', '-n', 'team'])).toBe('no');
  expect(await canI('cat', ['get', 'pods', '-n', 'team'])).toBe('no');
  expect(await canI('cat', ['get', '/healthz'])).toBe('yes');
  expect(await canI('cat', ['get', '/metrics'])).toBe('no');
  expect(await canI('admin', ['delete', 'nodes'])).toBe('yes');
  const denied = await as('cat', ['get', 'pods', '-n', 'team']);
  expect(denied.code).not.toBe(0);
  expect(denied.stderr).toContain(
    'pods is forbidden: User "cat" cannot list resource "pods" in API group "" in the namespace "team"',
  );
});

it('auth can-i --list shows the rules of a namespace', async () => {
  await waitFor('ann may list pods', async () => (await canI('ann', ['list', 'pods', '-n', 'team'])) === 'yes', {
    timeoutMs: 20_000,
  });
  const out = await ok('ann', ['auth', 'can-i', '--list', '-n', 'team']);
  expect(out).toMatch(/^pods\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
  expect(out).toMatch(/selfsubjectaccessreviews\.authorization\.k8s\.io/);
});

it('--as and --as-group: allowed for system:masters, forbidden without impersonate', async () => {
  await waitFor('ann may list pods', async () => (await canI('ann', ['list', 'pods', '-n', 'team'])) === 'yes', {
    timeoutMs: 20_000,
  });
  expect(await canI('admin', ['list', 'pods', '-n', 'team', '--as=ann'])).toBe('yes');
  expect(await canI('admin', ['delete', 'pods', '-n', 'team', '--as=ann'])).toBe('no');
  expect(await canI('admin', ['delete', 'pods', '-n', 'team', '--as=someone', '--as-group=qa'])).toBe('yes');
  expect(await canI('admin', ['get', 'secrets', '-n', 'team', '--as=system:serviceaccount:team:default'])).toBe('no');
  const r = await as('cat', ['auth', 'can-i', 'list', 'pods', '--as=ann']);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain(
    'users "ann" is forbidden: User "cat" cannot impersonate resource "users" in API group "" at the cluster scope',
  );
  expect(await ok('admin', ['auth', 'whoami', '--as=ann', '--as-group=qa', '-o', 'json'])).toContain('"qa"');
});

it('a non-admin cannot create a rolebinding granting more than it holds, or change roleRef', async () => {
  await ok('admin', [
    'create',
    'role',
    'binder',
    '-n',
    'team',
    '--verb=create,get,update',
    '--resource=rolebindings.rbac.authorization.k8s.io',
  ]);
  await ok('admin', ['create', 'rolebinding', 'cat-binder', '-n', 'team', '--role=binder', '--user=cat']);
  await waitFor(
    'cat may create rolebindings',
    async () => (await canI('cat', ['create', 'rolebindings.rbac.authorization.k8s.io', '-n', 'team'])) === 'yes',
    { timeoutMs: 20_000 },
  );
  const r = await as('cat', ['create', 'rolebinding', 'cat-edit', '-n', 'team', '--clusterrole=edit', '--user=cat']);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain('is attempting to grant RBAC permissions not currently held');
  const change = await as('admin', [
    'patch',
    'rolebinding',
    'ann-reads',
    '-n',
    'team',
    '--type=merge',
    '-p',
    '{"roleRef":{"name":"binder"}}',
  ]);
  expect(change.code).not.toBe(0);
  expect(change.stderr).toContain('cannot change roleRef');
});

it('auth reconcile creates and extends roles and bindings', async () => {
  const manifest = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reconciled
  namespace: team
rules:
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: reconciled
  namespace: team
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: reconciled
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: cat
`;
  const out = await ok('admin', ['auth', 'reconcile', '-f', '-'], manifest);
  expect(out).toContain('role.rbac.authorization.k8s.io/reconciled');
  await ok('admin', ['auth', 'reconcile', '-f', '-'], manifest.replace('verbs: ["get"]', 'verbs: ["get", "list"]'));
  const role = JSON.parse(await ok('admin', ['get', 'role', 'reconciled', '-n', 'team', '-o', 'json']));
  expect(role.rules.flatMap((x: { verbs: string[] }) => x.verbs).sort()).toEqual(['get', 'list']);
  await waitFor(
    'cat may list configmaps',
    async () => (await canI('cat', ['list', 'configmaps', '-n', 'team'])) === 'yes',
    { timeoutMs: 20_000 },
  );
});
