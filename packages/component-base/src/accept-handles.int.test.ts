import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addAcceptHandles } from './accept-handles.js';

// libuv accepts one connection per listening handle per turn of the event loop. With the
// event loop held (as a saturated server holds it), another process opens ten connections,
// which wait in the kernel's accept queue; then the loop runs and each turn records how many
// the server has been handed. One handle takes a turn per connection; sixteen take them all
// in one turn.

const CONNECTIONS = 10;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-accept-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Connections handed to `server` after each turn of the loop, from the turn the queue is full. */
async function acceptedPerTurn(server: Server): Promise<number[]> {
  const sockets: Socket[] = [];
  server.on('connection', (s: Socket) => sockets.push(s));
  const { port } = server.address() as AddressInfo;
  const flag = join(dir, `connected-${port}`);
  writeFileSync(flag, '');
  const client = spawn(
    process.execPath,
    [
      '-e',
      `const net = require('net'); let n = 0;
       for (let i = 0; i < ${CONNECTIONS}; i++)
         net.connect(${port}, '127.0.0.1', () => { if (++n === ${CONNECTIONS}) require('fs').writeFileSync(${JSON.stringify(flag)}, 'all'); });
       process.stdin.resume(); process.stdin.on('end', () => process.exit(0));`,
    ],
    { stdio: ['pipe', 'ignore', 'inherit'] },
  );
  try {
    // Hold the loop until the kernel has completed every connection (they wait to be accepted).
    const deadline = Date.now() + 20_000;
    while (readFileSync(flag, 'utf8') !== 'all') {
      if (Date.now() > deadline) throw new Error('the client did not connect within 20 s');
    }
    const turns: number[] = [];
    await new Promise<void>((resolve) => {
      const record = (): void => {
        turns.push(sockets.length);
        if (sockets.length === CONNECTIONS || turns.length > 2 * CONNECTIONS) resolve();
        else setImmediate(record);
      };
      setImmediate(record);
    });
    return turns;
  } finally {
    client.stdin?.end();
    for (const s of sockets) s.destroy();
  }
}

async function listening(): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function closed(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('addAcceptHandles', () => {
  it('one listening handle: one connection per turn of the event loop', async () => {
    const server = await listening();
    const turns = await acceptedPerTurn(server);
    await closed(server);
    expect(turns.at(-1)).toBe(CONNECTIONS);
    // Each turn takes at most one more.
    for (let i = 1; i < turns.length; i++) expect(turns[i]! - turns[i - 1]!).toBeLessThanOrEqual(1);
  });

  it('fifteen more: every queued connection in one turn, handed to the server', async () => {
    const server = await listening();
    const extras = await addAcceptHandles(server, 15, 511);
    expect(extras).toHaveLength(15);
    const turns = await acceptedPerTurn(server);
    // The turn before the loop polls has none; the next has them all.
    expect(turns.findIndex((n) => n === CONNECTIONS)).toBeLessThanOrEqual(1);
    await Promise.all([server, ...extras].map(closed));
  });

  it('the server still serves on its own handle, and the port is free once all are closed', async () => {
    const server = await listening();
    const { port } = server.address() as AddressInfo;
    const extras = await addAcceptHandles(server, 3, 511);
    server.on('connection', (s: Socket) => s.end('hello'));
    for (let i = 0; i < 8; i++) {
      const reply = await new Promise<string>((resolve, reject) => {
        let got = '';
        connect(port, '127.0.0.1')
          .on('data', (d) => (got += String(d)))
          .on('end', () => resolve(got))
          .on('error', reject);
      });
      expect(reply).toBe('hello');
    }
    await Promise.all([server, ...extras].map(closed));
    const again = createServer();
    await new Promise<void>((resolve, reject) => again.once('error', reject).listen(port, '127.0.0.1', resolve));
    await closed(again);
  });

  it('a server that is not listening gets none', async () => {
    await expect(addAcceptHandles(createServer(), 4, 511)).resolves.toEqual([]);
  });

  it('a server closed while its handles are on their way: the call fails once (no stray error) and the port is free', async () => {
    const server = await listening();
    const { port } = server.address() as AddressInfo;
    const adding = addAcceptHandles(server, 15, 511);
    await closed(server);
    await expect(adding).rejects.toThrow(/EBADF|EINVAL|exited/);
    const again = createServer();
    await new Promise<void>((resolve, reject) => again.once('error', reject).listen(port, '127.0.0.1', resolve));
    await closed(again);
  });
});
