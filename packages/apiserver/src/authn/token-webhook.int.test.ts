// The token webhook against a real HTTPS webhook server made by the test: TokenReview in
// Kubernetes' wire format (v1beta1 by default, v1 on request), authenticated / not / failing
// answers, the answer cache and its TTL, and a real API server with the flags.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestCa, HttpsClient, startTestApiServer, type TestApiServer, type Json } from '@svc/testing';
import { TokenWebhookAuthenticator } from './token-webhook.js';
import { loadWebhookKubeconfig } from '../webhook/kubeconfig.js';

const AUDIENCE = 'https://svc.default.svc.cluster.local';
let server: Server;
let url = '';
let caPem = '';
let dir: string;
let kubeconfig: string;
const reviews: Json[] = [];
const authHeaders: Array<string | undefined> = [];

/** Tokens the webhook knows: `good-*` are users, `fail` answers 500, anything else is refused. */
function answer(review: Json): { code: number; body: Json } {
  const token = String(review.spec?.token ?? '');
  if (token === 'fail') return { code: 500, body: { message: 'boom' } };
  if (token === 'bad-json') return { code: 200, body: 'nope' as unknown as Json };
  if (token.startsWith('good-')) {
    return {
      code: 200,
      body: {
        apiVersion: review.apiVersion,
        kind: 'TokenReview',
        status: {
          authenticated: true,
          audiences: token === 'good-other-aud' ? ['other'] : undefined,
          user: {
            username: token.slice(5),
            uid: `uid-${token.slice(5)}`,
            groups: ['webhook-users'],
            extra: { 'example.com/team': ['blue'] },
          },
        },
      },
    };
  }
  return {
    code: 200,
    body: {
      apiVersion: review.apiVersion,
      kind: 'TokenReview',
      status: { authenticated: false, error: 'unknown token' },
    },
  };
}

beforeAll(async () => {
  const ca = await createTestCa('webhook-ca');
  caPem = ca.certPem;
  const cert = await ca.issue({ commonName: '127.0.0.1', usages: ['server'], hosts: ['127.0.0.1'] });
  server = createServer({ cert: cert.chainPem, key: cert.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      const review = JSON.parse(body) as Json;
      reviews.push(review);
      authHeaders.push(req.headers.authorization);
      const { code, body: out } = answer(review);
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(typeof out === 'string' ? out : JSON.stringify(out));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/authenticate`;
  dir = await mkdtemp(join(tmpdir(), 'svc-token-webhook-'));
  await writeFile(join(dir, 'ca.crt'), caPem);
  kubeconfig = join(dir, 'webhook.yaml');
  await writeFile(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters:
- name: authn
  cluster:
    server: ${url}
    certificate-authority: ca.crt
users:
- name: apiserver
  user:
    token: webhook-secret
contexts:
- name: webhook
  context: {cluster: authn, user: apiserver}
current-context: webhook
`,
  );
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

const webhook = (o: { version?: 'v1' | 'v1beta1'; cacheTtlMs?: number; now?: () => number } = {}) =>
  new TokenWebhookAuthenticator({
    target: loadWebhookKubeconfig(kubeconfig),
    version: o.version ?? 'v1beta1',
    cacheTtlMs: o.cacheTtlMs ?? 0,
    apiAudiences: [AUDIENCE],
    ...(o.now ? { now: o.now } : {}),
  });

describe('TokenWebhookAuthenticator', () => {
  it('sends a v1beta1 TokenReview with the token and audiences, with the kubeconfig credentials, and takes the user', async () => {
    const before = reviews.length;
    const r = await webhook().authenticateToken('good-jane', [AUDIENCE]);
    expect(r).toEqual({
      user: { name: 'jane', uid: 'uid-jane', groups: ['webhook-users'], extra: { 'example.com/team': ['blue'] } },
      audiences: [AUDIENCE],
    });
    expect(reviews[before]).toEqual({
      apiVersion: 'authentication.svc.io/v1beta1',
      kind: 'TokenReview',
      metadata: { creationTimestamp: null },
      spec: { token: 'good-jane', audiences: [AUDIENCE] },
      status: { user: {} },
    });
    expect(authHeaders[before]).toBe('Bearer webhook-secret');
  });

  it('speaks v1 when asked', async () => {
    const before = reviews.length;
    expect((await webhook({ version: 'v1' }).authenticateToken('good-jo', [AUDIENCE]))?.user.name).toBe('jo');
    expect(reviews[before]?.apiVersion).toBe('authentication.svc.io/v1');
  });

  it('refuses tokens the webhook does not authenticate, or for audiences it does not grant', async () => {
    expect(await webhook().authenticateToken('stranger', [AUDIENCE])).toBeNull();
    expect(await webhook().authenticateToken('good-other-aud', [AUDIENCE])).toBeNull();
  });

  it('fails on a failing or malformed answer', async () => {
    await expect(webhook().authenticateToken('fail', [AUDIENCE])).rejects.toThrow(/answered 500/);
    await expect(webhook().authenticateToken('bad-json', [AUDIENCE])).rejects.toThrow(/not JSON/);
  });

  it('caches answers (authenticated or not) for the TTL, failures not at all', async () => {
    let clock = 1_000_000;
    const w = webhook({ cacheTtlMs: 300, now: () => clock });
    const before = reviews.length;
    for (let i = 0; i < 3; i++) {
      expect((await w.authenticateToken('good-cached', [AUDIENCE]))?.user.name).toBe('cached');
      expect(await w.authenticateToken('nobody', [AUDIENCE])).toBeNull();
    }
    expect(reviews.length).toBe(before + 2);
    clock += 299;
    expect((await w.authenticateToken('good-cached', [AUDIENCE]))?.user.name).toBe('cached');
    expect(reviews.length).toBe(before + 2);
    clock += 1;
    expect((await w.authenticateToken('good-cached', [AUDIENCE]))?.user.name).toBe('cached');
    expect(reviews.length).toBe(before + 3);
    for (let i = 0; i < 2; i++) await expect(w.authenticateToken('fail', [AUDIENCE])).rejects.toThrow();
    expect(reviews.length).toBe(before + 5);
  });
});

describe('API server with --authentication-token-webhook-config-file', () => {
  let t: TestApiServer;
  let anon: HttpsClient;
  const ssr = (token: string) =>
    anon.withToken(token).post('/apis/authentication.svc.io/v1/selfsubjectreviews', {
      apiVersion: 'authentication.svc.io/v1',
      kind: 'SelfSubjectReview',
    });

  beforeAll(async () => {
    t = await startTestApiServer({
      args: [
        '--authentication-token-webhook-config-file',
        kubeconfig,
        '--authentication-token-webhook-version',
        'v1',
        '--authentication-token-webhook-cache-ttl',
        '1s',
      ],
    });
    anon = new HttpsClient(t.server.url, t.server.caPem);
  });

  afterAll(async () => {
    await t?.stop();
  });

  it('authenticates through the webhook; refused or failing tokens get 401; the admin token never reaches it', async () => {
    const r = await ssr('good-web');
    expect(r.status).toBe(201);
    expect(r.json<Json>().status.userInfo).toEqual({
      username: 'web',
      uid: 'uid-web',
      groups: ['webhook-users', 'system:authenticated'],
      extra: { 'example.com/team': ['blue'] },
    });
    expect((await ssr('stranger')).status).toBe(401);
    expect((await ssr('fail')).status).toBe(401);
    const before = reviews.length;
    expect((await t.client.get('/api/v1/namespaces')).status).toBe(200);
    expect(reviews.length).toBe(before);
  });
});
