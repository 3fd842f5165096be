// The Node authorizer and the NodeRestriction admission plugin for two nodes, against real
// etcd: each node reaches its own Node, Lease and pods, and only the secrets, configmaps and
// claims its pods use.
import {
  startTestApiServer,
  waitFor,
  type HttpsClient,
  type TestApiServer,
  createDefaultServiceAccount,
} from '@svc/testing';

let t: TestApiServer;
let nodeA: HttpsClient;
let nodeB: HttpsClient;

const LEASES = '/apis/coordination.svc.io/v1/namespaces/svc-node-lease/leases';

function pod(
  name: string,
  nodeName: string,
  o: { secret?: string; configMap?: string; claim?: string; annotations?: Record<string, string> } = {},
): object {
  const volumes: object[] = [];
  if (o.secret) volumes.push({ name: 's', secret: { secretName: o.secret } });
  if (o.claim) volumes.push({ name: 'c', persistentVolumeClaim: { claimName: o.claim } });
  const env = o.configMap ? [{ name: 'X', valueFrom: { configMapKeyRef: { name: o.configMap, key: 'k' } } }] : [];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, annotations: o.annotations },
    spec: { nodeName, volumes, containers: [{ name: 'c', image: 'busybox', env }] },
  };
}

async function ok(p: Promise<{ status: number; text: string }>): Promise<void> {
  const r = await p;
  if (r.status >= 300) throw new Error(`${r.status}: ${r.text}`);
}

beforeAll(async () => {
  t = await startTestApiServer({
    args: ['--authorization-mode=Node,RBAC', '--enable-admission-plugins=NodeRestriction'],
    tokens: [
      'a-token,system:node:node-a,a-uid,"system:nodes"',
      'b-token,system:node:node-b,b-uid,"system:nodes"',
      'x-token,system:node:node-x,x-uid',
    ],
  });
  nodeA = t.client.withToken('a-token');
  nodeB = t.client.withToken('b-token');
  const admin = t.client;
  await createDefaultServiceAccount(admin, 'default');
  for (const n of ['node-a', 'node-b'])
    await ok(admin.post('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: n } }));
  for (const s of ['sa', 'sb', 'unused'])
    await ok(
      admin.post('/api/v1/namespaces/default/secrets', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: s },
        stringData: { k: 'v' },
      }),
    );
  for (const c of ['ca', 'cb'])
    await ok(
      admin.post('/api/v1/namespaces/default/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: c },
        data: { k: 'v' },
      }),
    );
  await ok(
    admin.post(
      '/api/v1/namespaces/default/pods',
      pod('pa', 'node-a', { secret: 'sa', configMap: 'ca', claim: 'pvc-a' }),
    ),
  );
  await ok(admin.post('/api/v1/namespaces/default/pods', pod('pb', 'node-b', { secret: 'sb', configMap: 'cb' })));
  await waitFor(
    'the node graph to hold pa',
    async () => (await nodeA.get('/api/v1/namespaces/default/pods/pa')).status === 200,
  );
}, 60_000);

afterAll(async () => {
  await t?.stop();
});

