import { watch, readFileSync, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { sleep } from '@svc/machinery';
import { encryptionConfigHash, readEncryptionConfig, type EncryptionConfiguration } from './encryption-config.js';
import type { Encryption } from './encryption-transformers.js';
import type { ResourceTransformers } from './resource-transformers.js';

/** The file is read again this often besides on change notices (Kubernetes polls every minute). */
const POLL_MS = 60_000;
/** A new configuration's KMS plugins get at least this long to answer healthy. */
const MIN_HEALTH_WAIT_MS = 10_000;
const HEALTH_POLL_MS = 100;
/** A failed reload is tried again after this, doubling up to the maximum. */
const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 5 * 60_000;

export interface ReloadControllerOptions {
  file: string;
  transformers: ResourceTransformers;
  /** Hash of the file the current configuration was read from. */
  hash: string;
  /** Builds a configuration's transformers (`buildEncryption` with reload on); throws when it cannot. */
  build: (config: EncryptionConfiguration) => Encryption;
  /** Stops the probes and closes the plugins of a configuration that is no longer used. */
  retire: (e: Encryption, afterMs: number) => void;
  /** Starts a new configuration's probes; they stop when it is retired. */
  startProbes: (e: Encryption) => Promise<void>;
  onOutcome: (outcome: { ok: true } | { ok: false; error: string }) => void;
}

/**
 * `--encryption-provider-config-automatic-reload` (Kubernetes' encryption config controller):
 * the file is read again when its directory changes and every minute. A changed file is
 * validated and built, its KMS plugins must answer healthy, and only then are its
 * transformers used for every value read or written from that moment; the old ones are
 * closed once the requests using them are done. A file that fails any step is reported
 * (`onOutcome`), the current configuration stays, and the file is tried again with back-off.
 * Reloads never overlap.
 */
export class EncryptionReloadController {
  private hash: string;
  private running?: Promise<void>;
  private again = false;
  private retryMs = RETRY_MIN_MS;
  private retryTimer?: NodeJS.Timeout;

  constructor(private readonly o: ReloadControllerOptions) {
    this.hash = o.hash;
  }

  /** Watches and polls until `signal` aborts. */
  start(signal: AbortSignal): void {
    let watcher: FSWatcher | undefined;
    try {
      watcher = watch(dirname(this.o.file), (_event, name) => {
        if (!name || name === basename(this.o.file) || name.startsWith('..')) this.trigger(signal);
      });
      watcher.on('error', () => undefined);
    } catch {
      // Polling alone still reloads.
    }
    const timer = setInterval(() => this.trigger(signal), POLL_MS);
    timer.unref();
    signal.addEventListener(
      'abort',
      () => {
        watcher?.close();
        clearInterval(timer);
        clearTimeout(this.retryTimer);
      },
      { once: true },
    );
  }

  /** Runs a reload now, or once more after the one in progress. */
  trigger(signal: AbortSignal): void {
    if (signal.aborted) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.reload(signal).finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.trigger(signal);
      }
    });
  }

  /** Settles when no reload is in progress (tests). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  private async reload(signal: AbortSignal): Promise<void> {
    let text: Buffer;
    try {
      text = readFileSync(this.o.file);
    } catch (e) {
      return this.failed(signal, `error reading encryption provider configuration file: ${(e as Error).message}`);
    }
    const hash = encryptionConfigHash(text);
    if (hash === this.hash) return;
    let next: Encryption;
    let loadedHash: string;
    try {
      const loaded = readEncryptionConfig(this.o.file, true);
      loadedHash = loaded.hash;
      next = this.o.build(loaded.config);
    } catch (e) {
      return this.failed(signal, (e as Error).message);
    }
    if (loadedHash === this.hash) {
      next.close();
      return;
    }
    try {
      await this.o.startProbes(next);
      await this.waitHealthy(next, signal);
    } catch (e) {
      this.o.retire(next, 0);
      return this.failed(signal, (e as Error).message);
    }
    const old = this.o.transformers.set(next);
    this.o.retire(old, Math.max(MIN_HEALTH_WAIT_MS, 2 * old.kmsTimeoutSumMs));
    this.hash = loadedHash;
    this.retryMs = RETRY_MIN_MS;
    this.o.onOutcome({ ok: true });
  }

  /** Polls the new configuration's health check until it passes or its time is up. */
  private async waitHealthy(e: Encryption, signal: AbortSignal): Promise<void> {
    const check = e.healthCheck;
    if (!check) return;
    const until = Date.now() + Math.max(MIN_HEALTH_WAIT_MS, 2 * e.kmsTimeoutSumMs);
    for (;;) {
      try {
        await check.check();
        return;
      } catch (err) {
        if (Date.now() >= until || signal.aborted)
          throw new Error(`health check for new transformers failed: ${(err as Error).message}`, { cause: err });
      }
      await sleep(HEALTH_POLL_MS, signal);
    }
  }

  private failed(signal: AbortSignal, error: string): void {
    this.o.onOutcome({ ok: false, error });
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.trigger(signal), this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }
}
