// CertificateSigningRequest strategy hooks and their pure helpers: PEM blocks, signer names,
// the requestor on create, and what /status and /approval writes may change.
import { naming, type ApiObject, type FieldError } from '@svc/api';
import { createTestCa, createTestCsr } from '@svc/testing';
import { certificateSigningRequestStrategy as strategy, validateSignerName } from './certificate-signing-request.js';
import { certificateBundleProblem, certificateRequestProblem, pemBlocks } from './pem.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const paths = (errs: FieldError[]): string[] => errs.map((e) => `${e.path} ${e.type}`);
let csrPem: string;
let certPem: string;

beforeAll(async () => {
  csrPem = (await createTestCsr({ commonName: 'alice', organizations: ['dev'] })).csrPem;
  certPem = (await (await createTestCa('csr-unit')).issue()).certPem;
});

function csr(over: { spec?: object; status?: object } = {}): ApiObject {
  return {
    apiVersion: 'certificates.svc.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name: 'c' },
    spec: {
      request: b64(csrPem),
      signerName: naming().signerNames.apiserverClient,
      usages: ['client auth'],
      ...over.spec,
    },
    status: over.status ?? {},
  };
}

describe('pem', () => {
  it('finds blocks in order, skipping text around them and bodies that are not base64', () => {
    const text = `intro\n-----BEGIN A-----\nAAEC\n-----END A-----\nnoise\n-----BEGIN B-----\n!!\n-----END B-----\n-----BEGIN C-----\nK: v\n\nAw==\n-----END C-----\n`;
    expect(pemBlocks(text).map((b) => [b.type, b.hasHeaders, [...b.der]])).toEqual([
      ['A', false, [0, 1, 2]],
      ['C', true, [3]],
    ]);
  });

  it('accepts a signed request and explains every way one is unusable', async () => {
    expect(await certificateRequestProblem(csrPem)).toBeUndefined();
    expect(await certificateRequestProblem('')).toBe('PEM block type must be CERTIFICATE REQUEST');
    expect(await certificateRequestProblem(certPem)).toBe('PEM block type must be CERTIFICATE REQUEST');
    expect(
      await certificateRequestProblem('-----BEGIN CERTIFICATE REQUEST-----\nAAEC\n-----END CERTIFICATE REQUEST-----\n'),
    ).toBe('x509: malformed certificate request');
    // The subject changed after signing: CN=alice becomes CN=alicf.
    const der = pemBlocks(csrPem)[0]?.der ?? Buffer.alloc(0);
    der[der.indexOf('alice') + 4] = 'f'.charCodeAt(0);
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    expect(await certificateRequestProblem(tampered)).toBe('x509: signature verification failure');
  });

  it('certificate bundles: only CERTIFICATE blocks, no headers, at least one', () => {
    expect(certificateBundleProblem(certPem + certPem)).toBeUndefined();
    expect(certificateBundleProblem('just text')).toBe('must contain at least one CERTIFICATE PEM block');
    expect(certificateBundleProblem(certPem + csrPem)).toBe(
      'only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"',
    );
    expect(
      certificateBundleProblem('-----BEGIN CERTIFICATE-----\nProc-Type: 4\n\nAAEC\n-----END CERTIFICATE-----\n'),
    ).toBe('no PEM block headers are permitted');
    expect(certificateBundleProblem('-----BEGIN CERTIFICATE-----\nAAEC\n-----END CERTIFICATE-----\n')).toBe(
      'x509: malformed certificate',
    );
  });
});

describe('validateSignerName', () => {
  it.each([
    ['example.com/signer', []],
    ['example.com/a.b-c', []],
    ['', ['spec.signerName FieldValueRequired']],
    ['example.com', ['spec.signerName FieldValueInvalid']],
    ['example.com/a/b', ['spec.signerName FieldValueInvalid']],
    ['example/signer', ['spec.signerName FieldValueInvalid']],
    ['Example.com/signer', ['spec.signerName FieldValueInvalid']],
    ['example.com/Signer', ['spec.signerName FieldValueInvalid']],
  ])('%j', (name, want) => {
    expect(paths(validateSignerName('spec.signerName', name))).toEqual(want);
  });

  it('says what form is expected', () => {
    expect(validateSignerName('p', 'nope')[0]?.detail).toBe(
      "must be a fully qualified domain and path of the form 'example.com/signer-name'",
    );
    expect(validateSignerName('p', 'example/x')[0]?.detail).toBe(
      'should be a domain with at least two segments separated by dots',
    );
  });
});

