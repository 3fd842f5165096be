import { createRequire } from 'node:module';
import { join } from 'node:path';
import { constants as zc, deflateSync } from 'node:zlib';
import type { FrameTransport } from './frame-transport.js';
import { FRAME_HEADER_BYTES, SpdyConnection, type SpdyStream } from './spdy-connection.js';

const DICTIONARY = (
  createRequire(join(__dirname, 'spdy-connection.ts'))(
    'spdy-transport/lib/spdy-transport/protocol/spdy/dictionary.js',
  ) as Record<string, Buffer>
)['3']!;

/** A transport whose chunks the test hands in, cut where it wants; what is written is kept. */
class ChunkTransport implements FrameTransport {
  readonly written: Buffer[] = [];
  destroyed = false;
  private feed: ((chunk: Buffer) => void) | undefined;
  start(o: { data: (chunk: Buffer) => void; end: () => void }): void {
    this.feed = o.data;
  }
  push(chunk: Buffer): void {
    this.feed!(chunk);
  }
  write(parts: readonly Buffer[], written?: () => void): boolean {
    this.written.push(Buffer.concat(parts));
    written?.();
    return true;
  }
  onDrain(fn: () => void): void {
    fn();
  }
  pause(): void {}
  resume(): void {}
  end(): void {
    this.destroyed = true;
  }
}

/** A SYN_STREAM as spdystream sends it: the header block through a fresh SPDY/3 zlib context. */
function synStream(id: number, headers: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  const n = Buffer.alloc(4);
  n.writeUInt32BE(Object.keys(headers).length);
  parts.push(n);
  for (const [k, v] of Object.entries(headers)) {
    for (const s of [k, v]) {
      const len = Buffer.alloc(4);
      len.writeUInt32BE(s.length);
      parts.push(len, Buffer.from(s, 'latin1'));
    }
  }
  const block = deflateSync(Buffer.concat(parts), { dictionary: DICTIONARY, finishFlush: zc.Z_SYNC_FLUSH });
  const body = Buffer.alloc(10);
  body.writeUInt32BE(id, 0);
  return control(1, Buffer.concat([body, block]));
}

function control(type: number, body: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x8003, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt32BE(body.length, 4);
  return Buffer.concat([head, body]);
}

function data(id: number, payload: Buffer, fin: boolean): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(id, 0);
  head.writeUInt32BE(((fin ? 1 : 0) << 24) | payload.length, 4);
  return Buffer.concat([head, payload]);
}

/** Splits written bytes into frames: [first word, flags, body]. */
function frames(bytes: Buffer): Array<{ word: number; flags: number; body: Buffer }> {
  const out: Array<{ word: number; flags: number; body: Buffer }> = [];
  for (let off = 0; off < bytes.length;) {
    const length = bytes.readUInt32BE(off + 4) & 0xffffff;
    out.push({
      word: bytes.readUInt32BE(off),
      flags: bytes[off + 4]!,
      body: bytes.subarray(off + 8, off + 8 + length),
    });
    off += 8 + length;
  }
  return out;
}

const until = async (cond: () => boolean): Promise<void> => {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((r) => setImmediate(r));
  }
};

/** One connection fed `chunks`; answers what the stream saw and what was written back. */
async function serve(chunks: Buffer[]): Promise<{ got: Buffer; ended: number; headers: object; written: Buffer }> {
  const t = new ChunkTransport();
  const got: Buffer[] = [];
  let ended = 0;
  let headers: object = {};
  let stream: SpdyStream | undefined;
  new SpdyConnection(t, (s) => {
    stream = s;
    headers = s.headers;
    s.onData((b) => got.push(Buffer.from(b)));
    s.onEnd(() => ended++);
  });
  for (const c of chunks) t.push(c);
  await until(() => ended > 0 && t.written.length >= 2);
  expect(stream).toBeDefined();
  return { got: Buffer.concat(got), ended, headers, written: Buffer.concat(t.written) };
}

describe('SpdyConnection', () => {
  const payload = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) % 251));
  const ping = Buffer.alloc(4);
  ping.writeUInt32BE(1);
  const wire = Buffer.concat([
    synStream(1, { streamtype: 'data', port: '80', requestid: '0' }),
    data(1, payload.subarray(0, 1000), false),
    control(6, ping),
    data(1, Buffer.alloc(0), false),
    data(1, payload.subarray(1000), true),
  ]);

  it('parses frames cut anywhere: headers, data in order and whole, FIN once, PING echoed', async () => {
    const cuts = [...Array.from({ length: 120 }, (_, i) => i), 1500, 2500, wire.length - 1];
    for (const cut of cuts) {
      const r = await serve([wire.subarray(0, cut), wire.subarray(cut)]);
      expect(r.headers).toEqual({ streamtype: 'data', port: '80', requestid: '0' });
      expect(r.got.equals(payload)).toBe(true);
      expect(r.ended).toBe(1);
      const out = frames(r.written);
      expect(out.map((f) => f.word >>> 0)).toEqual([0x80030002, 0x80030006]);
      expect(out[0]!.body.readUInt32BE(0)).toBe(1);
      expect(out[1]!.body.equals(ping)).toBe(true);
    }
    const bytewise = await serve(Array.from({ length: wire.length }, (_, i) => wire.subarray(i, i + 1)));
    expect(bytewise.got.equals(payload)).toBe(true);
  });

  it('writes DATA frames: split at 64 KiB, in place with writeFrame, FIN on end', async () => {
    const t = new ChunkTransport();
    let stream: SpdyStream | undefined;
    new SpdyConnection(t, (s) => (stream = s));
    t.push(synStream(3, { streamtype: 'data' }));
    await until(() => stream !== undefined && t.written.length > 0);
    t.written.length = 0;
    const big = Buffer.alloc(70_000, 1);
    stream!.write(big);
    const framed = Buffer.alloc(FRAME_HEADER_BYTES + 5);
    framed.write('hello', FRAME_HEADER_BYTES);
    let left = 0;
    stream!.writeFrame(framed, () => left++);
    expect(left).toBe(1);
    stream!.end();
    const out = frames(Buffer.concat(t.written));
    expect(out.map((f) => [f.word, f.flags, f.body.length])).toEqual([
      [3, 0, 65536],
      [3, 0, 70_000 - 65536],
      [3, 0, 5],
      [3, 1, 0],
    ]);
    expect(out[2]!.body.toString()).toBe('hello');
  });
});
