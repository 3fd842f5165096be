import { randomBytes } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { STREAMING_PROTOCOLS, type Logger } from '@svc/component-base';
import { commandOverSpdy, commandOverWebSocket, type CommandRequest } from './command-streams.js';
import { socketTransport, webSocketTransport } from './frame-transport.js';
import { portForwardOverSpdy, portForwardOverWebSocket, type PortForwardTarget } from './port-forward.js';
import { SpdyConnection, type SpdyStream } from './spdy-connection.js';

/** What a one-time URL of the streaming server serves. */
export type StreamTarget =
  { kind: 'exec' | 'attach'; request: CommandRequest } | { kind: 'portforward'; target: PortForwardTarget };

/** How long a URL handed out by Exec, Attach or PortForward stays usable (Kubernetes' streaming cache TTL). */
const TOKEN_TTL_MS = 60_000;

/** remotecommand subprotocols, preferred first. */
const P = STREAMING_PROTOCOLS;
const COMMAND_PROTOCOLS: string[] = [P.remoteCommandV5, P.remoteCommandV4];
const SPDY_COMMAND_PROTOCOLS: string[] = [P.remoteCommandV4, P.remoteCommandV3, P.remoteCommandV2];
const PORT_FORWARD_PROTOCOL = P.portForward;
/** kubectl's port-forward over WebSocket: SPDY framed in binary messages. */
const TUNNELED_PORT_FORWARD = `SPDY/3.1+${PORT_FORWARD_PROTOCOL}`;
/** Port-forward over plain WebSocket channels (the official clients'), binary or base64. */
const CHANNEL_PORT_FORWARD = P.remoteCommandV4;
const BASE64_CHANNEL_PORT_FORWARD = P.channelBase64V4;
const PORT_FORWARD_WS_PROTOCOLS = [TUNNELED_PORT_FORWARD, CHANNEL_PORT_FORWARD, BASE64_CHANNEL_PORT_FORWARD];

function listHeader(v: string | string[] | undefined): string[] {
  return (Array.isArray(v) ? v : [v ?? ''])
    .flatMap((x) => x.split(','))
    .map((x) => x.trim())
    .filter(Boolean);
}

/** kubelet's check of a channel port-forward's ports (its `port` query), or undefined when they do. */
function invalidPorts(ports: readonly number[]): string | undefined {
  if (ports.length === 0) return 'query parameter "port" is required';
  const bad = ports.find((p) => !Number.isInteger(p) || p < 1 || p > 65535);
  return bad === undefined ? undefined : `unable to parse "${bad}" as a port: must be 1-65535`;
}

function refuse(socket: Duplex, code: number, message: string): void {
  socket.end(
    `HTTP/1.1 ${code} ${STATUS_CODES[code] ?? ''}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(message)}\r\nConnection: close\r\n\r\n${message}`,
  );
}

/**
 * The runtime's streaming server (Kubernetes' CRI streaming server, as containerd runs it):
 * plain HTTP on loopback, where Exec, Attach and PortForward hand out one-time URLs
 * (`/<kind>/<token>`, usable once within a minute). It speaks what kubectl speaks, so the
 * svclet and the API server only pass bytes through: remotecommand over WebSocket (v5, v4) or
 * SPDY/3.1 (v4..v2), and port-forward over SPDY/3.1, plain or tunnelled in WebSocket.
 */
