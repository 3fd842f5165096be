// The authentication stage of every request: anonymous on and off, malformed Authorization
// headers (sent byte for byte over TLS), the 401 Status, and the create-only review endpoints.
import { connect } from 'node:tls';
import { URL } from 'node:url';
import { HttpsClient, startTestApiServer, type TestApiServer, type Json } from '@svc/testing';

const AUTHN = 'authentication.svc.io/v1';
const SSR = `/apis/${AUTHN}/selfsubjectreviews`;
const TOKEN_REVIEWS = `/apis/${AUTHN}/tokenreviews`;
const UNAUTHORIZED = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'Unauthorized',
  reason: 'Unauthorized',
  code: 401,
};

let t: TestApiServer;
let anon: HttpsClient;

/** Sends a raw HTTP/1.1 request (headers exactly as given, latin1) and returns status and body. */
function raw(server: TestApiServer, head: string): Promise<{ status: number; body: string }> {
  const u = new URL(server.server.url);
  return new Promise((resolve, reject) => {
    const s = connect(
      { host: u.hostname, port: Number(u.port), ca: server.server.caPem, servername: 'localhost' },
      () => {
        s.write(Buffer.from(`${head}Host: ${u.host}\r\nConnection: close\r\n\r\n`, 'latin1'));
      },
    );
    let data = '';
    s.on('data', (d: Buffer) => {
      data += d.toString('utf8');
    });
    s.on('error', reject);
    s.on('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
      resolve({ status, body: data.slice(data.indexOf('\r\n\r\n') + 4) });
    });
  });
}

beforeAll(async () => {
  t = await startTestApiServer();
  anon = new HttpsClient(t.server.url, t.server.caPem);
});

afterAll(async () => {
  await t?.stop();
});

describe('anonymous requests (--anonymous-auth=true, the default)', () => {
  it('run as system:anonymous in system:unauthenticated', async () => {
    const r = await anon.post(SSR, { apiVersion: AUTHN, kind: 'SelfSubjectReview' });
    expect(r.status).toBe(201);
    expect(r.json()).toEqual({
      apiVersion: AUTHN,
      kind: 'SelfSubjectReview',
      metadata: { creationTimestamp: null },
      status: { userInfo: { username: 'system:anonymous', groups: ['system:unauthenticated'] } },
    });
    expect((await anon.get('/api/v1/namespaces')).status).toBe(200);
  });
});

describe('--anonymous-auth=false', () => {
  let closed: TestApiServer;
  beforeAll(async () => {
    closed = await startTestApiServer({ etcd: t.etcd, args: ['--anonymous-auth=false'] });
  });
  afterAll(async () => {
    await closed?.stop();
  });

  it.each([
    ['a resource', 'GET', '/api/v1/namespaces'],
    ['discovery', 'GET', '/apis'],
    ['/version', 'GET', '/version'],
    ['a health check', 'GET', '/readyz'],
    ['SelfSubjectReview', 'POST', SSR],
  ])('refuses %s without credentials with 401', async (_what, method, path) => {
    const r = await new HttpsClient(closed.server.url, closed.server.caPem).request(
      method,
      path,
      method === 'POST' ? { body: { apiVersion: AUTHN, kind: 'SelfSubjectReview' } } : {},
    );
    expect(r.status).toBe(401);
    expect(r.json()).toEqual(UNAUTHORIZED);
  });

  it('still serves authenticated requests', async () => {
    const r = await closed.client.post(SSR, { apiVersion: AUTHN, kind: 'SelfSubjectReview' });
    expect(r.json<Json>().status.userInfo).toEqual({
      username: 'admin',
      uid: 'admin-uid',
      groups: ['system:masters', 'system:authenticated'],
    });
  });
});

describe('Authorization header', () => {
  const req = (auth: string): string => `GET /api/v1/namespaces HTTP/1.1\r\n${auth}`;

  it('accepts `Bearer <token>` case-insensitively with surrounding blanks', async () => {
    expect((await raw(t, req(`Authorization: Bearer ${t.adminToken}\r\n`))).status).toBe(200);
    expect((await raw(t, req(`authorization: bearer   ${t.adminToken}  \r\n`))).status).toBe(200);
  });

  it.each([
    ['an unknown token', () => 'Authorization: Bearer not-a-known-token\r\n'],
    ['`Bearer` without a token', () => 'Authorization: Bearer\r\n'],
    ['`Bearer` and blanks without a token', () => 'Authorization: Bearer   \r\n'],
    ['an empty header', () => 'Authorization: \r\n'],
    [
      'two headers (both valid)',
      () => `Authorization: Bearer ${t.adminToken}\r\nAuthorization: Bearer ${t.adminToken}\r\n`,
    ],
    ['a token with a space inside', () => `Authorization: Bearer ${t.adminToken} extra\r\n`],
    ['non-ASCII bytes in the token', () => `Authorization: Bearer ${t.adminToken}\u00e9\r\n`],
    ['non-ASCII bytes before the token', () => `Authorization: B\u00e9arer ${t.adminToken}\r\n`],
    ['another scheme', () => 'Authorization: Basic YWRtaW46cGFzc3dvcmQ=\r\n'],
    ['a scheme only', () => `Authorization: ${t.adminToken}\r\n`],
  ])('refuses %s with 401 (not anonymous)', async (_what, header) => {
    const r = await raw(t, req(header()));
    expect(r.status).toBe(401);
    expect(JSON.parse(r.body)).toEqual(UNAUTHORIZED);
  });
});

