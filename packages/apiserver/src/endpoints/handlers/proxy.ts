import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { request as httpRequest } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { Writable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { serviceUnavailable } from '@svc/api';
import { isUpgrade, proxyUpgrade } from '@svc/component-base';
import type { GenericStore } from '../../registry/store.js';
import type { SvcletClient } from '../../server/svclet-client.js';
import type { ServedRequest } from '../resource-router.js';
import { nodeProxyLocation, podProxyLocation, serviceProxyLocation, type ProxyLocation } from './proxy-location.js';
import { rewriteAnswer, rewriteFailure } from './proxy-rewrite.js';
import { forwardedUri, unescapedPrefix, type RewriteTarget } from './proxy-rewrite-url.js';

/** The resources with a `proxy` subresource. */
export type ProxyKind = 'pods' | 'services' | 'nodes';

export interface ProxyDeps {
  pods: () => GenericStore;
  services: () => GenericStore;
  endpoints: () => GenericStore;
  nodes: () => GenericStore;
  svclet: SvcletClient;
}

/** Hop-by-hop headers (RFC 7230 and Go's ReverseProxy list), never passed on in either direction. */
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Headers that carry the client's credentials to this server; they stay here. */
const CREDENTIALS = /^(authorization|impersonate-.*)$/;

/** Pods and services over https: Kubernetes' proxy transport does not verify their certificates. */
const insecureAgent = new Agent({ keepAlive: false, rejectUnauthorized: false });

function dropped(headers: IncomingMessage['headers']): Set<string> {
  const out = new Set(HOP_BY_HOP);
  const conn = headers.connection;
  for (const v of Array.isArray(conn) ? conn : conn ? [conn] : [])
    for (const name of v.split(',')) out.add(name.trim().toLowerCase());
  return out;
}

/**
 * The request path split at `.../<name>/proxy` as the client sent it (still percent-encoded):
 * the prefix up to and including `proxy`, and the path after it, `/` for none; `bare` when
 * nothing follows `proxy`, not even a slash. Kubernetes joins the path to the backend's
 * location keeping a trailing slash.
 */
function proxiedPath(info: ServedRequest['info'], rawUrl: string): { prefix: string; path: string; bare: boolean } {
  const raw = (rawUrl.split('?')[0] ?? '').split('/');
  const before = 1 + (info.apiPrefix === 'apis' ? 3 : 2) + (info.namespace ? 2 : 0) + 3;
  const rest = raw.slice(before);
  return { prefix: raw.slice(0, before).join('/'), path: `/${rest.join('/')}`, bare: rest.length === 0 };
}

/** Go's error text for a failed dial, as `error trying to reach service: ...` carries it. */
function dialError(e: NodeJS.ErrnoException, target: URL): string {
  const where = `${target.hostname}:${target.port || (target.protocol === 'https:' ? '443' : '80')}`;
  if (e.code === 'ECONNREFUSED') return `dial tcp ${where}: connect: connection refused`;
  if (e.code === 'ETIMEDOUT') return `dial tcp ${where}: i/o timeout`;
  if (e.code === 'EHOSTUNREACH') return `dial tcp ${where}: connect: no route to host`;
  return e.message;
}

async function location(deps: ProxyDeps & { kind: ProxyKind }, info: ServedRequest['info']): Promise<ProxyLocation> {
  if (deps.kind === 'pods') return podProxyLocation({ pods: deps.pods(), namespace: info.namespace, id: info.name });
  if (deps.kind === 'services')
    return serviceProxyLocation({
      services: deps.services(),
      endpoints: deps.endpoints(),
      pods: deps.pods(),
      namespace: info.namespace,
      id: info.name,
    });
  return nodeProxyLocation({
    nodes: deps.nodes(),
    preferredAddressTypes: deps.svclet.preferredAddressTypes,
    id: info.name,
  });
}

/**
 * `pods|services|nodes/<id>/proxy[/<path>]` with any method (Kubernetes' ProxyREST; the
 * request is authorized by its own verb on the `proxy` subresource and is long-running):
 * resolves the backend (see proxy-location.ts), then sends the request there with its
 * method, path, query, body and headers (not hop-by-hop ones, not the client's credentials;
 * `X-Forwarded-For` and `X-Forwarded-Uri` added) and streams the answer back with its status
 * and headers, its links rewritten to go through the proxy as Kubernetes' proxy transport
 * does (see proxy-rewrite.ts). An upgrade request (WebSocket) is passed on and joined when the
 * backend agrees. A backend that cannot be reached is a 503 `error trying to reach service: ...`.
 */
export async function serveProxy(
  deps: ProxyDeps & { kind: ProxyKind },
  r: Pick<ServedRequest, 'req' | 'res' | 'info'>,
): Promise<void> {
  const { req, res, info } = r;
  const loc = await location(deps, info);
  const rawUrl = req.originalUrl || req.url;
  const split = proxiedPath(info, rawUrl);
  const target = new URL(loc.url.toString());
  target.pathname = split.path;
  target.search = rawUrl.split('?')[1] ?? '';
  const agent = loc.svcletPort ? deps.svclet.tlsAgent : target.protocol === 'https:' ? insecureAgent : undefined;
  const gone = new AbortController();
  res.once('close', () => gone.abort());

  if (isUpgrade(req)) {
    let out: Awaited<ReturnType<typeof proxyUpgrade>>;
    try {
      out = await proxyUpgrade({ req, res, url: target, agent, signal: gone.signal });
    } catch (e) {
      throw serviceUnavailable(`error trying to reach service: ${dialError(e as NodeJS.ErrnoException, target)}`);
    }
    if (out.upgraded) {
      res.statusCode = 101;
      return;
    }
    await relay({ answer: out.response, res, signal: gone.signal });
    return;
  }
  // Kubernetes' proxyRedirectsforRootPath: a GET or HEAD of `.../proxy` is sent to `.../proxy/`,
  // so that the page's relative links resolve under the proxy.
  if (split.bare && (req.method === 'GET' || req.method === 'HEAD')) {
    const query = rawUrl.split('?')[1];
    res.status(301).setHeader('Location', `${rawUrl.split('?')[0] ?? ''}/${query ? `?${query}` : ''}`);
    res.end();
    return;
  }
  const prefix = unescapedPrefix(split.prefix);
  const rewrite: RewriteTarget = {
    prefix,
    backendHost: loc.host,
    requestHost: req.headers.host ?? '',
  };

  const skip = dropped(req.headers);
  const headers: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(req.headers))
    if (v !== undefined && !k.startsWith(':') && k !== 'host' && !skip.has(k) && !CREDENTIALS.test(k)) headers[k] = v;
  const client = req.socket.remoteAddress;
  if (client) {
    const prior = req.headers['x-forwarded-for'];
    headers['x-forwarded-for'] = prior ? `${String(prior)}, ${client}` : client;
  }
  headers['x-forwarded-uri'] = forwardedUri(prefix, split.path);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const out = send(target, { method: req.method, headers, agent, signal: gone.signal }, resolve);
    out.on('error', (e: NodeJS.ErrnoException) =>
      reject(gone.signal.aborted ? e : serviceUnavailable(`error trying to reach service: ${dialError(e, target)}`)),
    );
    req.pipe(out);
  });
  let rewritten: ReturnType<typeof rewriteAnswer>;
  try {
    const bodiless = req.method === 'HEAD' || response.statusCode === 204 || response.statusCode === 304;
    rewritten = rewriteAnswer({ headers: response.headers, target: rewrite, bodiless });
  } catch (e) {
    response.destroy();
    throw e;
  }
  if (rewritten.body.length === 0)
    await relay({ answer: response, res, signal: gone.signal, headers: rewritten.headers });
  else await relayRewritten({ answer: response, res, signal: gone.signal, ...rewritten });
}

