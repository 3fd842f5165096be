import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import type { Plaintext, ValueTransformer } from './transformer.js';

const BLOCK = 16;

/**
 * AES in CBC mode with PKCS#7 padding (the `aescbc` provider): a value is a random 16-byte IV,
 * then the ciphertext. No authentication: the padding check is the only integrity check, as
 * in Kubernetes. Keys of 16, 24 or 32 bytes.
 */
export class AesCbcTransformer implements ValueTransformer {
  private readonly key: KeyObject;
  private readonly algorithm: string;

  constructor(key: Buffer) {
    this.algorithm = aesAlgorithm('cbc', key);
    this.key = createSecretKey(key);
  }

  fromStorage(data: Buffer): Plaintext {
    if (data.length < BLOCK) throw new Error('the stored data was shorter than the required size');
    const body = data.subarray(BLOCK);
    if (body.length % BLOCK !== 0) throw new Error('the stored data is not a multiple of the block size');
    const decipher = createDecipheriv(this.algorithm, this.key, data.subarray(0, BLOCK)).setAutoPadding(false);
    const out = Buffer.concat([decipher.update(body), decipher.final()]);
    const pad = out.length > 0 ? (out[out.length - 1] as number) : 0;
    if (pad === 0 || pad > out.length) throw new Error('invalid PKCS7 data (empty or not padded)');
    for (let i = out.length - pad; i < out.length; i++) {
      if (out[i] !== pad) throw new Error('invalid padding on input');
    }
    return { data: out.subarray(0, out.length - pad), stale: false };
  }

  toStorage(data: Buffer): Buffer {
    const iv = randomBytes(BLOCK);
    const cipher = createCipheriv(this.algorithm, this.key, iv);
    return Buffer.concat([iv, cipher.update(data), cipher.final()]);
  }
}

/** Node's cipher name for AES with this key: `aes-128-cbc`, `aes-256-gcm`, ... */
export function aesAlgorithm(mode: 'cbc' | 'gcm', key: Buffer): string {
  if (key.length !== 16 && key.length !== 24 && key.length !== 32)
    throw new Error(`crypto/aes: invalid key size ${key.length}`);
  return `aes-${key.length * 8}-${mode}`;
}
