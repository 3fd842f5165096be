import { readFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { ExecCredentialProvider } from './exec-credential.js';
import type { ClientConfig } from './svcconfig.js';

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

  constructor(readonly config: ClientConfig) {
    if (config.user.exec) this.exec = new ExecCredentialProvider(config.user.exec, config);
    this.agent = this.makeAgent(config.user.clientCertPem, config.user.clientKeyPem);
    this.agentCert = config.user.clientCertPem;
  }

  private makeAgent(cert: string | undefined, key: string | undefined): Agent {
    return new Agent({
      keepAlive: true, ca: this.config.caPem, cert, key,
      rejectUnauthorized: !this.config.insecureSkipTlsVerify,
      servername: this.config.tlsServerName,
    });
  }

  private async credentials(): Promise<{ token?: string }> {
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
    if (this.config.user.tokenFile) return { token: readFileSync(this.config.user.tokenFile, 'utf8').trim() };
    return {};
  }

  async request(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const first = await this.once(method, path, opts);
    if (first.status !== 401 || !this.exec) return first;
    this.exec.invalidate();
    return this.once(method, path, opts);
  }

  private async once(method: string, path: string, opts: RequestOptions): Promise<Response> {
    const { token } = await this.credentials();
    const headers: Record<string, string> = { accept: opts.accept ?? 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    let payload: Buffer | undefined;
    if (opts.body !== undefined) {
      payload = Buffer.isBuffer(opts.body) ? opts.body : Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
      headers['content-type'] = opts.contentType ?? 'application/json';
      headers['content-length'] = String(payload.length);
    }
    return new Promise((resolve, reject) => {
      const req = httpsRequest(new URL(path, this.config.server), { method, headers, agent: this.agent, signal: opts.signal }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: <T>() => JSON.parse(body.toString('utf8')) as T });
        });
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  /**
   * Like `request`, but resolves as soon as the response headers arrive and hands over the
   * body as a stream (for watches); aborting `signal` destroys the response.
   */
  async stream(method: string, path: string, opts: RequestOptions = {}): Promise<StreamResponse> {
    const first = await this.openStream(method, path, opts);
    if (first.status !== 401 || !this.exec) return first;
    first.body.resume();
    this.exec.invalidate();
    return this.openStream(method, path, opts);
  }

  private async openStream(method: string, path: string, opts: RequestOptions): Promise<StreamResponse> {
    const { token } = await this.credentials();
    const headers: Record<string, string> = { accept: opts.accept ?? 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    return new Promise((resolve, reject) => {
      const req = httpsRequest(new URL(path, this.config.server), { method, headers, agent: this.agent, signal: opts.signal }, (res) => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      req.on('error', reject);
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
