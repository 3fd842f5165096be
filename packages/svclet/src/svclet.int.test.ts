// The node side of the svclet against a real API server (Node,RBAC authorization, the node
// authenticating with a client certificate): registration, the Lease, status updates, the
// healthz port, and the HTTPS API with webhook authentication and authorization.
import { appendFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import {
  HttpsClient,
  createTestCa,
  expectCode,
  freePort,
  startTestApiServer,
  svcconfigYaml,
  uniqueName,
  waitFor,
  type Json,
  type TestApiServer,
  type TestCa,
} from '@svc/testing';
import type { Node } from '@svc/api';
import { FakePods, FakeRuntime, startTestSvclet, type TestSvclet } from './svclet-testing.js';
import { goArch } from './host-info.js';

const READER = 'reader-token-0123456789';
const PROXY = 'proxy-token-0123456789';
const NOBODY = 'nobody-token-0123456789';
const RBAC = '/apis/rbac.authorization.svc.io/v1';
const NODE = 'node-a';

let server: TestApiServer;
let ca: TestCa;
let dir: string;
let runtime: FakeRuntime;
let pods: FakePods;
let node: TestSvclet;
let api: HttpsClient;
let logFile: string;

const getNode = async (): Promise<Node> => expectCode(await server.client.get(`/api/v1/nodes/${NODE}`), 200) as Node;
const condition = (n: Node, type: string) => n.status?.conditions?.find((c) => c.type === type);

async function clusterRole(name: string, rules: Json[], subject: Json): Promise<void> {
  expectCode(
    await server.client.post(`${RBAC}/clusterroles`, {
      apiVersion: 'rbac.authorization.svc.io/v1',
      kind: 'ClusterRole',
      metadata: { name },
      rules,
    }),
    201,
  );
  expectCode(
    await server.client.post(`${RBAC}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.svc.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: uniqueName(name) },
      roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name },
      subjects: [{ apiGroup: 'rbac.authorization.svc.io', ...subject }],
    }),
    201,
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svclet-int-'));
  ca = await createTestCa('svc-client-ca');
  const caFile = join(dir, 'client-ca.crt');
  await writeFile(caFile, ca.certPem);
  server = await startTestApiServer({
    args: ['--authorization-mode=Node,RBAC', '--enable-admission-plugins=NodeRestriction', '--client-ca-file', caFile],
    tokens: [`${READER},log-reader,uid-r,""`, `${PROXY},proxy-only,uid-p,""`, `${NOBODY},nobody,uid-n,""`],
  });
  // The node's TokenReviews and SubjectAccessReviews (Kubernetes' Node authorizer allows them itself).
  expectCode(
    await server.client.post(`${RBAC}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.svc.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'nodes-auth-delegator' },
      roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects: [{ apiGroup: 'rbac.authorization.svc.io', kind: 'Group', name: 'system:nodes' }],
    }),
    201,
  );
  await clusterRole(
    'svclet-api-reader',
    [{ apiGroups: [''], resources: ['nodes/proxy', 'nodes/metrics'], verbs: ['get'] }],
    { kind: 'User', name: 'log-reader' },
  );
  await clusterRole('svclet-proxy-only', [{ apiGroups: [''], resources: ['nodes/proxy'], verbs: ['get'] }], {
    kind: 'User',
    name: 'proxy-only',
  });

  const cert = await ca.issue({ commonName: `system:node:${NODE}`, organizations: ['system:nodes'] });
  const svcconfig = join(dir, 'node.svcconfig');
  await writeFile(
    svcconfig,
    svcconfigYaml({
      server: server.server.url,
      caPem: server.server.caPem,
      clientCertPem: cert.certPem,
      clientKeyPem: cert.keyPem,
      user: NODE,
    }),
  );
  logFile = join(dir, 'app-1.log');
  writeFileSync(
    logFile,
    [
      '2024-01-01T00:00:01Z stdout F hello',
      '2024-01-01T00:00:02Z stderr F from',
      '2024-01-01T00:00:03Z stdout F the app',
    ].join('\n') + '\n',
  );
  writeFileSync(join(dir, 'app-0.log'), '2024-01-01T00:00:00Z stdout F the previous instance\n');
  pods = new FakePods();
  pods.podList = [
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'default', name: 'web', uid: 'uid-web' },
      spec: { containers: [{ name: 'app' }] },
    },
  ];
  pods.logs.set('default/web/app', { current: logFile, previous: join(dir, 'app-0.log'), running: true });
  runtime = new FakeRuntime();
  node = await startTestSvclet({
    runtime,
    pods,
    config: {
      nodeStatusUpdateFrequency: '200ms',
      nodeStatusReportFrequency: '1s',
      nodeLeaseDurationSeconds: 1,
      authentication: {
        anonymous: { enabled: false },
        webhook: { enabled: true, cacheTTL: '0s' },
        x509: { clientCAFile: caFile },
      },
      authorization: { mode: 'Webhook', webhook: { cacheAuthorizedTTL: '0s', cacheUnauthorizedTTL: '0s' } },
    },
    args: [
      '--svcconfig',
      svcconfig,
      '--hostname-override',
      'Node-A',
      '--node-ip',
      '127.0.0.1',
      '--node-labels',
      'zone=z1',
    ],
  });
  const s = node.svclet.server;
  if (!s) throw new Error('no server');
  api = new HttpsClient(s.url, s.caPem);
}, 60_000);

