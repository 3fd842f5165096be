import { randomUUID } from 'node:crypto';
import { sleep } from '@svc/machinery';
import { aggregateError } from '../transformer.js';
import { newSeed, SeedTransformer } from './dek.js';
import { envelopeCacheKey, keyIdHash, validateEncryptedObject, validateKeyId, type WriteState } from './envelope.js';
import type { KmsV2Plugin } from './plugin-client.js';
import { DEK_SOURCE_HKDF_SEED } from './proto.js';

/** A healthy answer is trusted this long, a failure this long (Kubernetes' probe TTLs). */
const HEALTHY_TTL_MS = 20_000;
const UNHEALTHY_TTL_MS = 3_000;
/** The plugin is asked about its key this often, and every 10 s while it fails. */
const POLL_MS = 60_000;
const RETRY_MS = 10_000;
/** Writes go on this long after the plugin last confirmed the key the data key is encrypted with. */
const WRITE_STATE_TTL_MS = 3 * 60_000;

/**
 * One KMS v2 plugin's state: its health (the `Status` call) and the data key values are
 * written with. Whenever `Status` reports a key ID other than the one the current data key
 * was encrypted with, a new seed is generated and encrypted by the plugin; a failed rotation
 * keeps the old data key, usable for writes until its expiry (reads always work). Checks are
 * cached for 20 s when healthy and 3 s when not, and never run twice at once.
 */
export class KmsV2Probe {
  private state?: WriteState;
  private version?: string;
  private last?: { error?: Error; at: number; ttlMs: number };
  private running?: Promise<void>;

  constructor(
    private readonly o: {
      name: string;
      plugin: KmsV2Plugin;
      log: (message: string, fields: Record<string, unknown>) => void;
    },
  ) {}

  get name(): string {
    return this.o.name;
  }

  /** The data key writes use; throws until the plugin has answered once. */
  currentState(): WriteState {
    if (!this.state) throw new Error('got unexpected nil transformer');
    return this.state;
  }

  /** Resolves when the plugin is healthy (as of the cached answer); throws its failure otherwise. */
  async check(): Promise<void> {
    const fresh = (): boolean => !!this.last && Date.now() - this.last.at < this.last.ttlMs;
    if (!fresh()) {
      this.running ??= this.probe().finally(() => {
        this.running = undefined;
      });
      await this.running;
    }
    if (this.last?.error) throw this.last.error;
  }

  /**
   * Checks once now (so data keys are ready when the plugin is up), then every minute, and
   * every 10 s while the plugin fails, until `signal` aborts.
   */
  async start(signal: AbortSignal): Promise<void> {
    const once = async (): Promise<boolean> => {
      try {
        await this.check();
        return true;
      } catch (e) {
        this.o.log('kms plugin failed health check probe', { name: this.o.name, error: (e as Error).message });
        return false;
      }
    };
    let healthy = await once();
    void (async () => {
      while (!signal.aborted) {
        await sleep(healthy ? POLL_MS : RETRY_MS, signal);
        if (signal.aborted) return;
        healthy = await once();
      }
    })();
  }

  private async probe(): Promise<void> {
    const name = this.o.name;
    let status;
    try {
      status = await this.o.plugin.status();
    } catch (e) {
      return this.record(
        new Error(
          `failed to perform status section of the healthz check for KMS Provider ${name}, error: ${(e as Error).message}`,
        ),
      );
    }
    const errs: Error[] = [];
    if (status.healthz !== 'ok') errs.push(new Error(`got unexpected healthz status: ${status.healthz}`));
    if (status.version !== 'v2' && status.version !== 'v2beta1') {
      errs.push(new Error(`expected KMSv2 API version v2, got ${status.version}`));
    } else {
      this.version ??= status.version;
      if (this.version !== status.version)
        errs.push(
          new Error(
            `KMSv2 API version should not change after the initial status response version ${this.version}, got ${status.version}`,
          ),
        );
    }
    const badKeyId = validateKeyId(status.keyId);
    if (badKeyId) {
      errs.push(new Error(`got invalid KMSv2 KeyID hash ${JSON.stringify(keyIdHash(status.keyId))}: ${badKeyId}`));
    } else {
      const failed = await this.rotateOnKeyIdChange(status.keyId);
      if (failed) errs.push(failed);
    }
    const err = aggregateError(errs);
    this.record(err && new Error(`kmsv2 Provider ${name} is not healthy, error: ${err.message}`));
  }

  /** Keeps the data key while the plugin's key ID is unchanged; otherwise makes and encrypts a new seed. */
  private async rotateOnKeyIdChange(keyId: string): Promise<Error | undefined> {
    const expiresAt = Date.now() + WRITE_STATE_TTL_MS;
    const current = this.state;
    if (current && current.envelope.keyID === keyId) {
      this.state = { ...current, expiresAt };
      return undefined;
    }
    const seed = newSeed();
    let problem: string;
    try {
      const res = await this.o.plugin.encrypt({ plaintext: seed, uid: randomUUID() });
      const envelope = {
        keyID: res.keyId,
        encryptedDEKSource: res.ciphertext,
        annotations: res.annotations ?? {},
        encryptedDEKSourceType: DEK_SOURCE_HKDF_SEED,
      };
      const invalid = validateEncryptedObject({ ...envelope, encryptedData: Buffer.of(0) });
      if (!invalid && res.keyId === keyId) {
        this.state = {
          transformer: new SeedTransformer(seed),
          envelope,
          expiresAt,
          cacheKey: envelopeCacheKey(envelope),
        };
        this.o.log('rotated the KMS data key', { name: this.o.name, keyIdHash: keyIdHash(keyId) });
        return undefined;
      }
      problem =
        invalid ??
        `the key ID of Encrypt (hash ${JSON.stringify(keyIdHash(res.keyId))}) is not the key ID of Status (hash ${JSON.stringify(keyIdHash(keyId))})`;
    } catch (e) {
      problem = `failed to encrypt DEK, error: ${(e as Error).message}`;
    }
    const kept = current
      ? `; writes keep the data key of key ID hash ${JSON.stringify(keyIdHash(current.envelope.keyID))} until ${new Date(current.expiresAt).toISOString()}`
      : '';
    return new Error(`failed to rotate DEK: ${problem}${kept}`);
  }

  private record(error: Error | undefined): void {
    this.last = { error, at: Date.now(), ttlMs: error ? UNHEALTHY_TTL_MS : HEALTHY_TTL_MS };
  }
}