describe('SelfSubjectReview and TokenReview (create-only, never stored)', () => {
  it("shows the caller's uid, groups and extra", async () => {
    const r = await t.client.post(SSR, { apiVersion: AUTHN, kind: 'SelfSubjectReview', metadata: { name: 'ignored' } });
    expect(r.status).toBe(201);
    expect(r.json<Json>().status.userInfo).toEqual({
      username: 'admin',
      uid: 'admin-uid',
      groups: ['system:masters', 'system:authenticated'],
    });
  });

  it('accepts YAML and the Kubernetes spelling of the group in the body', async () => {
    const y = await t.client.post(SSR, `apiVersion: ${AUTHN}\nkind: SelfSubjectReview\n`, {
      contentType: 'application/yaml',
    });
    expect(y.status).toBe(201);
    const k = await t.client.post(SSR, { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    expect(k.status).toBe(201);
    expect(k.json<Json>().apiVersion).toBe('authentication.k8s.io/v1');
  });

  it('accepts a Protobuf body as kubectl sends it and answers in JSON', async () => {
    const str = (field: number, s: string): Buffer =>
      Buffer.concat([Buffer.from([(field << 3) | 2, Buffer.byteLength(s)]), Buffer.from(s)]);
    const msg = (field: number, b: Buffer): Buffer => Buffer.concat([Buffer.from([(field << 3) | 2, b.length]), b]);
    const typeMeta = Buffer.concat([str(1, 'authentication.k8s.io/v1'), str(2, 'SelfSubjectReview')]);
    const body = Buffer.concat([Buffer.from('k8s\0', 'latin1'), msg(1, typeMeta), msg(2, msg(1, Buffer.alloc(0)))]);
    const r = await t.client.post(SSR, body, {
      contentType: 'application/vnd.kubernetes.protobuf',
      headers: { accept: 'application/vnd.kubernetes.protobuf,application/json' },
    });
    expect(r.status).toBe(201);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.json<Json>().status.userInfo.username).toBe('admin');
  });

  it.each([
    [
      'another kind',
      { apiVersion: AUTHN, kind: 'TokenReview' },
      400,
      'the kind in the data (TokenReview) does not match the expected kind (SelfSubjectReview)',
    ],
    [
      'another version',
      { apiVersion: 'authentication.svc.io/v1beta1', kind: 'SelfSubjectReview' },
      400,
      'the API version in the data (authentication.svc.io/v1beta1) does not match the expected API version (authentication.svc.io/v1)',
    ],
    ['a field of the wrong type', { apiVersion: AUTHN, kind: 'SelfSubjectReview', status: 'x' }, 422, undefined],
    // eslint-disable-next-line max-params -- it.each passes each table row's cells as the test's arguments
  ])('refuses a body of %s', async (_what, body, code, message) => {
    const r = await t.client.post(SSR, body);
    expect(r.status).toBe(code);
    if (message) expect(r.json<Json>().message).toBe(message);
  });

  it('warns about unknown fields, or refuses them with fieldValidation=Strict', async () => {
    const body = { apiVersion: AUTHN, kind: 'SelfSubjectReview', spec: { x: 1 } };
    const warned = await t.client.post(SSR, body);
    expect(warned.status).toBe(201);
    expect(warned.headers.warning).toContain('unknown field \\"spec\\"');
    expect((await t.client.post(`${SSR}?fieldValidation=Strict`, body)).status).toBe(400);
  });

  it.each([
    ['GET on the collection', 'GET', SSR],
    ['GET with watch', 'GET', `${SSR}?watch=1`],
    ['PUT on a name', 'PUT', `${SSR}/x`],
    ['DELETE on the collection', 'DELETE', TOKEN_REVIEWS],
    ['POST to a name', 'POST', `${TOKEN_REVIEWS}/x`],
  ])('answers %s with 405', async (_what, method, path) => {
    const r = await t.client.request(
      method,
      path,
      method === 'GET' || method === 'DELETE' ? {} : { body: { apiVersion: AUTHN, kind: 'SelfSubjectReview' } },
    );
    expect(r.status).toBe(405);
  });

  it('has no namespaced or subresource paths (404)', async () => {
    expect(
      (
        await t.client.post(`/apis/${AUTHN}/namespaces/default/selfsubjectreviews`, {
          apiVersion: AUTHN,
          kind: 'SelfSubjectReview',
        })
      ).status,
    ).toBe(404);
    expect((await t.client.post(`${SSR}/x/status`, { apiVersion: AUTHN, kind: 'SelfSubjectReview' })).status).toBe(404);
  });

  it('are listed in discovery with the create verb only', async () => {
    const list = (await t.client.get(`/apis/${AUTHN}`)).json<{ resources: Json[] }>().resources;
    expect(list.map((r) => [r.name, r.kind, r.namespaced, r.verbs])).toEqual([
      ['tokenreviews', 'TokenReview', false, ['create']],
      ['selfsubjectreviews', 'SelfSubjectReview', false, ['create']],
    ]);
  });
});