afterAll(async () => {
  await node?.stop();
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('svclet registration and heartbeat', () => {
  it('registers the Node with labels, the not-ready taint, addresses, capacity, allocatable, nodeInfo and conditions', async () => {
    await node.svclet.registered;
    const n = await waitFor('the node to be Ready', async () => {
      const x = await getNode();
      return condition(x, 'Ready')?.status === 'True' ? x : undefined;
    });
    expect(n.metadata.labels).toEqual({
      'svc.io/hostname': NODE,
      'svc.io/os': 'linux',
      'svc.io/arch': goArch(),
      zone: 'z1',
    });
    expect(n.spec?.taints).toEqual([{ key: 'node.svc.io/not-ready', effect: 'NoSchedule' }]);
    expect(n.status?.addresses).toEqual([
      { type: 'InternalIP', address: '127.0.0.1' },
      { type: 'Hostname', address: NODE },
    ]);
    const memKi = Math.floor(totalmem() / 1024);
    expect(n.status?.capacity).toMatchObject({ cpu: String(cpus().length), memory: `${memKi}Ki`, pods: '110' });
    expect(n.status?.capacity?.['ephemeral-storage']).toMatch(/^\d+Ki$/);
    // Allocatable memory: capacity minus the 100Mi hard eviction threshold.
    expect(n.status?.allocatable).toMatchObject({
      cpu: String(cpus().length),
      memory: `${memKi - 102400}Ki`,
      pods: '110',
    });
    expect(n.status?.nodeInfo).toMatchObject({
      kubeletVersion: 'v1.32.0-svc.0.1.0',
      containerRuntimeVersion: 'fake-runtime://1.0.0',
      operatingSystem: 'linux',
      architecture: goArch(),
    });
    expect(n.status?.daemonEndpoints).toEqual({ kubeletEndpoint: { Port: node.svclet.server?.port } });
    expect(n.status?.conditions?.map((c) => c.type)).toEqual([
      'MemoryPressure',
      'DiskPressure',
      'PIDPressure',
      'Ready',
    ]);
    expect(condition(n, 'MemoryPressure')).toMatchObject({
      status: 'False',
      reason: 'SvcletHasSufficientMemory',
      message: 'svclet has sufficient memory available',
    });
    expect(condition(n, 'PIDPressure')).toMatchObject({ status: 'False', reason: 'SvcletHasSufficientPID' });
    expect(condition(n, 'Ready')).toMatchObject({
      status: 'True',
      reason: 'SvcletReady',
      message: 'svclet is posting ready status',
    });
  });

  it('holds and renews its Lease in svc-node-lease, owned by its Node', async () => {
    const n = await getNode();
    const path = `/apis/coordination.svc.io/v1/namespaces/svc-node-lease/leases/${NODE}`;
    const first = await waitFor(
      'the lease',
      async () => (await server.client.get(path)).status === 200 && (await server.client.get(path)).json<Json>(),
    );
    expect(first.spec).toMatchObject({ holderIdentity: NODE, leaseDurationSeconds: 1 });
    expect(first.metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Node', name: NODE, uid: n.metadata.uid },
    ]);
    // Renewed every quarter of the lease duration (250 ms here).
    let last = first.spec.renewTime as string;
    for (let i = 0; i < 3; i++) {
      last = await waitFor(
        'a renewal',
        async () => {
          const t = (await server.client.get(path)).json<Json>().spec.renewTime as string;
          return t !== last ? t : undefined;
        },
        { timeoutMs: 3000 },
      );
    }
    expect(Date.parse(last)).toBeGreaterThan(Date.now() - 2000);
  });

  it("reports the runtime's readiness in Ready, at once when it changes", async () => {
    const before = condition(await getNode(), 'Ready');
    runtime.networkReady = false;
    const notReady = await waitFor(
      'Ready=False',
      async () => {
        const c = condition(await getNode(), 'Ready');
        return c?.status === 'False' ? c : undefined;
      },
      { timeoutMs: 3000 },
    );
    expect(notReady).toMatchObject({
      reason: 'SvcletNotReady',
      message:
        'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:no network on purpose',
    });
    expect(Date.parse(notReady.lastTransitionTime ?? '')).toBeGreaterThanOrEqual(
      Date.parse(before?.lastTransitionTime ?? ''),
    );
    runtime.down = true;
    await waitFor(
      'runtime down',
      async () => condition(await getNode(), 'Ready')?.message?.startsWith('container runtime is down'),
      { timeoutMs: 3000 },
    );
    runtime.down = false;
    runtime.networkReady = true;
    await waitFor('Ready=True again', async () => condition(await getNode(), 'Ready')?.status === 'True', {
      timeoutMs: 3000,
    });
  });

  it('writes an unchanged status only every nodeStatusReportFrequency (1s here), not every update period (200ms)', async () => {
    const versions = new Set<string>();
    const heartbeats = new Set<string>();
    const until = Date.now() + 2500;
    while (Date.now() < until) {
      const n = await getNode();
      versions.add(n.metadata.resourceVersion ?? '');
      heartbeats.add(condition(n, 'Ready')?.lastHeartbeatTime ?? '');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(versions.size).toBeGreaterThanOrEqual(2);
    expect(versions.size).toBeLessThanOrEqual(5);
    expect(heartbeats.size).toBeGreaterThanOrEqual(2);
  });
});

describe('svclet servers', () => {
  it('serves /healthz on the healthz port without authentication', async () => {
    const url = node.svclet.healthz?.url ?? '';
    const plain = await fetch(`${url}/healthz`);
    expect(plain.status).toBe(200);
    expect(await plain.text()).toBe('ok');
    const verbose = await (await fetch(`${url}/healthz?verbose`)).text();
    expect(verbose.split('\n')).toEqual(['[+]ping ok', '[+]log ok', '[+]syncloop ok', 'healthz check passed', '']);
    expect((await fetch(`${url}/healthz/syncloop`)).status).toBe(200);
    expect((await fetch(`${url}/pods`)).status).toBe(404);
  });

  it('answers 401 without a credential or with a bad token, 403 without rights on nodes/<subresource>', async () => {
    for (const token of [null, 'not-a-real-token']) {
      const r = await api.get('/pods', { token });
      expect(r.status).toBe(401);
      expect(r.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    }
    const r = await api.get('/pods', { token: NOBODY });
    expect(r.status).toBe(403);
    expect(r.json<{ message: string }>().message).toMatch(/User "nobody" cannot get/);
    // /metrics is nodes/metrics, /pods nodes/proxy.
    expect((await api.get('/pods', { token: PROXY })).status).toBe(200);
    expect((await api.get('/metrics', { token: PROXY })).status).toBe(403);
    expect((await api.get('/healthz', { token: PROXY })).status).toBe(200);
  });

  it('serves /pods and /metrics to an authorized user, by token (TokenReview) or client certificate', async () => {
    const r = await api.get('/pods', { token: READER });
    expect(r.status).toBe(200);
    expect(r.json()).toMatchObject({ kind: 'PodList', apiVersion: 'v1', items: [{ metadata: { name: 'web' } }] });
    const m = await api.get('/metrics', { token: READER });
    expect(m.status).toBe(200);
    expect(m.text).toMatch(/^svclet_node_name\{node="node-a"\} 1$/m);
    expect(m.text).toMatch(/^rest_client_requests_total\{code="200",method="GET",host="127\.0\.0\.1:\d+"\} [1-9]\d*$/m);
    const cert = await ca.issue({ commonName: 'log-reader' });
    const byCert = await api.withClientCert({ cert: cert.certPem, key: cert.keyPem }).get('/pods', { token: null });
    expect(byCert.status).toBe(200);
  });

  it('serves /containerLogs from the CRI log file: all, tailLines, timestamps, limitBytes, previous; 404 and 400 as Kubernetes', async () => {
    const get = async (q: string) => api.get(`/containerLogs/default/web/app${q}`, { token: READER });
    const all = await get('');
    expect(all.status).toBe(200);
    expect(all.headers['content-type']).toMatch(/^text\/plain/);
    expect(all.text).toBe('hello\nfrom\nthe app\n');
    expect((await get('?tailLines=2')).text).toBe('from\nthe app\n');
    expect((await get('?tailLines=1&timestamps=true')).text).toBe('2024-01-01T00:00:03Z the app\n');
    expect((await get('?limitBytes=8')).text).toBe('hello\nfr');
    expect((await get('?previous=true')).text).toBe('the previous instance\n');
    expect((await get('?sinceTime=2024-01-01T00:00:02Z')).text).toBe('from\nthe app\n');
    const bad = await get('?tailLines=-1');
    expect(bad.status).toBe(400);
    const noPod = await api.get('/containerLogs/default/nope/app', { token: READER });
    expect([noPod.status, noPod.text]).toEqual([404, 'pod "nope" does not exist\n']);
    const noContainer = await api.get('/containerLogs/default/web/other', { token: READER });
    expect([noContainer.status, noContainer.text]).toEqual([404, 'container "other" not found in pod "web"\n']);
    expect((await api.get('/containerLogs/default/web/app', { token: NOBODY })).status).toBe(403);
  });

  it('follows a container log until the container stops', async () => {
    const s = node.svclet.server;
    const chunks: string[] = [];
    let ended = false;
    await new Promise<void>((resolve, reject) => {
      const req = httpsRequest(
        `${s?.url}/containerLogs/default/web/app?follow=true&tailLines=1`,
        { ca: s?.caPem, headers: { authorization: `Bearer ${READER}` } },
        (res) => {
          expect(res.statusCode).toBe(200);
          res.setEncoding('utf8');
          res.on('data', (c: string) => chunks.push(c));
          res.on('end', () => {
            ended = true;
          });
          resolve();
        },
      );
      req.on('error', reject);
      req.end();
    });
    await waitFor('the tail', () => chunks.join('') === 'the app\n');
    appendFileSync(logFile, '2024-01-01T00:00:04Z stdout F more output\n');
    await waitFor('the new line', () => chunks.join('') === 'the app\nmore output\n');
    expect(ended).toBe(false);
    pods.logs.set('default/web/app', { current: logFile, previous: join(dir, 'app-0.log'), running: false });
    await waitFor('the stream to end', () => ended, { timeoutMs: 5000 });
  });
});

describe('standalone svclet', () => {
  it('runs without an API server: no client and no Node, anonymous requests with AlwaysAllow; healthzPort 0 disables healthz', async () => {
    const alone = await startTestSvclet({ pods: new FakePods(), config: { healthzPort: 0 } });
    try {
      expect(alone.svclet.client).toBeUndefined();
      expect(alone.svclet.healthz).toBeUndefined();
      const s = alone.svclet.server;
      const r = await new HttpsClient(s?.url ?? '', s?.caPem ?? '').get('/pods');
      expect(r.status).toBe(200);
      expect(r.json()).toEqual({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: [] });
    } finally {
      await alone.stop();
    }
  });

  it('refuses webhook authentication or authorization without an API server', async () => {
    await expect(startTestSvclet({ config: { authorization: { mode: 'Webhook' } } })).rejects.toThrow(
      'no client provided, cannot use webhook authorization',
    );
    await expect(startTestSvclet({ config: { authentication: { webhook: { enabled: true } } } })).rejects.toThrow(
      'no client provided, cannot use webhook authentication',
    );
  });

  it('serves on the configured address and port with a certificate from --tls-cert-file', async () => {
    const tls = await ca.issue({ commonName: 'svclet-serving', usages: ['server'], hosts: ['127.0.0.1'] });
    await writeFile(join(dir, 'tls.crt'), tls.certPem);
    await writeFile(join(dir, 'tls.key'), tls.keyPem);
    const port = await freePort();
    const alone = await startTestSvclet({
      config: { port, tlsCertFile: join(dir, 'tls.crt'), tlsPrivateKeyFile: join(dir, 'tls.key') },
    });
    try {
      expect(alone.svclet.server?.url).toBe(`https://127.0.0.1:${port}`);
      const r = await new HttpsClient(`https://127.0.0.1:${port}`, ca.certPem).get('/healthz');
      expect([r.status, r.text]).toEqual([200, 'ok']);
    } finally {
      await alone.stop();
    }
  });
});
