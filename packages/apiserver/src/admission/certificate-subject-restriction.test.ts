// CertificateSubjectRestriction: no system:masters in requests for the API server's client signer.
import { useNaming, type ApiObject } from '@svc/api';
import { createTestCsr } from '@svc/testing';
import { CertificateSubjectRestriction } from './certificate-subject-restriction.js';
import { attributes, failure } from './admission-testing.js';

async function csr(signerName: string, organizations: string[]): Promise<ApiObject> {
  const { csrPem } = await createTestCsr({ commonName: 'alice', organizations });
  return {
    apiVersion: 'certificates.svc.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name: 'req' },
    spec: { signerName, request: Buffer.from(csrPem).toString('base64'), usages: ['client auth'] },
  };
}

const check = (object: ApiObject, o: { operation?: 'CREATE' | 'UPDATE'; subresource?: string } = {}): Promise<void> =>
  new CertificateSubjectRestriction().validate(
    attributes({ resource: 'certificates.svc.io/v1/certificatesigningrequests', object, oldObject: object, ...o }),
  );

afterEach(() => useNaming('svc'));

it('refuses system:masters for the client signer with Kubernetes message', async () => {
  const s = await failure(check(await csr('svc.io/svc-apiserver-client', ['dev', 'system:masters'])));
  expect(s.code).toBe(403);
  expect(s.message).toBe(
    'certificatesigningrequests.certificates.svc.io "req" is forbidden: use of svc.io/svc-apiserver-client signer with system:masters group is not allowed',
  );
});

it('allows other groups, other signers, updates and subresources', async () => {
  await check(await csr('svc.io/svc-apiserver-client', ['dev']));
  await check(await csr('example.com/signer', ['system:masters']));
  const masters = await csr('svc.io/svc-apiserver-client', ['system:masters']);
  await check(masters, { operation: 'UPDATE' });
  await check(masters, { operation: 'UPDATE', subresource: 'approval' });
});

it('refuses a request that does not parse', async () => {
  const bad = await csr('svc.io/svc-apiserver-client', []);
  (bad.spec as { request: string }).request = Buffer.from('not pem').toString('base64');
  expect((await failure(check(bad))).message).toBe(
    'certificatesigningrequests.certificates.svc.io "req" is forbidden: failed to parse CSR: PEM block type must be CERTIFICATE REQUEST',
  );
});

it('names the signer in the Kubernetes spelling under --naming=kubernetes', async () => {
  useNaming('kubernetes');
  const object = await csr('kubernetes.io/kube-apiserver-client', ['system:masters']);
  const a = attributes({ resource: 'certificates.k8s.io/v1/certificatesigningrequests', object });
  expect((await failure(new CertificateSubjectRestriction().validate(a))).message).toBe(
    'certificatesigningrequests.certificates.k8s.io "req" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
  );
});
