import { readFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { buffer as readAll } from 'node:stream/consumers';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExecCredentialProvider } from './exec-credential.js';
import type { ClientConfig } from './svcconfig.js';
import { TokenBucket } from './token-bucket.js';

const TOKEN_FILE_PERIOD_MS = 60_000;
/** client-go's default: a request the server asks to come back later is sent at most this many more times. */
const DEFAULT_MAX_RETRIES = 10;

export interface Response {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  json<T = unknown>(): T;
}

export interface StreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
}

/** Observes every request the client sends (Kubernetes' rest_client_* metrics). */
export interface RequestMetrics {
  /** One request finished with `code` (0 when no response arrived) after `ms` (until the response headers). */
  observe(r: { method: string; host: string; code: number; ms: number }): void;
  /** A request waited this long for the client-side rate limiter. */
  throttled?(ms: number): void;
  /** A request is sent again because the server answered `code` with a `Retry-After`. */
  retried?(r: { method: string; host: string; code: number }): void;
}

export interface RestClientOptions {
  /** Client-side rate limit: sustained requests per second (0 or absent: unlimited) and burst. */
  qps?: number;
  burst?: number;
  /** Sent as `User-Agent`. */
  userAgent?: string;
  metrics?: RequestMetrics;
  /** `--svc-api-content-type`: `application/json` (default) or the Protobuf media type. */
  contentType?: string;
  /** Act as another user (`Impersonate-User`, `-Group`, `-Uid` headers; kubectl's `--as`, `--as-group`, `--as-uid`). */
  impersonate?: Impersonation;
  /**
   * Bearer tokens from code rather than the config (the controller manager's
   * `--use-service-account-credentials`: a TokenRequest per controller, renewed before it
   * expires). Takes precedence over the config's credentials; a 401 invalidates it once.
   */
  tokenSource?: TokenSource;
  /**
   * How many times a request is sent again when the server answers 429, or any 5xx, with a
   * `Retry-After` of whole seconds (priority and fairness; a resourceVersion the server has not
   * reached yet), after
   * waiting those seconds: client-go's 10 by default; 0 hands such answers back at once.
   */
  maxRetries?: number;
}

/** A bearer token that may change over time. */
export interface TokenSource {
  token(): Promise<string>;
  /** Drops the current token so the next `token()` fetches a fresh one (after a 401). */
  invalidate(): void;
}

/** Whom requests impersonate; the authenticated user needs the `impersonate` verb on each. */
export interface Impersonation {
  user?: string;
  groups?: string[];
  uid?: string;
}

export interface RequestOptions {
  body?: string | Buffer | object;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal;
}

/**
 * HTTPS requests to the configured API server with the configured credentials: a static
 * or file token, a client certificate, or an exec plugin (whose credential is dropped and
 * fetched once more when the server answers 401, then the request is retried once).
 */
export class RestClient {
  private readonly exec?: ExecCredentialProvider;
  private agent: Agent;
  private agentCert: string | undefined;
  private tokenFromFile?: { token: string; readAt: number };
  private readonly limiter?: TokenBucket;
  /** The wire format of typed requests (`--svc-api-content-type`; ResourceClient's codec). */
  readonly contentType: string | undefined;

  constructor(
    readonly config: ClientConfig,
    private readonly options: RestClientOptions = {},
  ) {
    this.contentType = options.contentType;
    if (options.qps && options.qps > 0) this.limiter = new TokenBucket(options.qps, Math.max(1, options.burst ?? 1));
    if (config.user.exec) this.exec = new ExecCredentialProvider(config.user.exec, config);
    this.agent = this.makeAgent(config.user.clientCertPem, config.user.clientKeyPem);
    this.agentCert = config.user.clientCertPem;
  }

  private makeAgent(cert: string | undefined, key: string | undefined): Agent {
    return new Agent({
      keepAlive: true,
      ca: this.config.caPem,
      cert,
      key,
      rejectUnauthorized: !this.config.insecureSkipTlsVerify,
      servername: this.config.tlsServerName,
    });
  }

  /** The token file's content, read again at most once a minute (as client-go does) rather than on every request. */
  private fileToken(file: string): string {
    const now = Date.now();
    if (!this.tokenFromFile || now - this.tokenFromFile.readAt >= TOKEN_FILE_PERIOD_MS) {
      this.tokenFromFile = { token: readFileSync(file, 'utf8').trim(), readAt: now };
    }
    return this.tokenFromFile.token;
  }

