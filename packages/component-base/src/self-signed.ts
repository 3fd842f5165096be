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
  return Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex').replace(/^[89a-f]/, '1');
}

/** Makes a CA and a serving certificate it signs, valid for `hosts` (names and IPs) for a year. */
export async function generateServingCert(hosts: string[]): Promise<ServingCert> {
  const now = new Date(Date.now() - 60_000);
  const notAfter = new Date(now.getTime() + 365 * 24 * 3600_000);
  const caKeys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(), name: `CN=${hosts[0] ?? 'localhost'}-ca@${Math.floor(now.getTime() / 1000)}`,
    notBefore: now, notAfter, keys: caKeys as CryptoKeyPair, signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey as CryptoKey),
    ],
  });
  const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const unique = [...new Set(hosts)];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(), subject: `CN=${unique[0] ?? 'localhost'}@${Math.floor(now.getTime() / 1000)}`, issuer: ca.subject,
    notBefore: now, notAfter, publicKey: keys.publicKey as CryptoKey, signingKey: caKeys.privateKey as CryptoKey, signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(unique.map((h) => ({ type: isIP(h) ? 'ip' as const : 'dns' as const, value: h }))),
      await x509.AuthorityKeyIdentifierExtension.create(ca),
    ],
  });
  const keyDer = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey as CryptoKey);
  const caPem = ca.toString('pem') + '\n';
  return { certPem: cert.toString('pem') + '\n' + caPem, keyPem: pemKey(keyDer), caPem };
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
    const [certPem, keyPem, caPem] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8'), readFile(caFile, 'utf8')]);
    return { certPem, keyPem, caPem };
  }
  const made = await generateServingCert(hosts);
  await mkdir(certDir, { recursive: true, mode: 0o700 });
  await writeFile(keyFile, made.keyPem, { mode: 0o600 });
  await writeFile(certFile, made.certPem);
  await writeFile(caFile, made.caPem);
  return made;
}
