// Stock kubectl against the CSR controllers under --naming=kubernetes (kubectl's certificates
// client speaks certificates.k8s.io), with a CA for the node client signer only: auto-approved
// node requests are issued, `kubectl certificate approve` of a request that breaks the signer's
// rules ends Failed, and requests of signers without a CA stay unsigned.
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKubectlEnv, uniqueName, waitFor, type KubectlEnv } from '@svc/testing';
import { startTestControllerManager, type TestControllerManager } from '../cm-testing.js';
import { createRequest, createSigningCa, writeSigningCa, type TestSigningCa } from './csr-testing.js';

const NODE_CLIENT = 'kubernetes.io/kube-apiserver-client-kubelet';

let env: KubectlEnv;
let cm: TestControllerManager;
let dir: string;
let ca: TestSigningCa;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-csr-kubectl-'));
  ca = await createSigningCa('node-client-ca');
  const files = await writeSigningCa(dir, 'node-client', ca);
  env = await startKubectlEnv({ args: ['--naming=kubernetes'] });
  cm = await startTestControllerManager(env.server, [
    '--naming=kubernetes',
    '--controllers=csrapproving,csrsigning',
    '--cluster-signing-svc-apiserver-client-svclet-cert-file',
    files.certFile,
    '--cluster-signing-svc-apiserver-client-svclet-key-file',
    files.keyFile,
  ]);
}, 60_000);

afterAll(async () => {
  await cm?.stop();
  await env?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function createCsr(o: {
  commonName: string;
  organizations?: string[];
  signerName?: string;
  usages?: string[];
}): Promise<string> {
  const name = uniqueName('csr');
  const req = await createRequest({ commonName: o.commonName, organizations: o.organizations ?? ['system:nodes'] });
  const file = await env.manifest({
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: {
      request: req.request,
      signerName: o.signerName ?? NODE_CLIENT,
      usages: o.usages ?? ['digital signature', 'client auth'],
    },
  });
  await env.ok(['create', '-f', file]);
  return name;
}

const conditionCell = async (name: string): Promise<string> => {
  const out = (await env.ok(['get', 'csr', name, '--no-headers'])).stdout.trim().split(/\s+/);
  return out[out.length - 1] ?? '';
};
const jsonpath = async (name: string, path: string): Promise<string> =>
  (await env.ok(['get', 'csr', name, '-o', `jsonpath=${path}`])).stdout;
const untilCell = (name: string, cell: string): Promise<boolean> =>
  waitFor(`${name} to be ${cell}`, async () => (await conditionCell(name)) === cell, {
    timeoutMs: 30_000,
    intervalMs: 200,
  });

it('a node client request is auto-approved and issued by the configured CA', async () => {
  const name = await createCsr({ commonName: 'system:node:k-1' });
  await untilCell(name, 'Approved,Issued');
  expect(await jsonpath(name, '{.status.conditions[0].reason}')).toBe('AutoApproved');
  const cert = new X509Certificate(Buffer.from(await jsonpath(name, '{.status.certificate}'), 'base64').toString());
  expect(cert.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
  expect(cert.subject.split('\n')).toEqual(['CN=system:node:k-1', 'O=system:nodes']);
});

it('kubectl certificate approve of a request with the wrong organization: the signer fails it', async () => {
  const name = await createCsr({ commonName: 'system:node:k-2', organizations: ['ops'] });
  const marker = await createCsr({ commonName: 'system:node:k-marker' });
  await untilCell(marker, 'Approved,Issued');
  expect(await conditionCell(name)).toBe('Pending');
  expect((await env.ok(['certificate', 'approve', name])).stdout.trim()).toBe(
    `certificatesigningrequest.certificates.k8s.io/${name} approved`,
  );
  await untilCell(name, 'Approved,Failed');
  expect(await jsonpath(name, '{.status.conditions[?(@.type=="Failed")].reason}')).toBe('SignerValidationFailure');
  expect(await jsonpath(name, '{.status.conditions[?(@.type=="Failed")].message}')).toBe(
    'subject organization is not system:nodes',
  );
});

it('a signer without a CA leaves approved requests unsigned', async () => {
  const name = await createCsr({
    commonName: 'carol',
    organizations: [],
    signerName: 'kubernetes.io/kube-apiserver-client',
    usages: ['client auth'],
  });
  await env.ok(['certificate', 'approve', name]);
  const marker = await createCsr({ commonName: 'system:node:k-marker-2' });
  await untilCell(marker, 'Approved,Issued');
  expect(await conditionCell(name)).toBe('Approved');
});
