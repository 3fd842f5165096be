import { randomBytes } from 'node:crypto';
import nacl from 'tweetnacl';
import type { Plaintext, ValueTransformer } from './transformer.js';

const NONCE = nacl.secretbox.nonceLength;
const OVERHEAD = nacl.secretbox.overheadLength;

/**
 * XSalsa20-Poly1305 (NaCl secretbox, the `secretbox` provider) with a 32-byte key: a value is a
 * random 24-byte nonce, then the box (tag first), as Go's secretbox.Seal lays it out.
 */
export class SecretboxTransformer implements ValueTransformer {
  private readonly key: Uint8Array;

  constructor(key: Buffer) {
    if (key.length !== nacl.secretbox.keyLength)
      throw new Error(`expected key size 32 for secretbox provider, got ${key.length}`);
    this.key = new Uint8Array(key);
  }

  fromStorage(data: Buffer): Plaintext {
    if (data.length < NONCE + OVERHEAD) throw new Error('the stored data was shorter than the required size');
    const out = nacl.secretbox.open(data.subarray(NONCE), data.subarray(0, NONCE), this.key);
    // Kubernetes' message for a box that does not open.
    if (!out) throw new Error('output array was not large enough for encryption');
    return { data: Buffer.from(out.buffer, out.byteOffset, out.byteLength), stale: false };
  }

  toStorage(data: Buffer): Buffer {
    const nonce = randomBytes(NONCE);
    const box = nacl.secretbox(data, nonce, this.key);
    return Buffer.concat([nonce, box]);
  }
}
