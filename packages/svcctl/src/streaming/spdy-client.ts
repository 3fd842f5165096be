/**
 * The client side of SPDY/3 as Kubernetes' port-forward speaks it (moby/spdystream): the
 * client opens streams with SYN_STREAM (odd ids) carrying its headers, the server answers
 * SYN_REPLY; DATA both ways, FIN half-closes, RST_STREAM resets, PING is echoed. No flow
 * control (neither side sends WINDOW_UPDATE). Header blocks go through one zlib context per
 * direction with SPDY/3's dictionary, in frame order.
 */
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import { constants as zc, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';

/** SPDY/3's zlib dictionary for header blocks (a protocol constant), as spdy-transport ships it. */
function dictionary(): Buffer {
  const mod = createRequire(import.meta.url)('spdy-transport/lib/spdy-transport/protocol/spdy/dictionary.js') as Record<
    string,
    Buffer
  >;
  const d = mod['3'];
  if (!d) throw new Error('SPDY/3 dictionary missing');
  return d;
}

const SYN_STREAM = 1;
const SYN_REPLY = 2;
const RST_STREAM = 3;
const PING = 6;
const GOAWAY = 7;
const HEADERS = 8;
const FLAG_FIN = 0x01;
const MAX_DATA = 64 * 1024;

function control(type: number, o: { flags: number; body: Buffer }): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x8003, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt32BE(((o.flags << 24) | o.body.length) >>> 0, 4);
  return Buffer.concat([head, o.body]);
}

function encodeHeaders(h: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  const u32 = (n: number): Buffer => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n, 0);
    return b;
  };
  parts.push(u32(Object.keys(h).length));
  for (const [k, v] of Object.entries(h)) {
    for (const s of [k, v]) {
      const b = Buffer.from(s, 'latin1');
      parts.push(u32(b.length), b);
    }
  }
  return Buffer.concat(parts);
}

/** Pushes `input` through a zlib stream and answers what came out up to a sync flush. */
function zlibFlush(z: Inflate | Deflate, input: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    const onData = (b: Buffer): void => {
      out.push(b);
    };
    const onError = (e: Error): void => {
      z.off('data', onData);
      reject(e);
    };
    z.on('data', onData);
    z.once('error', onError);
    z.write(input);
    z.flush(zc.Z_SYNC_FLUSH, () => {
      z.off('data', onData);
      z.off('error', onError);
      resolve(Buffer.concat(out));
    });
  });
}

/** One stream the client opened: data from the server as events, a writable side. */
export class SpdyClientStream {
  private readonly handlers: { data: Array<(b: Buffer) => void>; end: Array<() => void> } = { data: [], end: [] };
  private remoteEnded = false;
  private localEnded = false;

  constructor(
    readonly id: number,
    private readonly conn: SpdyClient,
  ) {}

  onData(fn: (b: Buffer) => void): void {
    this.handlers.data.push(fn);
  }

  /** Once the server half-closed or reset the stream, or the connection ended. */
  onEnd(fn: () => void): void {
    if (this.remoteEnded) fn();
    else this.handlers.end.push(fn);
  }

  /** false when the transport wants the writer to wait for its `drain`. */
  write(b: Buffer): boolean {
    if (this.localEnded) return true;
    return this.conn.writeData(this.id, { data: b, fin: false });
  }

  end(): void {
    if (this.localEnded) return;
    this.localEnded = true;
    this.conn.writeData(this.id, { data: Buffer.alloc(0), fin: true });
  }

  reset(): void {
    this.localEnded = true;
    this.conn.reset(this.id);
  }

  /** @internal */
  deliver(b: Buffer): void {
    for (const fn of this.handlers.data) fn(b);
  }

  /** @internal */
  remoteEnd(): void {
    if (this.remoteEnded) return;
    this.remoteEnded = true;
    for (const fn of this.handlers.end.splice(0)) fn();
  }
}

export class SpdyClient {
  private buffered: Buffer = Buffer.alloc(0);
  private readonly streams = new Map<number, SpdyClientStream>();
  private readonly inflater: Inflate;
  private readonly deflater: Deflate;
  private inbound: Promise<void> = Promise.resolve();
  private outbound: Promise<void> = Promise.resolve();
  private outboundPending = 0;
  private nextId = 1;
  private closed = false;
  private readonly closeHandlers: Array<() => void> = [];

  constructor(readonly transport: Duplex) {
    const dict = dictionary();
    this.inflater = createInflate({ dictionary: dict });
    this.deflater = createDeflate({ dictionary: dict });
    transport.on('data', (chunk: Buffer) => this.receive(chunk));
    const finish = (): void => this.close();
    transport.once('end', finish);
    transport.once('close', finish);
    transport.once('error', finish);
  }

