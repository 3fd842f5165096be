import { request as httpsRequest } from 'node:https';
import { openWatch, type WatchStream } from './watch-stream.js';

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
  /** The body parsed as JSON (throws when it is not JSON). */
  json<T = Record<string, unknown>>(): T;
}

export interface RequestOptions {
  body?: string | Buffer | object;
  /** A list sends the header once per value. */
  headers?: Record<string, string | string[]>;
  /** Bearer token; `null` sends none. */
  token?: string | null;
  contentType?: string;
}

/** A client certificate (and intermediates) with its key, in PEM. */
export interface ClientCert {
  cert: string;
  key: string;
}

/** How an `HttpsClient` authenticates: a bearer token sent by default, a client certificate. */
export interface ClientCredentials {
  token?: string | undefined;
  clientCert?: ClientCert | undefined;
}

/** A small HTTPS client that trusts one CA and sends one bearer token by default (tests only). */
export class HttpsClient {
  constructor(
    readonly baseUrl: string,
    private readonly caPem: string,
    private readonly credentials: ClientCredentials = {},
  ) {}

  withToken(token: string | undefined): HttpsClient {
    return new HttpsClient(this.baseUrl, this.caPem, { ...this.credentials, token });
  }

  /** The same client presenting a client certificate (on connections of its own). */
  withClientCert(cert: ClientCert | undefined): HttpsClient {
    return new HttpsClient(this.baseUrl, this.caPem, { ...this.credentials, clientCert: cert });
  }

  request(method: string, path: string, opts: RequestOptions = {}): Promise<HttpResponse> {
    const url = new URL(path, this.baseUrl);
    const headers: Record<string, string | string[]> = { ...opts.headers };
    const token = opts.token === undefined ? this.credentials.token : opts.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let payload: Buffer | undefined;
    if (opts.body !== undefined) {
      payload = Buffer.isBuffer(opts.body)
        ? opts.body
        : Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
      headers['content-type'] ??= opts.contentType ?? 'application/json';
      headers['content-length'] = String(payload.length);
    }
    return new Promise((resolve, reject) => {
      const cert = this.credentials.clientCert;
      const tls = cert ? { cert: cert.cert, key: cert.key, agent: false as const } : {};
      const req = httpsRequest(url, { method, headers, ca: this.caPem, ...tls }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const text = body.toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            text,
            json: <T>() => JSON.parse(text) as T,
          });
        });
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  get(path: string, opts?: RequestOptions): Promise<HttpResponse> {
    return this.request('GET', path, opts);
  }
  /** Opens a watch stream; `path` should carry `watch=1`. */
  watch(path: string, headers?: Record<string, string>): Promise<WatchStream> {
    return openWatch({ baseUrl: this.baseUrl, caPem: this.caPem, token: this.credentials.token }, path, headers);
  }
  post(path: string, body: RequestOptions['body'], opts?: RequestOptions): Promise<HttpResponse> {
    return this.request('POST', path, { ...opts, body });
  }
  put(path: string, body: RequestOptions['body'], opts?: RequestOptions): Promise<HttpResponse> {
    return this.request('PUT', path, { ...opts, body });
  }
  /** A PATCH of `body` as `contentType`; `request` sends one with more options. */
  patch(path: string, body: RequestOptions['body'], contentType: string): Promise<HttpResponse> {
    return this.request('PATCH', path, { body, contentType });
  }
  delete(path: string, opts?: RequestOptions): Promise<HttpResponse> {
    return this.request('DELETE', path, opts);
  }
}
