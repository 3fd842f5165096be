// The CSR approving and signing controllers against a real API server under RBAC whose
// --client-ca-file is the signing CA: a bootstrap user's node client request is approved
// (nodeclient), signed, and its certificate logs in as the node; the node renews itself
// (selfnodeclient); requests that break the signer's rules are refused when approved by hand.
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  expectCode,
  startTestApiServer,
  uniqueName,
  waitFor,
  type HttpsClient,
  type Json,
  type TestApiServer,
} from '@svc/testing';
import type { CertificateSigningRequest } from '@svc/api';
import { startTestControllerManager, type TestControllerManager } from '../cm-testing.js';
import { createRequest, createSigningCa, writeSigningCa, type TestSigningCa } from './csr-testing.js';

const CSRS = '/apis/certificates.svc.io/v1/certificatesigningrequests';
const RBAC = '/apis/rbac.authorization.svc.io/v1';
const NODE_CLIENT = 'svc.io/svc-apiserver-client-svclet';
const NODE_SERVING = 'svc.io/svclet-serving';
const API_CLIENT = 'svc.io/svc-apiserver-client';
const CLIENT_USAGES = ['digital signature', 'key encipherment', 'client auth'];
const SERVING_USAGES = ['digital signature', 'key encipherment', 'server auth'];
const SIGNING_DURATION_S = 2 * 3600;

let dir: string;
let ca: TestSigningCa;
let caFiles: { certFile: string; keyFile: string };
let server: TestApiServer;
let cm: TestControllerManager;
let admin: HttpsClient;
let bootstrap: HttpsClient;
let nobody: HttpsClient;
/** The node `node-1`, logged in with the certificate the signer issued to the bootstrap request. */
let node: HttpsClient;

