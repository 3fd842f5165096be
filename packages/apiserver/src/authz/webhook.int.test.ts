// The webhook authorizer against a real HTTPS server (client certificate + token): allow, deny,
// no opinion, timeout, malformed answers, failure policies, matchConditions and cache TTLs;
// then svc-apiserver with --authorization-mode=ABAC,Webhook.
import { createServer, type Server } from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createTestCa, startTestApiServer, svcconfigYaml, waitFor, type TestApiServer } from '@svc/testing';
import type { AuthorizationAttributes } from './authorizer.js';
import { WebhookAuthorizer, type WebhookAuthorizerOptions } from './webhook.js';
import { loadWebhookKubeconfig } from '../webhook/kubeconfig.js';

interface Review {
  apiVersion: string;
  kind: string;
  spec: { user: string; group?: string[]; groups?: string[]; resourceAttributes?: Record<string, string> };
}

let dir: string;
let server: Server;
let url: string;
let kubeconfig: string;
const seen: Array<{ review: Review; auth?: string }> = [];

/** The webhook's answers are chosen by user-name prefix. */
function answer(user: string): { status?: number; body: string; delayMs?: number } {
  const json = (status: object): string =>
    JSON.stringify({ apiVersion: 'authorization.svc.io/v1', kind: 'SubjectAccessReview', status });
  if (user.startsWith('allow')) return { body: json({ allowed: true, reason: 'hook says yes' }) };
  if (user.startsWith('deny')) return { body: json({ allowed: false, denied: true, reason: 'hook says no' }) };
  if (user.startsWith('noop')) return { body: json({ allowed: false, reason: 'hook does not know' }) };
  if (user.startsWith('slow')) return { body: json({ allowed: true }), delayMs: 2_000 };
  if (user.startsWith('garbage')) return { body: '{"status": nope' };
  if (user.startsWith('nostatus')) return { body: JSON.stringify({ kind: 'SubjectAccessReview' }) };
  return { status: 500, body: 'boom' };
}

const attrs = (user: string, o: Partial<AuthorizationAttributes> = {}): AuthorizationAttributes => ({
  user: { name: user, groups: ['system:authenticated'] },
  isResourceRequest: true,
  path: '/api/v1/namespaces/ns/pods',
  verb: 'list',
  apiGroup: '',
  apiVersion: 'v1',
  namespace: 'ns',
  resource: 'pods',
  subresource: '',
  name: '',
  ...o,
});

function hook(o: Partial<WebhookAuthorizerOptions> = {}): WebhookAuthorizer {
  return new WebhookAuthorizer({
    name: 'test-hook',
    connection: loadWebhookKubeconfig(kubeconfig),
    version: 'v1',
    authorizedTtlMs: 0,
    unauthorizedTtlMs: 0,
    timeoutMs: 500,
    failurePolicy: 'NoOpinion',
    ...o,
  });
}