describe('strategy', () => {
  it('create: the requestor comes from the request user, status starts empty', () => {
    const obj = csr({
      spec: { username: 'mallory', uid: 'x', groups: ['system:masters'], extra: { a: ['b'] } },
      status: { conditions: [{ type: 'Approved', status: 'True' }] },
    });
    strategy.prepareForCreate?.(obj, {
      subresource: '',
      user: { name: 'alice', uid: 'a-1', groups: ['dev', 'system:authenticated'], extra: { scopes: ['s'] } },
    });
    expect(obj.spec).toMatchObject({
      username: 'alice',
      uid: 'a-1',
      groups: ['dev', 'system:authenticated'],
      extra: { scopes: ['s'] },
    });
    expect(obj.status).toEqual({});
    const anonymous = csr({ spec: { username: 'mallory' } });
    strategy.prepareForCreate?.(anonymous, { subresource: '' });
    expect(anonymous.spec).not.toHaveProperty('username');
  });

  it('/status keeps the stored Approved and Denied conditions and fills in condition times', () => {
    const approved = {
      type: 'Approved',
      status: 'True',
      reason: 'OK',
      lastUpdateTime: '2020-01-01T00:00:00Z',
      lastTransitionTime: '2020-01-01T00:00:00Z',
    };
    const old = csr({ status: { conditions: [approved] } });
    const obj = csr({
      status: {
        conditions: [
          { type: 'Approved', status: 'True', reason: 'changed' },
          { type: 'Failed', status: 'True' },
        ],
      },
    });
    strategy.prepareForStatusUpdate?.(obj, old, { subresource: 'status' });
    const [a, f] = (obj.status as { conditions: Array<Record<string, string>> }).conditions;
    expect(a).toEqual(approved);
    expect(f?.lastUpdateTime).toMatch(/Z$/);
    expect(f?.lastTransitionTime).toBe(f?.lastUpdateTime);
  });

  it('/approval changes only the conditions', () => {
    const old = csr({ status: { certificate: b64(certPem) } });
    old.metadata.labels = { a: 'b' };
    const obj = csr({
      spec: { signerName: 'example.com/other' },
      status: { conditions: [{ type: 'Approved', status: 'True' }], certificate: '' },
    });
    const next = strategy.prepareForSubresourceUpdate?.(obj, old, { subresource: 'approval' });
    expect(next?.spec).toEqual(old.spec);
    expect(next?.metadata.labels).toEqual({ a: 'b' });
    expect(next?.status).toMatchObject({
      certificate: b64(certPem),
      conditions: [{ type: 'Approved', status: 'True', lastUpdateTime: expect.any(String) }],
    });
  });

  it('validates a fresh request, and a certificate only on /status of an approved request', async () => {
    expect(await strategy.validate?.(csr(), { subresource: '' })).toEqual([]);
    const pending = csr();
    const approved = csr({ status: { conditions: [{ type: 'Approved', status: 'True' }] } });
    const issued = (base: ApiObject): ApiObject => ({
      ...base,
      status: { ...(base.status as object), certificate: b64(certPem) },
    });
    const update = async (obj: ApiObject, old: ApiObject, subresource: string): Promise<string[]> =>
      paths((await strategy.validateUpdate?.(obj, old, { subresource })) ?? []);
    expect(await update(issued(approved), approved, 'status')).toEqual([]);
    expect(await update(issued(pending), pending, 'status')).toEqual(['status.certificate FieldValueForbidden']);
    expect(await update(issued(approved), approved, '')).toEqual(['status.certificate FieldValueForbidden']);
    expect(await update(approved, pending, 'status')).toEqual(['status.conditions FieldValueForbidden']);
    expect(await update(approved, pending, 'approval')).toEqual([]);
    expect(await update(pending, approved, 'approval')).toEqual(['status.conditions FieldValueForbidden']);
  });
});
