import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createTestCa,
  HttpsClient,
  startTestApiServer,
  svcconfigYaml,
  waitFor,
  type TestApiServer,
  type TestCa,
} from '@svc/testing';
import { startTestControllerManager, type TestControllerManager } from './cm-testing.js';

const READER = 'reader-token-0123456789';
const NOBODY = 'nobody-token-0123456789';

describe("the controller manager's secure port", () => {
  let server: TestApiServer;
  let ca: TestCa;
  let manager: TestControllerManager;
  let client: HttpsClient;

  beforeAll(async () => {
    server = await startTestApiServer({
      args: ['--authorization-mode=RBAC'],
      tokens: [`${READER},metrics-reader,uid-r,""`, `${NOBODY},nobody,uid-n,""`],
    });
    await server.client.request('POST', '/apis/rbac.authorization.svc.io/v1/clusterroles', {
      body: {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'metrics-reader' },
        rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
      },
    });
    await server.client.request('POST', '/apis/rbac.authorization.svc.io/v1/clusterrolebindings', {
      body: {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'metrics-reader' },
        roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: 'metrics-reader' },
        subjects: [{ apiGroup: 'rbac.authorization.svc.io', kind: 'User', name: 'metrics-reader' }],
      },
    });
    ca = await createTestCa('client-ca');
    const caFile = join(server.dir, 'client-ca.crt');
    await writeFile(caFile, ca.certPem);
    manager = await startTestControllerManager(server, [
      '--controllers=serviceaccount,namespace',
      '--client-ca-file',
      caFile,
      '--authentication-kubeconfig',
      server.svcconfigPath,
      '--authorization-kubeconfig',
      server.svcconfigPath,
    ]);
    const s = manager.cm.server;
    if (!s) throw new Error('no secure server');
    client = new HttpsClient(s.url, s.caPem);
    await waitFor('leadership', () => manager.cm.isLeader());
  });
  afterAll(async () => {
    await manager?.stop();
    await server?.stop();
  });

  it('serves /healthz without credentials, with the leaderElection check and one per controller', async () => {
    const plain = await client.request('GET', '/healthz');
    expect(plain.status).toBe(200);
    expect(plain.text).toBe('ok');
    const verbose = await client.request('GET', '/healthz?verbose');
    expect(verbose.text.split('\n')).toEqual(
      expect.arrayContaining([
        '[+]leaderElection ok',
        '[+]namespace-controller ok',
        '[+]serviceaccount-controller ok',
        'healthz check passed',
      ]),
    );
    // As in Kubernetes, always-allowed paths match exactly: a single check needs credentials.
    expect((await client.request('GET', '/healthz/leaderElection')).status).toBe(401);
  });

  it('answers 401 to /metrics without a credential or with a bad token', async () => {
    for (const token of [undefined, 'not-a-real-token']) {
      const r = await client.request('GET', '/metrics', { token: token ?? null });
      expect(r.status).toBe(401);
      expect(r.json()).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401 });
    }
  });

  it('answers 403 to an authenticated user without RBAC rights', async () => {
    const r = await client.request('GET', '/metrics', { token: NOBODY });
    expect(r.status).toBe(403);
    expect(r.json()).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
    expect(r.json<{ message: string }>().message).toMatch(/User "nobody" cannot get path "\/metrics"/);
  });

  it('serves /metrics to a user RBAC allows, by token (TokenReview) or client certificate', async () => {
    const r = await client.request('GET', '/metrics', { token: READER });
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/^leader_election_master_status\{name="svc-controller-manager"\} 1$/m);
    expect(r.text).toMatch(/^workqueue_depth\{name="namespace"\} \d+$/m);
    expect(r.text).toMatch(/^workqueue_adds_total\{name="serviceaccount"\} [1-9]\d*$/m);
    expect(r.text).toMatch(/^rest_client_requests_total\{code="200",method="GET",host="127\.0\.0\.1:\d+"\} [1-9]\d*$/m);
    const cert = await ca.issue({ commonName: 'metrics-reader' });
    const byCert = await client
      .withClientCert({ cert: cert.certPem, key: cert.keyPem })
      .request('GET', '/metrics', { token: null });
    expect(byCert.status).toBe(200);
  });

  it('refuses a client certificate from another CA', async () => {
    const other = await createTestCa('other');
    const cert = await other.issue({ commonName: 'metrics-reader' });
    const r = await client
      .withClientCert({ cert: cert.certPem, key: cert.keyPem })
      .request('GET', '/metrics', { token: null });
    expect(r.status).toBe(401);
  });

  it('unknown paths are 404 once authorized', async () => {
    await server.client.request('POST', '/apis/rbac.authorization.svc.io/v1/clusterroles', {
      body: {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'all-paths' },
        rules: [{ nonResourceURLs: ['*'], verbs: ['get'] }],
      },
    });
    await server.client.request('POST', '/apis/rbac.authorization.svc.io/v1/clusterrolebindings', {
      body: {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'all-paths' },
        roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: 'all-paths' },
        subjects: [{ apiGroup: 'rbac.authorization.svc.io', kind: 'User', name: 'nobody' }],
      },
    });
    // The earlier "forbidden" for nobody on /metrics may be cached for the unauthorized TTL (10 s); another path is not.
    await waitFor(
      'nobody to be allowed',
      async () => (await client.request('GET', '/nothing-here', { token: NOBODY })).status === 404,
    );
    expect((await client.request('GET', '/healthz/leaderElection', { token: NOBODY })).text).toBe('ok');
    expect((await client.request('GET', '/healthz/no-such-check', { token: NOBODY })).status).toBe(404);
  });
});

