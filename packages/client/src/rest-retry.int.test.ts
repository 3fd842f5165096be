import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createTestCa, waitFor } from '@svc/testing';
import { buffer as readAll } from 'node:stream/consumers';
import { RestClient, type ClientConfig, type RequestMetrics } from './index.js';

// client-go sends a request again when the server answers 429, or any 5xx, with a
// `Retry-After` of whole seconds (priority and fairness, a server shutting down), after
// waiting those seconds, at most 10 times. A real HTTPS server in the test answers from a
// script, one answer per request, and records what it was sent and when.

interface Answer {
  code: number;
  retryAfter?: string;
}
interface Seen {
  method: string;
  url: string;
  body: string;
  at: number;
}

let server: Server;
let config: ClientConfig;
let script: Answer[] = [];
let seen: Seen[] = [];

beforeAll(async () => {
  const ca = await createTestCa('retry-ca');
  const cert = await ca.issue({ commonName: '127.0.0.1', usages: ['server'], hosts: ['127.0.0.1'] });
  server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    void readAll(req).then((body) => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body: body.toString(), at: performance.now() });
      const a = script.shift() ?? { code: 200 };
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (a.retryAfter !== undefined) headers['retry-after'] = a.retryAfter;
      res.writeHead(a.code, headers).end(JSON.stringify({ code: a.code }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  config = {
    server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    caPem: ca.certPem,
    insecureSkipTlsVerify: false,
    namespace: 'default',
    user: {},
    clusterEntry: {},
  };
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  script = [];
  seen = [];
});

describe('a request the server asks to send again later', () => {
  it('429 with Retry-After: sent again with the same method, path and body after the wait', async () => {
    script = [{ code: 429, retryAfter: '1' }, { code: 429, retryAfter: '0' }, { code: 201 }];
    const client = new RestClient(config);
    const r = await client.request('POST', '/api/v1/namespaces/a/configmaps', { body: { data: { k: 'v' } } });
    client.close();
    expect(r.status).toBe(201);
    expect(seen).toHaveLength(3);
    for (const s of seen) {
      expect(s).toMatchObject({ method: 'POST', url: '/api/v1/namespaces/a/configmaps', body: '{"data":{"k":"v"}}' });
    }
    // Retry-After: 1 held the second request back a second (timers may fire a little early).
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(990);
  });

  it('any 5xx with Retry-After is sent again; a watch too', async () => {
    script = [
      { code: 503, retryAfter: '0' },
      { code: 500, retryAfter: '0' },
      { code: 504, retryAfter: '0' },
    ];
    const client = new RestClient(config);
    const r = await client.stream('GET', '/api/v1/pods?watch=true');
    const body = await readAll(r.body);
    client.close();
    expect(r.status).toBe(200);
    expect(JSON.parse(body.toString())).toEqual({ code: 200 });
    expect(seen.map((s) => s.url)).toEqual(Array(4).fill('/api/v1/pods?watch=true'));
  });

  it.each([
    ['429 without Retry-After', { code: 429 }],
    ['500 without Retry-After', { code: 500 }],
    ['409 with Retry-After (not a 429 or 5xx)', { code: 409, retryAfter: '0' }],
    ['429 with an HTTP-date Retry-After', { code: 429, retryAfter: 'Fri, 27 Nov 2026 10:00:00 GMT' }],
  ])('%s: handed back at once', async (_name, answer: Answer) => {
    script = [answer];
    const client = new RestClient(config);
    const r = await client.request('GET', '/api/v1/namespaces');
    client.close();
    expect(r.status).toBe(answer.code);
    expect(seen).toHaveLength(1);
  });

  it('gives up after 10 more tries (client-go) and hands back the last answer', async () => {
    script = Array.from({ length: 20 }, () => ({ code: 429, retryAfter: '0' }));
    const retried: Array<{ method: string; code: number }> = [];
    const metrics: RequestMetrics = {
      observe: () => undefined,
      retried: ({ method, code }) => retried.push({ method, code }),
    };
    const client = new RestClient(config, { metrics });
    const r = await client.request('DELETE', '/api/v1/namespaces/a');
    client.close();
    expect(r.status).toBe(429);
    expect(seen).toHaveLength(11);
    expect(retried).toEqual(Array(10).fill({ method: 'DELETE', code: 429 }));
  });

  it('maxRetries bounds the tries; 0 sends once', async () => {
    script = Array.from({ length: 5 }, () => ({ code: 503, retryAfter: '0' }));
    const twice = new RestClient(config, { maxRetries: 2 });
    expect((await twice.request('GET', '/version')).status).toBe(503);
    twice.close();
    expect(seen).toHaveLength(3);
    seen = [];
    const once = new RestClient(config, { maxRetries: 0 });
    expect((await once.request('GET', '/version')).status).toBe(503);
    once.close();
    expect(seen).toHaveLength(1);
  });

  it('an abort during the wait ends the request with an AbortError and sends nothing more', async () => {
    script = [{ code: 429, retryAfter: '60' }];
    const client = new RestClient(config);
    const ac = new AbortController();
    const pending = client.request('GET', '/api/v1/pods', { signal: ac.signal });
    await waitFor('the first answer', () => seen.length === 1);
    ac.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    client.close();
    expect(seen).toHaveLength(1);
  });
});
