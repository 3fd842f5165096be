/**
 * Port-forward's connection. A WebSocket client just big enough for kubectl 1.32's tunnel:
 * it offers the subprotocol `SPDY/3.1+portforward.k8s.io`, whose `/` the `ws` library refuses
 * as a token character, so the upgrade is made here. Binary messages carry a byte stream both ways
 * (client frames masked, as RFC 6455 wants); ping is answered, close ends the stream.
 */
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:https';
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { CliError } from '../errors.js';
import type { GlobalFlags } from '../flags.js';
import type { Session } from '../session.js';
import { streamAuth, upgradeError } from './ws-dial.js';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const OP_CONTINUATION = 0;
const OP_TEXT = 1;
const OP_BINARY = 2;
const OP_CLOSE = 8;
const OP_PING = 9;

function frame(o: { opcode: number; payload: Buffer }): Buffer {
  const len = o.payload.length;
  const head: number[] = [0x80 | o.opcode];
  if (len < 126) head.push(0x80 | len);
  else if (len < 65536) head.push(0x80 | 126, len >> 8, len & 0xff);
  else {
    head.push(0x80 | 127, 0, 0, 0, 0);
    head.push((len >>> 24) & 0xff, (len >>> 16) & 0xff, (len >>> 8) & 0xff, len & 0xff);
  }
  const mask = randomBytes(4);
  const body = Buffer.allocUnsafe(len);
  for (let i = 0; i < len; i++) body[i] = (o.payload[i] ?? 0) ^ (mask[i & 3] ?? 0);
  return Buffer.concat([Buffer.from(head), mask, body]);
}

/** The WebSocket connection as a byte stream (binary messages' payloads, in order). */
class Tunnel extends Duplex {
  private buffered: Buffer = Buffer.alloc(0);
  private closeSent = false;

  constructor(private readonly socket: Socket) {
    super();
    socket.on('data', (b: Buffer) => this.receive(b));
    socket.on('end', () => this.finish());
    socket.on('close', () => this.finish());
    socket.on('error', (e) => this.destroy(e));
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    if (this.socket.write(frame({ opcode: OP_BINARY, payload: chunk }))) cb();
    else this.socket.once('drain', () => cb());
  }

  override _final(cb: (e?: Error | null) => void): void {
    this.close();
    cb();
  }

  override _destroy(e: Error | null, cb: (e?: Error | null) => void): void {
    this.socket.destroy();
    cb(e);
  }

  /** Sends a normal close and ends the connection. */
  close(): void {
    if (this.closeSent) return;
    this.closeSent = true;
    const code = Buffer.alloc(2);
    code.writeUInt16BE(1000, 0);
    if (!this.socket.destroyed) this.socket.end(frame({ opcode: OP_CLOSE, payload: code }));
  }

  private finish(): void {
    this.push(null);
  }

  private receive(b: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, b]) : b;
    for (;;) {
      const buf = this.buffered;
      if (buf.length < 2) return;
      const opcode = (buf[0] ?? 0) & 0x0f;
      const masked = ((buf[1] ?? 0) & 0x80) !== 0;
      let len = (buf[1] ?? 0) & 0x7f;
      let off = 2;
      if (len === 126) {
        if (buf.length < 4) return;
        len = buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (buf.length < 10) return;
        len = Number(buf.readBigUInt64BE(2));
        off = 10;
      }
      const maskKey = masked ? buf.subarray(off, off + 4) : undefined;
      if (masked) off += 4;
      if (buf.length < off + len) return;
      let payload = buf.subarray(off, off + len);
      this.buffered = buf.subarray(off + len);
      if (maskKey) payload = Buffer.from(payload.map((x, i) => x ^ (maskKey[i & 3] ?? 0)));
      if (opcode === OP_BINARY || opcode === OP_CONTINUATION || opcode === OP_TEXT) {
        if (payload.length && !this.push(payload)) this.socket.pause();
      } else if (opcode === OP_PING) {
        this.socket.write(frame({ opcode: 10, payload }));
      } else if (opcode === OP_CLOSE) {
        this.close();
        this.push(null);
        return;
      }
    }
  }
}

