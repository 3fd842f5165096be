import { encryptedValuePrefix } from '@svc/api';
import type { HealthCheck } from '@svc/component-base';
import { AesCbcTransformer } from './aes-cbc.js';
import { AesGcmTransformer } from './aes-gcm.js';
import {
  decodeBase64Strict,
  parseGroupResource,
  type EncryptionConfiguration,
  type EncryptionKey,
  type KmsConfiguration,
} from './encryption-config.js';
import { IdentityTransformer } from './identity.js';
import { KmsV2Envelope } from './kms-v2/envelope.js';
import { connectKmsV2Plugin, type KmsV2Plugin } from './kms-v2/plugin-client.js';
import { KmsV2Probe } from './kms-v2/probe.js';
import { SecretboxTransformer } from './secretbox.js';
import { aggregateError, PrefixTransformers, type PrefixedTransformer, type ValueTransformer } from './transformer.js';

/** The name of the one health check of the KMS plugins (Kubernetes' `kms-providers`). */
export const KMS_HEALTH_CHECK = 'kms-providers';

/**
 * What one EncryptionConfiguration builds: a transformer per configured group/resource
 * (`secrets`, `*.apps`, `*.*`; the core group is ''), the KMS plugins' probes, and their
 * health check. `close` ends the plugins' connections and probes.
 */
export interface Encryption {
  /** The transformer of a resource: its own rule, else its group's `*.<group>`, else `*.*`, else identity. */
  transformerFor(group: string, resource: string): ValueTransformer;
  /** `kms-providers`: every plugin healthy (absent when there are no KMS providers and no reload). */
  healthCheck?: HealthCheck;
  /** The KMS plugins' deadlines summed (old transformers are closed this long after a reload, twice over). */
  kmsTimeoutSumMs: number;
  /** Checks each KMS plugin once (data keys ready when it is up), then keeps probing until `signal` aborts. */
  start(signal: AbortSignal): Promise<void>;
  close(): void;
}

export interface BuildEncryptionOptions {
  /** `--encryption-provider-config-automatic-reload`: the health check is there even without KMS. */
  reload: boolean;
  log: (message: string, fields: Record<string, unknown>) => void;
}

const ANY = '*';
const identity = new IdentityTransformer();

/**
 * Builds the transformers of a validated configuration (Kubernetes' rules): a resource listed
 * in several entries gets the providers of all of them in order; a rule after `*.<group>` or
 * `*.*` that it would never reach is an error. Throws `error while building transformers: …`.
 */
