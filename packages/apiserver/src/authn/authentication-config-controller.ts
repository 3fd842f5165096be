import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { IncomingMessage } from 'node:http';
import type { Logger, AudienceAgnosticTokenAuthenticator, UserInfo } from '@svc/component-base';
import {
  parseAuthenticationConfig,
  type AuthenticationConfig,
  type AuthenticationConfigContext,
} from './authentication-config.js';
import { JwtAuthenticator } from './jwt-authenticator.js';

/** Where reloads are counted (the server's metrics registry). */
export interface ReloadMetrics {
  recordReload(status: 'success' | 'failure', atSeconds: number): void;
}

export interface AuthenticationConfigControllerOptions {
  file: string;
  /** The configuration validated at start (from the same file). */
  initial: AuthenticationConfig;
  /** The text `initial` came from (reloads happen when the file's content differs). */
  initialText: string;
  context: AuthenticationConfigContext;
  logger: Logger;
  metrics?: ReloadMetrics;
  /** Stops watching and the issuers' background discovery. */
  signal: AbortSignal;
  /** Periodic check besides the file watch; default 60s like Kubernetes. */
  checkIntervalMs?: number;
  /** Called once a new configuration is in force (the server forgets its cached token answers). */
  onReloaded?: () => void;
}

/** Longest a reload waits for new issuers' keys before switching anyway. */
const READY_WAIT_MS = 10_000;

interface Active {
  config: AuthenticationConfig;
  authenticators: JwtAuthenticator[];
  stop: AbortController;
}

/**
 * Serves the `jwt[]` authenticators and the anonymous section of `--authentication-config`,
 * and reloads them when the file changes (file watch on its directory, and a periodic check
 * of its content). A file that does not read or validate keeps the previous configuration;
 * the failure is logged and counted. Requests see either the old or the new set, never a mix.
 */
export class AuthenticationConfigController implements AudienceAgnosticTokenAuthenticator {
  private active: Active;
  private hash: string;
  private watcher?: FSWatcher;
  private timer?: NodeJS.Timeout;
  private checking?: Promise<void>;
  private again = false;

  constructor(private readonly o: AuthenticationConfigControllerOptions) {
    this.active = this.activate(o.initial);
    this.hash = sha256(o.initialText);
    this.start();
  }

  /** The configuration in force. */
  get config(): AuthenticationConfig {
    return this.active.config;
  }

  /** Resolves once every current JWT authenticator has its issuer's keys. */
  async ready(): Promise<void> {
    await Promise.all(this.active.authenticators.map((a) => a.ready()));
  }

  private activate(config: AuthenticationConfig): Active {
    const stop = new AbortController();
    const onAbort = (): void => stop.abort();
    this.o.signal.addEventListener('abort', onAbort, { once: true });
    stop.signal.addEventListener('abort', () => this.o.signal.removeEventListener('abort', onAbort), { once: true });
    const authenticators = config.jwt.map(
      (c) =>
        new JwtAuthenticator(c, {
          signal: stop.signal,
          onError: (message) =>
            this.o.logger.warn('JWT authenticator not ready', { issuer: c.issuer.url, error: message }),
        }),
    );
    return { config, authenticators, stop };
  }

  async authenticateToken(token: string): Promise<UserInfo | null> {
    for (const a of this.active.authenticators) {
      const u = await a.authenticateToken(token);
      if (u) return u;
    }
    return null;
  }

  /**
   * Whether a request without credentials may run as anonymous, when the file has an
   * anonymous section (undefined otherwise: `--anonymous-auth` decides). With conditions,
   * only the listed paths (exact match, query ignored).
   */
  anonymousAllowed(req: IncomingMessage): boolean | undefined {
    const a = this.active.config.anonymous;
    if (!a) return undefined;
    if (!a.enabled) return false;
    if (a.conditions.length === 0) return true;
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    return a.conditions.some((c) => c.path === path);
  }

  private start(): void {
    const { signal } = this.o;
    if (signal.aborted) return;
    const trigger = (): void => {
      void this.check();
    };
    try {
      const name = basename(this.o.file);
      this.watcher = watch(dirname(this.o.file), { persistent: false }, (_event, f) => {
        if (!f || f.toString() === name || f.toString().startsWith('..')) trigger();
      });
      this.watcher.on('error', (e) =>
        this.o.logger.warn('authentication config: file watch failed; periodic checks go on', { error: e.message }),
      );
    } catch (e) {
      this.o.logger.warn('authentication config: cannot watch the file; periodic checks only', {
        file: this.o.file,
        error: (e as Error).message,
      });
    }
    this.timer = setInterval(trigger, this.o.checkIntervalMs ?? 60_000);
    this.timer.unref();
    signal.addEventListener(
      'abort',
      () => {
        this.watcher?.close();
        clearInterval(this.timer);
      },
      { once: true },
    );
  }

  /** Reads the file and reloads when its content changed; one check at a time, coalesced. */
  check(): Promise<void> {
    if (this.checking) {
      this.again = true;
      return this.checking;
    }
    this.checking = this.reload().finally(() => {
      this.checking = undefined;
      if (this.again && !this.o.signal.aborted) {
        this.again = false;
        void this.check();
      }
    });
    return this.checking;
  }

  private async reload(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.o.file, 'utf8');
    } catch (e) {
      // A file being replaced may be briefly missing: not a reload attempt yet.
      this.o.logger.warn('authentication config: cannot read the file; keeping the current configuration', {
        file: this.o.file,
        error: (e as Error).message,
      });
      return;
    }
    const hash = sha256(text);
    if (hash === this.hash) return;
    this.hash = hash;
    const at = Date.now() / 1000;
    let config: AuthenticationConfig;
    try {
      config = parseAuthenticationConfig(text, this.o.context);
    } catch (e) {
      this.o.logger.error('authentication config: reload failed; keeping the current configuration', {
        file: this.o.file,
        error: (e as Error).message,
      });
      this.o.metrics?.recordReload('failure', at);
      return;
    }
    // The old set serves until the new issuers' keys arrive (or READY_WAIT_MS passes).
    const next = this.activate(config);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(next.authenticators.map((a) => a.ready())).catch(() => undefined),
      new Promise<void>((r) => {
        timer = setTimeout(r, READY_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    const previous = this.active;
    this.active = next;
    previous.stop.abort();
    this.o.onReloaded?.();
    this.o.logger.info('authentication config: reloaded', { file: this.o.file, jwtAuthenticators: config.jwt.length });
    this.o.metrics?.recordReload('success', at);
  }
}

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}
