// CertificateSigningRequests against a real server and etcd, under RBAC: the requestor comes
// from the token, every v1 validation rule answers 422 with its field, /approval needs
// `approve` and /status `sign` on the signer, and the certificate is set once, after approval.
import {
  createTestCa,
  createTestCsr,
  expectCode,
  expectFailure,
  MEDIA,
  startTestApiServer,
  uniqueName,
  type HttpsClient,
  type Json,
  type TestApiServer,
} from '@svc/testing';

const CERTS = '/apis/certificates.svc.io/v1';
const CSRS = `${CERTS}/certificatesigningrequests`;
const RBAC = '/apis/rbac.authorization.svc.io/v1';
const CLIENT_SIGNER = 'svc.io/svc-apiserver-client';
const b64 = (s: string): string => Buffer.from(s).toString('base64');

let t: TestApiServer;
let admin: HttpsClient;
let alice: HttpsClient;
let approver: HttpsClient;
let signer: HttpsClient;
let csrPem: string;
let certPem: string;

function csr(name: string, spec: Json = {}): Json {
  return {
    apiVersion: 'certificates.svc.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: b64(csrPem), signerName: CLIENT_SIGNER, usages: ['digital signature', 'client auth'], ...spec },
  };
}

async function grant(user: string, rules: Json[], roleName = uniqueName('role')): Promise<void> {
  if (rules.length > 0)
    expectCode(
      await admin.post(`${RBAC}/clusterroles`, {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'ClusterRole',
        metadata: { name: roleName },
        rules,
      }),
      201,
    );
  expectCode(
    await admin.post(`${RBAC}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.svc.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: uniqueName('binding') },
      roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: roleName },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.svc.io', name: user }],
    }),
    201,
  );
}

/** RBAC answers from an informer cache: retry until the new binding is seen. */
async function eventually(
  send: () => Promise<{ status: number; text: string; json<T>(): T }>,
  code: number,
): Promise<Json> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await send();
    if (r.status === code || Date.now() > deadline) return expectCode(r, code);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function created(name = uniqueName('csr')): Promise<Json> {
  return expectCode(await admin.post(CSRS, csr(name)), 201);
}

async function approve(obj: Json, type = 'Approved'): Promise<Json> {
  const status = { conditions: [{ type, status: 'True', reason: 'Test', message: 'by the test' }] };
  return expectCode(await admin.put(`${CSRS}/${obj.metadata.name as string}/approval`, { ...obj, status }), 200);
}

function causes(body: Json): Array<{ field?: string; message?: string }> {
  return (body.details?.causes ?? []) as Array<{ field?: string; message?: string }>;
}

beforeAll(async () => {
  t = await startTestApiServer({
    args: ['--authorization-mode=RBAC'],
    tokens: [
      'alice-token,alice,alice-uid,"dev"',
      'approver-token,approver,approver-uid',
      'signer-token,signer,signer-uid',
    ],
  });
  admin = t.client;
  alice = admin.withToken('alice-token');
  approver = admin.withToken('approver-token');
  signer = admin.withToken('signer-token');
  csrPem = (await createTestCsr({ commonName: 'alice', organizations: ['dev'] })).csrPem;
  certPem = (await (await createTestCa('csr-int')).issue({ commonName: 'alice' })).certPem;
  await grant('alice', [], 'system:node-bootstrapper');
  const csrs = { apiGroups: ['certificates.svc.io'], resources: ['certificatesigningrequests'], verbs: ['get'] };
  await grant('approver', [
    csrs,
    {
      apiGroups: ['certificates.svc.io'],
      resources: ['certificatesigningrequests/approval'],
      verbs: ['update', 'patch'],
    },
  ]);
  await grant('signer', [
    csrs,
    { apiGroups: ['certificates.svc.io'], resources: ['certificatesigningrequests/status'], verbs: ['update'] },
  ]);
}, 60_000);

afterAll(async () => {
  await t?.stop();
});

it('create with a real request: the requestor is the token user, status starts empty, the table shows it', async () => {
  const name = uniqueName('alice');
  const body = csr(name, { username: 'mallory', groups: ['system:masters'], expirationSeconds: 3600 });
  const obj = await eventually(
    () => alice.post(CSRS, { ...body, status: { conditions: [{ type: 'Approved', status: 'True' }] } }),
    201,
  );
  expect(obj.spec).toMatchObject({
    username: 'alice',
    uid: 'alice-uid',
    groups: ['dev', 'system:authenticated'],
    signerName: CLIENT_SIGNER,
  });
  expect(obj.status).toEqual({});
  expect(obj.metadata).not.toHaveProperty('namespace');
  expect(expectCode(await alice.get(`${CSRS}/${name}`), 200).spec.request).toBe(b64(csrPem));

  const table = expectCode(
    await admin.get(`${CSRS}/${name}`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } }),
    200,
  );
  expect(table.columnDefinitions.map((c: Json) => c.name)).toEqual([
    'Name',
    'Age',
    'SignerName',
    'Requestor',
    'RequestedDuration',
    'Condition',
  ]);
  expect(table.rows[0].cells).toEqual([name, expect.any(String), CLIENT_SIGNER, 'alice', '60m', 'Pending']);
  // Cluster-scoped, short name csr, approval among the subresources.
  const resources = expectCode(await admin.get(CERTS), 200).resources as Json[];
  expect(resources.find((r) => r.name === 'certificatesigningrequests')).toMatchObject({
    namespaced: false,
    shortNames: ['csr'],
    kind: 'CertificateSigningRequest',
  });
  expect(resources.map((r) => r.name)).toEqual(
    expect.arrayContaining(['certificatesigningrequests/status', 'certificatesigningrequests/approval']),
  );
  const openapi = expectCode(await admin.get('/openapi/v3/apis/certificates.svc.io/v1'), 200);
  expect(Object.keys(openapi.paths as Json)).toEqual(
    expect.arrayContaining([`${CSRS}/{name}/status`, `${CSRS}/{name}/approval`]),
  );
});

describe('create validation: 422 Invalid with the field and the reason', () => {
  const notPem = b64('hello');
  it.each([
    ['no request', { request: undefined }, 'spec.request', 'Required value'],
    ['a request that is not PEM', { request: notPem }, 'spec.request', 'PEM block type must be CERTIFICATE REQUEST'],
    [
      'a certificate as the request',
      { request: '<cert>' },
      'spec.request',
      'PEM block type must be CERTIFICATE REQUEST',
    ],
    [
      'a request that does not parse',
      { request: b64('-----BEGIN CERTIFICATE REQUEST-----\nAAEC\n-----END CERTIFICATE REQUEST-----\n') },
      'spec.request',
      'x509: malformed certificate request',
    ],
    ['a request that is not base64', { request: 'not base64!' }, 'spec.request', 'Invalid value'],
    ['no signer', { signerName: undefined }, 'spec.signerName', 'Required value'],
    [
      'a signer without a path',
      { signerName: 'example.com' },
      'spec.signerName',
      "must be a fully qualified domain and path of the form 'example.com/signer-name'",
    ],
    [
      'a signer whose domain has one segment',
      { signerName: 'example/signer' },
      'spec.signerName',
      'should be a domain with at least two segments separated by dots',
    ],
    [
      'the legacy signer',
      { signerName: 'svc.io/legacy-unknown' },
      'spec.signerName',
      'the legacy signerName is not allowed via this API version',
    ],
    ['no usages', { usages: [] }, 'spec.usages', 'Required value'],
    [
      'an unknown usage',
      { usages: ['client auth', 'flying'] },
      'spec.usages[1]',
      'Unsupported value: "flying": supported values: "any", "cert sign"',
    ],
    [
      'a duplicate usage',
      { usages: ['client auth', 'client auth'] },
      'spec.usages[1]',
      'Duplicate value: "client auth"',
    ],
    [
      'a duration under ten minutes',
      { expirationSeconds: 599 },
      'spec.expirationSeconds',
      'may not specify a duration less than 600 seconds (10 minutes)',
    ],
    // eslint-disable-next-line max-params -- it.each passes each table row's cells as the test's arguments
  ])('%s', async (_what, spec, field, message) => {
    const body = csr(uniqueName('invalid'), (spec as Json).request === '<cert>' ? { request: b64(certPem) } : spec);
    const s = expectFailure(await admin.post(CSRS, body), { code: 422, reason: 'Invalid' });
    expect(causes(s as Json)).toEqual(
      expect.arrayContaining([expect.objectContaining({ field, message: expect.stringContaining(message) })]),
    );
  });
});

describe('conditions: 422 on /approval and /status', () => {
  it.each([
    ['a condition without status', 'approval', [{ type: 'Approved' }], 'status.conditions[0].status', 'Required value'],
    ['a condition without type', 'status', [{ status: 'True' }], 'status.conditions[0].type', 'Required value'],
    [
      'Approved with status False',
      'approval',
      [{ type: 'Approved', status: 'False' }],
      'status.conditions[0].status',
      'Unsupported value: "False": supported values: "True"',
    ],
    [
      'a custom condition with a bad status',
      'status',
      [{ type: 'Custom', status: 'Maybe' }],
      'status.conditions[0].status',
      'supported values: "False", "True", "Unknown"',
    ],
    [
      'Approved and Denied',
      'approval',
      [
        { type: 'Approved', status: 'True' },
        { type: 'Denied', status: 'True' },
      ],
      'status.conditions[1].type',
      'Approved and Denied conditions are mutually exclusive',
    ],
    [
      'a duplicate type',
      'approval',
      [
        { type: 'Approved', status: 'True' },
        { type: 'Approved', status: 'True' },
      ],
      'status.conditions[1].type',
      'Duplicate value: "Approved"',
    ],
    [
      'Approved through /status',
      'status',
      [{ type: 'Approved', status: 'True' }],
      'status.conditions',
      'updates may not add a condition of type "Approved"',
    ],
    // eslint-disable-next-line max-params -- it.each passes each table row's cells as the test's arguments
  ])('%s', async (_what, sub, conditions, field, message) => {
    const obj = await created();
    const s = expectFailure(
      await admin.put(`${CSRS}/${obj.metadata.name as string}/${sub}`, { ...obj, status: { conditions } }),
      { code: 422, reason: 'Invalid' },
    );
    expect(causes(s as Json)).toEqual(
      expect.arrayContaining([expect.objectContaining({ field, message: expect.stringContaining(message) })]),
    );
  });

  it('an approval is never taken back', async () => {
    const obj = await approve(await created());
    const s = expectFailure(
      await admin.put(`${CSRS}/${obj.metadata.name as string}/approval`, { ...obj, status: { conditions: [] } }),
      { code: 422, reason: 'Invalid' },
    );
    expect(causes(s as Json)).toEqual([
      expect.objectContaining({
        field: 'status.conditions',
        message: 'Forbidden: updates may not remove a condition of type "Approved"',
      }),
    ]);
  });
});

it('/approval: needs approve on the signer; sets the condition times; kubectl-style PUT and merge patch both work', async () => {
  const obj = await created();
  const path = `${CSRS}/${obj.metadata.name as string}/approval`;
  const approved = { ...obj, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Manual' }] } };
  const denied = await eventually(() => approver.put(path, approved), 403);
  expect(denied.message).toBe(
    `certificatesigningrequests.certificates.svc.io "${obj.metadata.name as string}" is forbidden: user not permitted to approve requests with signerName "${CLIENT_SIGNER}"`,
  );

  await grant('approver', [], `system:certificates.svc.io:svc-apiserver-client-approver`);
  const after = await eventually(() => approver.put(path, approved), 200);
  const [condition] = after.status.conditions as Json[];
  expect(condition).toMatchObject({
    type: 'Approved',
    status: 'True',
    reason: 'Manual',
    lastUpdateTime: expect.stringMatching(/Z$/),
    lastTransitionTime: expect.stringMatching(/Z$/),
  });
  expect(after.spec).toEqual(obj.spec);
  expect(expectCode(await admin.get(path), 200).status.conditions).toHaveLength(1);

  // A wildcard over the signer's domain also grants approve (Kubernetes' second check).
  await grant('approver', [
    {
      apiGroups: ['certificates.svc.io'],
      resources: ['signers'],
      verbs: ['approve'],
      resourceNames: ['example.com/*'],
    },
  ]);
  const custom = expectCode(
    await admin.post(CSRS, csr(uniqueName('custom'), { signerName: 'example.com/my-signer' })),
    201,
  );
  const patched = await eventually(
    () =>
      approver.patch(
        `${CSRS}/${custom.metadata.name as string}/approval`,
        { status: { conditions: [{ type: 'Denied', status: 'True', reason: 'No' }] } },
        MEDIA.MERGE,
      ),
    200,
  );
  expect(patched.status.conditions).toEqual([expect.objectContaining({ type: 'Denied', status: 'True' })]);
});

it('/status: the certificate needs sign on the signer, an approved request, valid PEM, and is set once', async () => {
  const obj = await created();
  const name = obj.metadata.name as string;
  const path = `${CSRS}/${name}/status`;
  const withCert = (o: Json, certificate: string): Json => ({ ...o, status: { ...o.status, certificate } });

  const early = expectFailure(await admin.put(path, withCert(obj, b64(certPem))), { code: 422, reason: 'Invalid' });
  expect(causes(early as Json)).toEqual([
    expect.objectContaining({
      field: 'status.certificate',
      message: 'Forbidden: may only be set on a request that is Approved and neither Denied nor Failed',
    }),
  ]);

  const approved = await approve(obj);
  const refused = await eventually(() => signer.put(path, withCert(approved, b64(certPem))), 403);
  expect(refused.message).toMatch(
    /is forbidden: user not permitted to sign requests with signerName "svc\.io\/svc-apiserver-client"$/,
  );

  const badPem = expectFailure(await admin.put(path, withCert(approved, b64(csrPem))), {
    code: 422,
    reason: 'Invalid',
  });
  expect(causes(badPem as Json)).toEqual([
    expect.objectContaining({
      field: 'status.certificate',
      message:
        'Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"',
    }),
  ]);
  const noPem = expectFailure(await admin.put(path, withCert(approved, b64('nothing here'))), {
    code: 422,
    reason: 'Invalid',
  });
  expect(causes(noPem as Json)[0]?.message).toMatch(/must contain at least one CERTIFICATE PEM block$/);

  await grant('signer', [
    { apiGroups: ['certificates.svc.io'], resources: ['signers'], verbs: ['sign'], resourceNames: [CLIENT_SIGNER] },
  ]);
  const issued = await eventually(() => signer.put(path, withCert(approved, b64(certPem))), 200);
  expect(issued.status.certificate).toBe(b64(certPem));
  expect(issued.status.conditions).toEqual(approved.status.conditions);

  const other = (await (await createTestCa('csr-int-2')).issue()).certPem;
  const immutable = expectFailure(await admin.put(path, withCert(issued, b64(other))), {
    code: 422,
    reason: 'Invalid',
  });
  expect(causes(immutable as Json)).toEqual([
    expect.objectContaining({
      field: 'status.certificate',
      message: 'Forbidden: updates may not modify existing certificate content',
    }),
  ]);
  const table = expectCode(
    await admin.get(`${CSRS}/${name}`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } }),
    200,
  );
  expect(table.rows[0].cells[5]).toBe('Approved,Issued');
});

it('a denied request gets no certificate', async () => {
  const denied = await approve(await created(), 'Denied');
  const s = expectFailure(
    await admin.put(`${CSRS}/${denied.metadata.name as string}/status`, {
      ...denied,
      status: { ...denied.status, certificate: b64(certPem) },
    }),
    { code: 422, reason: 'Invalid' },
  );
  expect(causes(s as Json)[0]?.field).toBe('status.certificate');
});

it('updates of the main resource keep spec and status as stored (Kubernetes resets them)', async () => {
  const obj = await created();
  const path = `${CSRS}/${obj.metadata.name as string}`;
  const put = expectCode(
    await admin.put(path, {
      ...obj,
      metadata: { ...obj.metadata, labels: { team: 'a' } },
      spec: { ...obj.spec, usages: ['server auth'], signerName: 'example.com/other' },
      status: { conditions: [{ type: 'Approved', status: 'True' }], certificate: b64(certPem) },
    }),
    200,
  );
  expect(put.metadata.labels).toEqual({ team: 'a' });
  expect(put.spec).toEqual(obj.spec);
  expect(put.status).toEqual({});
  const patched = expectCode(await admin.patch(path, { spec: { usages: ['server auth'] } }, MEDIA.MERGE), 200);
  expect(patched.spec.usages).toEqual(['digital signature', 'client auth']);
});

it('the default policy has the CSR roles, named after the signers', async () => {
  const roles = expectCode(await admin.get(`${RBAC}/clusterroles`), 200).items as Json[];
  const rules = (name: string): Json[] => roles.find((r) => r.metadata.name === name)?.rules as Json[];
  expect(rules('system:certificates.svc.io:certificatesigningrequests:nodeclient')).toEqual([
    { verbs: ['create'], apiGroups: ['certificates.svc.io'], resources: ['certificatesigningrequests/nodeclient'] },
  ]);
  expect(rules('system:certificates.svc.io:certificatesigningrequests:selfnodeclient')).toHaveLength(1);
  expect(rules('system:certificates.svc.io:svclet-serving-approver')).toEqual([
    {
      verbs: ['approve'],
      apiGroups: ['certificates.svc.io'],
      resources: ['signers'],
      resourceNames: ['svc.io/svclet-serving'],
    },
  ]);
  for (const signer of ['svc-apiserver-client', 'svc-apiserver-client-svclet', 'legacy-unknown']) {
    expect(rules(`system:certificates.svc.io:${signer}-approver`)).toHaveLength(1);
  }
  expect(rules('system:controller:certificate-controller')).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        verbs: ['sign'],
        resources: ['signers'],
        resourceNames: expect.arrayContaining(['svc.io/legacy-unknown', 'svc.io/svclet-serving']),
      }),
    ]),
  );
  expect(rules('system:node-bootstrapper')).toEqual([
    {
      verbs: ['create', 'get', 'list', 'watch'],
      apiGroups: ['certificates.svc.io'],
      resources: ['certificatesigningrequests'],
    },
  ]);
});