export function buildEncryption(config: EncryptionConfiguration, o: BuildEncryptionOptions): Encryption {
  const byResource = new Map<string, PrefixedTransformer[]>();
  const probes: KmsV2Probe[] = [];
  const plugins: KmsV2Plugin[] = [];
  let kmsTimeoutSumMs = 0;
  const fail = (why: string): never => {
    for (const p of plugins) p.close();
    throw new Error(`error while building transformers: ${why}`);
  };
  for (const entry of config.resources) {
    const providers = entry.providers.map((p) => {
      if (p.kms) {
        if (p.kms.apiVersion !== 'v2') return fail(kmsV1Unsupported(p.kms));
        const plugin = connectKmsV2Plugin({ endpoint: p.kms.endpoint, timeoutMs: p.kms.timeoutMs });
        plugins.push(plugin);
        const probe = new KmsV2Probe({ name: p.kms.name, plugin, log: o.log });
        probes.push(probe);
        kmsTimeoutSumMs += p.kms.timeoutMs;
        return kmsV2Provider(p.kms, { plugin, probe });
      }
      if (p.aesgcm) return keyed({ provider: 'aesgcm', keys: p.aesgcm.keys, make: (k) => new AesGcmTransformer(k) });
      if (p.aescbc) return keyed({ provider: 'aescbc', keys: p.aescbc.keys, make: (k) => new AesCbcTransformer(k) });
      if (p.secretbox)
        return keyed({ provider: 'secretbox', keys: p.secretbox.keys, make: (k) => new SecretboxTransformer(k) });
      return { prefix: Buffer.alloc(0), transformer: identity };
    });
    for (const res of entry.resources) {
      const gr = parseGroupResource(res);
      if (byResource.has(`${gr.group}/${ANY}`))
        fail(
          `resource ${JSON.stringify(grString(gr))} is masked by earlier rule ${JSON.stringify(grString({ group: gr.group, resource: ANY }))}`,
        );
      if (byResource.has(`${ANY}/${ANY}`))
        fail(`resource ${JSON.stringify(grString(gr))} is masked by earlier rule "*.*"`);
      const key = `${gr.group}/${gr.resource}`;
      byResource.set(key, [...(byResource.get(key) ?? []), ...providers]);
    }
  }
  const transformers = new Map<string, ValueTransformer>();
  for (const [key, list] of byResource) transformers.set(key, new PrefixTransformers(list, 'no matching prefix found'));
  const healthCheck = probes.length > 0 || o.reload ? kmsHealthCheck(probes) : undefined;
  return {
    transformerFor: (group, resource) =>
      transformers.get(`${group}/${resource}`) ??
      transformers.get(`${group}/${ANY}`) ??
      transformers.get(`${ANY}/${ANY}`) ??
      identity,
    ...(healthCheck ? { healthCheck } : {}),
    kmsTimeoutSumMs,
    start: async (signal) => {
      await Promise.all(probes.map((p) => p.start(signal)));
    },
    close: () => {
      for (const p of plugins) p.close();
    },
  };
}

/** `secrets`, `deployments.apps`, `*.` for the core group's wildcard, `*.*`. */
function grString(gr: { group: string; resource: string }): string {
  if (gr.group === '' && gr.resource === ANY) return '*.';
  return gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`;
}

function kmsV1Unsupported(c: KmsConfiguration): string {
  return `could not configure KMS plugin ${JSON.stringify(c.name)}: KMS v1 is deprecated and not served here; set apiVersion: v2 (KMS v2)`;
}

/** `<prefix><provider>:v1:` in front of a list of keys, each behind `<key name>:`; the first key encrypts. */
function keyed(o: {
  provider: string;
  keys: EncryptionKey[];
  make: (key: Buffer) => ValueTransformer;
}): PrefixedTransformer {
  const label = o.provider === 'secretbox' ? 'Secretbox' : 'AES';
  const keys = o.keys.map((k) => ({
    prefix: Buffer.from(`${k.name}:`),
    transformer: o.make(decodeBase64Strict(k.secret) ?? Buffer.alloc(0)),
  }));
  return {
    prefix: Buffer.from(`${encryptedValuePrefix()}${o.provider}:v1:`),
    transformer: new PrefixTransformers(keys, `no matching key was found for the provided ${label} transformer`),
  };
}

/** `<prefix>kms:v2:<plugin name>:` in front of the plugin's envelopes. */
function kmsV2Provider(c: KmsConfiguration, o: { plugin: KmsV2Plugin; probe: KmsV2Probe }): PrefixedTransformer {
  return {
    prefix: Buffer.from(`${encryptedValuePrefix()}kms:v2:${c.name}:`),
    transformer: new KmsV2Envelope({ plugin: o.plugin, state: () => o.probe.currentState() }),
  };
}

/** Kubernetes' `kms-providers`: each plugin in turn; failures named `kms-provider-<index>`. */
function kmsHealthCheck(probes: KmsV2Probe[]): HealthCheck {
  return {
    name: KMS_HEALTH_CHECK,
    check: async () => {
      const errs: Error[] = [];
      for (const [i, p] of probes.entries()) {
        try {
          await p.check();
        } catch (e) {
          errs.push(new Error(`kms-provider-${i}: ${(e as Error).message}`));
        }
      }
      const err = aggregateError(errs);
      if (err) throw err;
    },
  };
}
