import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1] & object);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

export interface ServingCert {
  /** PEM: the serving certificate followed by its CA. */
  certPem: string;
  keyPem: string;
  /** PEM of the CA clients should trust. */
  caPem: string;
}

function pemKey(der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN PRIVATE KEY-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END PRIVATE KEY-----\n`;
}

function serial(): string {
  return Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
    .toString('hex')
    .replace(/^[89a-f]/, '1');
}

/** A certificate authority: its certificate and private key, in PEM. */
export interface CertificateAuthority {
  certPem: string;
  keyPem: string;
}

export interface IssueOptions {
  commonName: string;
  organizations?: string[];
  /** Extended key usages. */
  usages: Array<'client' | 'server'>;
  /** DNS names and IPs (server certificates). */
  hosts?: string[];
  days?: number;
}

function subjectOf(cn: string, orgs: readonly string[] = []): string {
  const esc = (v: string): string => v.replace(/([,+"\\<>;=])/g, '\\$1');
  return [`CN=${esc(cn)}`, ...orgs.map((o) => `O=${esc(o)}`)].join(', ');
}

async function importKey(keyPem: string): Promise<CryptoKey> {
  const der = Buffer.from(keyPem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  return webcrypto.subtle.importKey('pkcs8', der, ALG, true, ['sign']);
}

/** A self-signed CA (ECDSA P-256) valid from a minute ago for `days` (10 years). */
export async function createCertificateAuthority(commonName: string, days = 3650): Promise<CertificateAuthority> {
  const notBefore = new Date(Date.now() - 60_000);
  const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: subjectOf(commonName),
    notBefore,
    notAfter: new Date(notBefore.getTime() + days * 24 * 3600_000),
    keys: keys as CryptoKeyPair,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey as CryptoKey),
    ],
  });
  return {
    certPem: ca.toString('pem') + '\n',
    keyPem: pemKey(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey as CryptoKey)),
  };
}

/** A leaf certificate signed by `ca`, with a fresh ECDSA P-256 key. */
export async function issueCertificate(
  ca: CertificateAuthority,
  o: IssueOptions,
): Promise<{ certPem: string; keyPem: string }> {
  const notBefore = new Date(Date.now() - 60_000);
  const caCert = new x509.X509Certificate(ca.certPem);
  const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const hosts = [...new Set(o.hosts ?? [])];
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension(
      o.usages.map((u) => (u === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth)),
    ),
    await x509.AuthorityKeyIdentifierExtension.create(caCert),
  ];
  if (hosts.length > 0)
    extensions.push(
      new x509.SubjectAlternativeNameExtension(
        hosts.map((h) => ({ type: isIP(h) ? ('ip' as const) : ('dns' as const), value: h })),
      ),
    );
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: subjectOf(o.commonName, o.organizations),
    issuer: caCert.subject,
    notBefore,
    notAfter: new Date(notBefore.getTime() + (o.days ?? 365) * 24 * 3600_000),
    publicKey: keys.publicKey as CryptoKey,
    signingKey: await importKey(ca.keyPem),
    signingAlgorithm: ALG,
    extensions,
  });
  return {
    certPem: cert.toString('pem') + '\n',
    keyPem: pemKey(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey as CryptoKey)),
  };
}

/** Makes a CA and a serving certificate it signs, valid for `hosts` (names and IPs) for a year. */
export async function generateServingCert(hosts: string[]): Promise<ServingCert> {
  const unique = [...new Set(hosts)];
  const stamp = Math.floor(Date.now() / 1000);
  const ca = await createCertificateAuthority(`${unique[0] ?? 'localhost'}-ca@${stamp}`, 365);
  const leaf = await issueCertificate(ca, {
    commonName: `${unique[0] ?? 'localhost'}@${stamp}`,
    usages: ['server'],
    hosts: unique,
  });
  return { certPem: leaf.certPem + ca.certPem, keyPem: leaf.keyPem, caPem: ca.certPem };
}

/**
 * The serving certificate in `certDir` (`<base>.crt`, `<base>.key`, `ca.crt`), made on first
 * use and reused afterwards so clients keep trusting the same CA across restarts.
 */
export async function ensureServingCert(certDir: string, hosts: string[], base = 'apiserver'): Promise<ServingCert> {
  const certFile = join(certDir, `${base}.crt`);
  const keyFile = join(certDir, `${base}.key`);
  const caFile = join(certDir, 'ca.crt');
  if (existsSync(certFile) && existsSync(keyFile) && existsSync(caFile)) {
    const [certPem, keyPem, caPem] = await Promise.all([
      readFile(certFile, 'utf8'),
      readFile(keyFile, 'utf8'),
      readFile(caFile, 'utf8'),
    ]);
    return { certPem, keyPem, caPem };
  }
  const made = await generateServingCert(hosts);
  await mkdir(certDir, { recursive: true, mode: 0o700 });
  await writeFile(keyFile, made.keyPem, { mode: 0o600 });
  await writeFile(certFile, made.certPem);
  await writeFile(caFile, made.caPem);
  return made;
}
