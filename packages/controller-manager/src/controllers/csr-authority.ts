import 'reflect-metadata';
import { createPrivateKey, createPublicKey, webcrypto, X509Certificate as NodeX509, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as x509 from '@peculiar/x509';
import type { SigningFiles } from '../options.js';
import type { CertificateRequest } from './csr-rules.js';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1] & object);

type CryptoKey = webcrypto.CryptoKey;

const MINUTE = 60_000;
/** Kubernetes' signer: NotBefore is backdated by this (less than the shortest TTL a request may ask). */
export const BACKDATE_MS = 5 * MINUTE;
/** Below this TTL a certificate is short-lived: its NotAfter is not backdated. */
export const SHORT_MS = 8 * 60 * MINUTE;
/** The shortest TTL honoured from `spec.expirationSeconds` (twice the backdate). */
export const MIN_TTL_MS = 10 * MINUTE;

/** Key usages of the certificates API → X.509 key usage bits. */
const KEY_USAGE: Record<string, x509.KeyUsageFlags> = {
  signing: x509.KeyUsageFlags.digitalSignature,
  'digital signature': x509.KeyUsageFlags.digitalSignature,
  'content commitment': x509.KeyUsageFlags.nonRepudiation,
  'key encipherment': x509.KeyUsageFlags.keyEncipherment,
  'key agreement': x509.KeyUsageFlags.keyAgreement,
  'data encipherment': x509.KeyUsageFlags.dataEncipherment,
  'cert sign': x509.KeyUsageFlags.keyCertSign,
  'crl sign': x509.KeyUsageFlags.cRLSign,
  'encipher only': x509.KeyUsageFlags.encipherOnly,
  'decipher only': x509.KeyUsageFlags.decipherOnly,
};

/** Key usages of the certificates API → extended key usage OIDs, in Go's ExtKeyUsage order (the order they are written in). */
const EXT_KEY_USAGE: ReadonlyArray<[string[], string]> = [
  [['any'], '2.5.29.37.0'],
  [['server auth'], '1.3.6.1.5.5.7.3.1'],
  [['client auth'], '1.3.6.1.5.5.7.3.2'],
  [['code signing'], '1.3.6.1.5.5.7.3.3'],
  [['email protection', 's/mime'], '1.3.6.1.5.5.7.3.4'],
  [['ipsec end system'], '1.3.6.1.5.5.7.3.5'],
  [['ipsec tunnel'], '1.3.6.1.5.5.7.3.6'],
  [['ipsec user'], '1.3.6.1.5.5.7.3.7'],
  [['timestamping'], '1.3.6.1.5.5.7.3.8'],
  [['ocsp signing'], '1.3.6.1.5.5.7.3.9'],
  [['microsoft sgc'], '1.3.6.1.4.1.311.10.3.3'],
  [['netscape sgc'], '2.16.840.1.113730.4.1'],
];

/** Kubernetes' keyUsagesFromStrings: the key usage bits and the sorted, de-duplicated extended key usages; unknown values throw. */
export function keyUsagesOf(usages: readonly string[]): { keyUsage: number; extKeyUsages: string[] } {
  const unknown = usages.filter(
    (u) => KEY_USAGE[u] === undefined && !EXT_KEY_USAGE.some(([names]) => names.includes(u)),
  );
  if (unknown.length > 0)
    throw new Error(`unrecognized usage values: [${unknown.map((u) => JSON.stringify(u)).join(' ')}]`);
  const keyUsage = usages.reduce((bits, u) => bits | (KEY_USAGE[u] ?? 0), 0);
  const extKeyUsages = EXT_KEY_USAGE.filter(([names]) => names.some((n) => usages.includes(n))).map(([, oid]) => oid);
  return { keyUsage, extKeyUsages };
}

/**
 * The TTL a request gets (Kubernetes' signer.duration): `maxMs` (`--cluster-signing-duration`)
 * unless `expirationSeconds` asks shorter, never below ten minutes.
 */
export function certificateTtl(maxMs: number, expirationSeconds?: number): number {
  if (expirationSeconds === undefined) return maxMs;
  const requested = expirationSeconds * 1000;
  return requested > maxMs ? maxMs : Math.max(requested, MIN_TTL_MS);
}

/**
 * Kubernetes' PermissiveSigningPolicy window: NotBefore = now - backdate; NotAfter = now + ttl
 * (short-lived) or now + ttl - backdate, cut at the CA's NotAfter. Throws when the CA has expired.
 */
