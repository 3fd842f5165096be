// The proxy subresources' link rewriting (Kubernetes' proxy Transport, which pods/proxy,
// services/proxy and nodes/proxy use): a real HTTP server in this test, on the machine's own
// address (proxying refuses loopback ones), stands behind a Pod, a Service with hand-written
// Endpoints, and a Node; pages come back through a real API server on real etcd with their
// links pointing under the proxy path, gzip pages decoded and encoded again, redirects
// rewritten, other bodies byte for byte and streamed.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { request as httpsRequest } from 'node:https';
import { gunzipSync, gzipSync } from 'node:zlib';
import { createDefaultServiceAccount, createNamespace, startKubectlEnv, waitFor, type KubectlEnv } from '@svc/testing';

/** The first non-loopback IPv4 address: Kubernetes refuses to proxy to loopback addresses. */
const HOST_IP =
  Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address ?? '127.0.0.1';

const BINARY = randomBytes(3 * 1024 * 1024);
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** The page every backend serves; `self` is its own `ip:port`. */
const page = (self: string): string =>
  '<!DOCTYPE html><html><head><link rel="stylesheet" href="/static/site.css">' +
  `<script src="//${self}/static/app.js"></script></head><body>` +
  '<a href="/docs/">docs</a> <a href="relative/page">rel</a> <a href="?tab=2">query</a> ' +
  `<a href="http://${self}/abs?x=1&amp;y=2#top">self</a> <a href="http://example.com/elsewhere">external</a> ` +
  `<img src="http://${self}/logo.png"><form action="/submit" method="post"><button formaction="/other">go</button></form>` +
  '<p>text with <a href=/in-text>an unquoted link</a> and caf\u00e9</p></body></html>';

/** The page as Kubernetes answers it behind `prefix`. */
const rewritten = (prefix: string): string =>
  `<!DOCTYPE html><html><head><link rel="stylesheet" href="${prefix}/static/site.css">` +
  `<script src="${prefix}/static/app.js"></script></head><body>` +
  `<a href="${prefix}/docs/">docs</a> <a href="relative/page">rel</a> <a href="?tab=2">query</a> ` +
  `<a href="${prefix}/abs?x=1&amp;y=2#top">self</a> <a href="http://example.com/elsewhere">external</a> ` +
  `<img src="${prefix}/logo.png"><form action="${prefix}/submit" method="post"><button formaction="${prefix}/other">go</button></form>` +
  `<p>text with <a href="${prefix}/in-text">an unquoted link</a> and caf\u00e9</p></body></html>`;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** The backend: pages, a gzip page, redirects, a binary body, and a body it holds until told. */
class Backend {
  server!: Server;
  port = 0;
  readonly seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
  private release: Array<() => void> = [];

  get self(): string {
    return `${HOST_IP}:${this.port}`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      this.seen.push({ url: req.url ?? '', headers: req.headers });
      this.serve(req.url ?? '/', res);
    });
    await new Promise<void>((r) => this.server.listen(0, HOST_IP, () => r()));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Lets every held answer finish. */
  releaseAll(): void {
    for (const r of this.release.splice(0)) r();
  }

  private serve(url: string, res: ServerResponse): void {
    const path = url.split('?')[0];
    const html = { 'content-type': 'text/html; charset=utf-8' };
    if (path === '/' || path === '/docs/') {
      const body = Buffer.from(page(this.self));
      res.writeHead(200, {
        ...html,
        'content-length': String(body.length),
        'access-control-allow-origin': '*',
        'set-cookie': 'session=1; Path=/',
      });
      res.end(body);
    } else if (path === '/gz') {
      const body = gzipSync(page(this.self));
      res.writeHead(200, { ...html, 'content-encoding': 'gzip', 'content-length': String(body.length) });
      res.end(body);
    } else if (path === '/bad-gz') {
      res.writeHead(200, { ...html, 'content-encoding': 'gzip' });
      res.end('this is not gzip');
    } else if (path === '/redirect') {
      res.writeHead(302, { location: `http://${this.self}/login/?next=%2Fdocs`, 'content-type': 'text/html' });
      res.end('<a href="/login/">moved</a>');
    } else if (path === '/redirect-out') {
      res.writeHead(302, { location: 'https://example.com/sso' }).end();
    } else if (path === '/bad-location') {
      res.writeHead(302, { location: 'http://[::1/x' }).end();
    } else if (path === '/binary') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(BINARY.length) });
      res.end(BINARY);
    } else if (path === '/plain') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('<a href="/not-html">as it is</a>');
    } else if (path === '/held' || path === '/held-html') {
      const type = path === '/held' ? 'application/octet-stream' : 'text/html';
      res.writeHead(200, { 'content-type': type });
      res.write(path === '/held' ? 'first part;' : '<html><body><a href="/first">first</a><p>');
      this.release.push(() => res.end(path === '/held' ? 'second part' : 'second</p></body></html>'));
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no such page');
    }
  }
}

