import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1] & object);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 24 * 3600_000;

export interface IssueOptions {
  commonName?: string;
  organizations?: string[];
  /** Default: a minute ago. */
  notBefore?: Date;
  /** Default: a day after notBefore. */
  notAfter?: Date;
  /** Extended key usages; default `['client']`. An empty list leaves the extension out. */
  usages?: Array<'client' | 'server'>;
  /** DNS names and IPs (server certificates). */
  hosts?: string[];
}

export interface IssuedCert {
  certPem: string;
  keyPem: string;
  /** The certificate followed by the intermediates up to (not including) the root. */
  chainPem: string;
}

/** A certificate authority made in a test (ECDSA P-256); it signs leaves and intermediates. */
export interface TestCa {
  name: string;
  certPem: string;
  /** PEM (PKCS#8) of the CA's private key, for components that sign with it. */
  keyPem(): Promise<string>;
  /** PEM of the intermediates between this CA and its root (empty for a root). */
  parentsPem: string;
  issue(o?: IssueOptions): Promise<IssuedCert>;
  intermediate(name: string, o?: { notBefore?: Date; notAfter?: Date }): Promise<TestCa>;
}

function serial(): string {
  return Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
    .toString('hex')
    .replace(/^[89a-f]/, '1');
}

async function keyPem(key: CryptoKey): Promise<string> {
  const b64 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key))
    .toString('base64')
    .replace(/.{64}/g, '$&\n');
  return `-----BEGIN PRIVATE KEY-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END PRIVATE KEY-----\n`;
}

function subject(cn: string, orgs: readonly string[] = []): string {
  const esc = (v: string): string => v.replace(/([,+"\\<>;=])/g, '\\$1');
  return [`CN=${esc(cn)}`, ...orgs.map((o) => `O=${esc(o)}`)].join(', ');
}

function window(o: { notBefore?: Date; notAfter?: Date }): { notBefore: Date; notAfter: Date } {
  const notBefore = o.notBefore ?? new Date(Date.now() - 60_000);
  return { notBefore, notAfter: o.notAfter ?? new Date(notBefore.getTime() + DAY) };
}

/** A CA's certificate and key pair. */
interface CaIdentity {
  cert: x509.X509Certificate;
  keys: CryptoKeyPair;
}

/** The CA `name` signing with `identity`; `parentsPem` holds the CAs above it (empty for a root). */
function makeCa(name: string, { cert, keys }: CaIdentity, parentsPem: string): TestCa {
  const certPem = cert.toString('pem') + '\n';
  return {
    name,
    certPem,
    parentsPem,
    keyPem: () => keyPem(keys.privateKey),
    async issue(o = {}) {
      const leafKeys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
      const usages = o.usages ?? ['client'];
      const extensions: x509.Extension[] = [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        await x509.AuthorityKeyIdentifierExtension.create(cert),
      ];
      if (usages.length > 0) {
        extensions.push(
          new x509.ExtendedKeyUsageExtension(
            usages.map((u) => (u === 'client' ? x509.ExtendedKeyUsage.clientAuth : x509.ExtendedKeyUsage.serverAuth)),
          ),
        );
      }
      if (o.hosts?.length) {
        extensions.push(
          new x509.SubjectAlternativeNameExtension(
            o.hosts.map((h) => ({ type: isIP(h) ? ('ip' as const) : ('dns' as const), value: h })),
          ),
        );
      }
      const leaf = await x509.X509CertificateGenerator.create({
        serialNumber: serial(),
        subject: subject(o.commonName ?? 'user', o.organizations),
        issuer: cert.subject,
        ...window(o),
        publicKey: leafKeys.publicKey,
        signingKey: keys.privateKey,
        signingAlgorithm: ALG,
        extensions,
      });
      const leafPem = leaf.toString('pem') + '\n';
      return { certPem: leafPem, keyPem: await keyPem(leafKeys.privateKey), chainPem: leafPem + parentsPem };
    },
    async intermediate(childName, o = {}) {
      const childKeys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
      const child = await x509.X509CertificateGenerator.create({
        serialNumber: serial(),
        subject: subject(childName),
        issuer: cert.subject,
        ...window({ notAfter: o.notAfter ?? new Date(Date.now() + 30 * DAY), notBefore: o.notBefore }),
        publicKey: childKeys.publicKey,
        signingKey: keys.privateKey,
        signingAlgorithm: ALG,
        extensions: [
          new x509.BasicConstraintsExtension(true, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true),
          await x509.SubjectKeyIdentifierExtension.create(childKeys.publicKey),
          await x509.AuthorityKeyIdentifierExtension.create(cert),
        ],
      });
      return makeCa(childName, { cert: child, keys: childKeys }, child.toString('pem') + '\n' + parentsPem);
    },
  };
}

/** A self-signed root CA valid from a minute ago for 30 days (or the given window). */
export async function createTestCa(name: string, o: { notBefore?: Date; notAfter?: Date } = {}): Promise<TestCa> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: subject(name),
    ...window({ notAfter: o.notAfter ?? new Date(Date.now() + 30 * DAY), notBefore: o.notBefore }),
    keys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return makeCa(name, { cert, keys }, '');
}

export interface TestCsr {
  /** PEM of the PKCS#10 request (`CERTIFICATE REQUEST`). */
  csrPem: string;
  keyPem: string;
}

/** A PKCS#10 request for `commonName` in `organizations`, signed by a fresh ECDSA P-256 key. */
export async function createTestCsr(o: { commonName: string; organizations?: string[] }): Promise<TestCsr> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: subject(o.commonName, o.organizations),
    keys,
    signingAlgorithm: ALG,
  });
  return { csrPem: csr.toString('pem') + '\n', keyPem: await keyPem(keys.privateKey) };
}
