import {
  createCipheriv,
  createDecipheriv,
  createSecretKey,
  randomBytes,
  type CipherGCMTypes,
  type KeyObject,
} from 'node:crypto';
import { aesAlgorithm } from './aes-cbc.js';
import type { Plaintext, ValueTransformer } from './transformer.js';

const NONCE = 12;
const TAG = 16;

/**
 * AES-GCM (the `aesgcm` provider, and the data keys of KMS v2): a value is a 12-byte nonce,
 * the ciphertext and the 16-byte tag; the storage key is authenticated with it. Nonces are
 * random by default; `nonce` lets a caller supply its own (KMS v2's counter nonces).
 */
export class AesGcmTransformer implements ValueTransformer {
  private readonly key: KeyObject;
  private readonly algorithm: CipherGCMTypes;

  constructor(
    key: Buffer,
    private readonly nonce: () => Buffer = () => randomBytes(NONCE),
  ) {
    this.algorithm = aesAlgorithm('gcm', key) as CipherGCMTypes;
    this.key = createSecretKey(key);
  }

  fromStorage(data: Buffer, authenticatedData: Buffer): Plaintext {
    if (data.length < NONCE) throw new Error('the stored data was shorter than the required size');
    if (data.length < NONCE + TAG) throw authenticationFailed();
    const decipher = createDecipheriv(this.algorithm, this.key, data.subarray(0, NONCE), { authTagLength: TAG });
    decipher.setAAD(authenticatedData);
    decipher.setAuthTag(data.subarray(data.length - TAG));
    try {
      return {
        data: Buffer.concat([decipher.update(data.subarray(NONCE, data.length - TAG)), decipher.final()]),
        stale: false,
      };
    } catch {
      throw authenticationFailed();
    }
  }

  toStorage(data: Buffer, authenticatedData: Buffer): Buffer {
    const nonce = this.nonce();
    const cipher = createCipheriv(this.algorithm, this.key, nonce, { authTagLength: TAG });
    cipher.setAAD(authenticatedData);
    return Buffer.concat([nonce, cipher.update(data), cipher.final(), cipher.getAuthTag()]);
  }
}

function authenticationFailed(): Error {
  return new Error('cipher: message authentication failed');
}