describe('the secure port without --authorization-kubeconfig', () => {
  let server: TestApiServer;
  let manager: TestControllerManager;

  beforeAll(async () => {
    server = await startTestApiServer();
    const kubeconfig = join(server.dir, 'authn.svcconfig');
    await writeFile(
      kubeconfig,
      svcconfigYaml({ server: server.server.url, caPem: server.server.caPem, token: server.adminToken }),
    );
    manager = await startTestControllerManager(server, [
      '--controllers=serviceaccount',
      '--authentication-kubeconfig',
      kubeconfig,
      '--leader-elect=false',
    ]);
  });
  afterAll(async () => {
    await manager?.stop();
    await server?.stop();
  });

  it('forbids everything not on an always-allowed path, even to an admin', async () => {
    const s = manager.cm.server;
    if (!s) throw new Error('no secure server');
    const client = new HttpsClient(s.url, s.caPem);
    expect((await client.request('GET', '/metrics', { token: server.adminToken })).status).toBe(403);
    const health = await client.request('GET', '/healthz?verbose');
    expect(health.status).toBe(200);
    expect(health.text).not.toMatch(/leaderElection/);
  });
});

describe('the client CA looked up from the API server', () => {
  let server: TestApiServer;
  let ca: TestCa;
  const managers: TestControllerManager[] = [];

  beforeAll(async () => {
    ca = await createTestCa('published-ca');
    const dir = await mkdtemp(join(tmpdir(), 'svc-ca-'));
    const caFile = join(dir, 'ca.crt');
    await writeFile(caFile, ca.certPem);
    server = await startTestApiServer({
      args: ['--client-ca-file', caFile, '--authorization-mode=RBAC'],
      tokens: [`${NOBODY},nobody,uid-n,""`],
    });
  });
  afterAll(async () => {
    for (const m of managers) await m.stop();
    await server?.stop();
  });

  async function start(args: string[]): Promise<HttpsClient> {
    const m = await startTestControllerManager(server, [
      '--controllers=serviceaccount',
      '--leader-elect=false',
      '--authentication-kubeconfig',
      server.svcconfigPath,
      ...args,
    ]);
    managers.push(m);
    const s = m.cm.server;
    if (!s) throw new Error('no secure server');
    return new HttpsClient(s.url, s.caPem);
  }

  it('is published by the API server in extension-apiserver-authentication', async () => {
    const cm = await server.client.request(
      'GET',
      '/api/v1/namespaces/svc-system/configmaps/extension-apiserver-authentication',
    );
    expect(cm.status).toBe(200);
    expect(cm.json<{ data: Record<string, string> }>().data['client-ca-file']).toBe(ca.certPem);
  });

  it('accepts client certificates of that CA without --client-ca-file (the user is then authorized or not)', async () => {
    const client = await start([]);
    const cert = await ca.issue({ commonName: 'someone' });
    const r = await client
      .withClientCert({ cert: cert.certPem, key: cert.keyPem })
      .request('GET', '/metrics', { token: null });
    expect(r.status).toBe(403);
    expect(r.json<{ message: string }>().message).toMatch(/User "someone"/);
  });

  it('does not look it up with --authentication-skip-lookup', async () => {
    const client = await start(['--authentication-skip-lookup']);
    const cert = await ca.issue({ commonName: 'someone' });
    expect(
      (
        await client
          .withClientCert({ cert: cert.certPem, key: cert.keyPem })
          .request('GET', '/metrics', { token: null })
      ).status,
    ).toBe(401);
  });

  it('a lookup the credential may not make stops start-up, unless failures are tolerated', async () => {
    const kubeconfig = join(server.dir, 'nobody.svcconfig');
    await writeFile(
      kubeconfig,
      svcconfigYaml({ server: server.server.url, caPem: server.server.caPem, token: NOBODY }),
    );
    await expect(
      startTestControllerManager(server, [
        '--controllers=serviceaccount',
        '--leader-elect=false',
        '--authentication-kubeconfig',
        kubeconfig,
      ]),
    ).rejects.toThrow(
      /looking up the client CA in configmap svc-system\/extension-apiserver-authentication failed.*HTTP 403/,
    );
    const m = await startTestControllerManager(server, [
      '--controllers=serviceaccount',
      '--leader-elect=false',
      '--authentication-kubeconfig',
      kubeconfig,
      '--authentication-tolerate-lookup-failure',
    ]);
    managers.push(m);
    expect(m.cm.server).toBeDefined();
  });
});
