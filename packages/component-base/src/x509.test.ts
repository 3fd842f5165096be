// Client-certificate chain verification against certificates made here (real ECDSA keys).
import type { X509Certificate } from 'node:crypto';
import { createTestCa, type TestCa } from '@svc/testing';
import { parseCertificateBundle, verifyClientChain } from './x509.js';

const HOUR = 3600_000;
let root: TestCa;
let other: TestCa;
let impostor: TestCa;

beforeAll(async () => {
  root = await createTestCa('root-ca');
  other = await createTestCa('other-ca');
  impostor = await createTestCa('root-ca'); // same name as root, different key
});

const certs = (pem: string): X509Certificate[] => parseCertificateBundle(pem);
const verify = (chainPem: string, roots: TestCa[], now = Date.now()): X509Certificate[] => {
  const [leaf, ...rest] = certs(chainPem);
  return verifyClientChain(leaf as X509Certificate, {
    intermediates: rest,
    roots: roots.flatMap((r) => certs(r.certPem)),
    now,
  });
};

describe('parseCertificateBundle', () => {
  it('reads every certificate of a bundle', () => {
    expect(parseCertificateBundle(root.certPem + other.certPem)).toHaveLength(2);
  });

  it('refuses a file without certificates', () => {
    expect(() => parseCertificateBundle('not a pem', 'ca.crt')).toThrow('ca.crt: no certificates found');
  });

  it('refuses a damaged certificate', () => {
    const broken = root.certPem.replace(/\n[A-Za-z0-9+/]{20}/, '\nAAAAAAAAAAAAAAAAAAAA');
    expect(() => parseCertificateBundle(broken, 'ca.crt')).toThrow(/^ca\.crt: /);
  });
});

describe('verifyClientChain', () => {
  it('accepts a leaf of either CA of the bundle', async () => {
    expect(verify((await root.issue()).chainPem, [other, root])).toHaveLength(2);
    expect(verify((await other.issue()).chainPem, [other, root])).toHaveLength(2);
  });

  it('builds the chain through intermediates the client sends', async () => {
    const mid = await (await root.intermediate('mid-1')).intermediate('mid-2');
    const leaf = await mid.issue();
    expect(verify(leaf.chainPem, [root]).map((c) => c.subject)).toEqual([
      'CN=user',
      'CN=mid-2',
      'CN=mid-1',
      'CN=root-ca',
    ]);
    // Without the intermediates the leaf does not chain.
    expect(() => verify(leaf.certPem, [root])).toThrow('x509: certificate signed by unknown authority');
  });

  it('refuses a leaf of an unknown CA', async () => {
    const leaf = await other.issue();
    expect(() => verify(leaf.chainPem, [root])).toThrow('signed by unknown authority');
  });

  it('refuses a leaf signed by another key under the trusted CA name (wrong signature)', async () => {
    const leaf = await impostor.issue();
    expect(() => verify(leaf.chainPem, [root])).toThrow('signed by unknown authority');
  });

  it('refuses an expired or not yet valid leaf', async () => {
    const expired = await root.issue({
      notBefore: new Date(Date.now() - 3 * HOUR),
      notAfter: new Date(Date.now() - HOUR),
    });
    expect(() => verify(expired.chainPem, [root])).toThrow(/has expired or is not yet valid: current time .* is after/);
    const future = await root.issue({
      notBefore: new Date(Date.now() + HOUR),
      notAfter: new Date(Date.now() + 2 * HOUR),
    });
    expect(() => verify(future.chainPem, [root])).toThrow(/is before/);
  });

  it('refuses a chain through an expired intermediate', async () => {
    const mid = await root.intermediate('old-mid', {
      notBefore: new Date(Date.now() - 3 * HOUR),
      notAfter: new Date(Date.now() - HOUR),
    });
    const leaf = await mid.issue({ notBefore: new Date(Date.now() - 2 * HOUR) });
    expect(() => verify(leaf.chainPem, [root])).toThrow(/expired/);
  });

  it('refuses a chain to an expired root', async () => {
    const oldRoot = await createTestCa('old-root', {
      notBefore: new Date(Date.now() - 3 * HOUR),
      notAfter: new Date(Date.now() - HOUR),
    });
    const leaf = await oldRoot.issue({ notBefore: new Date(Date.now() - 2 * HOUR) });
    expect(() => verify(leaf.chainPem, [oldRoot])).toThrow(/expired/);
  });

  it('needs client authentication among the extended key usages (none listed means any)', async () => {
    const serverOnly = await root.issue({ usages: ['server'] });
    expect(() => verify(serverOnly.chainPem, [root])).toThrow('incompatible key usage');
    expect(verify((await root.issue({ usages: ['server', 'client'] })).chainPem, [root])).toHaveLength(2);
    expect(verify((await root.issue({ usages: [] })).chainPem, [root])).toHaveLength(2);
  });

  it('checks validity at the given time', async () => {
    const leaf = await root.issue();
    expect(() => verify(leaf.chainPem, [root], Date.now() + 2 * 24 * HOUR)).toThrow(/expired/);
  });
});
