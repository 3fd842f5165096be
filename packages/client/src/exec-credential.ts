import { spawn } from 'node:child_process';
import { NAMINGS, acceptedGroupSuffixes, naming } from '@svc/api/names';
import type { ClientConfig, ExecConfig } from './svcconfig.js';

/** What a credential plugin hands back (ExecCredential `status`). */
export interface ExecCredentialStatus {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  /** Epoch milliseconds; absent = valid until a 401 or process exit. */
  expiresAt?: number;
}

export class ExecCredentialError extends Error {}

/** The ExecCredential versions a plugin may speak, in every group spelling the naming accepts. */
function acceptedApiVersions(): string[] {
  return acceptedGroupSuffixes().flatMap((sfx) => [
    `client.authentication.${sfx}/v1`,
    `client.authentication.${sfx}/v1beta1`,
  ]);
}

/**
 * The variable that carries the plugin's input: the one of the naming its apiVersion is spelt
 * in (`client.authentication.k8s.io/v1` → `KUBERNETES_EXEC_INFO`, as stock plugins expect),
 * else the current naming's (`SVC_EXEC_INFO`).
 */
export function execInfoEnv(apiVersion: string): string {
  const hit = Object.values(NAMINGS).find((n) => apiVersion.startsWith(`client.authentication.${n.groupSuffix}/`));
  return (hit ?? naming()).execInfoEnv;
}

/**
 * Runs credential plugins and caches what they return, as the spec says: with an
 * `expirationTimestamp` until then, a 401 or process exit; without one until a 401 or exit.
 * Concurrent callers share one plugin run.
 */
export class ExecCredentialProvider {
  private cached: ExecCredentialStatus | undefined;
  private running: Promise<ExecCredentialStatus> | undefined;

  constructor(
    private readonly exec: ExecConfig,
    private readonly cfg: ClientConfig,
    private readonly now: () => number = Date.now,
  ) {
    if (!acceptedApiVersions().includes(exec.apiVersion)) {
      throw new ExecCredentialError(`exec plugin: unsupported apiVersion ${JSON.stringify(exec.apiVersion)}`);
    }
  }

  async get(): Promise<ExecCredentialStatus> {
    const c = this.cached;
    if (c && (c.expiresAt === undefined || c.expiresAt > this.now())) return c;
    this.running ??= this.run()
      .then((s) => {
        this.cached = s;
        return s;
      })
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  /** The server answered 401: forget the credential so the next request runs the plugin again. */
  invalidate(): void {
    this.cached = undefined;
  }

  private input(): string {
    const spec: Record<string, unknown> = { interactive: false };
    if (this.exec.provideClusterInfo) {
      const c = this.cfg.clusterEntry;
      const cluster: Record<string, unknown> = { server: this.cfg.server };
      if (this.cfg.caData) cluster['certificate-authority-data'] = this.cfg.caData;
      if (c['tls-server-name']) cluster['tls-server-name'] = c['tls-server-name'];
      if (c['insecure-skip-tls-verify']) cluster['insecure-skip-tls-verify'] = true;
      const ext = c.extensions;
      if (Array.isArray(ext)) {
        const names = acceptedGroupSuffixes().map((sfx) => `client.authentication.${sfx}/exec`);
        const execExt = (ext as Array<{ name?: string; extension?: unknown }>).find((e) =>
          names.includes(String(e.name)),
        );
        if (execExt) cluster.config = execExt.extension;
      }
      spec.cluster = cluster;
    }
    return JSON.stringify({ apiVersion: this.exec.apiVersion, kind: 'ExecCredential', spec });
  }

  private run(): Promise<ExecCredentialStatus> {
    return new Promise((resolve, reject) => {
      const env = { ...process.env, [execInfoEnv(this.exec.apiVersion)]: this.input() };
      for (const e of this.exec.env) env[e.name] = e.value;
      const child = spawn(this.exec.command, this.exec.args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
      });
      child.on('error', (e) =>
        reject(
          new ExecCredentialError(
            `exec plugin ${this.exec.command}: ${e.message}${this.exec.installHint ? `\n${this.exec.installHint}` : ''}`,
          ),
        ),
      );
      child.on('close', (code) => {
        if (code !== 0) {
          reject(new ExecCredentialError(`exec plugin ${this.exec.command} exited ${code}: ${err.trim()}`));
          return;
        }
        try {
          resolve(this.parse(out));
        } catch (e) {
          reject(e);
        }
      });
    });
  }

  private parse(out: string): ExecCredentialStatus {
    let doc: { apiVersion?: unknown; kind?: unknown; status?: Record<string, unknown> };
    try {
      doc = JSON.parse(out) as typeof doc;
    } catch (e) {
      throw new ExecCredentialError(`exec plugin ${this.exec.command}: output is not JSON: ${(e as Error).message}`);
    }
    if (doc.kind !== 'ExecCredential')
      throw new ExecCredentialError(`exec plugin: kind ${JSON.stringify(doc.kind)} is not ExecCredential`);
    if (doc.apiVersion !== this.exec.apiVersion) {
      throw new ExecCredentialError(
        `exec plugin: apiVersion ${JSON.stringify(doc.apiVersion)} does not match the configured ${this.exec.apiVersion}`,
      );
    }
    const st = doc.status ?? {};
    const status: ExecCredentialStatus = {};
    if (typeof st.token === 'string' && st.token) status.token = st.token;
    if (typeof st.clientCertificateData === 'string') status.clientCertificateData = st.clientCertificateData;
    if (typeof st.clientKeyData === 'string') status.clientKeyData = st.clientKeyData;
    if (!status.token && !(status.clientCertificateData && status.clientKeyData)) {
      throw new ExecCredentialError('exec plugin: status needs a token, or clientCertificateData with clientKeyData');
    }
    if (!!status.clientCertificateData !== !!status.clientKeyData) {
      throw new ExecCredentialError('exec plugin: clientCertificateData and clientKeyData go together');
    }
    if (st.expirationTimestamp !== undefined) {
      const t = Date.parse(String(st.expirationTimestamp));
      if (Number.isNaN(t))
        throw new ExecCredentialError(`exec plugin: bad expirationTimestamp ${JSON.stringify(st.expirationTimestamp)}`);
      status.expiresAt = t;
    }
    return status;
  }
}
