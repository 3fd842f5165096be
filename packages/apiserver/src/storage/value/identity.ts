import { encryptedValuePrefix } from '@svc/api';
import { startsWith, type Plaintext, type ValueTransformer } from './transformer.js';

/**
 * Stores values as they are. Reading a value that starts with the encrypted-value prefix
 * (`svc:enc:`) fails, so a value no configured provider can decrypt is an error rather than
 * ciphertext handed out as an object (Kubernetes' encrypt-check identity).
 */
export class IdentityTransformer implements ValueTransformer {
  private readonly encrypted = Buffer.from(encryptedValuePrefix());

  fromStorage(data: Buffer): Plaintext {
    if (startsWith(data, this.encrypted)) throw new Error('identity transformer tried to read encrypted data');
    return { data, stale: false };
  }

  toStorage(data: Buffer): Buffer {
    return data;
  }
}
