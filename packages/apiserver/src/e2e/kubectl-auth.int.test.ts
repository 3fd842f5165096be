// Stock kubectl against --naming=kubernetes (it asks for authentication.k8s.io): `auth whoami`
// (a Protobuf SelfSubjectReview) with a static token, a client certificate, a bootstrap token
// a service-account token from `create token`, and an exec credential plugin.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import {
  createTestCa,
  kubectl,
  startTestApiServer,
  svcconfigYaml,
  type KubectlResult,
  type TestApiServer,
  type TestCa,
} from '@svc/testing';

let t: TestApiServer;
let dir: string;
let home: string;
let ca: TestCa;

async function config(name: string, user: { token?: string; certPem?: string; keyPem?: string }): Promise<string> {
  const file = join(dir, `${name}.svcconfig`);
  await writeFile(
    file,
    svcconfigYaml({
      server: t.server.url,
      caPem: t.server.caPem,
      token: user.token,
      clientCertPem: user.certPem,
      clientKeyPem: user.keyPem,
      user: name,
    }),
  );
  return file;
}

async function ok(file: string, args: string[]): Promise<KubectlResult> {
  const r = await kubectl(file, args, { home, timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r;
}

async function whoami(
  file: string,
): Promise<{ username: string; groups?: string[]; uid?: string; extra?: Record<string, string[]> }> {
  return JSON.parse((await ok(file, ['auth', 'whoami', '-o', 'json'])).stdout).status.userInfo;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-kubectl-auth-'));
  home = join(dir, 'home');
  ca = await createTestCa('kubectl-client-ca');
  await writeFile(join(dir, 'client-ca.crt'), ca.certPem);
  t = await startTestApiServer({
    args: ['--naming=kubernetes', '--client-ca-file', join(dir, 'client-ca.crt'), '--enable-bootstrap-token-auth'],
  });
});

afterAll(async () => {
  await t?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('auth whoami with a static token', async () => {
  expect(await whoami(t.svcconfigPath)).toEqual({
    username: 'admin',
    uid: 'admin-uid',
    groups: ['system:masters', 'system:authenticated'],
  });
});

it('auth whoami and get with a client certificate', async () => {
  const c = await ca.issue({ commonName: 'jane', organizations: ['system:masters', 'devs'] });
  const file = await config('jane', { certPem: c.chainPem, keyPem: c.keyPem });
  const me = await whoami(file);
  expect(me.username).toBe('jane');
  expect(me.groups).toEqual(['system:masters', 'devs', 'system:authenticated']);
  expect(me.extra?.['authentication.kubernetes.io/credential-id']?.[0]).toMatch(/^X509SHA256=[0-9a-f]{64}$/);
  expect((await ok(file, ['get', 'ns', 'kube-system', '-o', 'name'])).stdout.trim()).toBe('namespace/kube-system');
});

it('auth whoami with a bootstrap token', async () => {
  const r = await t.client.post('/api/v1/namespaces/kube-system/secrets', {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'bootstrap-token-k8sabc' },
    type: 'bootstrap.kubernetes.io/token',
    stringData: {
      'token-id': 'k8sabc',
      'token-secret': '0123456789abcdef',
      'usage-bootstrap-authentication': 'true',
      'auth-extra-groups': 'system:bootstrappers:nodes',
    },
  });
  expect(r.status).toBe(201);
  const me = await whoami(await config('bootstrap', { token: 'k8sabc.0123456789abcdef' }));
  expect(me).toEqual({
    username: 'system:bootstrap:k8sabc',
    groups: ['system:bootstrappers', 'system:bootstrappers:nodes', 'system:authenticated'],
  });
});

it('create token, then auth whoami with it', async () => {
  await ok(t.svcconfigPath, ['create', 'serviceaccount', 'robot']);
  const token = (await ok(t.svcconfigPath, ['create', 'token', 'robot'])).stdout.trim();
  const claims = decodeJwt(token);
  expect(claims.iss).toBe('https://kubernetes.default.svc.cluster.local');
  expect(claims['kubernetes.io']).toMatchObject({ namespace: 'default', serviceaccount: { name: 'robot' } });
  const me = await whoami(await config('robot', { token }));
  expect(me.username).toBe('system:serviceaccount:default:robot');
  expect(me.groups).toEqual(['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
  expect(me.extra?.['authentication.kubernetes.io/credential-id']?.[0]).toBe(`JTI=${claims.jti as string}`);
});

it('auth whoami through an exec credential plugin', async () => {
  const plugin = join(dir, 'plugin.sh');
  await writeFile(
    plugin,
    `#!/bin/sh
printf '%s' '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${t.adminToken}"}}'
`,
    { mode: 0o755 },
  );
  const file = join(dir, 'exec.svcconfig');
  await writeFile(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'current-context: exec',
      'clusters:',
      '- name: svc',
      '  cluster:',
      `    server: ${t.server.url}`,
      `    certificate-authority-data: ${Buffer.from(t.server.caPem).toString('base64')}`,
      'users:',
      '- name: exec',
      '  user:',
      '    exec:',
      '      apiVersion: client.authentication.k8s.io/v1',
      `      command: ${plugin}`,
      '      interactiveMode: Never',
      'contexts:',
      '- name: exec',
      '  context: {cluster: svc, user: exec}',
      '',
    ].join('\n'),
  );
  expect((await whoami(file)).username).toBe('admin');
});

it('a refused credential makes kubectl report Unauthorized', async () => {
  const r = await kubectl(await config('nobody', { token: 'not-a-token' }), ['auth', 'whoami'], { home });
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain('Unauthorized');
});
