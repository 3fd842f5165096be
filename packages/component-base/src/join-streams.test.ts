import { createHash, randomBytes } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { joinStreams } from './join-streams.js';

/** A loopback TCP connection: both ends. */
async function socketPair(server: Server): Promise<[Socket, Socket]> {
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    client.once('connect', resolve);
    client.once('error', reject);
  });
  return [client, await accepted];
}

/** Everything `s` reads until its end, hashed, with the byte count. */
function drained(s: Socket): Promise<{ bytes: number; sha: string }> {
  const h = createHash('sha256');
  let bytes = 0;
  s.on('data', (b: Buffer) => {
    bytes += b.length;
    h.update(b);
  });
  return new Promise((resolve) => s.once('end', () => resolve({ bytes, sha: h.digest('hex') })));
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

describe('joinStreams', () => {
  let server: Server;
  beforeAll(async () => {
    server = createServer({ allowHalfOpen: true });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('passes bytes both ways intact and in order, and each end on', async () => {
    // client ── a ═ join ═ b ── backend
    const [client, a] = await socketPair(server);
    const [b, backend] = await socketPair(server);
    joinStreams(a, b);
    const up = randomBytes(3 * 1024 * 1024 + 17);
    const down = randomBytes(5 * 1024 * 1024 + 3);
    const atBackend = drained(backend);
    const atClient = drained(client);
    // Many small writes, so the join sees many pieces in one turn of the event loop.
    for (let off = 0; off < up.length; off += 1000) client.write(up.subarray(off, off + 1000));
    client.end();
    backend.end(down);
    expect(await atBackend).toEqual({ bytes: up.length, sha: sha(up) });
    expect(await atClient).toEqual({ bytes: down.length, sha: sha(down) });
    for (const s of [client, a, b, backend]) s.destroy();
  });

  it('waits for a slow reader instead of queueing without bound', async () => {
    const [client, a] = await socketPair(server);
    const [b, backend] = await socketPair(server);
    joinStreams(a, b);
    client.pause();
    const big = randomBytes(32 * 1024 * 1024);
    backend.write(big);
    const deadline = Date.now() + 20_000;
    // The join stops reading once ~1 MiB waits towards the paused client: the rest stays in the backend side.
    while (b.isPaused() === false && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(b.isPaused()).toBe(true);
    expect(a.writableLength).toBeLessThan(8 * 1024 * 1024);
    const atClient = drained(client);
    client.resume();
    backend.end();
    expect(await atClient).toEqual({ bytes: big.length, sha: sha(big) });
    for (const s of [client, a, b, backend]) s.destroy();
  });
});
