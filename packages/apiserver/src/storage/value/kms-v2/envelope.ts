import { createHash, randomUUID } from 'node:crypto';
import { isDns1123Subdomain } from '@svc/machinery';
import { AesGcmTransformer } from '../aes-gcm.js';
import type { Plaintext, SyncValueTransformer, ValueTransformer } from '../transformer.js';
import { SeedTransformer } from './dek.js';
import type { KmsV2Plugin } from './plugin-client.js';
import {
  decodeEncryptedObject,
  DEK_SOURCE_AES_GCM_KEY,
  DEK_SOURCE_HKDF_SEED,
  encodeEncryptedObject,
  type EncryptedObject,
} from './proto.js';

/** What values are written with now: the data-key seed and the plugin's answer for it. */
export interface WriteState {
  transformer: SyncValueTransformer;
  /** keyID, encryptedDEKSource, annotations and type of every value written with it. */
  envelope: Omit<EncryptedObject, 'encryptedData'>;
  /** Writes fail after this (ms since the epoch) unless the plugin confirmed its key again. */
  expiresAt: number;
  cacheKey: string;
}

const KEY_ID_MAX = 1024;
const DEK_SOURCE_MAX = 1024;
const ANNOTATIONS_MAX = 32 * 1024;
/** Data keys read back stay cached this long after their last use (Kubernetes keeps them a day). */
const READ_CACHE_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * KMS v2 envelope encryption (the `kms` provider, apiVersion v2): values are encrypted locally
 * with a data key whose seed the plugin encrypted once (see `KmsV2Probe`), and stored as an
 * EncryptedObject carrying the encrypted seed and the plugin's key ID. Reading asks the plugin
 * to decrypt a seed only the first time it is seen; a value whose key ID is not the plugin's
 * current one reads as stale, so rewriting it moves it to the current key.
 */
export class KmsV2Envelope implements ValueTransformer {
  private readonly readers = new Map<string, { transformer: SyncValueTransformer; usedAt: number }>();

  constructor(
    private readonly o: {
      plugin: KmsV2Plugin;
      /** The current write state; throws until the plugin has answered once. */
      state: () => WriteState;
    },
  ) {}

  fromStorage(data: Buffer, authenticatedData: Buffer): Promise<Plaintext> | Plaintext {
    const obj = decodeEncryptedObject(data);
    const invalid = validateEncryptedObject(obj);
    if (invalid) throw new Error(invalid);
    const state = this.o.state();
    const cacheKey = envelopeCacheKey(obj);
    const finish = (t: SyncValueTransformer): Plaintext => {
      const out = t.fromStorage(obj.encryptedData, authenticatedData);
      const stale =
        out.stale ||
        obj.keyID !== state.envelope.keyID ||
        obj.encryptedDEKSourceType !== state.envelope.encryptedDEKSourceType;
      return { data: out.data, stale };
    };
    const cached = this.readers.get(cacheKey);
    if (cached) {
      cached.usedAt = Date.now();
      return finish(cached.transformer);
    }
    return this.o.plugin
      .decrypt({
        ciphertext: obj.encryptedDEKSource,
        uid: randomUUID(),
        keyId: obj.keyID,
        annotations: obj.annotations,
      })
      .then(
        (key) => finish(this.remember(cacheKey, readTransformer(obj.encryptedDEKSourceType, key))),
        (e: unknown) => {
          throw new Error(`failed to decrypt DEK, error: ${(e as Error).message}`);
        },
      );
  }

  toStorage(data: Buffer, authenticatedData: Buffer): Buffer {
    const state = this.o.state();
    if (Date.now() > state.expiresAt) {
      throw new Error(
        `encryptedDEKSource with keyID hash ${JSON.stringify(keyIdHash(state.envelope.keyID))} expired at ${new Date(state.expiresAt).toISOString()} (current time is ${new Date().toISOString()})`,
      );
    }
    this.remember(state.cacheKey, state.transformer);
    const encryptedData = state.transformer.toStorage(data, authenticatedData);
    return encodeEncryptedObject({ ...state.envelope, encryptedData });
  }

