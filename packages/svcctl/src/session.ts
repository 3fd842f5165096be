import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  RestClient,
  loadSvcconfig,
  responseError,
  svcconfigPath,
  type ClientConfig,
  type StreamResponse,
} from '@svc/client/rest';
import { NAMINGS } from '@svc/api/names';
import { CliError } from './errors.js';
import { parseRequestTimeout, type GlobalFlags } from './flags.js';
import type { SvcctlIo } from './io.js';
import { userAgent } from './version-info.js';
import { Discovery } from './discovery.js';

export type Query = Record<string, string | number | boolean | undefined>;

export interface CallOptions {
  query?: Query;
  body?: unknown;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal;
}

/** Where the configuration comes from: `--svcconfig`, `SVCCONFIG`, `KUBECONFIG`, else `~/.svc/config` (or `~/.kube/config`). */
export function configPathOf(flags: GlobalFlags, io: SvcctlIo): string {
  const explicit = svcconfigPath(flags.svcconfig ?? flags.kubeconfig, io.env);
  if (explicit) return resolve(io.cwd ?? process.cwd(), explicit);
  const home = io.env.HOME ?? homedir();
  const own = join(home, '.svc', 'config');
  const kube = join(home, '.kube', 'config');
  return existsSync(own) || !existsSync(kube) ? own : kube;
}

function queryString(q: Query | undefined): string {
  if (!q) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined) p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** The texts of `Warning` headers (`299 - "text"`, several joined by commas). */
export function warningsOf(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const text = Array.isArray(header) ? header.join(', ') : header;
  const out: string[] = [];
  const re = /\d{3} \S+ "((?:[^"\\]|\\.)*)"/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) out.push((m[1] ?? '').replace(/\\(.)/g, '$1'));
  return out;
}

/**
 * One invocation's connection to the API server: the client configuration (context,
 * namespace, credentials, impersonation), the REST client, and the server's discovery,
 * fetched once when first needed.
 */
export class Session {
  private discovered?: Promise<Discovery>;

  private constructor(
    readonly io: SvcctlIo,
    readonly config: ClientConfig,
    private readonly o: { client: RestClient; namespace: string; explicitNamespace: boolean; timeoutMs?: number },
  ) {}

  get client(): RestClient {
    return this.o.client;
  }

  static open(flags: GlobalFlags, io: SvcctlIo): Session {
    const path = configPathOf(flags, io);
    let config: ClientConfig;
    if (flags.server) {
      config = { server: flags.server, insecureSkipTlsVerify: true, namespace: 'default', user: {}, clusterEntry: {} };
      if (existsSync(path)) {
        try {
          config = { ...loadSvcconfig(path, { context: flags.context }), server: flags.server };
        } catch {
          /* the flags alone describe the server */
        }
      }
    } else {
      if (!existsSync(path)) {
        throw new CliError(
          `The connection to the server localhost:8080 was refused - did you specify the right host or port?`,
          1,
          true,
        );
      }
      try {
        config = loadSvcconfig(path, { context: flags.context });
      } catch (e) {
        const msg = (e as Error).message;
        if (flags.context && msg.includes('no context named'))
          throw new CliError(`context was not found for specified context: ${flags.context}`);
        throw new CliError(msg);
      }
    }
    if (flags.insecureSkipTlsVerify) config = { ...config, insecureSkipTlsVerify: true };
    if (flags.token) config = { ...config, user: { token: flags.token } };
    const client = new RestClient(config, {
      userAgent: userAgent(NAMINGS.svc.cliName),
      impersonate:
        flags.as || flags.asGroup?.length || flags.asUid
          ? { user: flags.as, groups: flags.asGroup, uid: flags.asUid }
          : undefined,
    });
    return new Session(io, config, {
      client,
      namespace: flags.namespace || config.namespace || 'default',
      explicitNamespace: !!flags.namespace,
      timeoutMs: parseRequestTimeout(flags.requestTimeout),
    });
  }

  /** `-n`, else the context's namespace, else `default`. */
  get namespace(): string {
    return this.o.namespace;
  }

  /** Was `-n` given (objects of a manifest in another namespace are then refused, as kubectl does). */
  get explicitNamespace(): boolean {
    return this.o.explicitNamespace;
  }

  discovery(): Promise<Discovery> {
    this.discovered ??= Discovery.load(this);
    return this.discovered;
  }

  private signal(extra?: AbortSignal): AbortSignal | undefined {
    // Plain requests are short: only streams follow the run's own signal (it would gather listeners).
    const signals = [extra].filter((s): s is AbortSignal => s !== undefined);
    if (this.o.timeoutMs !== undefined) signals.push(AbortSignal.timeout(this.o.timeoutMs));
    if (signals.length === 0) return undefined;
    return signals.length === 1 ? signals[0] : AbortSignal.any(signals);
  }

  private warn(header: string | string[] | undefined): void {
    for (const w of warningsOf(header)) this.io.err(`Warning: ${w}\n`);
  }

  /** One request; a non-2xx answer is thrown as the server's Status (`StatusError`). */
  async call<T = unknown>(method: string, path: string, o: CallOptions = {}): Promise<T> {
    const body =
      o.body === undefined || typeof o.body === 'string' || Buffer.isBuffer(o.body) ? o.body : JSON.stringify(o.body);
    const r = await this.client.request(method, path + queryString(o.query), {
      body: body as string | Buffer | undefined,
      contentType: o.contentType,
      accept: o.accept ?? 'application/json',
      signal: this.signal(o.signal),
    });
    this.warn(r.headers.warning);
    if (r.status < 200 || r.status >= 300) throw responseError(r.status, r.body);
    if (r.body.length === 0) return undefined as T;
    const type = String(r.headers['content-type'] ?? '');
    if (!type.includes('json')) return r.body.toString('utf8') as T;
    return r.json<T>();
  }

  /** A request whose answer streams (watch, logs -f): resolves once the headers arrived; a non-2xx answer throws. */
  async stream(path: string, o: CallOptions = {}): Promise<StreamResponse> {
    const res = await this.client.stream('GET', path + queryString(o.query), {
      accept: o.accept ?? 'application/json',
      signal: AbortSignal.any([o.signal, this.io.signal].filter((s): s is AbortSignal => s !== undefined)),
    });
    this.warn(res.headers.warning);
    if (res.status < 200 || res.status >= 300) {
      const chunks: Buffer[] = [];
      for await (const c of res.body) chunks.push(c as Buffer);
      throw responseError(res.status, Buffer.concat(chunks));
    }
    return res;
  }

  close(): void {
    this.client.close();
  }
}
