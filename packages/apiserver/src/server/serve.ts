import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { createSecureServer, type Http2Session } from 'node:http2';
import type { Duplex } from 'node:stream';
import { hostname } from 'node:os';
import type { AddressInfo, Server } from 'node:net';
import { statusFailure } from '@svc/api';
import {
  acceptUpgrades,
  addAcceptHandles,
  ensureServingCert,
  listenBacklog,
  type Logger,
  type ServingCert,
} from '@svc/component-base';
import type { ApiServerOptions } from '../options.js';
import type { EdgeListener } from './express-edge.js';
import { DEFAULT_HTTP2_MAX_STREAMS } from './serving-options.js';

export interface Listener {
  /** The port bound (`--secure-port`, or the one the system chose for 0). */
  port: number;
  /** A host this machine reaches the server at (the bind address, or 127.0.0.1 for a wildcard). */
  host: string;
  /**
   * Adds the extra listening handles (see addAcceptHandles) in the background, once; not in a
   * worker of `--workers`, whose connections the supervisor accepts and hands out. Called once
   * the server is started: the helper process it spawns would otherwise take CPU from the
   * start-up (~50 ms of a restart's ~0.8 s on 2 cores), when no crowd of clients is waiting yet.
   */
  addAcceptHandles(): void;
  /** Stops accepting; resolves when open connections have finished (idle ones are closed). */
  close(): Promise<void>;
}

/** The serving certificate: `--tls-cert-file`/`--tls-private-key-file`, else a self-signed one in `--cert-dir`. */
export async function servingCertificate(opts: ApiServerOptions): Promise<ServingCert> {
  if (opts.tlsCertFile && opts.tlsPrivateKeyFile) {
    const certPem = readFileSync(opts.tlsCertFile, 'utf8');
    return { certPem, keyPem: readFileSync(opts.tlsPrivateKeyFile, 'utf8'), caPem: certPem };
  }
  const hosts = ['localhost', '127.0.0.1', hostname()];
  if (opts.advertiseAddress) hosts.push(opts.advertiseAddress);
  if (opts.bindAddress !== '0.0.0.0' && opts.bindAddress !== '::') hosts.push(opts.bindAddress);
  return ensureServingCert(opts.certDir, hosts);
}

/**
 * Where clients reach this server. The port is known once the listener is bound (`--secure-port`
 * may be 0); what is built before asks for it only when serving a request.
 */
export class ServingAddress {
  private port?: number;

  constructor(private readonly opts: Pick<ApiServerOptions, 'advertiseAddress' | 'bindAddress' | 'serving'>) {}

  bound(port: number): void {
    this.port = port;
  }

  /** `host:port` for `APIVersions.serverAddressByClientCIDRs`: `--advertise-address`, else the address the client reached. */
  serverAddress(localAddress: string | undefined): string {
    const local = (localAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
    return `${this.opts.advertiseAddress ?? local}:${this.boundPort()}`;
  }

  /**
   * `https://<external host>` (issuer discovery documents): `--external-hostname` (with the
   * secure port unless it names one), else the advertise address or this host and the port.
   */
  externalUrl(): string {
    const external = this.opts.serving?.externalHostname;
    if (external && /^(\[[^\]]*\]|[^:]*):\d+$/.test(external)) return `https://${external}`;
    const host = external ?? this.opts.advertiseAddress ?? localHost(this.opts.bindAddress);
    return `https://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${this.boundPort()}`;
  }

  private boundPort(): number {
    if (this.port === undefined) throw new Error('the server is not listening yet');
    return this.port;
  }
}

/** A host this machine reaches a listener bound to `bindAddress` at (127.0.0.1 for a wildcard). */
function localHost(bindAddress: string): string {
  return bindAddress === '0.0.0.0' || bindAddress === '::' ? '127.0.0.1' : bindAddress;
}

/**
 * Listening handles added to the one bound, so that a turn of the event loop accepts up to this
 * many more connections (see addAcceptHandles): a saturated server still takes new clients.
 */
const EXTRA_ACCEPT_HANDLES = 15;

/** The largest request body Kubernetes expects in one frame (99% of objects), its HTTP/2 frame and stream window. */
const RESOURCE_BODY_99_PERCENTILE = 256 * 1024;

/**
 * Binds the HTTPS listener with `handler` (client certificates requested, not required:
 * authentication decides). ALPN offers `h2` and `http/1.1` (`http/1.1` only with
 * `--disable-http2-serving`); HTTP/2 connections get Kubernetes' settings: at most
 * `--http2-max-streams-per-connection` concurrent streams (100 when 0), 256 KiB frames and
 * per-stream window, a connection window of that times the streams.
 */
