// Test helpers (not built): signing CAs with their keys on disk and PKCS#10 requests with SANs.
import 'reflect-metadata';
import { createPrivateKey, webcrypto } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1] & object);

type CryptoKeyPair = webcrypto.CryptoKeyPair;
export type TestKeyType = 'ec' | 'ec384' | 'rsa';

const ALGS: Record<
  TestKeyType,
  { name: string; namedCurve?: string; hash: string; modulusLength?: number; publicExponent?: Uint8Array }
> = {
  ec: { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' },
  ec384: { name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-384' },
  rsa: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
};

async function keyPair(type: TestKeyType): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALGS[type], true, ['sign', 'verify'])) as CryptoKeyPair;
}

/** PEM of a private key: PKCS#8, or the key type's own format (PKCS#1 / SEC 1) with `native`. */
async function privatePem(keys: CryptoKeyPair, native: boolean): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const key = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  if (!native) return key.export({ type: 'pkcs8', format: 'pem' }).toString();
  return key.export({ type: key.asymmetricKeyType === 'rsa' ? 'pkcs1' : 'sec1', format: 'pem' }).toString();
}

export interface TestSigningCa {
  certPem: string;
  keyPem: string;
}

/** A self-signed CA (with a subject key identifier) valid from a minute ago until `notAfter` (30 days). */
export async function createSigningCa(
  name: string,
  o: { key?: TestKeyType; notAfter?: Date; nativeKeyFormat?: boolean } = {},
): Promise<TestSigningCa> {
  const type = o.key ?? 'ec';
  const keys = await keyPair(type);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `CN=${name}`,
    keys,
    signingAlgorithm: ALGS[type],
    notBefore: new Date(Date.now() - 60_000),
    notAfter: o.notAfter ?? new Date(Date.now() + 30 * 24 * 3600_000),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: `${cert.toString('pem')}\n`, keyPem: await privatePem(keys, o.nativeKeyFormat ?? false) };
}

/** Writes `ca` as `<base>.crt` and `<base>.key` in `dir`. */
export async function writeSigningCa(
  dir: string,
  base: string,
  ca: TestSigningCa,
): Promise<{ certFile: string; keyFile: string }> {
  const certFile = join(dir, `${base}.crt`);
  const keyFile = join(dir, `${base}.key`);
  await writeFile(certFile, ca.certPem);
  await writeFile(keyFile, ca.keyPem);
  return { certFile, keyFile };
}

export interface TestRequest {
  csrPem: string;
  keyPem: string;
  /** base64 of `csrPem`, as `spec.request` carries it. */
  request: string;
}

/** A PKCS#10 request for CN `commonName`, O `organizations`, with DNS/IP/email SANs when given. */
export async function createRequest(o: {
  commonName: string;
  organizations?: string[];
  dnsNames?: string[];
  ips?: string[];
  emails?: string[];
  key?: TestKeyType;
}): Promise<TestRequest> {
  const type = o.key ?? 'ec';
  const keys = await keyPair(type);
  const sans: x509.JsonGeneralNames = [
    ...(o.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(o.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
    ...(o.emails ?? []).map((value) => ({ type: 'email' as const, value })),
  ];
  const name = [{ CN: [o.commonName] }, ...(o.organizations ?? []).map((org) => ({ O: [org] }))];
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name,
    keys,
    signingAlgorithm: ALGS[type],
    extensions: sans.length > 0 ? [new x509.SubjectAlternativeNameExtension(sans)] : [],
  });
  const csrPem = `${csr.toString('pem')}\n`;
  return { csrPem, keyPem: await privatePem(keys, false), request: Buffer.from(csrPem).toString('base64') };
}