export class StreamServer {
  private readonly tokens = new Map<string, { target: StreamTarget; expires: number }>();
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  private readonly sockets = new Set<Duplex>();
  /** The subprotocol chosen for each upgrade, answered here rather than by `ws` (see websocket()). */
  private readonly chosen = new WeakMap<IncomingMessage, string>();

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
    private readonly logger: Logger,
  ) {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
    this.wss.on('headers', (headers: string[], req: IncomingMessage) => {
      const protocol = this.chosen.get(req);
      if (protocol) headers.push(`Sec-WebSocket-Protocol: ${protocol}`);
    });
    server.on('request', (_req, res) => {
      res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Upgrade request required\n');
    });
    server.on('connection', (s: Duplex) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
  }

  static async start(o: { host: string; logger: Logger }): Promise<StreamServer> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, o.host, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const host = o.host.includes(':') ? `[${o.host}]` : o.host;
    return new StreamServer(server, `http://${host}:${port}`, o.logger);
  }

  /** A one-time URL for `target`. */
  register(target: StreamTarget): string {
    const now = Date.now();
    for (const [k, v] of this.tokens) if (v.expires < now) this.tokens.delete(k);
    const token = randomBytes(12).toString('base64url');
    this.tokens.set(token, { target, expires: now + TOKEN_TTL_MS });
    return `${this.baseUrl}/${target.kind}/${token}`;
  }

  /** Stops listening and ends every stream in progress. */
  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private take(path: string): StreamTarget | undefined {
    const m = /^\/(exec|attach|portforward)\/([A-Za-z0-9_-]+)$/.exec(path);
    if (!m) return undefined;
    const hit = this.tokens.get(m[2]!);
    this.tokens.delete(m[2]!);
    if (!hit || hit.expires < Date.now() || hit.target.kind !== m[1]) return undefined;
    return hit.target;
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const target = this.take((req.url ?? '').split('?')[0] ?? '');
    if (!target) return refuse(socket, 404, 'stream not found\n');
    const upgrade = (req.headers.upgrade ?? '').toLowerCase();
    if (upgrade === 'websocket') return this.websocket({ req, socket, head, target });
    if (upgrade.startsWith('spdy/3')) return this.spdy({ req, socket, head, target });
    refuse(socket, 400, `unsupported upgrade ${JSON.stringify(req.headers.upgrade ?? '')}\n`);
  }

  private websocket(o: { req: IncomingMessage; socket: Duplex; head: Buffer; target: StreamTarget }): void {
    const offered = listHeader(o.req.headers['sec-websocket-protocol']);
    const forwarding = o.target.kind === 'portforward';
    const supported = forwarding ? PORT_FORWARD_WS_PROTOCOLS : COMMAND_PROTOCOLS;
    // A port-forward WebSocket without a subprotocol is the binary channel protocol (as kubelet's).
    const protocol =
      supported.find((p) => offered.includes(p)) ?? (forwarding && offered.length === 0 ? '' : undefined);
    if (protocol === undefined) {
      return refuse(o.socket, 400, `none of the requested subprotocols is supported: ${offered.join(', ')}\n`);
    }
    const ports = o.target.kind === 'portforward' ? (o.target.target.ports ?? []) : [];
    if (forwarding && protocol !== TUNNELED_PORT_FORWARD) {
      const bad = invalidPorts(ports);
      if (bad) return refuse(o.socket, 400, `${bad}\n`);
    }
    // `ws` refuses a subprotocol that is not an RFC 7230 token, and kubectl's port-forward
    // tunnel is `SPDY/3.1+portforward.k8s.io` (a '/'): the choice is made above and answered
    // through the 'headers' event, so `ws` never parses the offer.
    delete o.req.headers['sec-websocket-protocol'];
    if (protocol) this.chosen.set(o.req, protocol);
    this.wss.handleUpgrade(o.req, o.socket, o.head, (ws) => {
      ws.on('error', () => ws.terminate());
      if (o.target.kind === 'portforward' && protocol === TUNNELED_PORT_FORWARD) {
        const target = o.target.target;
        let serve: (s: SpdyStream) => void = () => undefined;
        const conn = new SpdyConnection(webSocketTransport(ws), (s) => serve(s));
        serve = portForwardOverSpdy(conn, target);
      } else if (o.target.kind === 'portforward') {
        portForwardOverWebSocket(ws, {
          target: o.target.target,
          ports,
          base64: protocol === BASE64_CHANNEL_PORT_FORWARD,
        });
      } else {
        commandOverWebSocket(ws, { protocol, request: o.target.request });
      }
    });
  }

  private spdy(o: { req: IncomingMessage; socket: Duplex; head: Buffer; target: StreamTarget }): void {
    const offered = listHeader(o.req.headers['x-stream-protocol-version']);
    const supported = o.target.kind === 'portforward' ? [PORT_FORWARD_PROTOCOL] : SPDY_COMMAND_PROTOCOLS;
    const protocol = supported.find((p) => offered.includes(p));
    if (!protocol) {
      return refuse(
        o.socket,
        403,
        `unable to upgrade: unable to negotiate protocol: client supports ${JSON.stringify(offered)}, server supports ${JSON.stringify(supported)}\n`,
      );
    }
    o.socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`,
    );
    if (o.head.length) o.socket.unshift(o.head);
    let serve: (s: SpdyStream) => void = () => undefined;
    const conn = new SpdyConnection(socketTransport(o.socket), (s) => serve(s));
    serve =
      o.target.kind === 'portforward'
        ? portForwardOverSpdy(conn, o.target.target)
        : commandOverSpdy(conn, { protocol, request: o.target.request });
    this.logger.v(4).info('spdy stream upgraded', { kind: o.target.kind, protocol });
  }
}