describe('Node authorizer', () => {
  it('lets a node read the secrets and configmaps of its own pods only', async () => {
    expect((await nodeA.get('/api/v1/namespaces/default/secrets/sa')).status).toBe(200);
    expect((await nodeA.get('/api/v1/namespaces/default/configmaps/ca')).status).toBe(200);
    expect((await nodeA.get('/api/v1/namespaces/default/secrets/sb')).status).toBe(403);
    expect((await nodeA.get('/api/v1/namespaces/default/configmaps/cb')).status).toBe(403);
    expect((await nodeA.get('/api/v1/namespaces/default/secrets/unused')).status).toBe(403);
    expect((await nodeA.get('/api/v1/namespaces/default/secrets')).status).toBe(403);
    expect((await nodeB.get('/api/v1/namespaces/default/secrets/sb')).status).toBe(200);
    expect((await nodeB.get('/api/v1/namespaces/default/secrets/sa')).status).toBe(403);
    // Not in system:nodes: not a node.
    expect((await t.client.withToken('x-token').get('/api/v1/namespaces/default/secrets/sa')).status).toBe(403);
  });

  it('follows pods as they are bound and deleted', async () => {
    expect((await nodeB.get('/api/v1/namespaces/default/secrets/unused')).status).toBe(403);
    await ok(t.client.post('/api/v1/namespaces/default/pods', pod('pb2', 'node-b', { secret: 'unused' })));
    await waitFor(
      "node-b to reach the new pod's secret",
      async () => (await nodeB.get('/api/v1/namespaces/default/secrets/unused')).status === 200,
    );
    await ok(t.client.delete('/api/v1/namespaces/default/pods/pb2?gracePeriodSeconds=0'));
    await waitFor(
      'node-b to lose the secret',
      async () => (await nodeB.get('/api/v1/namespaces/default/secrets/unused')).status === 403,
    );
  });

  it('keeps what another pod of the node still references when one of two pods goes', async () => {
    const cm = '/api/v1/namespaces/default/configmaps/only-pb3';
    await ok(
      t.client.post(
        '/api/v1/namespaces/default/pods',
        pod('pb3', 'node-b', { secret: 'unused', configMap: 'only-pb3' }),
      ),
    );
    await ok(t.client.post('/api/v1/namespaces/default/pods', pod('pb4', 'node-b', { secret: 'unused' })));
    // Allowed but missing is 404; not allowed is 403.
    await waitFor('node-b to reach the ConfigMap only pb3 uses', async () => (await nodeB.get(cm)).status === 404);
    await ok(t.client.delete('/api/v1/namespaces/default/pods/pb3?gracePeriodSeconds=0'));
    await waitFor('node-b to lose the ConfigMap only pb3 used', async () => (await nodeB.get(cm)).status === 403);
    // pb4 still mounts the secret both used.
    expect((await nodeB.get('/api/v1/namespaces/default/secrets/unused')).status).toBe(200);
    await ok(t.client.delete('/api/v1/namespaces/default/pods/pb4?gracePeriodSeconds=0'));
    await waitFor(
      'node-b to lose the secret with its last pod',
      async () => (await nodeB.get('/api/v1/namespaces/default/secrets/unused')).status === 403,
    );
  });

  it("lets a node read and write its own Node, Lease and pods, not another node's", async () => {
    expect((await nodeA.get('/api/v1/nodes/node-a')).status).toBe(200);
    expect((await nodeA.get('/api/v1/nodes/node-b')).status).toBe(403);
    expect(
      (
        await nodeA.patch(
          '/api/v1/nodes/node-a/status',
          { status: { phase: 'Running' } },
          'application/merge-patch+json',
        )
      ).status,
    ).toBe(200);
    expect(
      (await nodeA.patch('/api/v1/nodes/node-b', { metadata: { labels: { x: 'y' } } }, 'application/merge-patch+json'))
        .status,
    ).toBe(403);
    expect((await nodeA.get('/api/v1/namespaces/default/pods/pb')).status).toBe(403);
    expect(
      (
        await nodeA.patch(
          '/api/v1/namespaces/default/pods/pa/status',
          { status: { phase: 'Running' } },
          'application/merge-patch+json',
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await nodeA.patch(
          '/api/v1/namespaces/default/pods/pb/status',
          { status: { phase: 'Running' } },
          'application/merge-patch+json',
        )
      ).status,
    ).toBe(403);
    expect(
      (
        await nodeA.post(LEASES, {
          apiVersion: 'coordination.svc.io/v1',
          kind: 'Lease',
          metadata: { name: 'node-a' },
          spec: { holderIdentity: 'node-a' },
        })
      ).status,
    ).toBe(201);
    expect((await nodeA.get(`${LEASES}/node-a`)).status).toBe(200);
    expect((await nodeB.get(`${LEASES}/node-a`)).status).toBe(403);
    expect((await nodeA.get('/apis/coordination.svc.io/v1/namespaces/default/leases/node-a')).status).toBe(403);
  });
});

describe('Node authorizer: the rest of the node rules', () => {
  it('lets a node request and read CSRs, create token and access reviews, write events and read services; not delete CSRs', async () => {
    const csrs = '/apis/certificates.svc.io/v1/certificatesigningrequests';
    expect((await nodeA.get(csrs)).status).toBe(200);
    expect(
      (
        await nodeA.post('/apis/authentication.svc.io/v1/tokenreviews', {
          apiVersion: 'authentication.svc.io/v1',
          kind: 'TokenReview',
          spec: { token: 'x' },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await nodeA.post('/apis/authorization.svc.io/v1/subjectaccessreviews', {
          apiVersion: 'authorization.svc.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user: 'u', nonResourceAttributes: { path: '/x', verb: 'get' } },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await nodeA.post('/api/v1/namespaces/default/events', {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name: 'node-a.1' },
          involvedObject: { kind: 'Node', name: 'node-a' },
          reason: 'Starting',
          message: 'x',
        })
      ).status,
    ).toBe(201);
    expect((await nodeA.get('/api/v1/namespaces/default/services')).status).toBe(200);
    expect((await nodeA.request('DELETE', `${csrs}/anything`)).status).toBe(403);
    expect((await nodeA.get('/api/v1/namespaces/default/events')).status).toBe(403);
  });
});

describe('NodeRestriction admission', () => {
  it('refuses node-restriction labels on the node itself', async () => {
    const r = await nodeA.patch(
      '/api/v1/nodes/node-a',
      { metadata: { labels: { 'node-restriction.svc.io/role': 'x' } } },
      'application/merge-patch+json',
    );
    expect(r.status).toBe(403);
    expect(r.text).toContain('node-restriction.svc.io/role');
    expect(
      (
        await nodeA.patch(
          '/api/v1/nodes/node-a',
          { metadata: { labels: { 'topology.svc.io/zone': 'z' } } },
          'application/merge-patch+json',
        )
      ).status,
    ).toBe(200);
  });

  it('lets a node create only mirror pods bound to itself', async () => {
    const mirror = { 'svc.io/config.mirror': 'hash' };
    expect((await nodeA.post('/api/v1/namespaces/default/pods', pod('plain', 'node-a'))).status).toBe(403);
    expect(
      (await nodeA.post('/api/v1/namespaces/default/pods', pod('mirror-b', 'node-b', { annotations: mirror }))).status,
    ).toBe(403);
    expect(
      (await nodeA.post('/api/v1/namespaces/default/pods', pod('mirror-a', 'node-a', { annotations: mirror }))).status,
    ).toBe(201);
  });

  it("refuses a lease with another node's name", async () => {
    const r = await nodeA.post(LEASES, {
      apiVersion: 'coordination.svc.io/v1',
      kind: 'Lease',
      metadata: { name: 'node-b' },
      spec: { holderIdentity: 'node-a' },
    });
    expect(r.status).toBe(403);
  });
});
