import { createRequire } from 'node:module';
import { constants as zc, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';
import type { FrameTransport } from './frame-transport.js';

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
/** Every SPDY frame starts with 8 bytes: a DATA frame's stream id, flags and length. */
export const FRAME_HEADER_BYTES = 8;
/** Largest DATA frame written (SPDY's length field allows 16 MiB; Go's spdystream reads any). */
const MAX_DATA = 64 * 1024;

/** Fills in the 8-byte DATA frame header at the start of `frame` for a payload of `length` bytes. */
function dataHeader(o: { frame: Buffer; id: number; fin: boolean; length: number }): void {
  o.frame.writeUInt32BE(o.id & 0x7fffffff, 0);
  o.frame.writeUInt32BE(((o.fin ? FLAG_FIN : 0) << 24) | o.length, 4);
}

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

  /** Data as it arrives: a DATA frame may come in several pieces. */
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
    return this.conn.writeData({ id: this.id, data, fin: false });
  }

  /**
   * Writes one DATA frame without copying: `frame` holds `FRAME_HEADER_BYTES` bytes of room
   * (filled in here) followed by at most 16 MiB of data. False as for `write`; `written` is
   * called once the frame has left, when its memory may be reused (never if the connection closed first).
   */
  writeFrame(frame: Buffer, written?: () => void): boolean {
    if (this.localEnded) return true;
    dataHeader({ frame, id: this.id, fin: false, length: frame.length - FRAME_HEADER_BYTES });
    return this.conn.send([frame], written);
  }

  /** Half-closes: an empty DATA frame with FIN. */
  end(): void {
    if (this.localEnded) return;
    this.localEnded = true;
    this.conn.writeData({ id: this.id, data: Buffer.alloc(0), fin: true });
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

/** What the reader is in the middle of: a frame header, a DATA frame's payload, or a control frame's body. */
type ReadState =
  | { kind: 'header' }
  | { kind: 'data'; id: number; fin: boolean; left: number }
  | { kind: 'control'; type: number; flags: number; length: number; parts: Buffer[]; have: number };

/**
 * The server side of a SPDY/3 connection as Kubernetes' clients speak it (moby/spdystream):
 * streams are opened by the client with SYN_STREAM and answered with an empty SYN_REPLY;
 * DATA in both directions, FIN half-closes, PING is echoed. There is no flow control (the
 * Go side neither sends nor honours WINDOW_UPDATE; SETTINGS and WINDOW_UPDATE are skipped).
 * Header blocks go through one zlib context per direction, in frame order.
 *
 * Frames are parsed in place: a DATA frame's payload is handed to its stream as the pieces
 * arrive (views of the transport's chunks, never copied), only frame headers and control
 * frames that span chunks are gathered. Work waits in a queue only behind a header block
 * still being inflated, so the order of frames is kept.
 */
export class SpdyConnection {
  private readonly streams = new Map<number, SpdyStream>();
  private readonly inflater: Inflate = createInflate({ dictionary: SPDY3_DICTIONARY });
  private readonly deflater: Deflate = createDeflate({ dictionary: SPDY3_DICTIONARY });
  private state: ReadState = { kind: 'header' };
  /** A frame header split across chunks. */
  private readonly head = Buffer.alloc(FRAME_HEADER_BYTES);
  private headHave = 0;
  /** Inbound work waiting behind an asynchronous step (inflating a header block). */
  private readonly queue: Array<() => void | Promise<void>> = [];
  private busy = false;
  /** Outbound frames wait here while an earlier one is still being compressed, so order is kept. */
  private outbound: Promise<void> = Promise.resolve();
  private outboundPending = 0;
  private closed = false;
  private readonly closeListeners: Array<() => void> = [];
  private readonly onStream: (s: SpdyStream) => void;

  constructor(
    readonly transport: FrameTransport,
    onStream: (s: SpdyStream) => void,
  ) {
    this.onStream = onStream;
    transport.start({ data: (chunk) => this.receive(chunk), end: () => this.close() });
  }

  /** Called once when the connection ends, from either side. */
  onClose(fn: () => void): void {
    if (this.closed) fn();
    else this.closeListeners.push(fn);
  }

  /** Ends every stream and the transport. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    for (const s of this.streams.values()) s.remoteEnd();
    this.streams.clear();
    this.inflater.close();
    this.deflater.close();
    this.transport.end();
    for (const fn of this.closeListeners.splice(0)) fn();
  }

  /** Closes once every frame queued so far has been handed to the transport. */
  closeWhenWritten(): void {
    void this.outbound.then(() => this.close());
  }

  /** @internal Writes DATA frames for stream `id` in one transport write (after any frame still being compressed). */
  writeData(o: { id: number; data: Buffer; fin: boolean }): boolean {
    const parts: Buffer[] = [];
    let off = 0;
    do {
      const part = o.data.subarray(off, off + MAX_DATA);
      off += part.length;
      const head = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
      dataHeader({ frame: head, id: o.id, fin: o.fin && off >= o.data.length, length: part.length });
      parts.push(head);
      if (part.length) parts.push(part);
    } while (off < o.data.length);
    return this.send(parts);
  }

  /** Resets stream `id` (RST_STREAM, status CANCEL). */
  reset(id: number): void {
    const body = Buffer.alloc(8);
    body.writeUInt32BE(id & 0x7fffffff, 0);
    body.writeUInt32BE(5, 4);
    this.send([control(RST_STREAM, 0, body)]);
    this.streams.get(id)?.remoteEnd();
    this.streams.delete(id);
  }

  /** @internal Hands whole frames to the transport, after any frame still being compressed. */
  send(parts: Buffer[], written?: () => void): boolean {
    if (this.closed || this.transport.destroyed) return true;
    if (this.outboundPending === 0) return this.transport.write(parts, written);
    this.outbound = this.outbound.then(() => {
      if (!this.closed && !this.transport.destroyed) this.transport.write(parts, written);
    });
    return true;
  }

  private sendCompressed(build: (block: Buffer) => Buffer, headers: Buffer): void {
    this.outboundPending++;
    this.outbound = this.outbound.then(async () => {
      const compressed = await zlibFlush(this.deflater, headers).catch(() => undefined);
      this.outboundPending--;
      if (compressed && !this.closed && !this.transport.destroyed) this.transport.write([build(compressed)]);
    });
  }

  /** Runs inbound work in order: at once unless earlier work is still waiting for zlib. */
  private run(task: () => void | Promise<void>): void {
    if (this.closed) return;
    if (this.busy) {
      this.queue.push(task);
      return;
    }
    let pending: void | Promise<void>;
    try {
      pending = task();
    } catch {
      this.close();
      return;
    }
    if (!pending) return;
    this.busy = true;
    pending.then(
      () => {
        this.busy = false;
        while (!this.busy && !this.closed && this.queue.length) this.run(this.queue.shift()!);
      },
      () => this.close(),
    );
  }

  private receive(chunk: Buffer): void {
    let off = 0;
    while (off < chunk.length && !this.closed) {
      const st = this.state;
      if (st.kind === 'data') {
        const piece = chunk.subarray(off, off + st.left);
        off += piece.length;
        st.left -= piece.length;
        this.run(() => this.streams.get(st.id)?.deliver(piece));
        if (st.left === 0) this.dataDone(st);
        continue;
      }
      if (st.kind === 'control') {
        const piece = chunk.subarray(off, off + st.length - st.have);
        off += piece.length;
        st.parts.push(piece);
        st.have += piece.length;
        if (st.have === st.length) this.controlDone(st);
        continue;
      }
      // A frame header: straight from the chunk when it is whole there, else gathered.
      let head: Buffer;
      if (this.headHave === 0 && chunk.length - off >= FRAME_HEADER_BYTES) {
        head = chunk.subarray(off, off + FRAME_HEADER_BYTES);
        off += FRAME_HEADER_BYTES;
      } else {
        const n = Math.min(FRAME_HEADER_BYTES - this.headHave, chunk.length - off);
        chunk.copy(this.head, this.headHave, off, off + n);
        this.headHave += n;
        off += n;
        if (this.headHave < FRAME_HEADER_BYTES) return;
        this.headHave = 0;
        head = this.head;
      }
      const flags = head[4]!;
      const length = head.readUInt32BE(4) & 0xffffff;
      if ((head[0]! & 0x80) === 0) {
        const data = {
          kind: 'data' as const,
          id: head.readUInt32BE(0) & 0x7fffffff,
          fin: (flags & FLAG_FIN) !== 0,
          left: length,
        };
        this.state = data;
        if (length === 0) this.dataDone(data);
      } else {
        const ctl = { kind: 'control' as const, type: head.readUInt16BE(2), flags, length, parts: [], have: 0 };
        this.state = ctl;
        if (length === 0) this.controlDone(ctl);
      }
    }
  }

  private dataDone(st: { id: number; fin: boolean }): void {
    this.state = { kind: 'header' };
    if (st.fin) this.run(() => this.streams.get(st.id)?.remoteEnd());
  }

  private controlDone(st: { type: number; flags: number; parts: Buffer[] }): void {
    this.state = { kind: 'header' };
    const body = st.parts.length === 1 ? st.parts[0]! : Buffer.concat(st.parts);
    this.run(() => this.handleControl({ type: st.type, flags: st.flags, body }));
  }

  private handleControl(f: { type: number; flags: number; body: Buffer }): void | Promise<void> {
    const { type, flags, body } = f;
    switch (type) {
      case SYN_STREAM:
        return this.synStream(flags, body);
      case SYN_REPLY:
      case 8 /* HEADERS */:
        // Keeps the inflater in step with the peer's deflater.
        return zlibFlush(this.inflater, body.subarray(4)).then(() => undefined);
      case RST_STREAM: {
        const id = body.readUInt32BE(0) & 0x7fffffff;
        this.streams.get(id)?.remoteEnd();
        this.streams.delete(id);
        return;
      }
      case PING:
        this.send([control(PING, 0, body.subarray(0, 4))]);
        return;
      case GOAWAY:
        this.close();
        return;
      default:
        return; // SETTINGS, WINDOW_UPDATE, NOOP, CREDENTIAL
    }
  }

  private async synStream(flags: number, body: Buffer): Promise<void> {
    const id = body.readUInt32BE(0) & 0x7fffffff;
    const headers = decodeHeaders(await zlibFlush(this.inflater, body.subarray(10)));
    if (this.closed) return;
    const s = new SpdyStream(id, headers, this);
    this.streams.set(id, s);
    const reply = Buffer.alloc(4);
    reply.writeUInt32BE(id, 0);
    this.sendCompressed((block) => control(SYN_REPLY, 0, Buffer.concat([reply, block])), encodeHeaders({}));
    this.onStream(s);
    if (flags & FLAG_FIN) s.remoteEnd();
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
