import { createServer, connect, type Server, type Socket } from 'node:net';
import { waitFor } from '@svc/testing';
import { WatchWriteScheduler } from './watch-writes.js';

/** `n` connected socket pairs over loopback: the server ends are written, the client ends read. */
async function socketPairs(n: number): Promise<{ server: Server; ends: Array<{ out: Socket; received: () => string; writes: () => number }> }> {
  const accepted: Socket[] = [];
  const server = createServer((s) => accepted.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const clients = await Promise.all(Array.from({ length: n }, () => new Promise<Socket>((resolve) => {
    const c = connect(port, '127.0.0.1', () => resolve(c));
  })));
  await waitFor('accepted connections', () => accepted.length === n);
  const ends = clients.map((c, i) => {
    let text = '';
    c.on('data', (d: Buffer) => { text += d.toString(); });
    const out = accepted[i] as Socket;
    let writes = 0;
    const write = out.write.bind(out) as (chunk: Buffer) => boolean;
    // Counts the calls that reach the socket (the scheduler's writes), then writes for real.
    out.write = ((chunk: Buffer) => { writes++; return write(chunk); }) as Socket['write'];
    return { out, received: () => text, writes: () => writes };
  });
  return { server, ends };
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

  it('writes a lone event and resolves with the socket answer', async () => {
    const pairs = await socketPairs(1);
    server = pairs.server;
    const end = pairs.ends[0]!;
    sockets.push(end.out);
    const writes = new WatchWriteScheduler();
    await expect(writes.write(end.out, [Buffer.from('a\n')])).resolves.toBe(true);
    await waitFor('the event', () => end.received() === 'a\n');
  });

  it('sends what a socket queued before its pass in one write, in order', async () => {
    const pairs = await socketPairs(1);
    server = pairs.server;
    const end = pairs.ends[0]!;
    sockets.push(end.out);
    const writes = new WatchWriteScheduler();
    const done = [writes.write(end.out, [Buffer.from('1\n')]), writes.write(end.out, [Buffer.from('2\n'), Buffer.from('3\n')])];
    await Promise.all(done);
    await waitFor('the events', () => end.received() === '1\n2\n3\n');
    expect(end.writes()).toBe(1);
  });

  it('writes each of 300 busy sockets once per pass, every byte in order', async () => {
    const pairs = await socketPairs(300);
    server = pairs.server;
    sockets.push(...pairs.ends.map((e) => e.out));
    const writes = new WatchWriteScheduler();
    // Every watcher loops as the watch handler does: queue, await the pass, queue again.
    const rounds = 20;
    const perRound = 5;
    await Promise.all(pairs.ends.map(async (end) => {
      for (let r = 0; r < rounds; r++) {
        const frames = Array.from({ length: perRound }, (_, k) => Buffer.from(`${r}.${k}\n`));
        await writes.write(end.out, frames);
      }
    }));
    const expected = Array.from({ length: rounds }, (_, r) => Array.from({ length: perRound }, (__, k) => `${r}.${k}\n`).join('')).join('');
    await waitFor('every socket\'s events', () => pairs.ends.every((e) => e.received() === expected));
    for (const e of pairs.ends) expect(e.writes()).toBe(rounds);
  });

  it('resolves false for a destroyed socket instead of throwing', async () => {
    const pairs = await socketPairs(1);
    server = pairs.server;
    const end = pairs.ends[0]!;
    end.out.on('error', () => undefined);
    end.out.destroy();
    const writes = new WatchWriteScheduler();
    await expect(writes.write(end.out, [Buffer.from('x\n')])).resolves.toBe(false);
  });
});