const callsFor = (user: string): number => seen.filter((s) => s.review.spec.user === user).length;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-authz-webhook-'));
  const ca = await createTestCa('webhook-ca');
  const serving = await ca.issue({ commonName: 'webhook', usages: ['server'], hosts: ['127.0.0.1'] });
  const client = await ca.issue({ commonName: 'apiserver', usages: ['client'] });
  server = createServer(
    { cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => {
        body += d.toString();
      });
      req.on('end', () => {
        const review = JSON.parse(body) as Review;
        seen.push({ review, auth: req.headers.authorization });
        const a = answer(review.spec.user);
        const send = (): void => {
          res.writeHead(a.status ?? 200, { 'Content-Type': 'application/json' });
          res.end(a.body);
        };
        if (a.delayMs) setTimeout(send, a.delayMs).unref();
        else send();
      });
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/authorize`;
  kubeconfig = join(dir, 'webhook.svcconfig');
  await writeFile(
    kubeconfig,
    svcconfigYaml({
      server: url,
      caPem: ca.certPem,
      token: 'hook-token',
      clientCertPem: client.certPem,
      clientKeyPem: client.keyPem,
    }),
  );
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('WebhookAuthorizer', () => {
  it('sends a SubjectAccessReview of the chosen version with the kubeconfig credentials', async () => {
    await hook({ version: 'v1beta1' }).authorize(attrs('allow-wire', { name: 'p1', verb: 'get' }));
    const beta = seen.find((s) => s.review.spec.user === 'allow-wire');
    expect(beta?.review.apiVersion).toBe('authorization.svc.io/v1beta1');
    expect(beta?.review.kind).toBe('SubjectAccessReview');
    expect(beta?.review.spec.group).toEqual(['system:authenticated']);
    expect(beta?.review.spec.resourceAttributes).toEqual({
      namespace: 'ns',
      verb: 'get',
      version: 'v1',
      resource: 'pods',
      name: 'p1',
    });
    expect(beta?.auth).toBe('Bearer hook-token');
    await hook({ version: 'v1' }).authorize(attrs('allow-wire-v1'));
    const v1 = seen.find((s) => s.review.spec.user === 'allow-wire-v1');
    expect(v1?.review.apiVersion).toBe('authorization.svc.io/v1');
    expect(v1?.review.spec.groups).toEqual(['system:authenticated']);
  });

  it('maps allowed, denied and neither to allow, deny and no opinion', async () => {
    expect(await hook().authorize(attrs('allow-1'))).toEqual({ decision: 'allow', reason: 'hook says yes' });
    expect(await hook().authorize(attrs('deny-1'))).toEqual({ decision: 'deny', reason: 'hook says no' });
    expect(await hook().authorize(attrs('noop-1'))).toEqual({ decision: 'noOpinion', reason: 'hook does not know' });
  });

  it.each(['slow-1', 'garbage-1', 'nostatus-1', 'error-1'])(
    'answers per the failure policy when the call fails (%s)',
    async (user) => {
      expect((await hook({ failurePolicy: 'NoOpinion' }).authorize(attrs(user))).decision).toBe('noOpinion');
      const denied = await hook({ failurePolicy: 'Deny' }).authorize(attrs(user));
      expect(denied.decision).toBe('deny');
      expect(denied.reason).toMatch(/^test-hook: /);
    },
  );

  it('times out after the configured timeout', async () => {
    const start = Date.now();
    const r = await hook({ timeoutMs: 200 }).authorize(attrs('slow-2'));
    expect(r.reason).toMatch(/timed out/);
    expect(Date.now() - start).toBeLessThan(1_500);
  });

  it('skips the webhook when a match condition is false, calls it when all are true', async () => {
    const conditions = [
      "request.user.startsWith('allow')",
      "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'ns'",
    ];
    expect((await hook({ matchConditions: conditions }).authorize(attrs('allow-mc'))).decision).toBe('allow');
    expect(callsFor('allow-mc')).toBe(1);
    expect(
      (await hook({ matchConditions: conditions }).authorize(attrs('allow-mc', { namespace: 'other' }))).decision,
    ).toBe('noOpinion');
    expect(
      (
        await hook({ matchConditions: conditions, failurePolicy: 'Deny' }).authorize(
          attrs('deny-mc-skipped', { namespace: 'other' }),
        )
      ).decision,
    ).toBe('noOpinion');
    expect(callsFor('allow-mc')).toBe(1);
    expect(callsFor('deny-mc-skipped')).toBe(0);
  });

  it('on a match condition error denies under Deny and skips under NoOpinion; a false condition still skips', async () => {
    const erroring = ['request.resourceAttributes.nosuchfield == "x"'];
    const deny = await hook({ matchConditions: erroring, failurePolicy: 'Deny' }).authorize(attrs('allow-mcerr'));
    expect(deny.decision).toBe('deny');
    expect(deny.reason).toMatch(/matchConditions error/);
    expect(
      (await hook({ matchConditions: erroring, failurePolicy: 'NoOpinion' }).authorize(attrs('allow-mcerr'))).decision,
    ).toBe('noOpinion');
    expect(
      (await hook({ matchConditions: [...erroring, 'false'], failurePolicy: 'Deny' }).authorize(attrs('allow-mcerr')))
        .decision,
    ).toBe('noOpinion');
    expect(callsFor('allow-mcerr')).toBe(0);
  });

  it('caches authorized and unauthorized answers for their TTLs', async () => {
    const h = hook({ authorizedTtlMs: 300, unauthorizedTtlMs: 60_000 });
    await h.authorize(attrs('allow-ttl'));
    await h.authorize(attrs('allow-ttl'));
    expect(callsFor('allow-ttl')).toBe(1);
    await waitFor('the authorized answer to expire', async () => {
      await h.authorize(attrs('allow-ttl'));
      return callsFor('allow-ttl') === 2;
    });
    await h.authorize(attrs('deny-ttl'));
    await h.authorize(attrs('deny-ttl'));
    await h.authorize(attrs('noop-ttl'));
    await h.authorize(attrs('noop-ttl'));
    expect(callsFor('deny-ttl')).toBe(1);
    expect(callsFor('noop-ttl')).toBe(1);
    // A different request is a different cache entry; failures are not cached.
    await h.authorize(attrs('deny-ttl', { verb: 'get', name: 'x' }));
    expect(callsFor('deny-ttl')).toBe(2);
    await h.authorize(attrs('error-ttl'));
    await h.authorize(attrs('error-ttl'));
    expect(callsFor('error-ttl')).toBe(2);
  });

  it('expires unauthorized answers after the unauthorized TTL', async () => {
    const h = hook({ authorizedTtlMs: 60_000, unauthorizedTtlMs: 300 });
    await h.authorize(attrs('deny-ttl2'));
    await h.authorize(attrs('deny-ttl2'));
    expect(callsFor('deny-ttl2')).toBe(1);
    await waitFor('the unauthorized answer to expire', async () => {
      await h.authorize(attrs('deny-ttl2'));
      return callsFor('deny-ttl2') === 2;
    });
  });
});

describe('svc-apiserver --authorization-mode=ABAC,Webhook', () => {
  let t: TestApiServer;
  beforeAll(async () => {
    const policy = join(dir, 'abac.jsonl');
    await writeFile(
      policy,
      [
        '# ABAC policies, one per line',
        JSON.stringify({
          apiVersion: 'abac.authorization.svc.io/v1beta1',
          kind: 'Policy',
          spec: { user: 'abac-reader', namespace: '*', resource: '*', apiGroup: '*', readonly: true },
        }),
        JSON.stringify({
          apiVersion: 'abac.authorization.svc.io/v1beta1',
          kind: 'Policy',
          spec: { group: 'abac-team', namespace: 'team', resource: 'configmaps', apiGroup: '' },
        }),
        JSON.stringify({
          apiVersion: 'abac.authorization.svc.io/v1beta1',
          kind: 'Policy',
          spec: { user: '*', nonResourcePath: '/version*', readonly: true },
        }),
        '',
      ].join('\n'),
    );
    t = await startTestApiServer({
      args: [
        '--authorization-mode=ABAC,Webhook',
        `--authorization-policy-file=${policy}`,
        `--authorization-webhook-config-file=${kubeconfig}`,
        '--authorization-webhook-version=v1',
        '--authorization-webhook-cache-authorized-ttl=1s',
        '--authorization-webhook-cache-unauthorized-ttl=1s',
      ],
      tokens: [
        'r-token,abac-reader,r-uid',
        'm-token,abac-member,m-uid,"abac-team"',
        'a-token,allow-api,a-uid',
        'd-token,deny-api,d-uid',
        'n-token,noop-api,n-uid',
        'e-token,error-api,e-uid',
      ],
    });
    await t.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
  });

  it('ABAC allows what a policy matches (readonly, group, namespace, non-resource paths)', async () => {
    const reader = t.client.withToken('r-token');
    expect((await reader.get('/api/v1/namespaces/team/secrets')).status).toBe(200);
    expect(
      (
        await reader.post('/api/v1/namespaces/team/configmaps', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'r' },
        })
      ).status,
    ).toBe(403);
    const member = t.client.withToken('m-token');
    expect(
      (
        await member.post('/api/v1/namespaces/team/configmaps', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'm' },
        })
      ).status,
    ).toBe(201);
    expect((await member.get('/api/v1/namespaces/default/configmaps')).status).toBe(403);
    expect((await member.get('/version')).status).toBe(200);
  });

  it('the webhook decides what ABAC does not', async () => {
    expect((await t.client.withToken('a-token').get('/api/v1/namespaces/default/pods')).status).toBe(200);
    const denied = await t.client.withToken('d-token').get('/api/v1/namespaces/default/pods');
    expect(denied.status).toBe(403);
    expect(denied.text).toContain(
      'User \\"deny-api\\" cannot list resource \\"pods\\" in API group \\"\\" in the namespace \\"default\\"',
    );
    expect((await t.client.withToken('n-token').get('/api/v1/namespaces/default/pods')).status).toBe(403);
    expect((await t.client.withToken('e-token').get('/api/v1/namespaces/default/pods')).status).toBe(403);
    const review = seen.filter((s) => s.review.spec.user === 'allow-api').at(-1)?.review;
    expect(review?.apiVersion).toBe('authorization.svc.io/v1');
  });
});
