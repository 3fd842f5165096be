import { X509Certificate, createPublicKey } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@svc/component-base';
import { parseControllerManagerOptions } from '../options.js';
import { ControllerManagerConfigError, startControllerManager } from '../controller-manager.js';
import {
  BACKDATE_MS,
  CertificateAuthority,
  ReloadingAuthority,
  certificateTtl,
  keyUsagesOf,
  validityWindow,
} from './csr-authority.js';
import { apiserverClientProblem, nodeClientProblem, nodeServingProblem, parseCertificateRequest } from './csr-rules.js';
import { createRequest, createSigningCa, writeSigningCa } from './csr-testing.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-csr-ca-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('signing policy (Kubernetes PermissiveSigningPolicy)', () => {
  it('TTL: the signing duration unless expirationSeconds asks shorter, never under ten minutes', () => {
    expect(certificateTtl(8760 * HOUR)).toBe(8760 * HOUR);
    expect(certificateTtl(2 * HOUR, 3600)).toBe(HOUR);
    expect(certificateTtl(2 * HOUR, 86_400)).toBe(2 * HOUR);
    expect(certificateTtl(2 * HOUR, 60)).toBe(10 * MIN);
  });

  it('window: backdated five minutes; long-lived NotAfter backdated too; cut at the CA NotAfter', () => {
    const now = Date.UTC(2030, 0, 1);
    expect(validityWindow(now, HOUR, now + 1000 * HOUR)).toEqual({
      notBefore: now - BACKDATE_MS,
      notAfter: now + HOUR,
    });
    expect(validityWindow(now, 24 * HOUR, now + 1000 * HOUR)).toEqual({
      notBefore: now - BACKDATE_MS,
      notAfter: now + 24 * HOUR - BACKDATE_MS,
    });
    expect(validityWindow(now, 24 * HOUR, now + HOUR).notAfter).toBe(now + HOUR);
    expect(() => validityWindow(now, HOUR, now - 10 * MIN)).toThrow(/the signer has expired/);
    expect(() => validityWindow(now, HOUR, now - MIN)).toThrow(
      /refusing to sign a certificate that expired in the past/,
    );
  });

  it('usages: key usage bits, extended key usages in Go order without duplicates, unknown values refused', () => {
    expect(
      keyUsagesOf([
        'client auth',
        'digital signature',
        'key encipherment',
        'server auth',
        's/mime',
        'email protection',
      ]),
    ).toEqual({
      keyUsage: 1 | 4,
      extKeyUsages: ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2', '1.3.6.1.5.5.7.3.4'],
    });
    expect(() => keyUsagesOf(['client auth', 'teleport'])).toThrow('unrecognized usage values: ["teleport"]');
  });
});

