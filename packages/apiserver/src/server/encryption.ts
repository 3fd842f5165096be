import { PostStartHook, type HealthCheck, type Logger } from '@svc/component-base';
import type { ApiServerMetrics } from '../metrics/metrics.js';
import { ConfigurationError, type ApiServerOptions } from '../options.js';
import type { Encryption } from '../storage/value/encryption-transformers.js';
import type { ResourceTransformers } from '../storage/value/resource-transformers.js';

export interface EncryptionAtRest {
  /** What `Etcd3Storage` transforms values with. */
  transformers: ResourceTransformers;
  /** `kms-providers` (on `/healthz` and `/readyz`, not `/livez`, as in Kubernetes), when there is one. */
  healthChecks: HealthCheck[];
  /**
   * `encryption-config-automatic-reload` (on `/healthz` only): fails while the newest file could
   * not be loaded (the old configuration keeps serving, so readiness is not affected).
   */
  healthzChecks: HealthCheck[];
  /** `poststarthook/start-encryption-provider-config-automatic-reload`, with automatic reload. */
  hooks: PostStartHook[];
  /** Starts the automatic reload (once the server listens). */
  startReloading(): void;
}

/**
 * `--encryption-provider-config`: the file read and validated, its transformers built and
 * its KMS plugins asked once for their key (a plugin that is down does not stop start-up:
 * its values cannot be read or written and `kms-providers` fails until it answers). A bad
 * file is a `ConfigurationError` (exit 2). With `--encryption-provider-config-automatic-reload`
 * the file is watched (see `EncryptionReloadController`); the KMS health is then always the
 * single `kms-providers` check, as Kubernetes has it. Everything stops when `signal` aborts.
 */
export async function encryptionAtRest(
  opts: ApiServerOptions,
  deps: { log: Logger; metrics: ApiServerMetrics; signal: AbortSignal },
): Promise<EncryptionAtRest | undefined> {
  const file = opts.encryptionProviderConfig;
  if (file === undefined) return undefined;
  // Loaded only when configured: the providers (gRPC for KMS, tweetnacl) cost start-up time.
  const [
    { readEncryptionConfig },
    { buildEncryption, KMS_HEALTH_CHECK },
    { EncryptionReloadController },
    { ResourceTransformers },
  ] = await Promise.all([
    import('../storage/value/encryption-config.js'),
    import('../storage/value/encryption-transformers.js'),
    import('../storage/value/reload-controller.js'),
    import('../storage/value/resource-transformers.js'),
  ]);
  const reload = opts.encryptionProviderConfigAutomaticReload;
  const { log, signal } = deps;
  const probeLog = (message: string, fields: Record<string, unknown>): void => log.v(2).info(message, fields);
  const build = (config: Parameters<typeof buildEncryption>[0]): Encryption =>
    buildEncryption(config, { reload, log: probeLog });
  let initial: Encryption;
  let hash: string;
  try {
    const loaded = readEncryptionConfig(file, reload);
    hash = loaded.hash;
    initial = build(loaded.config);
  } catch (e) {
    throw new ConfigurationError(`--encryption-provider-config: ${(e as Error).message}`);
  }
  const generations = new Map<Encryption, AbortController>();
  const startProbes = async (e: Encryption): Promise<void> => {
    const stop = new AbortController();
    generations.set(e, stop);
    await e.start(AbortSignal.any([signal, stop.signal]));
  };
  const retire = (e: Encryption, afterMs: number): void => {
    const stop = (): void => {
      generations.get(e)?.abort();
      generations.delete(e);
      e.close();
    };
    if (afterMs <= 0) stop();
    else setTimeout(stop, afterMs).unref();
  };
  signal.addEventListener('abort', () => [...generations.keys()].forEach((e) => retire(e, 0)), { once: true });
  await startProbes(initial);
  const transformers = new ResourceTransformers(opts.storePrefix, initial);
  if (!reload) {
    return {
      transformers,
      healthChecks: initial.healthCheck ? [initial.healthCheck] : [],
      healthzChecks: [],
      hooks: [],
      startReloading: () => undefined,
    };
  }
  const hook = new PostStartHook('start-encryption-provider-config-automatic-reload');
  let lastReloadError: string | undefined;
  const reloadCheck: HealthCheck = {
    name: 'encryption-config-automatic-reload',
    check: async () => {
      if (lastReloadError !== undefined)
        throw new Error(`the newest encryption configuration was refused: ${lastReloadError}`);
    },
  };
  const controller = new EncryptionReloadController({
    file,
    transformers,
    hash,
    build,
    startProbes,
    retire,
    onOutcome: (outcome) => {
      lastReloadError = outcome.ok ? undefined : outcome.error;
      deps.metrics.recordEncryptionConfigReload(outcome.ok ? 'success' : 'failure', Date.now() / 1000);
      if (outcome.ok) log.info('loaded new encryption configuration', { file });
      else
        log.error('error processing encryption config file; keeping the current one', { file, error: outcome.error });
    },
  });
  const healthCheck: HealthCheck = {
    name: KMS_HEALTH_CHECK,
    check: async () => {
      await transformers.encryption.healthCheck?.check();
    },
  };
  return {
    transformers,
    healthChecks: [healthCheck],
    healthzChecks: [reloadCheck],
    hooks: [hook],
    startReloading: () => {
      controller.start(signal);
      hook.done();
    },
  };
}