  /** Called once the connection ended (either side). */
  onClose(fn: () => void): void {
    if (this.closed) fn();
    else this.closeHandlers.push(fn);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Opens a stream with `headers` (SYN_STREAM); data may be written at once. */
  open(headers: Record<string, string>): SpdyClientStream {
    const id = this.nextId;
    this.nextId += 2;
    const s = new SpdyClientStream(id, this);
    this.streams.set(id, s);
    const head = Buffer.alloc(10);
    head.writeUInt32BE(id, 0);
    head.writeUInt32BE(0, 4);
    this.outboundPending++;
    this.outbound = this.outbound.then(async () => {
      const block = await zlibFlush(this.deflater, encodeHeaders(headers)).catch(() => undefined);
      this.outboundPending--;
      if (block && !this.closed && !this.transport.destroyed)
        this.transport.write(control(SYN_STREAM, { flags: 0, body: Buffer.concat([head, block]) }));
    });
    return s;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.streams.values()) s.remoteEnd();
    this.streams.clear();
    this.inflater.close();
    this.deflater.close();
    this.transport.end();
    for (const fn of this.closeHandlers.splice(0)) fn();
  }

  /** @internal */
  writeData(id: number, o: { data: Buffer; fin: boolean }): boolean {
    const parts: Buffer[] = [];
    let off = 0;
    do {
      const part = o.data.subarray(off, off + MAX_DATA);
      off += part.length;
      const head = Buffer.alloc(8);
      head.writeUInt32BE(id & 0x7fffffff, 0);
      head.writeUInt32BE((((o.fin && off >= o.data.length ? FLAG_FIN : 0) << 24) | part.length) >>> 0, 4);
      parts.push(head, part);
    } while (off < o.data.length);
    return this.send(Buffer.concat(parts));
  }

  /** @internal RST_STREAM with status CANCEL. */
  reset(id: number): void {
    const body = Buffer.alloc(8);
    body.writeUInt32BE(id & 0x7fffffff, 0);
    body.writeUInt32BE(5, 4);
    this.send(control(RST_STREAM, { flags: 0, body }));
    this.streams.get(id)?.remoteEnd();
    this.streams.delete(id);
  }

  private send(frame: Buffer): boolean {
    if (this.closed || this.transport.destroyed) return true;
    if (this.outboundPending === 0) return this.transport.write(frame);
    this.outbound = this.outbound.then(() => {
      if (!this.closed && !this.transport.destroyed) this.transport.write(frame);
    });
    return true;
  }

  private receive(chunk: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    while (this.buffered.length >= 8) {
      const length = this.buffered.readUInt32BE(4) & 0xffffff;
      if (this.buffered.length < 8 + length) return;
      const frame = this.buffered.subarray(0, 8 + length);
      this.buffered = this.buffered.subarray(8 + length);
      this.inbound = this.inbound.then(() => this.handle(frame)).catch(() => this.close());
    }
  }

  private async handle(frame: Buffer): Promise<void> {
    if (this.closed) return;
    const flags = frame[4] ?? 0;
    const body = frame.subarray(8);
    if (((frame[0] ?? 0) & 0x80) === 0) {
      const s = this.streams.get(frame.readUInt32BE(0) & 0x7fffffff);
      if (!s) return;
      if (body.length) s.deliver(body);
      if (flags & FLAG_FIN) {
        s.remoteEnd();
      }
      return;
    }
    switch (frame.readUInt16BE(2)) {
      case SYN_REPLY:
      case HEADERS: {
        // Keeps the inflater in step with the server's deflater.
        await zlibFlush(this.inflater, body.subarray(4));
        const s = this.streams.get(body.readUInt32BE(0) & 0x7fffffff);
        if (s && flags & FLAG_FIN) s.remoteEnd();
        return;
      }
      case SYN_STREAM: {
        // The server opens no streams in port-forward: refuse it (after keeping zlib in step).
        await zlibFlush(this.inflater, body.subarray(10));
        this.reset(body.readUInt32BE(0) & 0x7fffffff);
        return;
      }
      case RST_STREAM: {
        const id = body.readUInt32BE(0) & 0x7fffffff;
        this.streams.get(id)?.remoteEnd();
        this.streams.delete(id);
        return;
      }
      case PING:
        this.send(control(PING, { flags: 0, body: body.subarray(0, 4) }));
        return;
      case GOAWAY:
        this.close();
        return;
      default:
        return;
    }
  }
}
