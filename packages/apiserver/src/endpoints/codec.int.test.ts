// readBody over real keep-alive connections: a body refused for its size must not leave the
// connection stalled for the request that follows it.
import { createServer, request, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isStatusError } from '@svc/api';
import { MAX_BODY_BYTES, readBody } from './codec.js';

let server: Server;
let port: number;
/** How each request's readBody ended, in order. */
const outcomes: string[] = [];
let requestsSeen = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    requestsSeen++;
    readBody(req).then(
      (b) => {
        outcomes.push(`read ${b.length}`);
        res.end(`read ${b.length}`);
      },
      (e: unknown) => {
        const code = isStatusError(e) ? e.status.code : 500;
        outcomes.push(`refused ${code}`);
        res.writeHead(code).end(`refused ${code}`);
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

interface Sent {
  status: number;
  text: string;
}

function send(agent: Agent, o: { method: string; body?: Buffer; chunked?: boolean }): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (o.body)
      headers[o.chunked ? 'transfer-encoding' : 'content-length'] = o.chunked ? 'chunked' : String(o.body.length);
    const req = request({ host: '127.0.0.1', port, method: o.method, path: '/', headers, agent }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`${o.method} got no answer within 5 s`));
    }, 5000);
    req.on('close', () => clearTimeout(timer));
    req.on('error', reject);
    req.end(o.body);
  });
}

async function waitUntil(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('readBody', () => {
  const tooLarge = Buffer.alloc(MAX_BODY_BYTES + 1024 * 1024, 'x');

  it.each([
    ['chunked', true],
    ['with a Content-Length', false],
  ])('a body over the limit sent %s is a 413, and the connection serves the next request', async (_how, chunked) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect(await send(agent, { method: 'PUT', body: tooLarge, chunked })).toMatchObject({ status: 413 });
      const next = await send(agent, { method: 'POST', body: Buffer.from('{"a":1}') });
      expect(next).toMatchObject({ status: 200, text: 'read 7' });
    } finally {
      agent.destroy();
    }
  });

  it('a body up to the limit is read whole', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const body = Buffer.alloc(MAX_BODY_BYTES, 'y');
      expect(await send(agent, { method: 'POST', body, chunked: true })).toMatchObject({
        status: 200,
        text: `read ${MAX_BODY_BYTES}`,
      });
    } finally {
      agent.destroy();
    }
  });

  it('a client that goes away in the middle of a body ends the read', async () => {
    outcomes.length = 0;
    const seen = requestsSeen;
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/',
      headers: { 'content-length': '1000' },
    });
    req.on('error', () => undefined);
    req.write('{"partial":');
    await waitUntil(() => requestsSeen > seen);
    req.destroy();
    await waitUntil(() => outcomes.length > 0);
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatch(/^refused /);
  });
});