  private async credentials(): Promise<{ token?: string }> {
    if (this.options.tokenSource) return { token: await this.options.tokenSource.token() };
    if (this.exec) {
      const c = await this.exec.get();
      if (c.clientCertificateData && c.clientCertificateData !== this.agentCert) {
        this.agent.destroy();
        this.agent = this.makeAgent(c.clientCertificateData, c.clientKeyData);
        this.agentCert = c.clientCertificateData;
      }
      return { token: c.token };
    }
    if (this.config.user.token) return { token: this.config.user.token };
    if (this.config.user.tokenFile) return { token: this.fileToken(this.config.user.tokenFile) };
    return {};
  }

  async request(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const res = await this.open(method, path, opts);
    const body = await readAll(res);
    return {
      status: res.statusCode ?? 0,
      headers: res.headers,
      body,
      json: <T>() => JSON.parse(body.toString('utf8')) as T,
    };
  }

  /**
   * Like `request`, but resolves as soon as the response headers arrive and hands over the
   * body as a stream (for watches); aborting `signal` destroys the response.
   */
  async stream(method: string, path: string, opts: RequestOptions = {}): Promise<StreamResponse> {
    const res = await this.open(method, path, opts);
    return { status: res.statusCode ?? 0, headers: res.headers, body: res };
  }

  /**
   * Sends the request and, as client-go does, sends it again (through the rate limiter) while
   * the server answers 429 or 5xx with `Retry-After: <seconds>`, waiting that long each time,
   * at most `maxRetries` times; the last answer is returned as it is.
   */
  private async open(method: string, path: string, opts: RequestOptions): Promise<IncomingMessage> {
    const maxRetries = this.options.maxRetries ?? DEFAULT_MAX_RETRIES;
    for (let retries = 0; ; retries++) {
      const res = await this.openAuthenticated(method, path, opts);
      const seconds = retryAfterSeconds(res);
      if (seconds === undefined || retries >= maxRetries) return res;
      res.resume();
      this.options.metrics?.retried?.({ method, host: new URL(this.config.server).host, code: res.statusCode ?? 0 });
      await sleep(seconds * 1000, undefined, { signal: opts.signal });
    }
  }

  /** Sends the request; with an exec plugin or a token source a 401 drops the credential and sends it once more. */
  private async openAuthenticated(method: string, path: string, opts: RequestOptions): Promise<IncomingMessage> {
    const first = await this.send(method, path, opts);
    const renewable = this.options.tokenSource ?? this.exec;
    if (first.statusCode !== 401 || !renewable) return first;
    first.resume();
    renewable.invalidate();
    return this.send(method, path, opts);
  }

  /**
   * One HTTPS request, after the rate limiter lets it through; resolves with the response
   * once its headers arrive.
   */
  private async send(method: string, path: string, opts: RequestOptions): Promise<IncomingMessage> {
    if (this.limiter) {
      const waited = await this.limiter.take(opts.signal);
      if (waited > 0) this.options.metrics?.throttled?.(waited);
    }
    const { token } = await this.credentials();
    const headers: Record<string, string> = { accept: opts.accept ?? 'application/json' };
    if (this.options.userAgent) headers['user-agent'] = this.options.userAgent;
    if (token) headers.authorization = `Bearer ${token}`;
    const as = this.options.impersonate;
    if (as?.user) headers['impersonate-user'] = as.user;
    if (as?.uid) headers['impersonate-uid'] = as.uid;
    let payload: Buffer | undefined;
    if (opts.body !== undefined) {
      payload = Buffer.isBuffer(opts.body)
        ? opts.body
        : Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
      headers['content-type'] = opts.contentType ?? 'application/json';
      headers['content-length'] = String(payload.length);
    }
    const url = new URL(path, this.config.server);
    const started = performance.now();
    const observe = (code: number): void =>
      this.options.metrics?.observe({ method, host: url.host, code, ms: performance.now() - started });
    // Impersonate-Group may repeat: Node sends an array as one header line per value.
    const sent: Record<string, string | string[]> = { ...headers };
    if (as?.groups && as.groups.length > 0) sent['impersonate-group'] = as.groups;
    return new Promise((resolve, reject) => {
      const req = httpsRequest(url, { method, headers: sent, agent: this.agent, signal: opts.signal }, (res) => {
        observe(res.statusCode ?? 0);
        resolve(res);
      });
      req.on('error', (e) => {
        observe(0);
        reject(e);
      });
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The seconds to wait before sending again: a 429 or 5xx answer's `Retry-After` when it is a whole number. */
function retryAfterSeconds(res: IncomingMessage): number | undefined {
  const code = res.statusCode ?? 0;
  if (code !== 429 && code < 500) return undefined;
  const header = res.headers['retry-after'];
  return header !== undefined && /^\d+$/.test(header) ? Number(header) : undefined;
}
