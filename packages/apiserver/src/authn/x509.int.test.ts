// X509 client certificates against a real server: --client-ca-file with two CAs, certificates
// made here, SelfSubjectReview to see who the server thinks we are, and stock kubectl with a
// client certificate in its svcconfig.
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createTestCa,
  HttpsClient,
  kubectl,
  startTestApiServer,
  svcconfigYaml,
  type ClientCert,
  type IssuedCert,
  type TestApiServer,
  type TestCa,
} from '@svc/testing';

const HOUR = 3600_000;
const SSR = '/apis/authentication.svc.io/v1/selfsubjectreviews';

interface UserInfoJson {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

let t: TestApiServer;
let dir: string;
let ca1: TestCa;
let ca2: TestCa;
let anon: HttpsClient;

const asCert = (c: IssuedCert): ClientCert => ({ cert: c.chainPem, key: c.keyPem });

async function whoami(client: HttpsClient): Promise<{ status: number; user?: UserInfoJson; reason?: string }> {
  const r = await client.post(SSR, { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' });
  const body = r.json<{ status?: { userInfo: UserInfoJson }; reason?: string }>();
  return { status: r.status, user: body.status?.userInfo, reason: body.reason };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-x509-'));
  [ca1, ca2] = await Promise.all([createTestCa('client-ca-1'), createTestCa('client-ca-2')]);
  await writeFile(join(dir, 'client-ca.crt'), ca1.certPem + ca2.certPem);
  t = await startTestApiServer({ args: ['--client-ca-file', join(dir, 'client-ca.crt')] });
  anon = new HttpsClient(t.server.url, t.server.caPem);
});

afterAll(async () => {
  await t?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('makes the Common Name the user and each Organization a group, with the certificate hash as credential id', async () => {
  const c = await ca1.issue({ commonName: 'alice', organizations: ['dev', 'ops'] });
  const r = await whoami(anon.withClientCert(asCert(c)));
  expect(r.status).toBe(201);
  const der = new X509Certificate(c.certPem).raw;
  expect(r.user).toEqual({
    username: 'alice',
    groups: ['dev', 'ops', 'system:authenticated'],
    extra: { 'authentication.svc.io/credential-id': [`X509SHA256=${createHash('sha256').update(der).digest('hex')}`] },
  });
});

it('accepts certificates of every CA in the bundle', async () => {
  const r = await whoami(anon.withClientCert(asCert(await ca2.issue({ commonName: 'bob' }))));
  expect(r.status).toBe(201);
  expect(r.user?.username).toBe('bob');
  expect(r.user?.groups).toEqual(['system:authenticated']);
});

it('follows the intermediates the client sends', async () => {
  const mid = await ca1.intermediate('team-ca');
  const r = await whoami(
    anon.withClientCert(asCert(await mid.issue({ commonName: 'carol', organizations: ['team'] }))),
  );
  expect(r.status).toBe(201);
  expect(r.user?.username).toBe('carol');
});

describe('refuses with 401 instead of ignoring', () => {
  it.each<[string, () => Promise<IssuedCert>]>([
    [
      'an expired certificate',
      () =>
        ca1.issue({
          commonName: 'old',
          notBefore: new Date(Date.now() - 3 * HOUR),
          notAfter: new Date(Date.now() - HOUR),
        }),
    ],
    [
      'a certificate that is not valid yet',
      () => ca1.issue({ commonName: 'early', notBefore: new Date(Date.now() + HOUR) }),
    ],
    [
      'a certificate of an unknown CA',
      async () => (await createTestCa('stranger-ca')).issue({ commonName: 'mallory' }),
    ],
    [
      "a certificate signed by another key in a trusted CA's name",
      async () => (await createTestCa('client-ca-1')).issue({ commonName: 'mallory' }),
    ],
    ['a certificate only for server authentication', () => ca1.issue({ commonName: 'server', usages: ['server'] })],
    ['a certificate without a Common Name', () => ca1.issue({ commonName: '' })],
  ])('%s', async (_what, make) => {
    const r = await whoami(anon.withClientCert(asCert(await make())));
    expect(r).toEqual({ status: 401, user: undefined, reason: 'Unauthorized' });
  });

  it('a chain whose intermediate the client leaves out', async () => {
    const mid = await ca1.intermediate('hidden-ca');
    const c = await mid.issue({ commonName: 'dave' });
    expect((await whoami(anon.withClientCert({ cert: c.certPem, key: c.keyPem }))).status).toBe(401);
  });
});

it('treats a request without a certificate as anonymous', async () => {
  expect(await whoami(anon)).toEqual({
    status: 201,
    user: { username: 'system:anonymous', groups: ['system:unauthenticated'] },
    reason: undefined,
  });
});

it('tries certificates before bearer tokens; a bad certificate leaves the token to decide', async () => {
  const good = asCert(await ca1.issue({ commonName: 'erin' }));
  expect((await whoami(t.client.withClientCert(good))).user?.username).toBe('erin');
  const expired = asCert(
    await ca1.issue({
      commonName: 'old',
      notBefore: new Date(Date.now() - 3 * HOUR),
      notAfter: new Date(Date.now() - HOUR),
    }),
  );
  expect((await whoami(t.client.withClientCert(expired))).user?.username).toBe('admin');
});

// `kubectl auth whoami` with a certificate: e2e/kubectl-auth.int.test.ts (it needs --naming=kubernetes).
it('serves kubectl with a client certificate in its svcconfig', async () => {
  const c = await ca2.issue({ commonName: 'kube-user', organizations: ['system:masters'] });
  const home = join(dir, 'home');
  const config = join(dir, 'cert.svcconfig');
  await writeFile(
    config,
    svcconfigYaml({
      server: t.server.url,
      caPem: t.server.caPem,
      clientCertPem: c.chainPem,
      clientKeyPem: c.keyPem,
      user: 'kube-user',
    }),
  );
  const get = await kubectl(config, ['get', 'ns', '-o', 'name'], { home });
  expect(get.stderr).toBe('');
  expect(get.code).toBe(0);
  expect(get.stdout.split('\n')).toEqual(expect.arrayContaining(['namespace/default', 'namespace/svc-system']));

  const expired = await ca2.issue({
    commonName: 'kube-user',
    notBefore: new Date(Date.now() - 3 * HOUR),
    notAfter: new Date(Date.now() - HOUR),
  });
  await writeFile(
    config,
    svcconfigYaml({
      server: t.server.url,
      caPem: t.server.caPem,
      clientCertPem: expired.chainPem,
      clientKeyPem: expired.keyPem,
      user: 'kube-user',
    }),
  );
  const refused = await kubectl(config, ['get', 'ns'], { home });
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toMatch(/Unauthorized|provide credentials/);
});

it('ignores client certificates when no --client-ca-file is given', async () => {
  const plain = await startTestApiServer({ etcd: t.etcd });
  try {
    const c = await ca1.issue({ commonName: 'alice' });
    const r = await whoami(new HttpsClient(plain.server.url, plain.server.caPem).withClientCert(asCert(c)));
    expect(r.user?.username).toBe('system:anonymous');
  } finally {
    await plain.stop();
  }
});
