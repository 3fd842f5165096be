// The default-enabled TaintNodesByCondition, CertificateSubjectRestriction and ClusterTrustBundleAttest
// on a real server (etcd, HTTPS) with stock kubectl: a new Node's not-ready taint, a CSR for the
// API server's client signer asking for system:masters refused in Kubernetes' words, and no
// ClusterTrustBundle API for the attest check to guard.
import type { Node } from '@svc/api';
import { createTestCsr, expectCode, expectFailure, startKubectlEnv, uniqueName, type KubectlEnv } from '@svc/testing';

let env: KubectlEnv;

beforeAll(async () => {
  env = await startKubectlEnv();
});
afterAll(async () => {
  await env.stop();
});

const csrBody = async (
  name: string,
  organizations: string[],
  signerName = 'svc.io/svc-apiserver-client',
): Promise<object> => {
  const { csrPem } = await createTestCsr({ commonName: 'alice', organizations });
  return {
    apiVersion: 'certificates.svc.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { signerName, request: Buffer.from(csrPem).toString('base64'), usages: ['client auth'] },
  };
};
const CSRS = '/apis/certificates.svc.io/v1/certificatesigningrequests';

it('TaintNodesByCondition: kubectl create node gets node.svc.io/not-ready:NoSchedule after its own taints', async () => {
  const name = uniqueName('node');
  const file = await env.manifest({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    spec: { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] },
  });
  await env.ok(['create', '-f', file]);
  const node = JSON.parse((await env.ok(['get', 'node', name, '-o', 'json'])).stdout) as Node;
  expect(node.spec?.taints).toEqual([
    { key: 'dedicated', value: 'db', effect: 'NoSchedule' },
    { key: 'node.svc.io/not-ready', effect: 'NoSchedule' },
  ]);
  // Updates keep what they send: the node lifecycle controller removes the taint this way.
  const c = env.server.client;
  const patched = expectCode(
    await c.patch(`/api/v1/nodes/${name}`, { spec: { taints: null } }, 'application/merge-patch+json'),
    200,
  ) as Node;
  expect(patched.spec?.taints).toBeUndefined();
});

it('CertificateSubjectRestriction: no system:masters for the client signer; others pass', async () => {
  const c = env.server.client;
  const name = uniqueName('csr');
  expectFailure(await c.post(CSRS, await csrBody(name, ['dev', 'system:masters'])), {
    code: 403,
    reason: 'Forbidden',
    message: `certificatesigningrequests.certificates.svc.io "${name}" is forbidden: use of svc.io/svc-apiserver-client signer with system:masters group is not allowed`,
  });
  expectCode(await c.post(CSRS, await csrBody(uniqueName('csr'), ['dev'])), 201);
  expectCode(await c.post(CSRS, await csrBody(uniqueName('csr'), ['system:masters'], 'example.com/signer')), 201);
});

it('ClusterTrustBundleAttest: the ClusterTrustBundle API it would guard is not served', async () => {
  const r = await env.run(['api-resources', '--api-group=certificates.svc.io', '-o', 'name']);
  expect(r.stdout.split('\n').filter(Boolean)).toEqual(['certificatesigningrequests.certificates.svc.io']);
  for (const v of ['v1alpha1', 'v1beta1']) {
    expect((await env.server.client.get(`/apis/certificates.svc.io/${v}/clustertrustbundles`)).status).toBe(404);
  }
});