export async function listen(
  opts: ApiServerOptions,
  o: { tls: ServingCert; handler: EdgeListener; log: Logger },
): Promise<Listener> {
  const { tls } = o;
  const secure = { cert: tls.certPem, key: tls.keyPem, requestCert: true, rejectUnauthorized: false };
  const streams = opts.serving.http2MaxStreamsPerConnection || DEFAULT_HTTP2_MAX_STREAMS;
  const server = opts.serving.http2
    ? createSecureServer(
        {
          ...secure,
          allowHTTP1: true,
          settings: {
            maxConcurrentStreams: streams,
            maxFrameSize: RESOURCE_BODY_99_PERCENTILE,
            initialWindowSize: RESOURCE_BODY_99_PERCENTILE,
          },
        },
        o.handler,
      )
    : createServer(secure, o.handler);
  const sessions = new Set<Http2Session>();
  server.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    session.once('connect', () => session.setLocalWindowSize(RESOURCE_BODY_99_PERCENTILE * streams));
  });
  (server as { keepAliveTimeout?: number }).keepAliveTimeout = 65_000;
  server.on('clientError', answerUnparsable);
  // WebSocket and SPDY upgrades (exec, attach, port-forward; HTTP/1.1 only) go through the same handler.
  const upgraded = acceptUpgrades(server, o.handler);
  // CONNECT is no verb of the API (Node would reset the connection without a listener).
  server.on('connect', (_req: IncomingMessage, socket: Duplex) =>
    endSocketWithStatus(socket, [
      405,
      'MethodNotAllowed',
      'the server does not allow this method on the requested resource',
    ]),
  );
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) =>
    endWithStatus(res, [417, 'ExpectationFailed', 'the server cannot meet the requirements of the Expect header']),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: opts.securePort, host: opts.bindAddress, backlog: listenBacklog() }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  let extras: Promise<Server[]> | undefined;
  const closeIdle = (): void => {
    // Idle HTTP/1.1 keep-alive connections (Node's HTTP/2 server has this too when it allows HTTP/1.1).
    (server as { closeIdleConnections?: () => void }).closeIdleConnections?.();
    // HTTP/2 sessions end gracefully: a GOAWAY, open streams finish, then the session closes.
    for (const session of sessions) session.close();
  };
  return {
    port: (server.address() as AddressInfo).port,
    host: localHost(opts.bindAddress),
    addAcceptHandles: () => {
      if (cluster.isWorker || extras || !server.listening) return;
      extras = addAcceptHandles(server, EXTRA_ACCEPT_HANDLES, listenBacklog()).catch((err: unknown) => {
        // Closed meanwhile (a server stopped as soon as it started): nothing to say.
        if (server.listening)
          o.log.warn('serving with one listening handle: no more could be added', { error: String(err) });
        return [];
      });
    },
    close: async () => {
      const closed = [closeServer(server)];
      upgraded.destroyAll();
      closeIdle();
      const idle = setInterval(closeIdle, 50);
      closed.push(...((await extras) ?? []).map(closeServer));
      await Promise.all(closed);
      clearInterval(idle);
    },
  };
}

/** Stops accepting; resolves once the connections it accepted have closed. */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * What Node's HTTP parser refuses never reaches the chain; it still gets a `Status` (JSON) and
 * the connection closes: headers over the limit → 431, a method the parser does not know → 405
 * (Kubernetes answers unknown verbs so), anything else malformed → 400.
 */
function answerUnparsable(err: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const failure: Failure =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'RequestHeaderFieldsTooLarge', 'Request Header Fields Too Large']
      : err.code === 'HPE_INVALID_METHOD'
        ? [405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource']
        : [400, 'BadRequest', 'the server could not understand the request'];
  endSocketWithStatus(socket, failure);
}

type Failure = [code: number, reason: string, message: string];

/** A failure `Status` with any code (431 and 417 have no reason of Kubernetes' own). */
function statusJson([code, reason, message]: Failure): string {
  return JSON.stringify({ ...statusFailure('BadRequest', message), reason, code });
}

/** Writes a whole HTTP answer carrying a failure `Status` on a raw socket and closes it. */
function endSocketWithStatus(socket: Duplex, f: Failure): void {
  const body = statusJson(f);
  const head = `HTTP/1.1 ${f[0]} ${STATUS_CODES[f[0]] ?? ''}\r\nContent-Type: application/json\r\n`;
  socket.end(`${head}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** Answers a request the chain never saw with a failure `Status`. */
function endWithStatus(res: ServerResponse, f: Failure): void {
  const body = statusJson(f);
  res.writeHead(f[0], { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}
