// sendObject's Warning headers over a real socket: any warning text makes a valid header, and
// thousands of warnings still make headers a client can read.
import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Response } from 'express';
import { sendObject } from './respond.js';

let server: Server;
let port: number;
/** The warnings the next request is answered with. */
let warnings: string[] = [];

beforeAll(async () => {
  server = createServer((_req, res) => {
    try {
      sendObject(res as unknown as Response, { code: 200, value: { ok: true }, warnings });
    } catch (e) {
      res.writeHead(500).end(String(e));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function fetchWarnings(): Promise<{ status: number; warning: string[] }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/' }, (res) => {
      res.resume();
      res.on('end', () => {
        const raw = res.rawHeaders.filter((_, i, all) => i % 2 === 1 && all[i - 1]?.toLowerCase() === 'warning');
        resolve({ status: res.statusCode ?? 0, warning: raw });
      });
    }).on('error', reject);
  });
}

describe('sendObject warnings', () => {
  it('a warning naming a field in any script is a header, not a 500', async () => {
    warnings = ['unknown field "metadata.💥"', 'unknown field "metadata.ñame\u007f"'];
    const got = await fetchWarnings();
    expect(got.status).toBe(200);
    expect(got.warning.map((v) => JSON.parse(v.replace(/^299 - /, '')) as string)).toEqual(warnings);
  });

  it('thousands of warnings make headers a client can read', async () => {
    warnings = Array.from({ length: 3000 }, (_, i) => `duplicate field "x${i}"`);
    const got = await fetchWarnings();
    expect(got.status).toBe(200);
    expect(got.warning.length).toBeGreaterThan(10);
    expect(got.warning.join('\n').length).toBeLessThan(8 * 1024);
  });
});
