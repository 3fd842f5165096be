// The authenticating proxy (--requestheader-*) against a real server: a proxy certificate
// from the request-header CA (made here) with an allowed Common Name asserts the user in
// headers; the same headers from a --client-ca-file certificate, a CN not allowed, or no
// certificate are refused; the client CA keeps working on its own.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createTestCa,
  HttpsClient,
  startTestApiServer,
  type ClientCert,
  type IssuedCert,
  type TestApiServer,
  type Json,
} from '@svc/testing';

const SSR = '/apis/authentication.svc.io/v1/selfsubjectreviews';
let t: TestApiServer;
let dir: string;
let anon: HttpsClient;
let proxy: ClientCert;
let otherProxy: ClientCert;
let clientCaUser: ClientCert;
const asCert = (c: IssuedCert): ClientCert => ({ cert: c.chainPem, key: c.keyPem });

const HEADERS = {
  'X-Remote-User': 'jane',
  'X-Remote-Uid': 'uid-7',
  'X-Remote-Group': ['dev', 'ops'],
  'X-Remote-Extra-Scopes': ['read', 'write'],
  'X-Remote-Extra-Acme.com%2Fproject': 'p1',
};

async function whoami(
  client: HttpsClient,
  headers: Record<string, string | string[]> = HEADERS,
): Promise<{ status: number; user?: Json }> {
  const r = await client.post(SSR, { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' }, { headers });
  return { status: r.status, user: r.json<Json>().status?.userInfo };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-requestheader-'));
  const [proxyCa, clientCa] = await Promise.all([createTestCa('front-proxy-ca'), createTestCa('client-ca')]);
  await writeFile(join(dir, 'front-proxy-ca.crt'), proxyCa.certPem);
  await writeFile(join(dir, 'client-ca.crt'), clientCa.certPem);
  proxy = asCert(await proxyCa.issue({ commonName: 'front-proxy-client' }));
  otherProxy = asCert(await proxyCa.issue({ commonName: 'someone-else' }));
  clientCaUser = asCert(await clientCa.issue({ commonName: 'front-proxy-client', organizations: ['certs'] }));
  t = await startTestApiServer({
    args: [
      '--client-ca-file',
      join(dir, 'client-ca.crt'),
      '--requestheader-client-ca-file',
      join(dir, 'front-proxy-ca.crt'),
      '--requestheader-allowed-names',
      'front-proxy-client',
      '--requestheader-username-headers',
      'X-Remote-User',
      '--requestheader-uid-headers',
      'X-Remote-Uid',
      '--requestheader-group-headers',
      'X-Remote-Group',
      '--requestheader-extra-headers-prefix',
      'X-Remote-Extra-',
    ],
  });
  anon = new HttpsClient(t.server.url, t.server.caPem);
});

afterAll(async () => {
  await t?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('believes the headers of the proxy certificate with an allowed name', async () => {
  const r = await whoami(anon.withClientCert(proxy));
  expect(r.status).toBe(201);
  expect(r.user).toEqual({
    username: 'jane',
    uid: 'uid-7',
    groups: ['dev', 'ops', 'system:authenticated'],
    extra: { scopes: ['read', 'write'], 'acme.com/project': ['p1'] },
  });
});

it('without user headers the proxy certificate is no proxy (and not a --client-ca-file user)', async () => {
  expect((await whoami(anon.withClientCert(proxy), {})).status).toBe(401);
});

it('refuses the headers with a proxy certificate whose CN is not allowed', async () => {
  expect((await whoami(anon.withClientCert(otherProxy))).status).toBe(401);
});

it('refuses the headers without a client certificate', async () => {
  expect((await whoami(anon)).status).toBe(401);
});

it("does not take a --client-ca-file certificate as the proxy: it is that certificate's user", async () => {
  const r = await whoami(anon.withClientCert(clientCaUser));
  expect(r.status).toBe(201);
  expect(r.user?.username).toBe('front-proxy-client');
  expect(r.user?.groups).toEqual(['certs', 'system:authenticated']);
});