  private remember(cacheKey: string, transformer: SyncValueTransformer): SyncValueTransformer {
    const now = Date.now();
    const entry = this.readers.get(cacheKey);
    if (entry) {
      entry.usedAt = now;
      return entry.transformer;
    }
    for (const [k, v] of this.readers) if (now - v.usedAt > READ_CACHE_TTL_MS) this.readers.delete(k);
    this.readers.set(cacheKey, { transformer, usedAt: now });
    return transformer;
  }
}

function readTransformer(type: number, key: Buffer): SyncValueTransformer {
  return type === DEK_SOURCE_HKDF_SEED ? new SeedTransformer(key) : new AesGcmTransformer(key);
}

/** Identifies a data key by what the plugin answered for it (type, encrypted source, key ID, annotations). */
export function envelopeCacheKey(o: Omit<EncryptedObject, 'encryptedData'>): string {
  const h = createHash('sha256');
  const field = (b: Buffer | string): void => {
    const buf = typeof b === 'string' ? Buffer.from(b) : b;
    const len = Buffer.alloc(4);
    len.writeUInt32BE(buf.length);
    h.update(len).update(buf);
  };
  field(String(o.encryptedDEKSourceType));
  field(o.encryptedDEKSource);
  field(o.keyID);
  for (const k of Object.keys(o.annotations).sort()) {
    field(k);
    field(o.annotations[k] as Buffer);
  }
  return h.digest('hex');
}

/** Kubernetes' checks of a stored (or about to be stored) EncryptedObject; undefined when valid. */
export function validateEncryptedObject(o: EncryptedObject): string | undefined {
  if (o.encryptedDEKSourceType !== DEK_SOURCE_AES_GCM_KEY && o.encryptedDEKSourceType !== DEK_SOURCE_HKDF_SEED)
    return `unknown encryptedDEKSourceType: ${o.encryptedDEKSourceType}`;
  if (o.encryptedData.length === 0) return 'encrypted data is empty';
  const source = validateDekSource(o.encryptedDEKSource);
  if (source) return `failed to validate encrypted DEK source: ${source}`;
  const keyId = validateKeyId(o.keyID);
  if (keyId) return `failed to validate key id: ${keyId}`;
  const annotations = validateAnnotations(o.annotations);
  if (annotations) return `failed to validate annotations: ${annotations}`;
  return undefined;
}

function validateDekSource(b: Buffer): string | undefined {
  if (b.length === 0) return 'encrypted DEK source is empty';
  if (b.length > DEK_SOURCE_MAX)
    return `encrypted DEK source is ${b.length} bytes, which exceeds the max size of ${DEK_SOURCE_MAX}`;
  return undefined;
}

export function validateKeyId(keyId: string): string | undefined {
  if (keyId.length === 0) return 'keyID is empty';
  const size = Buffer.byteLength(keyId);
  if (size > KEY_ID_MAX) return `keyID is ${size} bytes, which exceeds the max size of ${KEY_ID_MAX}`;
  return undefined;
}

function validateAnnotations(a: Record<string, Buffer>): string | undefined {
  const errs: string[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(a)) {
    if (!k.includes('.') || isDns1123Subdomain(k).length > 0)
      errs.push(
        `annotations: Invalid value: ${JSON.stringify(k)}: should be a domain with at least two segments separated by dots`,
      );
    size += Buffer.byteLength(k) + v.length;
  }
  if (size > ANNOTATIONS_MAX)
    errs.push(`total size of annotations is ${size}, which exceeds the max size of ${ANNOTATIONS_MAX}`);
  if (errs.length === 0) return undefined;
  return errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`;
}

/** How Kubernetes names a key ID in messages without revealing it. */
export function keyIdHash(keyId: string): string {
  return keyId ? `sha256:${createHash('sha256').update(keyId).digest('hex')}` : '';
}
