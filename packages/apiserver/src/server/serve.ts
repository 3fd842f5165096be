import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { hostname } from 'node:os';
import type { AddressInfo } from 'node:net';
import { statusFailure } from '@svc/api';
import { acceptUpgrades, ensureServingCert, type ServingCert } from '@svc/component-base';
import type { ApiServerOptions } from '../options.js';

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

export interface Listener {
  /** The port bound (`--secure-port`, or the one the system chose for 0). */
  port: number;
  /** A host this machine reaches the server at (the bind address, or 127.0.0.1 for a wildcard). */
  host: string;
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

  constructor(private readonly opts: Pick<ApiServerOptions, 'advertiseAddress' | 'bindAddress'>) {}

  bound(port: number): void {
    this.port = port;
  }

  /** `host:port` for `APIVersions.serverAddressByClientCIDRs`: `--advertise-address`, else the address the client reached. */
  serverAddress(localAddress: string | undefined): string {
    const local = (localAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
    return `${this.opts.advertiseAddress ?? local}:${this.boundPort()}`;
  }

  /** `https://<advertise address or this host>:<port>` (issuer discovery documents). */
  externalUrl(): string {
    return `https://${this.opts.advertiseAddress ?? localHost(this.opts.bindAddress)}:${this.boundPort()}`;
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
 * Binds the HTTPS listener with `handler` (client certificates requested, not required:
 * authentication decides).
 */
export async function listen(
  opts: ApiServerOptions,
  o: { tls: ServingCert; handler: RequestListener },
): Promise<Listener> {
  const { tls } = o;
  const server: Server = createServer(
    { cert: tls.certPem, key: tls.keyPem, requestCert: true, rejectUnauthorized: false },
    o.handler,
  );
  server.keepAliveTimeout = 65_000;
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
    server.listen(opts.securePort, opts.bindAddress, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    host: localHost(opts.bindAddress),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        upgraded.destroyAll();
        server.closeIdleConnections();
        const idle = setInterval(() => server.closeIdleConnections(), 50);
        server.once('close', () => clearInterval(idle));
      }),
  };
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
