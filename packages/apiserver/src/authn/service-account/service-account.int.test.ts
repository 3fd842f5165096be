// Service-account tokens end to end: TokenRequest, using the tokens, forged and broken tokens
// signed here with the server's own key files, lookup of the account and bound objects,
// TokenReview, issuer discovery, and `kubectl create token`.
import { createHash, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT, type JSONWebKeySet } from 'jose';
import { generateServingCert } from '@svc/apiserver';
import { HttpsClient, kubectl, startTestApiServer, waitFor, type TestApiServer, type Json } from '@svc/testing';

const ISSUER = 'https://svc.default.svc.cluster.local';
const AUTHN = 'authentication.svc.io/v1';
const SSR = '/apis/authentication.svc.io/v1/selfsubjectreviews';
const TOKEN_REVIEWS = '/apis/authentication.svc.io/v1/tokenreviews';

let t: TestApiServer;
let dir: string;
let rsa: { privateKey: KeyObject; publicKey: KeyObject };
let ec: { privateKey: KeyObject; publicKey: KeyObject };
let anon: HttpsClient;
let ns: string;
let seq = 0;

const kid = (k: KeyObject): string =>
  createHash('sha256')
    .update(k.export({ type: 'spki', format: 'der' }))
    .digest('base64url');
const uniq = (p: string): string => `${p}-${++seq}`;
/** Waiting for a revoked token to be refused: Kubernetes' token cache keeps a success for 10 s. */
const REVOKED = { timeoutMs: 20_000, intervalMs: 200 };
const now = (): number => Math.floor(Date.now() / 1000);

async function create(path: string, body: Json): Promise<Json> {
  const r = await t.client.post(path, body);
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.text}`);
  return r.json<Json>();
}

async function serviceAccount(name = uniq('sa')): Promise<Json> {
  return create(`/api/v1/namespaces/${ns}/serviceaccounts`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name },
  });
}

function requestToken(sa: string, spec: Json = {}, body: Json = {}) {
  return t.client.post(`/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, {
    apiVersion: AUTHN,
    kind: 'TokenRequest',
    spec,
    ...body,
  });
}

async function tokenFor(sa: string, spec: Json = {}): Promise<string> {
  const r = await requestToken(sa, spec);
  if (r.status !== 201) throw new Error(`token for ${sa}: ${r.status} ${r.text}`);
  return r.json<Json>().status.token as string;
}

async function whoami(token: string): Promise<{ status: number; user?: Json }> {
  const r = await anon.withToken(token).post(SSR, { apiVersion: AUTHN, kind: 'SelfSubjectReview' });
  return { status: r.status, user: r.json<Json>().status?.userInfo as Json | undefined };
}

/** Claims as the server writes them for `sa` (uid from the object), overridden by `extra`. */
function claimsFor(sa: Json, extra: Json = {}): Json {
  const n = now();
  return {
    aud: [ISSUER],
    exp: n + 600,
    iat: n,
    nbf: n,
    iss: ISSUER,
    jti: 'forged',
    'svc.io': { namespace: ns, serviceaccount: { name: sa.metadata.name, uid: sa.metadata.uid } },
    sub: `system:serviceaccount:${ns}:${sa.metadata.name as string}`,
    ...extra,
  };
}

function sign(
  claims: Json,
  key: KeyObject = rsa.privateKey,
  header: Json = { alg: 'RS256', kid: kid(rsa.publicKey) },
): Promise<string> {
  return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(key);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-sa-'));
  rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  await writeFile(join(dir, 'sa.key'), rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }));
  await writeFile(join(dir, 'ec.pub'), ec.publicKey.export({ type: 'spki', format: 'pem' }));
  t = await startTestApiServer({
    args: [
      '--service-account-signing-key-file',
      join(dir, 'sa.key'),
      '--service-account-key-file',
      join(dir, 'sa.key'),
      '--service-account-key-file',
      join(dir, 'ec.pub'),
    ],
  });
  anon = new HttpsClient(t.server.url, t.server.caPem);
  ns = 'sa-tokens';
  await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});

