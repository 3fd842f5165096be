// TLS bootstrap end to end: an API server whose client CA is the signing CA, bootstrap tokens,
// Node,RBAC authorization with kubeadm's bindings, and the controller manager's csrapproving
// and csrsigning controllers in this process. The svclet gets its client certificate with the
// bootstrap token, writes --svcconfig, registers as system:node:<node>, keeps its certificate
// across a restart, and rotates it before it expires (12 s certificates here).
import { X509Certificate } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, readlinkSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import {
  parseControllerManagerOptions,
  startControllerManager,
  type RunningControllerManager,
} from '@svc/controller-manager';
import { silentLogger } from '@svc/component-base';
import { expectCode, startTestApiServer, svcconfigYaml, waitFor, type Json, type TestApiServer } from '@svc/testing';
import { FakeRuntime, startTestSvclet, writeSigningCa, type TestSvclet } from './svclet-testing.js';

const RBAC = '/apis/rbac.authorization.svc.io/v1';
const CSRS = '/apis/certificates.svc.io/v1/certificatesigningrequests';
const NODE = 'node-b';
const TOKEN_ID = 'abcdef';
const TOKEN = `${TOKEN_ID}.0123456789abcdef`;

let dir: string;
let caPem: string;
let server: TestApiServer;
let cm: RunningControllerManager;
let svcconfig: string;
let bootstrapConfig: string;
let node: TestSvclet | undefined;

