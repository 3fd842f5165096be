import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  X509Certificate,
  type KeyObject,
} from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

export type ServiceAccountAlg = 'RS256' | 'ES256' | 'ES384' | 'ES512';

/** A public key tokens may be signed with, and its key id (`kid`). */
export interface VerificationKey {
  key: KeyObject;
  kid: string;
  alg: ServiceAccountAlg;
}

/** The private key TokenRequest signs with, and its public half. */
export interface SigningKey extends VerificationKey {
  privateKey: KeyObject;
}

const CURVE_ALGS: Record<string, ServiceAccountAlg> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };

/** RS256 for RSA keys, ES256/384/512 by curve; other keys are refused. */
export function algorithmOf(key: KeyObject): ServiceAccountAlg {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    const alg = CURVE_ALGS[key.asymmetricKeyDetails?.namedCurve ?? ''];
    if (alg) return alg;
    throw new Error(`unsupported ECDSA curve ${key.asymmetricKeyDetails?.namedCurve ?? '?'}`);
  }
  throw new Error(`unsupported key type ${key.asymmetricKeyType ?? '?'} (RSA or ECDSA only)`);
}

/** Kubernetes' key id: base64url of the SHA-256 of the public key's DER (SubjectPublicKeyInfo). */
export function keyId(publicKey: KeyObject): string {
  return createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64url');
}

export function verificationKey(publicKey: KeyObject): VerificationKey {
  return { key: publicKey, kid: keyId(publicKey), alg: algorithmOf(publicKey) };
}

function pemBlocks(pem: string): Array<{ label: string; text: string }> {
  return [...pem.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g)].map((m) => ({
    label: m[1] ?? '',
    text: m[0],
  }));
}

const PRIVATE_LABELS = new Set(['PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY']);
const PUBLIC_LABELS = new Set(['PUBLIC KEY', 'RSA PUBLIC KEY']);

/**
 * The public keys of a PEM file: public keys, certificates, and the public half of private
 * keys (RSA or ECDSA; several per file). A file without any is an error.
 */
export function parsePublicKeys(pem: string, file: string): VerificationKey[] {
  const keys: VerificationKey[] = [];
  for (const b of pemBlocks(pem)) {
    try {
      let key: KeyObject | undefined;
      if (PUBLIC_LABELS.has(b.label)) key = createPublicKey(b.text);
      else if (PRIVATE_LABELS.has(b.label)) key = createPublicKey(createPrivateKey(b.text));
      else if (b.label === 'CERTIFICATE') key = new X509Certificate(b.text).publicKey;
      if (key) keys.push(verificationKey(key));
    } catch (e) {
      throw new Error(`${file}: ${(e as Error).message}`, { cause: e });
    }
  }
  if (keys.length === 0) throw new Error(`${file}: no RSA or ECDSA public or private key found`);
  return keys;
}

/** The first private key of a PEM file (RSA or ECDSA). */
export function parseSigningKey(pem: string, file: string): SigningKey {
  const block = pemBlocks(pem).find((b) => PRIVATE_LABELS.has(b.label));
  if (!block) throw new Error(`${file}: no private key found`);
  try {
    const privateKey = createPrivateKey(block.text);
    return { ...verificationKey(createPublicKey(privateKey)), privateKey };
  } catch (e) {
    throw new Error(`${file}: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * The service-account signing key in `certDir` (`sa.key`, RSA 2048, PKCS#8), made on first use
 * and reused afterwards so tokens stay valid across restarts; returns the file's path.
 */
export async function ensureServiceAccountKey(certDir: string): Promise<string> {
  const file = join(certDir, 'sa.key');
  if (existsSync(file)) return file;
  const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  await mkdir(certDir, { recursive: true, mode: 0o700 });
  await writeFile(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' }).catch(
    async (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e; // another server sharing the directory made it first
    },
  );
  return file;
}
