import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { request as httpRequest } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { serviceUnavailable } from '@svc/api';
import { isUpgrade, proxyUpgrade } from '@svc/component-base';
import type { GenericStore } from '../../registry/store.js';
import type { SvcletClient } from '../../server/svclet-client.js';
import type { ServedRequest } from '../resource-router.js';
import { nodeProxyLocation, podProxyLocation, serviceProxyLocation, type ProxyLocation } from './proxy-location.js';

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
 * The path after `.../<name>/proxy` as the client sent it (still percent-encoded), `/` for
 * none; Kubernetes joins it to the backend's location keeping a trailing slash.
 */
function proxiedPath(info: ServedRequest['info'], rawUrl: string): string {
  const raw = (rawUrl.split('?')[0] ?? '').split('/');
  const before = 1 + (info.apiPrefix === 'apis' ? 3 : 2) + (info.namespace ? 2 : 0) + 3;
  const rest = raw.slice(before).join('/');
  return `/${rest}`;
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
 * `X-Forwarded-For` added) and streams the answer back with its status and headers. An
 * upgrade request (WebSocket) is passed on and joined when the backend agrees. A backend that
 * cannot be reached is a 503 `error trying to reach service: ...`.
 */
export async function serveProxy(
  deps: ProxyDeps & { kind: ProxyKind },
  r: Pick<ServedRequest, 'req' | 'res' | 'info'>,
): Promise<void> {
  const { req, res, info } = r;
  const loc = await location(deps, info);
  const target = new URL(loc.url.toString());
  target.pathname = proxiedPath(info, req.originalUrl || req.url);
  target.search = (req.originalUrl || req.url).split('?')[1] ?? '';
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
    await relay(out.response, res, gone.signal);
    return;
  }

  const skip = dropped(req.headers);
  const headers: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(req.headers))
    if (v !== undefined && !k.startsWith(':') && k !== 'host' && !skip.has(k) && !CREDENTIALS.test(k)) headers[k] = v;
  const client = req.socket.remoteAddress;
  if (client) {
    const prior = req.headers['x-forwarded-for'];
    headers['x-forwarded-for'] = prior ? `${String(prior)}, ${client}` : client;
  }
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const out = send(target, { method: req.method, headers, agent, signal: gone.signal }, resolve);
    out.on('error', (e: NodeJS.ErrnoException) =>
      reject(gone.signal.aborted ? e : serviceUnavailable(`error trying to reach service: ${dialError(e, target)}`)),
    );
    req.pipe(out);
  });
  await relay(response, res, gone.signal);
}

/** Streams a backend's answer to the client: status, headers without hop-by-hop ones, body. */
async function relay(answer: IncomingMessage, res: ServedRequest['res'], signal: AbortSignal): Promise<void> {
  const skip = dropped(answer.headers);
  res.status(answer.statusCode ?? 502);
  for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !skip.has(k)) res.setHeader(k, v);
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