/** An HTTP upgrade of `path`; resolves with the connection once the server answered 101, else rejects with its Status. */
async function upgrade(
  session: Session,
  o: {
    path: string;
    method: string;
    headers: Record<string, string>;
    globals: GlobalFlags;
    signal?: AbortSignal;
    check: (res: IncomingMessage) => boolean;
  },
): Promise<{ socket: Socket; head: Buffer }> {
  const auth = await streamAuth(session, o.globals);
  const url = new URL(o.path, session.config.server);
  const c = session.config;
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: o.method,
      headers: { ...auth.headers, ...o.headers },
      ca: c.caPem,
      cert: auth.cert,
      key: auth.key,
      rejectUnauthorized: !c.insecureSkipTlsVerify,
      ...(c.tlsServerName ? { servername: c.tlsServerName } : {}),
      agent: false,
      signal: o.signal,
    });
    req.on('error', (e) => reject(o.signal?.aborted ? new CliError('interrupted', 130) : e));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (b: Buffer) => chunks.push(b));
      res.on('end', () =>
        reject(
          new UpgradeFailure(
            upgradeError({
              statusCode: res.statusCode,
              statusMessage: res.statusMessage,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          ),
        ),
      );
    });
    req.on('upgrade', (res, socket: Socket, head: Buffer) => {
      if (!o.check(res)) {
        socket.destroy();
        reject(
          new UpgradeFailure(new CliError('unable to upgrade connection: the server did not agree to the protocol')),
        );
        return;
      }
      resolve({ socket, head });
    });
    req.end();
  });
}

/** The server answered something other than an agreed 101 (client-go's UpgradeFailureError). */
class UpgradeFailure extends Error {
  constructor(readonly reason: unknown) {
    super('upgrade failure');
  }
}

export interface PortForwardTransport {
  /** The byte stream SPDY frames travel on. */
  stream: Duplex;
  /** How it was reached: WebSocket tunnel or a plain SPDY upgrade. */
  kind: 'websocket' | 'spdy';
  close(): void;
}

/**
 * The connection port-forward's SPDY runs on, as kubectl 1.32 dials it: a WebSocket offering
 * `SPDY/3.1+portforward.k8s.io` (SPDY tunnelled in binary messages), falling back to a SPDY/3.1
 * upgrade (POST, `X-Stream-Protocol-Version: portforward.k8s.io`) when the upgrade fails.
 */
export async function openPortForwardTransport(
  session: Session,
  o: { path: string; protocol: string; spdyProtocol: string; globals: GlobalFlags; signal?: AbortSignal },
): Promise<PortForwardTransport> {
  const key = randomBytes(16).toString('base64');
  try {
    const { socket, head } = await upgrade(session, {
      path: o.path,
      method: 'GET',
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': key,
        'Sec-WebSocket-Protocol': o.protocol,
      },
      globals: o.globals,
      signal: o.signal,
      check: (res) =>
        res.headers['sec-websocket-accept'] ===
          createHash('sha1')
            .update(key + GUID)
            .digest('base64') && res.headers['sec-websocket-protocol'] === o.protocol,
    });
    const tunnel = new Tunnel(socket);
    if (head.length) socket.unshift(head);
    return { stream: tunnel, kind: 'websocket', close: () => tunnel.close() };
  } catch (e) {
    if (!(e instanceof UpgradeFailure)) throw e;
  }
  try {
    const { socket, head } = await upgrade(session, {
      path: o.path,
      method: 'POST',
      headers: { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': o.spdyProtocol },
      globals: o.globals,
      signal: o.signal,
      check: (res) => String(res.headers['x-stream-protocol-version'] ?? '') === o.spdyProtocol,
    });
    if (head.length) socket.unshift(head);
    return { stream: socket, kind: 'spdy', close: () => socket.end() };
  } catch (e) {
    throw e instanceof UpgradeFailure ? e.reason : e;
  }
}
