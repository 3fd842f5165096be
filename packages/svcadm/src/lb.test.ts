import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { parseLoadBalancerArgs, startLoadBalancer, type LoadBalancer } from './lb.js';

/** A TCP server answering every connection's first chunk with `<tag>:<chunk>`. */
async function tagServer(
  tag: string,
  behaviour: 'answer' | 'reset' = 'answer',
): Promise<{ server: Server; addr: string; conns: number }> {
  const state = { server: createServer(), addr: '', conns: 0 };
  state.server.on('connection', (s: Socket) => {
    state.conns++;
    s.on('error', () => undefined);
    s.once('data', (d: Buffer) => {
      if (behaviour === 'reset') s.resetAndDestroy();
      else s.end(`${tag}:${d.toString()}`);
    });
  });
  await new Promise<void>((r) => state.server.listen(0, '127.0.0.1', () => r()));
  state.addr = `127.0.0.1:${(state.server.address() as AddressInfo).port}`;
  return state;
}

async function closedPort(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const addr = `127.0.0.1:${(s.address() as AddressInfo).port}`;
  await new Promise<void>((r) => s.close(() => r()));
  return addr;
}

function ask(port: number, msg: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = connect(port, '127.0.0.1', () => c.write(msg));
    let out = '';
    c.on('data', (d: Buffer) => {
      out += d.toString();
    });
    c.on('end', () => resolve(out));
    c.on('error', reject);
  });
}

describe('svc-lb', () => {
  const servers: Server[] = [];
  let lb: LoadBalancer | undefined;
  afterEach(async () => {
    await lb?.close();
    lb = undefined;
    await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => s.close(() => r()))));
  });

  it('spreads connections round-robin and skips a backend that refuses', async () => {
    const a = await tagServer('a');
    const b = await tagServer('b');
    servers.push(a.server, b.server);
    lb = await startLoadBalancer({
      listen: '127.0.0.1:0',
      backends: [a.addr, await closedPort(), b.addr],
      healthIntervalMs: 60_000,
    });
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await ask(lb.port, `hi${i}`));
    expect(answers.every((x) => /^[ab]:hi\d$/.test(x))).toBe(true);
    expect(a.conns).toBeGreaterThanOrEqual(2);
    expect(b.conns).toBeGreaterThanOrEqual(2);
    expect(lb.health()[1]?.healthy).toBe(false);
  });

  it('replays a connection whose backend resets it before answering', async () => {
    const dead = await tagServer('dead', 'reset');
    const live = await tagServer('live');
    servers.push(dead.server, live.server);
    lb = await startLoadBalancer({ listen: '127.0.0.1:0', backends: [dead.addr, live.addr], healthIntervalMs: 60_000 });
    for (let i = 0; i < 4; i++) expect(await ask(lb.port, 'x')).toBe('live:x');
    expect(dead.conns).toBeGreaterThanOrEqual(1);
  });

  it('parses its flags', () => {
    const o = parseLoadBalancerArgs([
      '--listen',
      '127.0.0.1:7443',
      '--backend=127.0.0.1:1,127.0.0.1:2',
      '--backend',
      '127.0.0.1:3',
      '--health-interval',
      '2s',
      '--connect-timeout=500ms',
    ]);
    expect(o).toMatchObject({
      listen: '127.0.0.1:7443',
      backends: ['127.0.0.1:1', '127.0.0.1:2', '127.0.0.1:3'],
      healthIntervalMs: 2000,
      connectTimeoutMs: 500,
    });
    expect(() => parseLoadBalancerArgs(['--nope'])).toThrow(/unknown flag/);
  });
});