export function validityWindow(
  now: number,
  ttlMs: number,
  caNotAfter: number,
): { notBefore: number; notAfter: number } {
  const notBefore = now - BACKDATE_MS;
  const notAfter = Math.min(ttlMs < SHORT_MS ? now + ttlMs : now + ttlMs - BACKDATE_MS, caNotAfter);
  if (notBefore >= caNotAfter)
    throw new Error(`the signer has expired: NotAfter=${new Date(caNotAfter).toISOString()}`);
  if (now >= caNotAfter)
    throw new Error(
      `refusing to sign a certificate that expired in the past: NotAfter=${new Date(caNotAfter).toISOString()}`,
    );
  return { notBefore, notAfter };
}

/** A serial below 2^128, positive and minimally encoded. */
function randomSerial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] ?? 0) & 0x7f || 1;
  return Buffer.from(bytes).toString('hex');
}

const EC_CURVES: Record<string, { namedCurve: string; hash: string }> = {
  prime256v1: { namedCurve: 'P-256', hash: 'SHA-256' },
  secp384r1: { namedCurve: 'P-384', hash: 'SHA-384' },
  secp521r1: { namedCurve: 'P-521', hash: 'SHA-512' },
};

/** The WebCrypto import and signature algorithms for a CA key (RSA: PKCS#1 v1.5 with SHA-256; ECDSA: the curve's hash, as Go). */
function signingAlgorithmOf(key: KeyObject): { name: string; hash: string; namedCurve?: string } {
  if (key.asymmetricKeyType === 'rsa') return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  const curve = key.asymmetricKeyType === 'ec' ? EC_CURVES[key.asymmetricKeyDetails?.namedCurve ?? ''] : undefined;
  if (curve) return { name: 'ECDSA', ...curve };
  throw new Error(
    `unsupported private key type ${key.asymmetricKeyType ?? 'unknown'}${key.asymmetricKeyDetails?.namedCurve ? ` (${key.asymmetricKeyDetails.namedCurve})` : ''}: RSA or ECDSA P-256/P-384/P-521 is required`,
  );
}

/** The contents of a cert/key pair; a file that cannot be read throws naming it. */
async function readPair(files: SigningFiles): Promise<{ certPem: string; keyPem: string }> {
  const read = async (file: string, what: string): Promise<string> => {
    try {
      return await readFile(file, 'latin1');
    } catch (e) {
      throw new Error(`error reading CA ${what} file ${JSON.stringify(file)}: ${(e as Error).message}`, { cause: e });
    }
  };
  return { certPem: await read(files.certFile, 'cert'), keyPem: await read(files.keyFile, 'key') };
}

/** A CA certificate and its private key, loaded from a pair of PEM files; it issues leaf certificates. */
export class CertificateAuthority {
  private constructor(
    readonly cert: x509.X509Certificate,
    private readonly key: CryptoKey,
    private readonly algorithm: { name: string; hash: string },
  ) {}

  /**
   * Reads `files`: exactly one certificate, an RSA or ECDSA private key (PKCS#1, SEC 1 or
   * PKCS#8) that matches it. Errors name the file (Kubernetes' wording).
   */
  static async load(files: SigningFiles): Promise<CertificateAuthority> {
    return CertificateAuthority.fromPem(files, await readPair(files));
  }

  /** A CA from the contents of `files` (see `load`). */
  static async fromPem(
    files: SigningFiles,
    { certPem, keyPem }: { certPem: string; keyPem: string },
  ): Promise<CertificateAuthority> {
    const certErr = (why: string): Error =>
      new Error(`error reading CA cert file ${JSON.stringify(files.certFile)}: ${why}`);
    const keyErr = (why: string): Error =>
      new Error(`error reading CA key file ${JSON.stringify(files.keyFile)}: ${why}`);
    const blocks = certPem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
    if (blocks.length !== 1) throw certErr(`expected 1 certificate, found ${blocks.length}`);
    let nodeCert: NodeX509;
    let cert: x509.X509Certificate;
    try {
      nodeCert = new NodeX509(blocks[0] ?? '');
      cert = new x509.X509Certificate(blocks[0] ?? '');
    } catch (e) {
      throw certErr((e as Error).message);
    }
    let privateKey: KeyObject;
    let algorithm: { name: string; hash: string; namedCurve?: string };
    try {
      privateKey = createPrivateKey(keyPem);
      algorithm = signingAlgorithmOf(privateKey);
    } catch (e) {
      throw keyErr((e as Error).message);
    }
    const spki = (k: KeyObject): Buffer => k.export({ type: 'spki', format: 'der' });
    if (!spki(createPublicKey(privateKey)).equals(spki(nodeCert.publicKey))) {
      throw keyErr(`private key does not match public key of ${JSON.stringify(files.certFile)}`);
    }
    const der = privateKey.export({ type: 'pkcs8', format: 'der' });
    const key = await webcrypto.subtle.importKey('pkcs8', der, algorithm, false, ['sign']);
    return new CertificateAuthority(cert, key, { name: algorithm.name, hash: algorithm.hash });
  }

