// Stock kubectl with CertificateSigningRequests: `get csr` columns, `certificate approve` and
// `certificate deny` (a PUT to /approval). kubectl's certificates client speaks
// certificates.k8s.io, so the server runs with `--naming=kubernetes`.
import { createTestCsr, startKubectlEnv, uniqueName, type KubectlEnv } from '@svc/testing';

let env: KubectlEnv;
let requestB64: string;

beforeAll(async () => {
  env = await startKubectlEnv({ args: ['--naming=kubernetes'] });
  requestB64 = Buffer.from((await createTestCsr({ commonName: 'node-1' })).csrPem).toString('base64');
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

async function createCsr(name: string, extra: object = {}): Promise<void> {
  const file = await env.manifest({
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: requestB64, signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'], ...extra },
  });
  expect((await env.ok(['create', '-f', file])).stdout.trim()).toBe(
    `certificatesigningrequest.certificates.k8s.io/${name} created`,
  );
}

/** The `get csr` row of `name`, split on runs of spaces. */
async function row(name: string): Promise<string[]> {
  const out = (await env.ok(['get', 'csr', name])).stdout.trim().split('\n');
  expect(out[0]?.split(/\s+/)).toEqual(['NAME', 'AGE', 'SIGNERNAME', 'REQUESTOR', 'REQUESTEDDURATION', 'CONDITION']);
  return out[1]?.split(/\s+/) ?? [];
}

it('get csr shows the signer, the requestor, the duration and Pending', async () => {
  const name = uniqueName('pending');
  await createCsr(name, { expirationSeconds: 7200 });
  expect(await row(name)).toEqual([
    name,
    expect.any(String),
    'kubernetes.io/kube-apiserver-client',
    'admin',
    '120m',
    'Pending',
  ]);
});

it('certificate approve, then deny of another request', async () => {
  const [approved, denied] = [uniqueName('approve'), uniqueName('deny')];
  await createCsr(approved);
  await createCsr(denied);
  expect((await env.ok(['certificate', 'approve', approved])).stdout.trim()).toBe(
    `certificatesigningrequest.certificates.k8s.io/${approved} approved`,
  );
  expect((await row(approved))[5]).toBe('Approved');
  const reason = await env.ok(['get', 'csr', approved, '-o', 'jsonpath={.status.conditions[0].reason}']);
  expect(reason.stdout).toBe('KubectlApprove');

  expect((await env.ok(['certificate', 'deny', denied])).stdout.trim()).toBe(
    `certificatesigningrequest.certificates.k8s.io/${denied} denied`,
  );
  expect((await row(denied))[5]).toBe('Denied');
});