async function bind(role: string, group: string): Promise<void> {
  expectCode(
    await server.client.post(`${RBAC}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.svc.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `${group}-${role}`.replace(/[^a-z0-9.-]/g, '-') },
      roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: role },
      subjects: [{ apiGroup: 'rbac.authorization.svc.io', kind: 'Group', name: group }],
    }),
    201,
  );
}

const csrs = async (): Promise<Json[]> => (expectCode(await server.client.get(CSRS), 200) as { items: Json[] }).items;
const startNode = (): Promise<TestSvclet> =>
  startTestSvclet({
    dir,
    runtime: new FakeRuntime(),
    config: { nodeStatusUpdateFrequency: '500ms', nodeLeaseDurationSeconds: 2 },
    args: ['--svcconfig', svcconfig, '--bootstrap-kubeconfig', bootstrapConfig, '--hostname-override', NODE],
  });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svclet-bootstrap-'));
  const ca = await writeSigningCa(dir, 'signing-ca');
  caPem = ca.certPem;
  server = await startTestApiServer({
    args: [
      '--authorization-mode=Node,RBAC',
      '--enable-admission-plugins=NodeRestriction',
      '--client-ca-file',
      ca.certFile,
      '--enable-bootstrap-token-auth',
    ],
  });
  expectCode(
    await server.client.post('/api/v1/namespaces/svc-system/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `bootstrap-token-${TOKEN_ID}` },
      type: 'bootstrap.svc.io/token',
      stringData: {
        'token-id': TOKEN_ID,
        'token-secret': '0123456789abcdef',
        'usage-bootstrap-authentication': 'true',
      },
    }),
    201,
  );
  // kubeadm's bindings; nodes also get system:node-bootstrapper for their renewal requests, which
  // Kubernetes' Node authorizer allows by itself (ours does not cover CSRs).
  await bind('system:node-bootstrapper', 'system:bootstrappers');
  await bind('system:certificates.svc.io:certificatesigningrequests:nodeclient', 'system:bootstrappers');
  await bind('system:certificates.svc.io:certificatesigningrequests:selfnodeclient', 'system:nodes');
  await bind('system:node-bootstrapper', 'system:nodes');
  cm = await startControllerManager(
    parseControllerManagerOptions(
      [
        '--svcconfig',
        server.svcconfigPath,
        '--secure-port',
        '0',
        '--leader-elect=false',
        '--controllers=csrapproving,csrsigning',
        '--cluster-signing-cert-file',
        ca.certFile,
        '--cluster-signing-key-file',
        ca.keyFile,
        '--cluster-signing-duration',
        '12s',
      ],
      { quiet: true },
    ),
    { logger: silentLogger },
  );
  svcconfig = join(dir, 'etc', 'svclet.conf');
  bootstrapConfig = join(dir, 'bootstrap.conf');
  await writeFile(
    bootstrapConfig,
    svcconfigYaml({
      server: server.server.url,
      caPem: server.server.caPem,
      token: TOKEN,
      user: 'tls-bootstrap-token-user',
    }),
  );
}, 60_000);

afterAll(async () => {
  await node?.stop();
  await cm?.shutdown();
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('svclet TLS bootstrap and client certificate rotation', () => {
  let first: X509Certificate;

  it('requests a node client certificate with the bootstrap token, stores it, writes --svcconfig and registers with it', async () => {
    expect(existsSync(svcconfig)).toBe(false);
    node = await startNode();
    await node.svclet.registered;
    const pki = join(dir, 'pki');
    const current = join(pki, 'svclet-client-current.pem');
    expect(lstatSync(current).isSymbolicLink()).toBe(true);
    expect(readlinkSync(current)).toMatch(/svclet-client-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d\.pem$/);
    expect(existsSync(join(pki, 'svclet-client.key.tmp'))).toBe(false);
    const pem = readFileSync(current, 'utf8');
    expect(pem).toMatch(/-----BEGIN CERTIFICATE-----[\s\S]*-----BEGIN PRIVATE KEY-----/);
    first = new X509Certificate(pem);
    expect(first.subject.split('\n')).toEqual([`CN=system:node:${NODE}`, 'O=system:nodes']);
    expect(first.checkIssued(new X509Certificate(caPem))).toBe(true);
    expect(node.svclet.clientCertificate()?.serialNumber).toBe(first.serialNumber);

    const written = YAML.parse(readFileSync(svcconfig, 'utf8')) as Json;
    expect(written.clusters[0].cluster.server).toBe(server.server.url);
    expect(written.users[0].user).toEqual({ 'client-certificate': current, 'client-key': current });

    const [csr, ...more] = await csrs();
    expect(more).toEqual([]);
    expect(csr?.metadata.name).toMatch(/^node-csr-/);
    expect(csr?.spec).toMatchObject({
      username: `system:bootstrap:${TOKEN_ID}`,
      signerName: 'svc.io/svc-apiserver-client-svclet',
      usages: ['digital signature', 'client auth'],
    });
    expect(csr?.status.conditions[0]).toMatchObject({ type: 'Approved', reason: 'AutoApproved' });

    // The node writes as itself: its Node and Lease exist (the Node authorizer lets only system:node:node-b do that).
    await waitFor(
      'the lease',
      async () =>
        (await server.client.get(`/apis/coordination.svc.io/v1/namespaces/svc-node-lease/leases/${NODE}`)).status ===
        200,
    );
    const n = expectCode(await server.client.get(`/api/v1/nodes/${NODE}`), 200);
    expect(n.metadata.managedFields.map((f: Json) => f.manager)).toContain('svclet');
  });

  it('keeps using the stored certificate after a restart (no new request)', async () => {
    await node?.stop();
    node = await startNode();
    expect(node.svclet.clientCertificate()?.serialNumber).toBe(first.serialNumber);
    expect(await csrs()).toHaveLength(1);
    await node.svclet.registered;
  });

  it('rotates the certificate before it expires: a renewal as the node (selfnodeclient), stored, used at once', async () => {
    const svclet = node?.svclet;
    if (!svclet) throw new Error('no svclet');
    const renewed = await waitFor(
      'a new certificate',
      () => {
        const c = svclet.clientCertificate();
        return c && c.serialNumber !== first.serialNumber ? c : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    const rotatedAt = Date.now();
    const renewal = (await csrs()).find((c) => c.spec.username === `system:node:${NODE}`);
    // The renewal was asked for before the first certificate expired (both times are whole
    // seconds). Its issue may finish a moment after: key, approval and signing take their time
    // on a loaded machine, which is what the 70-90 % deadline leaves room for.
    expect(Date.parse(renewal?.metadata.creationTimestamp ?? '')).toBeLessThan(Date.parse(first.validTo));
    expect(renewal?.status.conditions[0]).toMatchObject({
      type: 'Approved',
      reason: 'AutoApproved',
      message: 'Auto approving self svclet client certificate after SubjectAccessReview.',
    });
    const current = new X509Certificate(readFileSync(join(dir, 'pki', 'svclet-client-current.pem'), 'utf8'));
    expect(current.serialNumber).toBe(renewed.serialNumber);
    expect(readdirSync(join(dir, 'pki')).filter((f) => /^svclet-client-\d/.test(f))).toHaveLength(2);
    // The node keeps renewing its Lease with the new certificate.
    await waitFor(
      'a renewal after the rotation',
      async () => {
        const lease = (
          await server.client.get(`/apis/coordination.svc.io/v1/namespaces/svc-node-lease/leases/${NODE}`)
        ).json<Json>();
        return Date.parse(lease.spec.renewTime) > rotatedAt + 500;
      },
      { timeoutMs: 5000 },
    );
  }, 40_000);
});
