import { request as httpRequest, ServerResponse, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type Agent } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { joinStreams } from './join-streams.js';

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** An HTTP/1.1 server, or an HTTP/2 one that allows HTTP/1.1 (upgrades are HTTP/1.1 only). */
interface UpgradeSource {
  on(event: 'upgrade', listener: (req: IncomingMessage, socket: Duplex, head: Buffer) => void): unknown;
}

interface Upgrade {
  socket: Duplex;
  head: Buffer;
  taken: boolean;
}

const upgrades = new WeakMap<IncomingMessage, Upgrade>();

/**
 * Serves HTTP/1.1 upgrade requests (WebSocket, SPDY) with the server's ordinary request
 * handler, so they pass the same authentication, authorization and routing: the handler gets
 * a response written on the raw connection (an answer before any upgrade, e.g. a Status, then
 * the connection closes) and may take the connection with `takeUpgrade`. `destroyAll` ends
 * the upgraded connections still open (the server's close does not wait for them).
 */
export function acceptUpgrades(server: UpgradeSource, handler: RequestListener): { destroyAll(): void } {
  const open = new Set<Duplex>();
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const u: Upgrade = { socket, head, taken: false };
    upgrades.set(req, u);
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Socket);
    res.once('finish', () => {
      if (!u.taken) socket.end();
    });
    handler(req, res);
  });
  return { destroyAll: () => open.forEach((s) => s.destroy()) };
}

/** True when `req` asks for a protocol upgrade served by `acceptUpgrades` and not yet taken. */
export function isUpgrade(req: IncomingMessage): boolean {
  const u = upgrades.get(req);
  return u !== undefined && !u.taken;
}

/** Takes the raw connection of an upgrade request (and the bytes read past its head); the response can no longer be used. */
export function takeUpgrade(req: IncomingMessage, res: ServerResponse): { socket: Duplex; head: Buffer } | undefined {
  const u = upgrades.get(req);
  if (!u || u.taken) return undefined;
  u.taken = true;
  res.detachSocket(u.socket as Socket);
  return { socket: u.socket, head: u.head };
}

/** Request headers an upgrade proxy passes on (the client's credentials stay behind). */
const FORWARDED = new Set([
  'connection',
  'upgrade',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-protocol',
  'sec-websocket-extensions',
  'x-stream-protocol-version',
  'user-agent',
]);

export interface UpgradeProxyOptions {
  /** The upgrade request being served, and its connection taken with `takeUpgrade` once the backend agreed. */
  req: IncomingMessage;
  res: ServerResponse;
  /** Where to send it (http: or https:), with the request's method. */
  url: URL;
  /** For https: the client certificate and trust to reach the backend with. */
  agent?: Agent;
  /** Bounds connecting and the backend's answer; 0 or absent waits. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Passes an upgrade request on to `url` and, when the backend answers 101, joins the two
 * connections byte for byte (Kubernetes' UpgradeAwareHandler): the backend's 101 goes back
 * verbatim, so the protocol (WebSocket, SPDY) is negotiated end to end. Resolves with
 * `upgraded` once joined, or with the backend's other answer (its body unread) for the caller
 * to report; rejects when the backend cannot be reached.
 */
export function proxyUpgrade(
  o: UpgradeProxyOptions,
): Promise<{ upgraded: true } | { upgraded: false; response: IncomingMessage }> {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(o.req.headers)) if (FORWARDED.has(k) && v !== undefined) headers[k] = v;
  const send = o.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const out = send(o.url, { method: o.req.method, headers, agent: o.agent, signal: o.signal });
    const timer =
      o.timeoutMs && o.timeoutMs > 0
        ? setTimeout(() => out.destroy(new Error(`dial tcp ${o.url.host}: i/o timeout`)), o.timeoutMs)
        : undefined;
    out.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    out.on('response', (response) => {
      clearTimeout(timer);
      resolve({ upgraded: false, response });
    });
    out.on('upgrade', (response: IncomingMessage, backend: Duplex, backendHead: Buffer) => {
      clearTimeout(timer);
      const taken = takeUpgrade(o.req, o.res);
      if (!taken) {
        backend.destroy();
        reject(new Error('the request is not an upgrade'));
        return;
      }
      const { socket, head } = taken;
      let answer = `HTTP/1.1 101 ${response.statusMessage || 'Switching Protocols'}\r\n`;
      for (let i = 0; i + 1 < response.rawHeaders.length; i += 2)
        answer += `${response.rawHeaders[i]}: ${response.rawHeaders[i + 1]}\r\n`;
      socket.write(`${answer}\r\n`);
      if (backendHead.length) socket.write(backendHead);
      if (head.length) backend.write(head);
      const end = (): void => {
        socket.destroy();
        backend.destroy();
      };
      backend.on('error', end);
      socket.on('error', end);
      backend.once('close', () => socket.end());
      socket.once('close', () => backend.destroy());
      joinStreams(backend, socket);
      resolve({ upgraded: true });
    });
    out.end();
  });
}