  /**
   * Issues a certificate for `req` (its signature is checked first): the request's subject,
   * public key and DNS/IP/email/URI SANs, `usages` as key usage and extended key usage, not a
   * CA, issued by this CA's subject with a random serial, valid over `validityWindow`. The
   * request's other extensions are dropped (Kubernetes' PermissiveSigningPolicy). Returns PEM.
   */
  async issue(req: CertificateRequest, o: { ttlMs: number; usages: readonly string[]; now?: number }): Promise<string> {
    if (!(await req.csr.verify().catch(() => false))) throw new Error('unable to verify certificate request signature');
    const { keyUsage, extKeyUsages } = keyUsagesOf(o.usages);
    const { notBefore, notAfter } = validityWindow(o.now ?? Date.now(), o.ttlMs, this.cert.notAfter.getTime());
    const extensions: x509.Extension[] = [];
    if (keyUsage !== 0) extensions.push(new x509.KeyUsagesExtension(keyUsage, true));
    if (extKeyUsages.length > 0) extensions.push(new x509.ExtendedKeyUsageExtension(extKeyUsages));
    extensions.push(new x509.BasicConstraintsExtension(false, undefined, true));
    const ski = this.cert.getExtension(x509.SubjectKeyIdentifierExtension);
    if (ski) extensions.push(new x509.AuthorityKeyIdentifierExtension(ski.keyId));
    const sans: x509.JsonGeneralNames = [
      ...req.dnsNames.map((value) => ({ type: 'dns' as const, value })),
      ...req.emailAddresses.map((value) => ({ type: 'email' as const, value })),
      ...req.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
      ...req.uris.map((value) => ({ type: 'url' as const, value })),
    ];
    // As Go: the SAN extension is critical when the subject is empty.
    if (sans.length > 0)
      extensions.push(new x509.SubjectAlternativeNameExtension(sans, req.csr.subjectName.toJSON().length === 0));
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: randomSerial(),
      subject: req.csr.subjectName,
      issuer: this.cert.subjectName,
      notBefore: new Date(notBefore),
      notAfter: new Date(notAfter),
      publicKey: req.csr.publicKey,
      signingKey: this.key,
      signingAlgorithm: this.algorithm,
      extensions,
    });
    return `${cert.toString('pem').replace(/\r\n/g, '\n')}\n`;
  }
}

/**
 * A CertificateAuthority that follows its files: `current()` re-reads them (two small files)
 * and rebuilds the CA when their content changed. A pair that does not load (e.g. half-written
 * during a rotation) keeps the previous CA and is tried again on the next call, as
 * Kubernetes' dynamic loader.
 */
export class ReloadingAuthority {
  private readonly files: SigningFiles;
  private ca: CertificateAuthority;
  private loaded: { certPem: string; keyPem: string };
  private readonly onReloadError: (e: Error) => void;

  private constructor(o: {
    files: SigningFiles;
    ca: CertificateAuthority;
    loaded: { certPem: string; keyPem: string };
    onReloadError: (e: Error) => void;
  }) {
    this.files = o.files;
    this.ca = o.ca;
    this.loaded = o.loaded;
    this.onReloadError = o.onReloadError;
  }

  /** Loads the pair now; throws when it does not load. */
  static async load(
    files: SigningFiles,
    onReloadError: (e: Error) => void = () => undefined,
  ): Promise<ReloadingAuthority> {
    const pems = await readPair(files);
    return new ReloadingAuthority({
      files,
      ca: await CertificateAuthority.fromPem(files, pems),
      loaded: pems,
      onReloadError,
    });
  }

  async current(): Promise<CertificateAuthority> {
    try {
      const pems = await readPair(this.files);
      if (pems.certPem !== this.loaded.certPem || pems.keyPem !== this.loaded.keyPem) {
        this.ca = await CertificateAuthority.fromPem(this.files, pems);
        this.loaded = pems;
      }
    } catch (e) {
      this.onReloadError(e as Error);
    }
    return this.ca;
  }
}
