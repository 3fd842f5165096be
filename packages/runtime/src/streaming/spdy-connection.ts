import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import { constants as zc, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';

/** SPDY/3's zlib dictionary for header blocks (a protocol constant), taken from spdy-transport. */
const SPDY3_DICTIONARY: Buffer = (
  createRequire(import.meta.url)('spdy-transport/lib/spdy-transport/protocol/spdy/dictionary.js') as Record<
    string,
    Buffer
  >
)['3']!;

const SYN_STREAM = 1;
const SYN_REPLY = 2;
const RST_STREAM = 3;
const PING = 6;
const GOAWAY = 7;
const FLAG_FIN = 0x01;
/** Largest DATA frame written (SPDY's length field allows 16 MiB; Go's spdystream reads any). */
const MAX_DATA = 64 * 1024;

/**
 * One stream of a `SpdyConnection` opened by the peer: its headers (names lower-case, as
 * SPDY sends them), its data as a readable side, and a writable side.
 */
export class SpdyStream {
  private readonly listeners: { data: Array<(b: Buffer) => void>; end: Array<() => void> } = { data: [], end: [] };
  private remoteEnded = false;
  private localEnded = false;

  constructor(
    readonly id: number,
    readonly headers: Readonly<Record<string, string>>,
    private readonly conn: SpdyConnection,
  ) {}

  onData(fn: (b: Buffer) => void): void {
    this.listeners.data.push(fn);
  }

  /** Called once the peer half-closed (FIN) or reset the stream, or the connection ended. */
  onEnd(fn: () => void): void {
    if (this.remoteEnded) fn();
    else this.listeners.end.push(fn);
  }

  /** Writes `data` in DATA frames; false when the transport asks the writer to wait for `drain`. */
  write(data: Buffer): boolean {
    if (this.localEnded) return true;
    return this.conn.writeData(this.id, data, false);
  }

  /** Half-closes: an empty DATA frame with FIN. */
  end(): void {
    if (this.localEnded) return;
    this.localEnded = true;
    this.conn.writeData(this.id, Buffer.alloc(0), true);
  }

  /** @internal */
  deliver(b: Buffer): void {
    for (const fn of this.listeners.data) fn(b);
  }

  /** @internal */
  remoteEnd(): void {
    if (this.remoteEnded) return;
    this.remoteEnded = true;
    for (const fn of this.listeners.end.splice(0)) fn();
  }
}

/**
 * The server side of a SPDY/3 connection as Kubernetes' clients speak it (moby/spdystream):
 * streams are opened by the client with SYN_STREAM and answered with an empty SYN_REPLY;
 * DATA in both directions, FIN half-closes, PING is echoed. There is no flow control (the
 * Go side neither sends nor honours WINDOW_UPDATE; SETTINGS and WINDOW_UPDATE are skipped).
 * Header blocks go through one zlib context per direction, in frame order.
 */
export class SpdyConnection {
  private buffered: Buffer = Buffer.alloc(0);
  private readonly streams = new Map<number, SpdyStream>();
  private readonly inflater: Inflate = createInflate({ dictionary: SPDY3_DICTIONARY });
  private readonly deflater: Deflate = createDeflate({ dictionary: SPDY3_DICTIONARY });
  /** Frames wait here while an earlier one is still being (de)compressed, so order is kept both ways. */
  private inbound: Promise<void> = Promise.resolve();
  private outbound: Promise<void> = Promise.resolve();
  private outboundPending = 0;
  private closed = false;
  private readonly onStream: (s: SpdyStream) => void;

  constructor(
    readonly transport: Duplex,
    onStream: (s: SpdyStream) => void,
  ) {
    this.onStream = onStream;
    transport.on('data', (chunk: Buffer) => this.receive(chunk));
    const finish = (): void => this.close();
    transport.once('end', finish);
    transport.once('close', finish);
    transport.once('error', finish);
  }

  /** Ends every stream and the transport. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.streams.values()) s.remoteEnd();
    this.streams.clear();
    this.inflater.close();
    this.deflater.close();
    this.transport.end();
  }

  /** Closes once every frame queued so far has been handed to the transport. */
  closeWhenWritten(): void {
    void this.outbound.then(() => this.close());
  }

  /** @internal Writes DATA frames for stream `id` in one transport write (after any frame still being compressed). */
  writeData(id: number, data: Buffer, fin: boolean): boolean {
    const parts: Buffer[] = [];
    let off = 0;
    do {
      const part = data.subarray(off, off + MAX_DATA);
      off += part.length;
      const last = off >= data.length;
      const head = Buffer.alloc(8);
      head.writeUInt32BE(id & 0x7fffffff, 0);
      head.writeUInt32BE(((fin && last ? FLAG_FIN : 0) << 24) | part.length, 4);
      parts.push(head, part);
    } while (off < data.length);
    return this.send(Buffer.concat(parts));
  }

  /** Resets stream `id` (RST_STREAM, status CANCEL). */
  reset(id: number): void {
    const body = Buffer.alloc(8);
    body.writeUInt32BE(id & 0x7fffffff, 0);
    body.writeUInt32BE(5, 4);
    this.send(control(RST_STREAM, 0, body));
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

  private sendCompressed(build: (block: Buffer) => Buffer, headers: Buffer): void {
    this.outboundPending++;
    this.outbound = this.outbound.then(async () => {
      const compressed = await zlibFlush(this.deflater, headers).catch(() => undefined);
      this.outboundPending--;
      if (compressed && !this.closed && !this.transport.destroyed) this.transport.write(build(compressed));
    });
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
    const flags = frame[4]!;
    const body = frame.subarray(8);
    if ((frame[0]! & 0x80) === 0) {
      const s = this.streams.get(frame.readUInt32BE(0) & 0x7fffffff);
      if (!s) return;
      if (body.length) s.deliver(body);
      if (flags & FLAG_FIN) s.remoteEnd();
      return;
    }
    const type = frame.readUInt16BE(2);
    switch (type) {
      case SYN_STREAM: {
        const id = body.readUInt32BE(0) & 0x7fffffff;
        const headers = decodeHeaders(await zlibFlush(this.inflater, body.subarray(10)));
        const s = new SpdyStream(id, headers, this);
        this.streams.set(id, s);
        const reply = Buffer.alloc(4);
        reply.writeUInt32BE(id, 0);
        this.sendCompressed((block) => control(SYN_REPLY, 0, Buffer.concat([reply, block])), encodeHeaders({}));
        this.onStream(s);
        if (flags & FLAG_FIN) s.remoteEnd();
        return;
      }
      case SYN_REPLY:
      case 8 /* HEADERS */:
        // Keeps the inflater in step with the peer's deflater.
        await zlibFlush(this.inflater, body.subarray(4));
        return;
      case RST_STREAM: {
        const id = body.readUInt32BE(0) & 0x7fffffff;
        this.streams.get(id)?.remoteEnd();
        this.streams.delete(id);
        return;
      }
      case PING:
        this.send(control(PING, 0, body.subarray(0, 4)));
        return;
      case GOAWAY:
        this.close();
        return;
      default:
        return; // SETTINGS, WINDOW_UPDATE, NOOP, CREDENTIAL
    }
  }
}

function control(type: number, flags: number, body: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x8003, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt32BE((flags << 24) | body.length, 4);
  return Buffer.concat([head, body]);
}

/** Pushes `input` through a zlib stream and answers what it produced up to a sync flush. */
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

/** A SPDY/3 name/value block: 32-bit count, then length-prefixed names and values (several values NUL-joined). */
function decodeHeaders(block: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let off = 4;
  const count = block.length >= 4 ? block.readUInt32BE(0) : 0;
  for (let i = 0; i < count && off + 4 <= block.length; i++) {
    const nameLen = block.readUInt32BE(off);
    const name = block.subarray(off + 4, off + 4 + nameLen).toString('latin1');
    off += 4 + nameLen;
    const valueLen = block.readUInt32BE(off);
    out[name.toLowerCase()] = block.subarray(off + 4, off + 4 + valueLen).toString('latin1');
    off += 4 + valueLen;
  }
  return out;
}

function encodeHeaders(h: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  const count = Buffer.alloc(4);
  count.writeUInt32BE(Object.keys(h).length, 0);
  parts.push(count);
  for (const [k, v] of Object.entries(h)) {
    for (const s of [k, v]) {
      const b = Buffer.from(s, 'latin1');
      const len = Buffer.alloc(4);
      len.writeUInt32BE(b.length, 0);
      parts.push(len, b);
    }
  }
  return Buffer.concat(parts);
}