async function bind(role: string, subject: { kind: 'User' | 'Group'; name: string }): Promise<void> {
  expectCode(
    await admin.post(`${RBAC}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.svc.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: uniqueName('csr-binding') },
      roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: role },
      subjects: [{ ...subject, apiGroup: 'rbac.authorization.svc.io' }],
    }),
    201,
  );
}

/** Creates a request as `client` (retrying while RBAC's cache catches up with new bindings). */
async function createCsr(client: HttpsClient, spec: Json): Promise<string> {
  const name = uniqueName('csr');
  await waitFor(`creating ${name}`, async () => {
    const r = await client.post(CSRS, {
      apiVersion: 'certificates.svc.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name },
      spec,
    });
    return expectCode(r, 201);
  });
  return name;
}

async function nodeClientCsr(
  client: HttpsClient,
  o: { node: string; organizations?: string[]; usages?: string[]; expirationSeconds?: number },
): Promise<{ name: string; keyPem: string }> {
  const req = await createRequest({
    commonName: `system:node:${o.node}`,
    organizations: o.organizations ?? ['system:nodes'],
  });
  const spec: Json = { request: req.request, signerName: NODE_CLIENT, usages: o.usages ?? CLIENT_USAGES };
  if (o.expirationSeconds !== undefined) spec.expirationSeconds = o.expirationSeconds;
  return { name: await createCsr(client, spec), keyPem: req.keyPem };
}

const getCsr = async (name: string): Promise<CertificateSigningRequest> =>
  expectCode(await admin.get(`${CSRS}/${name}`), 200) as CertificateSigningRequest;
const condition = (csr: CertificateSigningRequest, type: string) =>
  csr.status?.conditions?.find((c) => c.type === type);

async function issued(name: string): Promise<{ csr: CertificateSigningRequest; pem: string; cert: X509Certificate }> {
  const csr = await waitFor(
    `${name} to be issued`,
    async () => {
      const c = await getCsr(name);
      return c.status?.certificate ? c : undefined;
    },
    { timeoutMs: 20_000 },
  );
  const pem = Buffer.from(csr.status?.certificate ?? '', 'base64').toString();
  return { csr, pem, cert: new X509Certificate(pem) };
}

async function approveByHand(name: string): Promise<void> {
  const csr = await getCsr(name);
  const conditions = [
    ...(csr.status?.conditions ?? []),
    {
      type: 'Approved',
      status: 'True',
      reason: 'KubectlApprove',
      message: 'This CSR was approved by kubectl certificate approve.',
    },
  ];
  expectCode(await admin.put(`${CSRS}/${name}/approval`, { ...csr, status: { ...csr.status, conditions } }), 200);
}

function expectSignedBy(cert: X509Certificate, caPem: string): void {
  const caCert = new X509Certificate(caPem);
  expect(cert.checkIssued(caCert)).toBe(true);
  expect(cert.verify(caCert.publicKey)).toBe(true);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-csr-int-'));
  ca = await createSigningCa('svc-signing-ca');
  caFiles = await writeSigningCa(dir, 'signing', ca);
  server = await startTestApiServer({
    args: ['--authorization-mode=RBAC', '--client-ca-file', caFiles.certFile],
    tokens: [
      'bootstrap-token,system:bootstrap:abcdef,bootstrap-uid,"system:bootstrappers"',
      'nobody-token,nobody,nobody-uid',
    ],
  });
  admin = server.client;
  bootstrap = admin.withToken('bootstrap-token');
  nobody = admin.withToken('nobody-token');
  // kubeadm's bindings: bootstrappers create requests and get node client certificates; nodes renew their own.
  await bind('system:node-bootstrapper', { kind: 'Group', name: 'system:bootstrappers' });
  await bind('system:certificates.svc.io:certificatesigningrequests:nodeclient', {
    kind: 'Group',
    name: 'system:bootstrappers',
  });
  await bind('system:node-bootstrapper', { kind: 'Group', name: 'system:nodes' });
  await bind('system:certificates.svc.io:certificatesigningrequests:selfnodeclient', {
    kind: 'Group',
    name: 'system:nodes',
  });
  await bind('system:node-bootstrapper', { kind: 'User', name: 'nobody' });
  cm = await startTestControllerManager(server, [
    '--controllers=csrapproving,csrsigning',
    '--cluster-signing-duration',
    `${SIGNING_DURATION_S}s`,
    '--cluster-signing-cert-file',
    caFiles.certFile,
    '--cluster-signing-key-file',
    caFiles.keyFile,
  ]);
}, 60_000);

afterAll(async () => {
  await cm?.stop();
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('certificatesigningrequest approving and signing controllers', () => {
  it("a bootstrap user's node client request is auto-approved (nodeclient), signed, and its certificate logs in as the node", async () => {
    const { name, keyPem } = await nodeClientCsr(bootstrap, { node: 'node-1', expirationSeconds: 3600 });
    const before = Date.now();
    const { csr, pem, cert } = await issued(name);
    expect(csr.spec.username).toBe('system:bootstrap:abcdef');
    expect(condition(csr, 'Approved')).toMatchObject({
      status: 'True',
      reason: 'AutoApproved',
      message: 'Auto approving svclet client certificate after SubjectAccessReview.',
    });
    expectSignedBy(cert, ca.certPem);
    expect(cert.subject.split('\n')).toEqual(['CN=system:node:node-1', 'O=system:nodes']);
    expect(cert.issuer).toBe('CN=svc-signing-ca');
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(cert.ca).toBe(false);
    expect(cert.subjectAltName).toBeUndefined();
    // Backdated five minutes; a one-hour request is short-lived, so NotAfter is one hour after signing.
    expect(Date.parse(cert.validFrom)).toBeLessThanOrEqual(Date.now() - 5 * 60_000);
    expect(Date.parse(cert.validTo)).toBeLessThanOrEqual(Date.now() + 3600_000);
    expect(Date.parse(cert.validTo)).toBeGreaterThanOrEqual(before + 3600_000 - 2000);

    node = admin.withToken(undefined).withClientCert({ cert: pem, key: keyPem });
    const review = expectCode(
      await node.post('/apis/authentication.svc.io/v1/selfsubjectreviews', {
        apiVersion: 'authentication.svc.io/v1',
        kind: 'SelfSubjectReview',
      }),
      201,
    );
    expect(review.status.userInfo.username).toBe('system:node:node-1');
    expect(review.status.userInfo.groups).toEqual(expect.arrayContaining(['system:nodes', 'system:authenticated']));
  });

  it('the node renews its own certificate: selfnodeclient approval, cluster-signing-duration as the limit', async () => {
    const { name } = await nodeClientCsr(node, { node: 'node-1' });
    const { csr, cert } = await issued(name);
    expect(csr.spec.username).toBe('system:node:node-1');
    expect(condition(csr, 'Approved')).toMatchObject({
      reason: 'AutoApproved',
      message: 'Auto approving self svclet client certificate after SubjectAccessReview.',
    });
    expectSignedBy(cert, ca.certPem);
    expect(Date.parse(cert.validTo)).toBeLessThanOrEqual(Date.now() + SIGNING_DURATION_S * 1000);
    expect(Date.parse(cert.validTo)).toBeGreaterThan(Date.now() + SIGNING_DURATION_S * 1000 - 60_000);
  });

  it("a node cannot get another node's client certificate approved as a renewal", async () => {
    // system:nodes has selfnodeclient only: CN node-2 requested by node-1 matches neither rule's permission.
    const { name } = await nodeClientCsr(node, { node: 'node-2' });
    const marker = await nodeClientCsr(bootstrap, { node: 'marker-a' });
    await issued(marker.name);
    const csr = await getCsr(name);
    expect(csr.status?.conditions ?? []).toEqual([]);
  });

  it('a requestor with neither permission stays pending, and is approved once a binding allows it', async () => {
    const { name } = await nodeClientCsr(nobody, { node: 'node-3' });
    // Requests are handled in order: once a later one is issued, this one was looked at.
    const marker = await nodeClientCsr(bootstrap, { node: 'marker-b' });
    await issued(marker.name);
    const pending = await getCsr(name);
    expect(pending.status?.conditions ?? []).toEqual([]);
    expect(pending.status?.certificate).toBeUndefined();

    await bind('system:certificates.svc.io:certificatesigningrequests:nodeclient', { kind: 'User', name: 'nobody' });
    const { csr } = await issued(name);
    expect(condition(csr, 'Approved')?.reason).toBe('AutoApproved');
  });

  it('a wrong organization or extra usages: not auto-approved; approved by hand, the signer fails it', async () => {
    const wrongOrg = await nodeClientCsr(bootstrap, { node: 'node-4', organizations: ['system:nodes', 'admins'] });
    const extraUsage = await nodeClientCsr(bootstrap, { node: 'node-5', usages: [...CLIENT_USAGES, 'server auth'] });
    const marker = await nodeClientCsr(bootstrap, { node: 'marker-c' });
    await issued(marker.name);
    for (const { name } of [wrongOrg, extraUsage]) expect((await getCsr(name)).status?.conditions ?? []).toEqual([]);

    await approveByHand(wrongOrg.name);
    await approveByHand(extraUsage.name);
    for (const [name, message] of [
      [wrongOrg.name, 'subject organization is not system:nodes'],
      [extraUsage.name, 'usages did not match [client auth digital signature key encipherment]'],
    ] as const) {
      const failed = await waitFor(`${name} to fail`, async () => {
        const c = await getCsr(name);
        return condition(c, 'Failed') ? c : undefined;
      });
      expect(condition(failed, 'Failed')).toMatchObject({ status: 'True', reason: 'SignerValidationFailure', message });
      expect(failed.status?.conditions?.map((c) => c.type)).toEqual(['Approved', 'Failed']);
      expect(failed.status?.certificate).toBeUndefined();
    }
  });

  it('a serving request is signed with its SANs once approved; one without SANs fails', async () => {
    const req = await createRequest({
      commonName: 'system:node:node-1',
      organizations: ['system:nodes'],
      dnsNames: ['node-1.example'],
      ips: ['10.0.0.7'],
    });
    const name = await createCsr(node, { request: req.request, signerName: NODE_SERVING, usages: SERVING_USAGES });
    await approveByHand(name);
    const { csr, cert } = await issued(name);
    expect(csr.status?.conditions?.map((c) => c.reason)).toEqual(['KubectlApprove']);
    expectSignedBy(cert, ca.certPem);
    expect(cert.subjectAltName).toBe('DNS:node-1.example, IP Address:10.0.0.7');
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);

    const bare = await createRequest({ commonName: 'system:node:node-1', organizations: ['system:nodes'] });
    const bareName = await createCsr(admin, {
      request: bare.request,
      signerName: NODE_SERVING,
      usages: SERVING_USAGES,
    });
    await approveByHand(bareName);
    const failed = await waitFor('the SAN-less serving request to fail', async () =>
      condition(await getCsr(bareName), 'Failed'),
    );
    expect(failed).toMatchObject({
      reason: 'SignerValidationFailure',
      message: 'DNS or IP subjectAltName is required',
    });
  });

  it('the API server client signer needs client auth and nothing but signature/encipherment besides', async () => {
    const good = await createRequest({ commonName: 'alice', organizations: ['dev'] });
    const goodName = await createCsr(admin, {
      request: good.request,
      signerName: API_CLIENT,
      usages: ['client auth'],
      expirationSeconds: 600,
    });
    await approveByHand(goodName);
    const { cert } = await issued(goodName);
    expect(cert.subject.split('\n')).toEqual(['CN=alice', 'O=dev']);
    expect(Date.parse(cert.validTo)).toBeLessThanOrEqual(Date.now() + 600_000);

    const bad = await createRequest({ commonName: 'bob' });
    const badName = await createCsr(admin, {
      request: bad.request,
      signerName: API_CLIENT,
      usages: ['client auth', 'code signing'],
    });
    await approveByHand(badName);
    const failed = await waitFor('the code-signing request to fail', async () =>
      condition(await getCsr(badName), 'Failed'),
    );
    expect(failed.message).toBe('invalid usage for client certificate: code signing');
  });

  it('a new CA written to the files is used for the next request', async () => {
    const next = await createSigningCa('svc-signing-ca-2', { key: 'rsa' });
    // Write both, then swap them in by rename (what a rotation tool does).
    const staged = await writeSigningCa(dir, 'staged', next);
    await rename(staged.keyFile, caFiles.keyFile);
    await rename(staged.certFile, caFiles.certFile);
    const { name } = await nodeClientCsr(bootstrap, { node: 'node-7' });
    const { cert } = await issued(name);
    expect(cert.issuer).toBe('CN=svc-signing-ca-2');
    expectSignedBy(cert, next.certPem);
  });
});