afterAll(async () => {
  await t?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('TokenRequest', () => {
  it("issues a token with Kubernetes' claims and the defaults filled in", async () => {
    const sa = await serviceAccount();
    const before = now();
    const r = await requestToken(sa.metadata.name);
    expect(r.status).toBe(201);
    const body = r.json<Json>();
    expect(body).toMatchObject({
      apiVersion: AUTHN,
      kind: 'TokenRequest',
      metadata: { name: sa.metadata.name, namespace: ns },
      spec: { audiences: [ISSUER], expirationSeconds: 3600 },
    });
    const token = body.status.token as string;
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'RS256', kid: kid(rsa.publicKey) });
    const c = decodeJwt(token);
    expect(c).toMatchObject({
      iss: ISSUER,
      aud: [ISSUER],
      sub: `system:serviceaccount:${ns}:${sa.metadata.name as string}`,
      'svc.io': { namespace: ns, serviceaccount: { name: sa.metadata.name, uid: sa.metadata.uid } },
    });
    expect(c.iat).toBeGreaterThanOrEqual(before);
    expect(c.nbf).toBe(c.iat);
    expect(c.exp).toBe((c.iat as number) + 3600);
    expect(typeof c.jti).toBe('string');
    expect(Date.parse(body.status.expirationTimestamp as string)).toBe((c.exp as number) * 1000);
    expect(body.status.expirationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('honours audiences and expirationSeconds', async () => {
    const sa = await serviceAccount();
    const r = await requestToken(sa.metadata.name, { audiences: ['vault', 'db'], expirationSeconds: 600 });
    expect(r.status).toBe(201);
    const c = decodeJwt(r.json<Json>().status.token as string);
    expect(c.aud).toEqual(['vault', 'db']);
    expect((c.exp as number) - (c.iat as number)).toBe(600);
  });

  it.each([
    [
      'a too short expiration',
      { expirationSeconds: 599 },
      'spec.expirationSeconds',
      'may not specify a duration less than 10 minutes',
    ],
    [
      'a too long expiration',
      { expirationSeconds: 2 ** 32 + 1 },
      'spec.expirationSeconds',
      'may not specify a duration larger than 2^32 seconds',
    ],
    [
      'a bound object without a name',
      { boundObjectRef: { kind: 'Secret' } },
      'spec.boundObjectRef.name',
      'Required value',
    ],
    // eslint-disable-next-line max-params -- it.each passes each table row's cells as the test's arguments
  ])('refuses %s with 422', async (_what, spec, field, message) => {
    const sa = await serviceAccount();
    const r = await requestToken(sa.metadata.name, spec);
    expect(r.status).toBe(422);
    const st = r.json<Json>();
    expect(st.reason).toBe('Invalid');
    expect(st.details.causes[0].field).toBe(field);
    expect(st.message).toContain(message);
  });

  it('answers 404 for an account that does not exist', async () => {
    const r = await requestToken('no-such-account');
    expect(r.status).toBe(404);
    expect(r.json<Json>().message).toBe('serviceaccounts "no-such-account" not found');
  });

  it('refuses a body of another kind or version, and other verbs', async () => {
    const sa = await serviceAccount();
    expect((await requestToken(sa.metadata.name, {}, { kind: 'TokenReview' })).status).toBe(400);
    expect((await requestToken(sa.metadata.name, {}, { apiVersion: 'authentication.svc.io/v2' })).status).toBe(400);
    expect(
      (await t.client.get(`/api/v1/namespaces/${ns}/serviceaccounts/${sa.metadata.name as string}/token`)).status,
    ).toBe(405);
  });

  it("accepts the body in Kubernetes' spelling (stock clients) and answers in it", async () => {
    const sa = await serviceAccount();
    const r = await requestToken(sa.metadata.name, {}, { apiVersion: 'authentication.k8s.io/v1' });
    expect(r.status).toBe(201);
    expect(r.json<Json>().apiVersion).toBe('authentication.k8s.io/v1');
  });

  it('binds a token to a Secret; deleting the Secret invalidates it', async () => {
    const sa = await serviceAccount();
    const secret = await create(`/api/v1/namespaces/${ns}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: uniq('bound') },
    });
    const token = await tokenFor(sa.metadata.name, {
      boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: secret.metadata.name },
    });
    expect(decodeJwt(token)['svc.io']).toMatchObject({
      secret: { name: secret.metadata.name, uid: secret.metadata.uid },
    });
    expect((await whoami(token)).status).toBe(201);
    expect((await t.client.delete(`/api/v1/namespaces/${ns}/secrets/${secret.metadata.name as string}`)).status).toBe(
      200,
    );
    await waitFor(
      'the token of a deleted secret to be refused',
      async () => (await whoami(token)).status === 401,
      REVOKED,
    );
  });

  it('binds a token to a Pod (with its node); the user carries pod and node in extra', async () => {
    const sa = await serviceAccount();
    const node = await create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: uniq('node') } });
    const pod = await create(`/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: uniq('pod') },
      spec: {
        serviceAccountName: sa.metadata.name,
        nodeName: node.metadata.name,
        containers: [{ name: 'c', image: 'busybox' }],
      },
    });
    const token = await tokenFor(sa.metadata.name, {
      boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: pod.metadata.name, uid: pod.metadata.uid },
    });
    const me = await whoami(token);
    expect(me.status).toBe(201);
    expect(me.user?.extra).toMatchObject({
      'authentication.svc.io/pod-name': [pod.metadata.name],
      'authentication.svc.io/pod-uid': [pod.metadata.uid],
      'authentication.svc.io/node-name': [node.metadata.name],
      'authentication.svc.io/node-uid': [node.metadata.uid],
    });
    expect(me.user?.extra?.['authentication.svc.io/credential-id']?.[0]).toMatch(/^JTI=/);
  });

  it('refuses binding to a pod of another account (400), a stale uid (409), an unknown kind (400) and a missing object (404)', async () => {
    const sa = await serviceAccount();
    const other = await serviceAccount();
    const pod = await create(`/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: uniq('pod') },
      spec: { serviceAccountName: other.metadata.name, containers: [{ name: 'c', image: 'busybox' }] },
    });
    const ref = (o: Json) => ({ boundObjectRef: { apiVersion: 'v1', ...o } });
    expect((await requestToken(sa.metadata.name, ref({ kind: 'Pod', name: pod.metadata.name }))).status).toBe(400);
    expect(
      (await requestToken(other.metadata.name, ref({ kind: 'Pod', name: pod.metadata.name, uid: 'not-the-uid' })))
        .status,
    ).toBe(409);
    expect((await requestToken(sa.metadata.name, ref({ kind: 'ConfigMap', name: 'x' }))).json<Json>().message).toBe(
      'cannot bind token to object of type v1, Kind=ConfigMap',
    );
    expect((await requestToken(sa.metadata.name, ref({ kind: 'Secret', name: 'nope' }))).status).toBe(404);
  });

  it('binds a token to a Node; deleting the node invalidates it', async () => {
    const sa = await serviceAccount();
    const node = await create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: uniq('node') } });
    const token = await tokenFor(sa.metadata.name, {
      boundObjectRef: { kind: 'Node', apiVersion: 'v1', name: node.metadata.name },
    });
    expect((await whoami(token)).user?.extra?.['authentication.svc.io/node-name']).toEqual([node.metadata.name]);
    await t.client.delete(`/api/v1/nodes/${node.metadata.name as string}`);
    await waitFor(
      'the token of a deleted node to be refused',
      async () => (await whoami(token)).status === 401,
      REVOKED,
    );
  });
});

describe('authenticating with service-account tokens', () => {
  it('runs a request as the account, in its groups', async () => {
    const sa = await serviceAccount();
    const me = await whoami(await tokenFor(sa.metadata.name));
    expect(me.status).toBe(201);
    expect(me.user).toMatchObject({
      username: `system:serviceaccount:${ns}:${sa.metadata.name as string}`,
      uid: sa.metadata.uid,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
    });
  });

  it('refuses the token of a deleted account, also after the name is reused', async () => {
    const sa = await serviceAccount();
    const token = await tokenFor(sa.metadata.name);
    expect((await whoami(token)).status).toBe(201);
    expect(
      (await t.client.delete(`/api/v1/namespaces/${ns}/serviceaccounts/${sa.metadata.name as string}`)).status,
    ).toBe(200);
    // Still accepted at first: it authenticated a moment ago (Kubernetes' token cache).
    expect((await whoami(token)).status).toBe(201);
    await waitFor(
      'the token of a deleted account to be refused',
      async () => (await whoami(token)).status === 401,
      REVOKED,
    );
    await serviceAccount(sa.metadata.name as string);
    expect((await whoami(token)).status).toBe(401);
  });

  it('accepts tokens signed with any key of --service-account-key-file (ECDSA)', async () => {
    const sa = await serviceAccount();
    const token = await sign(claimsFor(sa), ec.privateKey, { alg: 'ES256', kid: kid(ec.publicKey) });
    expect((await whoami(token)).user?.username).toBe(`system:serviceaccount:${ns}:${sa.metadata.name as string}`);
    // Without a key id every key of the right type is tried.
    expect((await whoami(await sign(claimsFor(sa), rsa.privateKey, { alg: 'RS256' }))).status).toBe(201);
  });

  it('allows a minute of clock skew on exp', async () => {
    const sa = await serviceAccount();
    expect((await whoami(await sign(claimsFor(sa, { exp: now() - 30 })))).status).toBe(201);
  });

  describe('refuses with 401', () => {
    let sa: Json;
    beforeAll(async () => {
      sa = await serviceAccount();
    });

    it.each<[string, () => Promise<string>]>([
      ['an expired token', () => sign(claimsFor(sa, { exp: now() - 120 }))],
      ['a token not valid yet', () => sign(claimsFor(sa, { nbf: now() + 600 }))],
      ['a token for another audience', () => sign(claimsFor(sa, { aud: ['vault'] }))],
      ['a token of another issuer', () => sign(claimsFor(sa, { iss: 'https://elsewhere.example' }))],
      [
        "a wrong signature (another key, the server key's id)",
        () => sign(claimsFor(sa), generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey),
      ],
      [
        'an unknown key id',
        () =>
          sign(claimsFor(sa), generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, {
            alg: 'RS256',
            kid: 'unknown-kid',
          }),
      ],
      [
        'a tampered payload',
        async () => {
          const [h, , s] = (await sign(claimsFor(sa))).split('.');
          const forged = Buffer.from(
            JSON.stringify(claimsFor(sa, { sub: 'system:serviceaccount:kube:admin' })),
          ).toString('base64url');
          return `${h}.${forged}.${s}`;
        },
      ],
      ['a token without exp', () => sign(claimsFor(sa, { exp: undefined }))],
      ['a token without the private claim', () => sign(claimsFor(sa, { 'svc.io': undefined }))],
      [
        'a private claim without the account uid',
        () => sign(claimsFor(sa, { 'svc.io': { namespace: ns, serviceaccount: { name: sa.metadata.name } } })),
      ],
      ['a sub that names another account', () => sign(claimsFor(sa, { sub: `system:serviceaccount:${ns}:other` }))],
      [
        'an account uid that differs from the object',
        () =>
          sign(
            claimsFor(sa, { 'svc.io': { namespace: ns, serviceaccount: { name: sa.metadata.name, uid: 'old-uid' } } }),
          ),
      ],
      [
        'an unsigned token (alg none)',
        async () =>
          `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claimsFor(sa))).toString('base64url')}.`,
      ],
      [
        'an HMAC token',
        () => new SignJWT(claimsFor(sa)).setProtectedHeader({ alg: 'HS256' }).sign(Buffer.from('secret')),
      ],
      ['a token that is not a JWT', async () => 'not-a-jwt'],
    ])('%s', async (_what, make) => {
      const r = await anon.withToken(await make()).post(SSR, { apiVersion: AUTHN, kind: 'SelfSubjectReview' });
      expect(r.status).toBe(401);
      expect(r.json<Json>()).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401 });
    });
  });
});

describe('TokenReview', () => {
  const review = (spec: Json) => t.client.post(TOKEN_REVIEWS, { apiVersion: AUTHN, kind: 'TokenReview', spec });

  it("authenticates a token for the server's audiences by default", async () => {
    const sa = await serviceAccount();
    const r = await review({ token: await tokenFor(sa.metadata.name) });
    expect(r.status).toBe(201);
    expect(r.json<Json>().status).toMatchObject({
      authenticated: true,
      audiences: [ISSUER],
      user: {
        username: `system:serviceaccount:${ns}:${sa.metadata.name as string}`,
        uid: sa.metadata.uid,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
      },
    });
  });

  it('checks the audiences the reviewer asks for', async () => {
    const sa = await serviceAccount();
    const token = await tokenFor(sa.metadata.name, { audiences: ['vault'] });
    expect((await review({ token, audiences: ['vault', 'other'] })).json<Json>().status).toMatchObject({
      authenticated: true,
      audiences: ['vault'],
    });
    const wrong = (await review({ token })).json<Json>().status;
    expect(wrong.authenticated).toBe(false);
    expect(wrong.error).toMatch(/aud/);
    expect((await whoami(token)).status).toBe(401); // not valid against the API itself
  });

  it('answers an invalid token with authenticated false and the reason', async () => {
    const r = await review({ token: 'garbage' });
    expect(r.status).toBe(201);
    expect(r.json<Json>().status).toEqual({ authenticated: false, error: 'invalid bearer token' });
  });

  it("authenticates static tokens too (for the server's audiences only)", async () => {
    expect((await review({ token: t.adminToken })).json<Json>().status).toMatchObject({
      authenticated: true,
      user: { username: 'admin' },
      audiences: [ISSUER],
    });
    expect((await review({ token: t.adminToken, audiences: ['vault'] })).json<Json>().status.authenticated).toBe(false);
  });

  it('needs a token (400)', async () => {
    const r = await review({});
    expect(r.status).toBe(400);
    expect(r.json<Json>().message).toBe('token is required for TokenReview in authentication');
  });
});

describe('issuer discovery', () => {
  it('serves the OpenID configuration and the keys, which verify issued tokens', async () => {
    const conf = await anon.get('/.well-known/openid-configuration');
    expect(conf.status).toBe(200);
    expect(conf.json()).toEqual({
      issuer: ISSUER,
      jwks_uri: `${t.server.url}/openid/v1/jwks`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256', 'RS256'],
    });
    const keys = await anon.get('/openid/v1/jwks');
    expect(keys.status).toBe(200);
    expect(keys.headers['content-type']).toMatch(/^application\/jwk-set\+json/);
    const set = keys.json<JSONWebKeySet>();
    expect(set.keys.map((k) => [k.kid, k.alg, k.use])).toEqual(
      expect.arrayContaining([
        [kid(rsa.publicKey), 'RS256', 'sig'],
        [kid(ec.publicKey), 'ES256', 'sig'],
      ]),
    );
    expect(set.keys).toHaveLength(2);
    const sa = await serviceAccount();
    const { payload } = await jwtVerify(await tokenFor(sa.metadata.name), createLocalJWKSet(set), {
      issuer: ISSUER,
      audience: ISSUER,
    });
    expect(payload.sub).toBe(`system:serviceaccount:${ns}:${sa.metadata.name as string}`);
  });
});

describe('kubectl create token', () => {
  it('prints a token the server accepts, with the audience and duration asked for', async () => {
    const sa = await serviceAccount();
    const home = join(dir, 'home');
    const r = await kubectl(t.svcconfigPath, ['create', 'token', sa.metadata.name, '-n', ns], { home });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect((await whoami(r.stdout.trim())).user?.username).toBe(
      `system:serviceaccount:${ns}:${sa.metadata.name as string}`,
    );
    const custom = await kubectl(
      t.svcconfigPath,
      ['create', 'token', sa.metadata.name, '-n', ns, '--audience', 'vault', '--duration', '20m'],
      { home },
    );
    expect(custom.code).toBe(0);
    const c = decodeJwt(custom.stdout.trim());
    expect(c.aud).toEqual(['vault']);
    expect((c.exp as number) - (c.iat as number)).toBe(1200);
    const missing = await kubectl(t.svcconfigPath, ['create', 'token', 'nobody', '-n', ns], { home });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('not found');
  });
});

describe('--service-account-lookup=false', () => {
  it('keeps accepting the token of a deleted account', async () => {
    const loose = await startTestApiServer({
      etcd: t.etcd,
      args: ['--service-account-signing-key-file', join(dir, 'sa.key'), '--service-account-lookup=false'],
    });
    try {
      const c = loose.client;
      await c.post('/api/v1/namespaces/default/serviceaccounts', {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'gone' },
      });
      const token = (
        await c.post('/api/v1/namespaces/default/serviceaccounts/gone/token', {
          apiVersion: AUTHN,
          kind: 'TokenRequest',
        })
      ).json<Json>().status.token as string;
      expect((await c.delete('/api/v1/namespaces/default/serviceaccounts/gone')).status).toBe(200);
      const me = await c.withToken(token).post(SSR, { apiVersion: AUTHN, kind: 'SelfSubjectReview' });
      expect(me.status).toBe(201);
      expect(me.json<Json>().status.userInfo.username).toBe('system:serviceaccount:default:gone');
    } finally {
      await loose.stop();
    }
  });
});

describe('key defaults', () => {
  const tokenOf = async (c: HttpsClient, name: string): Promise<string> => {
    await c.post('/api/v1/namespaces/default/serviceaccounts', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name },
    });
    const r = await c.post(`/api/v1/namespaces/default/serviceaccounts/${name}/token`, {
      apiVersion: AUTHN,
      kind: 'TokenRequest',
    });
    expect(r.status).toBe(201);
    return r.json<Json>().status.token as string;
  };

  it('signs and verifies with --tls-private-key-file when no service-account key is given', async () => {
    const serving = await generateServingCert(['127.0.0.1', 'localhost']);
    await writeFile(join(dir, 'tls.crt'), serving.certPem);
    await writeFile(join(dir, 'tls.key'), serving.keyPem);
    const s = await startTestApiServer({
      etcd: t.etcd,
      args: ['--tls-cert-file', join(dir, 'tls.crt'), '--tls-private-key-file', join(dir, 'tls.key')],
    });
    try {
      const token = await tokenOf(s.client, 'tls-signed');
      expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: kid(createPublicKey(serving.keyPem)) });
      expect((await s.client.withToken(token).post(SSR, { apiVersion: AUTHN, kind: 'SelfSubjectReview' })).status).toBe(
        201,
      );
      expect((await s.client.get('/openid/v1/jwks')).json<JSONWebKeySet>().keys.map((k) => k.kid)).toEqual([
        kid(createPublicKey(serving.keyPem)),
      ]);
    } finally {
      await s.stop();
    }
  });

  it('otherwise generates a key in --cert-dir and keeps it across restarts', async () => {
    const certDir = join(dir, 'kept-pki');
    const args = ['--cert-dir', certDir, '--store-prefix', '/registry-kept-key'];
    const first = await startTestApiServer({ etcd: t.etcd, args });
    let token: string;
    try {
      token = await tokenOf(first.client, 'survivor');
    } finally {
      await first.stop();
    }
    const second = await startTestApiServer({ etcd: t.etcd, args });
    try {
      const me = await second.client.withToken(token).post(SSR, { apiVersion: AUTHN, kind: 'SelfSubjectReview' });
      expect(me.status).toBe(201);
      expect(me.json<Json>().status.userInfo.username).toBe('system:serviceaccount:default:survivor');
    } finally {
      await second.stop();
    }
  });
});
