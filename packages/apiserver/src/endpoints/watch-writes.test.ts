import { createServer, connect, type Server, type Socket } from 'node:net';
import { waitFor } from '@svc/testing';
import { WatchWriteScheduler } from './watch-writes.js';

/** `n` connected socket pairs over loopback: the server ends are written, the client ends read. */
async function socketPairs(n: number): Promise<{
  server: Server;
  ends: Array<{ out: Socket; received: () => string; bytes: () => number; tail: () => string; writes: () => number }>;
  clients: Socket[];
}> {
  const accepted: Socket[] = [];
  const server = createServer((s) => accepted.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const clients = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Socket>((resolve) => {
          const c = connect(port, '127.0.0.1', () => resolve(c));
        }),
    ),
  );
  await waitFor('accepted connections', () => accepted.length === n);
  const ends = clients.map((c, i) => {
    let text = '';
    // The byte count and the last bytes, for the 64 MiB cases: reading all of that text at each
    // poll (endsWith flattens it) made their wait CPU-bound under a loaded test run.
    let bytes = 0;
    let tail = '';
    c.on('data', (d: Buffer) => {
      text += d.toString();
      bytes += d.length;
      tail = (tail + d.toString('latin1', Math.max(0, d.length - 16))).slice(-16);
    });
    const out = accepted[i] as Socket;
    let writes = 0;
    const write = out.write.bind(out) as (chunk: Buffer) => boolean;
    // Counts the calls that reach the socket (the scheduler's writes), then writes for real.
    out.write = ((chunk: Buffer) => {
      writes++;
      return write(chunk);
    }) as Socket['write'];
    return { out, received: () => text, bytes: () => bytes, tail: () => tail, writes: () => writes };
  });
  return { server, ends, clients };
}

describe('WatchWriteScheduler', () => {
  let server: Server | undefined;
  let sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets) s.destroy();
    sockets = [];
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  /** `n` socket pairs, closed after the test. */
  async function pairsOf(n: number): Promise<Awaited<ReturnType<typeof socketPairs>>> {
    const pairs = await socketPairs(n);
    server = pairs.server;
    sockets.push(...pairs.ends.map((e) => e.out));
    return pairs;
  }

  it('writes a lone event', async () => {
    const pairs = await pairsOf(1);
    const end = pairs.ends[0]!;
    const writes = new WatchWriteScheduler();
    await writes.write(end.out, [Buffer.from('a\n')]);
    await waitFor('the event', () => end.received() === 'a\n');
  });

  it('sends what a socket queued before its pass in one write, in order', async () => {
    const pairs = await pairsOf(1);
    const end = pairs.ends[0]!;
    const writes = new WatchWriteScheduler();
    const done = [
      writes.write(end.out, [Buffer.from('1\n')]),
      writes.write(end.out, [Buffer.from('2\n'), Buffer.from('3\n')]),
    ];
    await Promise.all(done);
    await waitFor('the events', () => end.received() === '1\n2\n3\n');
    expect(end.writes()).toBe(1);
  });

  it('lets a busy watch add what arrived before the pass writes: 300 sockets, every byte in order, two rounds per write', async () => {
    const pairs = await pairsOf(300);
    const writes = new WatchWriteScheduler();
    // Every watcher loops as the watch handler does: queue, await its turn, queue again. Its
    // turn comes as the pass starts, so the next round joins the same write.
    const rounds = 20;
    const perRound = 5;
    await Promise.all(
      pairs.ends.map(async (end) => {
        for (let r = 0; r < rounds; r++) {
          const frames = Array.from({ length: perRound }, (_, k) => Buffer.from(`${r}.${k}\n`));
          await writes.write(end.out, frames);
        }
      }),
    );
    const expected = Array.from({ length: rounds }, (_, r) =>
      Array.from({ length: perRound }, (__, k) => `${r}.${k}\n`).join(''),
    ).join('');
    await waitFor("every socket's events", () => pairs.ends.every((e) => e.received() === expected));
    for (const e of pairs.ends) expect(e.writes()).toBeLessThanOrEqual(rounds / 2);
  });

  it('a destroyed socket neither throws nor holds its watch up', async () => {
    const end = (await pairsOf(1)).ends[0]!;
    end.out.on('error', () => undefined);
    end.out.destroy();
    const writes = new WatchWriteScheduler();
    await writes.write(end.out, [Buffer.from('x\n')]);
    await writes.write(end.out, [Buffer.from('y\n')]);
  });

  /** A scheduler and a socket whose reader is paused and whose buffer is full (64 MiB + 'b' written). */
  async function fullSocket(): Promise<{
    writes: WatchWriteScheduler;
    end: Awaited<ReturnType<typeof socketPairs>>['ends'][number];
    reader: Socket;
  }> {
    const pairs = await pairsOf(1);
    const end = pairs.ends[0]!;
    const reader = pairs.clients[0]!;
    reader.pause();
    const writes = new WatchWriteScheduler();
    // Far more than the socket buffers hold: its write answers false. The watch's turn comes
    // as the pass starts, so it adds 'b', which goes out in the same (blocking) write.
    await writes.write(end.out, [Buffer.alloc(64 << 20, 'a')]);
    await writes.write(end.out, [Buffer.from('b')]);
    return { writes, end, reader };
  }

  it('a full socket takes nothing more until it drains', async () => {
    const { writes, end, reader } = await fullSocket();
    let drained = false;
    end.out.once('drain', () => {
      drained = true;
    });
    const next = writes.write(end.out, [Buffer.from('c')]).then(() => drained);
    reader.resume();
    await expect(next).resolves.toBe(true);
    await waitFor('every byte', () => end.bytes() === (64 << 20) + 2);
  });

  it('a watch that ends is let go at once, even on a full socket, and what it queued is written', async () => {
    const { writes, end, reader } = await fullSocket();
    let drained = false;
    end.out.once('drain', () => {
      drained = true;
    });
    const waiting = writes.write(end.out, [Buffer.from('d')]).then(() => drained);
    writes.flush(end.out);
    await expect(waiting).resolves.toBe(false);
    reader.resume();
    await waitFor('every byte', () => end.bytes() === (64 << 20) + 2);
    expect(end.tail().endsWith('abd')).toBe(true);
  });
});
