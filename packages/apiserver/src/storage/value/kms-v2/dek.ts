import { createHmac, randomBytes } from 'node:crypto';
import { AesGcmTransformer } from '../aes-gcm.js';
import type { Plaintext, ValueTransformer } from '../transformer.js';

/** Size of the seed, of each derived key and of the random `info` in front of each value. */
export const SEED_SIZE = 32;
const INFO_SIZE = 32;

/**
 * AES-GCM under a key derived per value from one seed (KMS v2's
 * HKDF_SHA256_XNONCE_AES_GCM_SEED): a value is 32 random bytes of `info`, then AES-GCM (nonce,
 * ciphertext, tag) under HKDF-SHA256-Expand(seed, info). A fresh key per value removes the
 * nonce-reuse bound of one key, so one seed serves any number of writes.
 */
export class SeedTransformer implements ValueTransformer {
  constructor(private readonly seed: Buffer) {
    if (seed.length < SEED_SIZE) throw new Error(`invalid seed length ${seed.length} used for key generation`);
  }

  fromStorage(data: Buffer, authenticatedData: Buffer): Plaintext {
    if (data.length < INFO_SIZE) throw new Error('the stored data was shorter than the required size');
    const info = data.subarray(0, INFO_SIZE);
    return new AesGcmTransformer(this.derive(info)).fromStorage(data.subarray(INFO_SIZE), authenticatedData);
  }

  toStorage(data: Buffer, authenticatedData: Buffer): Buffer {
    const info = randomBytes(INFO_SIZE);
    const sealed = new AesGcmTransformer(this.derive(info)).toStorage(data, authenticatedData);
    return Buffer.concat([info, sealed]);
  }

  /** HKDF-Expand with SHA-256 (RFC 5869, no extract step): the first output block is the 32-byte key. */
  private derive(info: Buffer): Buffer {
    return createHmac('sha256', this.seed).update(info).update(Buffer.of(1)).digest();
  }
}

export function newSeed(): Buffer {
  return randomBytes(SEED_SIZE);
}
