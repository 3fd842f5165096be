import type { IncomingMessage } from 'node:http';
import { Agent, request as httpsRequest, type RequestOptions } from 'node:https';
import type { ApiObject } from '@svc/api';
import { isJsonObject } from '@svc/machinery';

/**
 * The HTTPS client of the server's webhooks that are configured by API objects (CRD conversion,
 * admission webhooks), as Kubernetes' webhook ClientManager: one JSON POST per call to
 * `clientConfig.url` or to a resolved `service` (TLS server name `<name>.<namespace>.svc`),
 * trusting `caBundle` when given, else the system roots, over kept-alive connections. Failures
 * read as client-go's errors do.
 */

/** Exactly one of `url` (https) and `service`; `caBundle` is base64 of PEM. */
export interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  caBundle?: string;
}

export interface ServiceReference {
  namespace: string;
  name: string;
  port: number;
}

/** Where a Service is reached: an address (or DNS name) and port. */
export interface ServiceAddress {
  host: string;
  port: number;
}

/** Resolves a webhook's `service` reference; throws (with the reason) when it cannot. */
export type ServiceResolver = (ref: ServiceReference) => Promise<ServiceAddress>;

/** Kubernetes' client keeps at most this much of a non-Status error body in its message. */
const MAX_ERROR_TEXT = 2048;

/** client-go's words for a request that ran out its client's own timeout. */
export const CLIENT_TIMEOUT_MESSAGE = 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)';

/**
 * A call that failed: the reason in client-go's words, and the status code Kubernetes records
 * for it (the answer's code for a non-2xx answer, else 400).
 */
export class WebhookCallError extends Error {
  constructor(
    message: string,
    readonly code: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'WebhookCallError';
  }
}

export interface PostOptions {
  /** The deadline of the whole exchange, the answer's body included; sent as `?timeout=`. */
  timeoutMs: number;
  /** What a passed deadline reads (default: the client's own timeout, `CLIENT_TIMEOUT_MESSAGE`). */
  deadlineMessage?: string;
}

interface HttpAnswer {
  status: number;
  contentType: string;
  text: string;
}

export class WebhookClient {
  private readonly ca?: string;
  private readonly agent: Agent;

  constructor(
    private readonly clientConfig: WebhookClientConfig,
    private readonly resolveService: ServiceResolver,
  ) {
    const pem = Buffer.from(clientConfig.caBundle ?? '', 'base64').toString('utf8');
    // As Kubernetes: a whitespace-only caBundle counts as none.
    if (pem.trim()) this.ca = pem;
    this.agent = new Agent({ keepAlive: true, ca: this.ca });
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  /** POSTs `body` (JSON); resolves with the parsed 2xx answer, rejects with a `WebhookCallError`. */
  async post(body: string, o: PostOptions): Promise<unknown> {
    const target = await this.target(o.timeoutMs);
    const send = (): Promise<HttpAnswer> => this.send(target.options, { body, timeoutMs: o.timeoutMs });
    // A kept-alive connection the server closed meanwhile fails at once: one more try on a fresh one.
    const res = await send()
      .catch((e: unknown) => (e instanceof StaleConnection ? send() : Promise.reject(e)))
      .catch((e: unknown) => {
        const reason = e instanceof DeadlineExceeded ? (o.deadlineMessage ?? CLIENT_TIMEOUT_MESSAGE) : undefined;
        throw new WebhookCallError(`Post "${target.shown}": ${reason ?? transportMessage(e, target.options)}`, 400, {
          cause: e,
        });
      });
    if (res.status < 200 || res.status > 299) throw new WebhookCallError(errorResponseMessage(res), res.status);
    try {
      return JSON.parse(res.text) as unknown;
    } catch (e) {
      throw new WebhookCallError(`couldn't get version/kind; json parse error: ${goJsonError(res.text, e)}`, 400, {
        cause: e,
      });
    }
  }

  /** Where the POST goes, and the URL as Go prints it in errors. */
  private async target(timeoutMs: number): Promise<{ shown: string; options: RequestOptions }> {
    const cc = this.clientConfig;
    const timeout = `?timeout=${goDuration(timeoutMs)}`;
    if (cc.service) {
      const port = cc.service.port ?? 443;
      const serverName = `${cc.service.name}.${cc.service.namespace}.svc`;
      const path = (cc.service.path ?? '') + timeout;
      const shown = `https://${serverName}:${port}${path.startsWith('/') ? '' : '/'}${path}`;
      let address: ServiceAddress;
      try {
        address = await this.resolveService({ namespace: cc.service.namespace, name: cc.service.name, port });
      } catch (e) {
        throw new WebhookCallError(`Post "${shown}": ${(e as Error).message}`, 400, { cause: e });
      }
      return {
        shown,
        options: {
          host: address.host,
          port: address.port,
          path: path.startsWith('/') ? path : `/${path}`,
          servername: serverName,
          headers: { Host: `${serverName}:${port}` },
        },
      };
    }
    const url = new URL(cc.url ?? '');
    const path = url.pathname + timeout;
    return {
      shown: `${url.protocol}//${url.host}${path}`,
      options: { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(url.port || 443), path },
    };
  }

  private send(options: RequestOptions, o: { body: string; timeoutMs: number }): Promise<HttpAnswer> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {
          ...options,
          method: 'POST',
          agent: this.agent,
          headers: {
            ...options.headers,
            'Content-Type': 'application/json',
            Accept: 'application/json, */*',
            'Content-Length': String(Buffer.byteLength(o.body)),
          },
        },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('error', reject);
          res.on('end', () => {
            clearTimeout(timer);
            resolve({
              status: res.statusCode ?? 0,
              contentType: String(res.headers['content-type'] ?? ''),
              text: Buffer.concat(chunks).toString('utf8'),
            });
          });
        },
      );
      // The deadline covers the whole exchange, the answer's body included.
      const timer = setTimeout(() => {
        reject(new DeadlineExceeded());
        req.destroy();
      }, o.timeoutMs);
      timer.unref();
      req.on('error', (e: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        const stale = req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE');
        reject(stale ? new StaleConnection(e) : e);
      });
      req.end(o.body);
    });
  }
}