let env: KubectlEnv;
let ns: string;
const backend = new Backend();

/** A request to the API server as the admin, the body as it comes (no decoding). */
function get(path: string, o: { method?: string; onData?: (soFar: Buffer) => void } = {}): Promise<Answer> {
  const s = env.server;
  const url = new URL(path, s.server.url);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      { method: o.method ?? 'GET', ca: s.server.caPem, headers: { authorization: `Bearer ${s.adminToken}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          o.onData?.(Buffer.concat(chunks));
        });
        res.on('error', reject);
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const podPrefix = (): string => `/api/v1/namespaces/${ns}/pods/web/proxy`;
const servicePrefix = (): string => `/api/v1/namespaces/${ns}/services/web:http/proxy`;

beforeAll(async () => {
  await backend.start();
  env = await startKubectlEnv();
  const c = env.server.client;
  ns = await createNamespace(c, 'proxy-rewrite');
  await createDefaultServiceAccount(c, ns);
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: ns },
    spec: { containers: [{ name: 'web', image: 'web', ports: [{ containerPort: backend.port }] }] },
  };
  expect((await c.post(`/api/v1/namespaces/${ns}/pods`, pod)).status).toBe(201);
  const current = (await c.get(`/api/v1/namespaces/${ns}/pods/web`)).json();
  const status = { phase: 'Running', podIP: HOST_IP, podIPs: [{ ip: HOST_IP }] };
  expect((await c.put(`/api/v1/namespaces/${ns}/pods/web/status`, { ...current, status })).status).toBe(200);
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: ns },
    spec: { ports: [{ name: 'http', port: 80, targetPort: backend.port }] },
  };
  expect((await c.post(`/api/v1/namespaces/${ns}/services`, service)).status).toBe(201);
  const endpoints = {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: 'web', namespace: ns },
    subsets: [
      {
        addresses: [{ ip: HOST_IP, targetRef: { kind: 'Pod', namespace: ns, name: 'web' } }],
        ports: [{ name: 'http', port: backend.port }],
      },
    ],
  };
  expect((await c.post(`/api/v1/namespaces/${ns}/endpoints`, endpoints)).status).toBe(201);
  // The node's agent port is the backend's: nodes/<n>/proxy reaches an agent over TLS with the
  // API server's client certificate, so this node is reached on the backend's port by asking
  // for `http:` and the port.
  const node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'proxy-node' },
    status: {
      addresses: [{ type: 'InternalIP', address: HOST_IP }],
      daemonEndpoints: { kubeletEndpoint: { Port: 1 } },
    },
  };
  expect((await c.post('/api/v1/nodes', node)).status).toBe(201);
});

afterAll(async () => {
  backend.releaseAll();
  await env?.stop();
  await new Promise((r) => backend.server?.close(r));
});

describe('proxy link rewriting (pods, services and nodes proxy)', () => {
  it('rewrites the links of an HTML page to go through the proxy path, for pods, services and nodes', async () => {
    const nodeId = `http:proxy-node:${backend.port}`;
    for (const prefix of [podPrefix(), servicePrefix(), `/api/v1/nodes/${nodeId}/proxy`]) {
      const r = await get(`${prefix}/docs/`);
      expect(r.status).toBe(200);
      expect(r.body.toString()).toBe(rewritten(prefix));
      // The body changed length: no Content-Length (the answer is chunked); CORS headers go,
      // cookies pass as they are.
      expect(r.headers['content-length']).toBeUndefined();
      expect(r.headers['access-control-allow-origin']).toBeUndefined();
      expect(r.headers['set-cookie']).toEqual(['session=1; Path=/']);
      expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    }
  });

  it('sends X-Forwarded-Uri (the proxy path) and X-Forwarded-For to the backend, not X-Forwarded-Host or -Proto', async () => {
    const before = backend.seen.length;
    expect((await get(`${podPrefix()}/docs/?x=1`)).status).toBe(200);
    const seen = backend.seen.slice(before).find((s) => s.url === '/docs/?x=1');
    expect(seen?.headers['x-forwarded-uri']).toBe(`${podPrefix()}/docs/`);
    expect(seen?.headers['x-forwarded-for']).toBeTruthy();
    expect(seen?.headers['x-forwarded-host']).toBeUndefined();
    expect(seen?.headers['x-forwarded-proto']).toBeUndefined();
  });

  it('decodes a gzip page, rewrites it and encodes it again', async () => {
    const r = await get(`${podPrefix()}/gz`);
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(r.headers['content-length']).toBeUndefined();
    expect(gunzipSync(r.body).toString()).toBe(rewritten(podPrefix()));
  });

  it('rewrites the Location of a redirect (and leaves its body), other hosts stay as they are', async () => {
    const r = await get(`${servicePrefix()}/redirect`);
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe(`${servicePrefix()}/login/?next=%2Fdocs`);
    expect(r.body.toString()).toBe('<a href="/login/">moved</a>');
    const out = await get(`${servicePrefix()}/redirect-out`);
    expect(out.headers.location).toBe('https://example.com/sso');
  });

  it('passes a binary body and a non-HTML body byte for byte', async () => {
    const r = await get(`${podPrefix()}/binary`);
    expect(r.status).toBe(200);
    expect(r.body.length).toBe(BINARY.length);
    expect(sha(r.body)).toBe(sha(BINARY));
    expect(r.headers['content-length']).toBe(String(BINARY.length));
    expect((await get(`${podPrefix()}/plain`)).body.toString()).toBe('<a href="/not-html">as it is</a>');
  });

  it('streams: a body, HTML or not, reaches the client before the backend has finished it', async () => {
    for (const [path, first] of [
      ['/held', 'first part;'],
      ['/held-html', `<a href="${podPrefix()}/first">first</a>`],
    ] as const) {
      let sawFirst = false;
      const answer = get(`${podPrefix()}${path}`, {
        onData: (soFar) => {
          sawFirst ||= soFar.toString().includes(first);
        },
      });
      await waitFor(`the first part of ${path} before the backend ends it`, () => sawFirst, {
        timeoutMs: 20_000,
        intervalMs: 20,
      });
      backend.releaseAll();
      const r = await answer;
      expect(r.status).toBe(200);
      expect(r.body.toString()).toContain(path === '/held' ? 'first part;second part' : 'second</p></body></html>');
    }
  });

  it('redirects a GET of the bare proxy path to the path with a slash, as Kubernetes', async () => {
    const r = await get(`${podPrefix()}?a=1`);
    expect(r.status).toBe(301);
    expect(r.headers.location).toBe(`${podPrefix()}/?a=1`);
  });

  it('answers a Location Go cannot parse and a body that is not the gzip it claims with 500 Statuses', async () => {
    const bad = await get(`${podPrefix()}/bad-location`);
    expect(bad.status).toBe(500);
    expect(JSON.parse(bad.body.toString())).toMatchObject({
      kind: 'Status',
      code: 500,
      reason: 'InternalError',
      message: `Internal error occurred: error trying to parse Location header: parse "http://[::1/x": missing ']' in host`,
    });
    const gz = await get(`${podPrefix()}/bad-gz`);
    expect(gz.status).toBe(500);
    const status = JSON.parse(gz.body.toString()) as { kind: string; code: number; message: string; reason?: string };
    expect(status).toMatchObject({ kind: 'Status', code: 500 });
    expect(status.reason).toBeUndefined();
    expect(status.message).toMatch(/^error rewriting the proxied page: /);
    expect(gz.headers['content-encoding']).toBeUndefined();
  });

  it('serves the rewritten pages to stock kubectl get --raw', async () => {
    const page = await env.ok(['get', '--raw', `${servicePrefix()}/docs/`]);
    expect(page.stdout).toBe(rewritten(servicePrefix()));
    // kubectl asks for gzip and decodes it: the rewritten gzip page reads as the page.
    const gz = await env.ok(['get', '--raw', `${servicePrefix()}/gz`]);
    expect(gz.stdout).toBe(rewritten(servicePrefix()));
  });
});