describe('signer rules', () => {
  const client = ['digital signature', 'key encipherment', 'client auth'];
  const serving = ['digital signature', 'key encipherment', 'server auth'];

  it('node client: O exactly system:nodes, CN system:node:*, no SANs, client usages', async () => {
    const ok = parseCertificateRequest(
      (await createRequest({ commonName: 'system:node:n1', organizations: ['system:nodes'] })).request,
    );
    expect(nodeClientProblem(ok, client)).toBeUndefined();
    expect(nodeClientProblem(ok, ['client auth', 'digital signature'])).toBeUndefined();
    expect(nodeClientProblem(ok, [...client, 'server auth'])).toBe(
      'usages did not match [client auth digital signature key encipherment]',
    );
    expect(nodeClientProblem(ok, ['client auth'])).toBe(
      'usages did not match [client auth digital signature key encipherment]',
    );
    const twoOrgs = parseCertificateRequest(
      (await createRequest({ commonName: 'system:node:n1', organizations: ['system:nodes', 'other'] })).request,
    );
    expect(nodeClientProblem(twoOrgs, client)).toBe('subject organization is not system:nodes');
    const cn = parseCertificateRequest(
      (await createRequest({ commonName: 'n1', organizations: ['system:nodes'] })).request,
    );
    expect(nodeClientProblem(cn, client)).toBe('subject common name does not begin with system:node:');
    const dns = parseCertificateRequest(
      (await createRequest({ commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1'] }))
        .request,
    );
    expect(nodeClientProblem(dns, client)).toBe('DNS subjectAltNames are not allowed');
    const ip = parseCertificateRequest(
      (await createRequest({ commonName: 'system:node:n1', organizations: ['system:nodes'], ips: ['10.0.0.1'] }))
        .request,
    );
    expect(nodeClientProblem(ip, client)).toBe('IP subjectAltNames are not allowed');
  });

  it('node serving: a DNS or IP SAN required, no email, server usages', async () => {
    const ok = parseCertificateRequest(
      (
        await createRequest({
          commonName: 'system:node:n1',
          organizations: ['system:nodes'],
          dnsNames: ['n1'],
          ips: ['10.0.0.1'],
        })
      ).request,
    );
    expect(nodeServingProblem(ok, serving)).toBeUndefined();
    expect(nodeServingProblem(ok, client)).toBe(
      'usages did not match [digital signature key encipherment server auth]',
    );
    const none = parseCertificateRequest(
      (await createRequest({ commonName: 'system:node:n1', organizations: ['system:nodes'] })).request,
    );
    expect(nodeServingProblem(none, serving)).toBe('DNS or IP subjectAltName is required');
    const email = parseCertificateRequest(
      (
        await createRequest({
          commonName: 'system:node:n1',
          organizations: ['system:nodes'],
          dnsNames: ['n1'],
          emails: ['a@b.c'],
        })
      ).request,
    );
    expect(nodeServingProblem(email, serving)).toBe('Email subjectAltNames are not allowed');
  });

  it('apiserver client: client auth required, only signature/encipherment besides', async () => {
    const req = parseCertificateRequest((await createRequest({ commonName: 'alice' })).request);
    expect(apiserverClientProblem(req, ['client auth'])).toBeUndefined();
    expect(apiserverClientProblem(req, ['digital signature'])).toBe(
      'missing required usage for client certificate: client auth',
    );
    expect(apiserverClientProblem(req, ['client auth', 'server auth'])).toBe(
      'invalid usage for client certificate: server auth',
    );
  });

  it('a request that is not PEM CERTIFICATE REQUEST does not parse', () => {
    expect(() =>
      parseCertificateRequest(
        Buffer.from('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n').toString('base64'),
      ),
    ).toThrow('PEM block type must be CERTIFICATE REQUEST');
  });
});

describe('CertificateAuthority', () => {
  it.each([
    ['ECDSA P-256, PKCS#8', { key: 'ec' as const }],
    ['ECDSA P-384, SEC 1', { key: 'ec384' as const, nativeKeyFormat: true }],
    ['RSA, PKCS#1', { key: 'rsa' as const, nativeKeyFormat: true }],
  ])(
    '%s: issues a certificate that verifies against the CA, with the request subject, key and SANs',
    async (_label, caOpts) => {
      const ca = await createSigningCa('unit-ca', caOpts);
      const files = await writeSigningCa(dir, `ca-${caOpts.key}`, ca);
      const authority = await CertificateAuthority.load(files);
      const request = await createRequest({
        commonName: 'system:node:n1',
        organizations: ['system:nodes'],
        dnsNames: ['n1.example'],
        ips: ['10.0.0.9'],
      });
      const now = Date.now();
      const pem = await authority.issue(parseCertificateRequest(request.request), {
        ttlMs: HOUR,
        usages: ['digital signature', 'key encipherment', 'server auth'],
        now,
      });
      const cert = new X509Certificate(pem);
      const caCert = new X509Certificate(ca.certPem);
      expect(cert.checkIssued(caCert)).toBe(true);
      expect(cert.verify(caCert.publicKey)).toBe(true);
      expect(cert.subject.split('\n')).toEqual(['CN=system:node:n1', 'O=system:nodes']);
      expect(cert.issuer).toBe('CN=unit-ca');
      expect(cert.subjectAltName).toBe('DNS:n1.example, IP Address:10.0.0.9');
      expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
      expect(cert.ca).toBe(false);
      expect(Date.parse(cert.validFrom)).toBe(Math.floor((now - BACKDATE_MS) / 1000) * 1000);
      expect(Date.parse(cert.validTo)).toBe(Math.floor((now + HOUR) / 1000) * 1000);
      expect(
        cert.publicKey
          .export({ type: 'spki', format: 'der' })
          .equals(createPublicKey(request.keyPem).export({ type: 'spki', format: 'der' })),
      ).toBe(true);
      expect(pem).toMatch(/^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----\n$/);
    },
  );

  it('refuses files that do not make a CA: missing, two certificates, a key of another certificate', async () => {
    const a = await createSigningCa('a');
    const b = await createSigningCa('b');
    const files = await writeSigningCa(dir, 'a', a);
    await expect(CertificateAuthority.load({ ...files, certFile: join(dir, 'missing.crt') })).rejects.toThrow(
      /^error reading CA cert file ".*missing\.crt": ENOENT/,
    );
    await expect(CertificateAuthority.load({ ...files, keyFile: join(dir, 'missing.key') })).rejects.toThrow(
      /^error reading CA key file ".*missing\.key": ENOENT/,
    );
    const two = join(dir, 'two.crt');
    await writeFile(two, a.certPem + b.certPem);
    await expect(CertificateAuthority.load({ ...files, certFile: two })).rejects.toThrow(
      'expected 1 certificate, found 2',
    );
    const other = await writeSigningCa(dir, 'b', b);
    await expect(CertificateAuthority.load({ certFile: files.certFile, keyFile: other.keyFile })).rejects.toThrow(
      /private key does not match public key/,
    );
  });

  it('ReloadingAuthority follows rewritten files and keeps the old CA while the pair does not load', async () => {
    const files = await writeSigningCa(dir, 'reload', await createSigningCa('first'));
    const errors: string[] = [];
    const reloading = await ReloadingAuthority.load(files, (e) => errors.push(e.message));
    expect((await reloading.current()).cert.subject).toBe('CN=first');
    const second = await createSigningCa('second');
    await writeFile(files.certFile, second.certPem);
    expect((await reloading.current()).cert.subject).toBe('CN=first');
    expect(errors[0]).toMatch(/private key does not match/);
    await writeFile(files.keyFile, second.keyPem);
    expect((await reloading.current()).cert.subject).toBe('CN=second');
  });
});

describe('start-up', () => {
  const start = (args: string[]): Promise<unknown> =>
    startControllerManager(
      parseControllerManagerOptions(
        ['--controllers=csrsigning', '--secure-port', '0', '--leader-elect=false', ...args],
        { quiet: true },
      ),
      { logger: silentLogger },
    );

  it('an unreadable or mismatched CA pair is a configuration error naming the file', async () => {
    const a = await writeSigningCa(dir, 'start-a', await createSigningCa('a'));
    const b = await writeSigningCa(dir, 'start-b', await createSigningCa('b'));
    const missing = join(dir, 'nope.crt');
    await expect(
      start(['--cluster-signing-cert-file', missing, '--cluster-signing-key-file', a.keyFile]),
    ).rejects.toThrow(ControllerManagerConfigError);
    await expect(
      start(['--cluster-signing-cert-file', missing, '--cluster-signing-key-file', a.keyFile]),
    ).rejects.toThrow(
      `certificatesigningrequest-signing-controller: failed to start the svc.io/svc-apiserver-client signer: error reading CA cert file ${JSON.stringify(missing)}`,
    );
    await expect(
      start([
        '--cluster-signing-svclet-serving-cert-file',
        a.certFile,
        '--cluster-signing-svclet-serving-key-file',
        b.keyFile,
      ]),
    ).rejects.toThrow(
      /failed to start the svc\.io\/svclet-serving signer: error reading CA key file .*private key does not match public key/,
    );
  });
});