/**
 * Kubernetes' service resolution for webhooks (ClusterIP resolver): an ExternalName Service is
 * reached at its external name; others need the port among `spec.ports` and are reached at
 * `spec.clusterIP`. svc allocates no cluster IPs, so a Service without one is reached by its
 * DNS name `<name>.<namespace>.svc`, as Kubernetes' default service resolver does.
 */
export function resolveServiceAddress(service: ApiObject | undefined, ref: ServiceReference): ServiceAddress {
  if (!service) throw new Error(`service "${ref.name}" not found`);
  const spec = (service.spec ?? {}) as {
    type?: string;
    clusterIP?: string;
    externalName?: string;
    ports?: Array<{ port?: number }>;
  };
  const type = spec.type || 'ClusterIP';
  if (type === 'ExternalName') return { host: spec.externalName ?? '', port: ref.port };
  if (type !== 'ClusterIP' && type !== 'NodePort' && type !== 'LoadBalancer')
    throw new Error(`unsupported service type "${type}"`);
  if (spec.clusterIP === 'None') throw new Error('cannot route to service with ClusterIP "None"');
  if (!(spec.ports ?? []).some((p) => p.port === ref.port))
    throw new Error(`no service port ${ref.port} found for service "${ref.name}"`);
  return { host: spec.clusterIP || `${ref.name}.${ref.namespace}.svc`, port: ref.port };
}

class DeadlineExceeded extends Error {}

/** A reused connection that turned out closed: the request never reached the server. */
class StaleConnection extends Error {
  readonly code?: string;
  constructor(error: NodeJS.ErrnoException) {
    super(error.message, { cause: error });
    this.code = error.code;
  }
}

/** A connection failure in the words of Go's client where they differ from Node's. */
function transportMessage(e: unknown, o: RequestOptions): string {
  const code = (e as { code?: string }).code;
  const hostPort = `${String(o.host)}:${String(o.port)}`;
  switch (code) {
    case 'ECONNREFUSED':
      return `dial tcp ${hostPort}: connect: connection refused`;
    case 'ECONNRESET':
      return 'EOF';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${String(o.host)}: no such host`;
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    default:
      return (e as Error).message;
  }
}

/** client-go's error for a non-2xx answer: a Status' message, else its generic text by code. */
function errorResponseMessage(res: HttpAnswer): string {
  try {
    const doc = JSON.parse(res.text) as unknown;
    if (isJsonObject(doc) && doc.kind === 'Status' && typeof doc.message === 'string' && doc.message)
      return doc.message;
  } catch {
    // not JSON: the generic message below
  }
  const text = res.contentType.startsWith('text/') ? res.text.slice(0, MAX_ERROR_TEXT).trim() : 'unknown';
  switch (res.status) {
    case 400:
      return 'the server rejected our request for an unknown reason';
    case 401:
      return 'the server has asked for the client to provide credentials';
    case 403:
      return text;
    case 404:
      return 'the server could not find the requested resource';
    case 405:
      return 'the server does not allow this method on the requested resource';
    case 409:
      return 'the server reported a conflict';
    case 422:
      return 'the server rejected our request due to an error in our request';
    case 429:
      return 'the server has received too many requests and has asked us to try again later';
    case 503:
      return 'the server is currently unable to handle the request';
    case 504:
      return 'the server was unable to return a response in the time allotted, but may still be processing the request';
    default:
      return res.status >= 500
        ? `an error on the server (${JSON.stringify(text)}) has prevented the request from succeeding`
        : `the server responded with the status code ${res.status} but did not return more information`;
  }
}

/** Go's encoding/json wording for the common ways a body is not JSON; Node's otherwise. */
function goJsonError(text: string, e: unknown): string {
  const trimmed = text.trimStart();
  if (trimmed === '') return 'unexpected end of JSON input';
  const first = trimmed[0] ?? '';
  if (!/[[{"\-0-9tfn]/.test(first)) return `invalid character '${first}' looking for beginning of value`;
  return (e as Error).message;
}

/** Go's time.Duration text for whole milliseconds (`30s`, `500ms`, `1m30s`). */
function goDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = (ms % 60_000) / 1000;
  if (minutes === 0) return `${seconds}s`;
  return `${minutes}m${seconds}s`;
}