/** Sets a backend's status and headers, but hop-by-hop ones, on the answer; the names set. */
function answerHead(o: { answer: IncomingMessage; res: ServedRequest['res']; headers: IncomingHttpHeaders }): string[] {
  const skip = dropped(o.answer.headers);
  const set: string[] = [];
  o.res.status(o.answer.statusCode ?? 502);
  for (const [k, v] of Object.entries(o.headers))
    if (v !== undefined && !skip.has(k)) {
      o.res.setHeader(k, v);
      set.push(k);
    }
  return set;
}

/**
 * Streams a backend's answer through the link-rewriting stages. A failure before anything
 * was sent (a body that is not the gzip or deflate it claims) is answered as a 500 Status;
 * a later one ends the connection.
 */
async function relayRewritten(o: {
  answer: IncomingMessage;
  res: ServedRequest['res'];
  signal: AbortSignal;
  headers: IncomingHttpHeaders;
  body: Transform[];
}): Promise<void> {
  const { res } = o;
  const set = answerHead(o);
  // The client's side is written by hand so that a failing stage does not destroy it.
  const sink = new Writable({
    write(chunk: Buffer, _enc, done): void {
      if (res.write(chunk)) done();
      else res.once('drain', () => done());
    },
  });
  try {
    await pipeline([o.answer, ...o.body, sink], { signal: o.signal });
    res.end();
  } catch (e) {
    if (o.signal.aborted) return;
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const k of set) res.removeHeader(k);
    throw rewriteFailure(e);
  }
}

/** Streams a backend's answer to the client: status, headers without hop-by-hop ones, body. */
async function relay(o: {
  answer: IncomingMessage;
  res: ServedRequest['res'];
  signal: AbortSignal;
  headers?: IncomingHttpHeaders;
}): Promise<void> {
  const { answer, res, signal } = o;
  answerHead({ answer, res, headers: o.headers ?? answer.headers });
  res.flushHeaders();
  await new Promise<void>((resolve) => {
    answer.once('end', resolve);
    answer.once('error', resolve);
    answer.once('close', resolve);
    signal.addEventListener('abort', () => {
      answer.destroy();
      resolve();
    });
    answer.pipe(res);
  });
}
