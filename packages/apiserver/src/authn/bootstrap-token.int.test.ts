// Bootstrap tokens (--enable-bootstrap-token-auth): every row of the spec's table against
// Secrets stored in the real server.
import { HttpsClient, startTestApiServer, waitFor, type TestApiServer, type Json } from '@svc/testing';

const SSR = '/apis/authentication.svc.io/v1/selfsubjectreviews';
const TYPE = 'bootstrap.svc.io/token';
let t: TestApiServer;
let anon: HttpsClient;
let seq = 0;

/** A fresh token id (6 of [a-z0-9]) and secret (16). */
function newToken(): { id: string; secret: string; token: string } {
  seq++;
  const id = `t${String(seq).padStart(5, '0')}`;
  const secret = `${String(seq).padStart(4, '0')}abcdef012345`.slice(0, 16);
  return { id, secret, token: `${id}.${secret}` };
}

async function storeToken(
  id: string,
  stringData: Record<string, string>,
  o: { type?: string; namespace?: string; name?: string; server?: TestApiServer } = {},
): Promise<void> {
  const server = o.server ?? t;
  const ns = o.namespace ?? 'svc-system';
  const r = await server.client.post(`/api/v1/namespaces/${ns}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: o.name ?? `bootstrap-token-${id}` },
    type: o.type ?? TYPE,
    stringData,
  });
  if (r.status !== 201) throw new Error(`secret: ${r.status} ${r.text}`);
}

const valid = (id: string, secret: string, extra: Record<string, string> = {}): Record<string, string> => ({
  'token-id': id,
  'token-secret': secret,
  'usage-bootstrap-authentication': 'true',
  ...extra,
});

async function whoami(token: string, client = anon): Promise<{ status: number; user?: Json }> {
  const r = await client
    .withToken(token)
    .post(SSR, { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' });
  return { status: r.status, user: r.json<Json>().status?.userInfo as Json | undefined };
}

beforeAll(async () => {
  t = await startTestApiServer({ args: ['--enable-bootstrap-token-auth'] });
  anon = new HttpsClient(t.server.url, t.server.caPem);
});

afterAll(async () => {
  await t?.stop();
});

it('authenticates as system:bootstrap:<id> in system:bootstrappers plus the extra groups', async () => {
  const { id, secret, token } = newToken();
  await storeToken(
    id,
    valid(id, secret, {
      description: 'join',
      'usage-bootstrap-signing': 'true',
      expiration: new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, 'Z'),
      'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token, system:bootstrappers:worker',
    }),
  );
  expect(await whoami(token)).toEqual({
    status: 201,
    user: {
      username: `system:bootstrap:${id}`,
      groups: [
        'system:bootstrappers',
        'system:bootstrappers:kubeadm:default-node-token',
        'system:bootstrappers:worker',
        'system:authenticated',
      ],
    },
  });
});

it('accepts a token without expiration and without extra groups', async () => {
  const { id, secret, token } = newToken();
  await storeToken(id, valid(id, secret));
  expect((await whoami(token)).user?.groups).toEqual(['system:bootstrappers', 'system:authenticated']);
});

it('stops accepting a token once its Secret is deleted', async () => {
  const { id, secret, token } = newToken();
  await storeToken(id, valid(id, secret));
  expect((await whoami(token)).status).toBe(201);
  await t.client.delete(`/api/v1/namespaces/svc-system/secrets/bootstrap-token-${id}`);
  // Refused once Kubernetes' token cache lets go of its success (10 s).
  await waitFor('a deleted bootstrap token to be refused', async () => (await whoami(token)).status === 401, {
    timeoutMs: 20_000,
    intervalMs: 200,
  });
});

describe('refuses with 401', () => {
  const ago = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
  it.each<[string, (id: string, secret: string) => Promise<string | void>]>([
    ['an expired token', (id, s) => storeToken(id, valid(id, s, { expiration: ago }))],
    [
      'an unreadable expiration (treated as expired)',
      (id, s) => storeToken(id, valid(id, s, { expiration: 'tomorrow' })),
    ],
    [
      'a token not for authentication (usage missing)',
      (id, s) => storeToken(id, { 'token-id': id, 'token-secret': s }),
    ],
    [
      'a token not for authentication (usage false)',
      (id, s) => storeToken(id, valid(id, s, { 'usage-bootstrap-authentication': 'false' })),
    ],
    [
      'a wrong secret',
      async (id, s) => {
        await storeToken(id, valid(id, s));
        return `${id}.${'x'.repeat(16)}`;
      },
    ],
    ['a secret whose token-id differs', (id, s) => storeToken(id, valid(id, s, { 'token-id': 'zzzzzz' }))],
    ['a secret of another type', (id, s) => storeToken(id, valid(id, s), { type: 'Opaque' })],
    ['a secret in another namespace', (id, s) => storeToken(id, valid(id, s), { namespace: 'default' })],
    ['a secret of another name', (id, s) => storeToken(id, valid(id, s), { name: `token-${id}` })],
    ['no secret at all', async () => undefined],
    [
      'an extra group outside system:bootstrappers:',
      (id, s) => storeToken(id, valid(id, s, { 'auth-extra-groups': 'system:bootstrappers:ok,system:masters' })),
    ],
    [
      'an extra group that is only the prefix',
      (id, s) => storeToken(id, valid(id, s, { 'auth-extra-groups': 'system:bootstrappers:' })),
    ],
  ])('%s', async (_what, setup) => {
    const { id, secret, token } = newToken();
    const other = await setup(id, secret);
    const r = await anon
      .withToken(typeof other === 'string' ? other : token)
      .post(SSR, { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' });
    expect(r.status).toBe(401);
    expect(r.json<Json>().reason).toBe('Unauthorized');
  });

  // The Secret a lenient parser would find exists each time; the format alone refuses the token.
  it.each([
    ['upper case', 'ABCDEF.0123456789abcdef', 'abcdef', '0123456789abcdef'],
    ['a short secret', 'abcdeg.0123456789abcde', 'abcdeg', '0123456789abcde'],
    ['no dot', 'abcdeh0123456789abcdef', 'abcdeh', '0123456789abcdef'],
    ['surrounding text', 'xabcdei.0123456789abcdef', 'abcdei', '0123456789abcdef'],
    // eslint-disable-next-line max-params -- it.each passes each table row's cells as the test's arguments
  ])('a token of the wrong format (%s)', async (_what, token, id, secret) => {
    await storeToken(id, valid(id, secret));
    expect((await whoami(token)).status).toBe(401);
  });
});

it('is off without --enable-bootstrap-token-auth', async () => {
  const off = await startTestApiServer({ etcd: t.etcd });
  try {
    const { id, secret, token } = newToken();
    await storeToken(id, valid(id, secret), { server: off });
    expect((await whoami(token, new HttpsClient(off.server.url, off.server.caPem))).status).toBe(401);
  } finally {
    await off.stop();
  }
});
