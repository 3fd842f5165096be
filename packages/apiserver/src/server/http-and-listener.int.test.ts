import { connect, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { connect as tlsConnect } from 'node:tls';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand, startEtcd, startTestApiServer, waitFor, type EtcdHandle, type TestApiServer } from '@svc/testing';
import { refusal } from '../options-testing.js';

// The listener (issue 18): HTTP/2 with ALPN beside HTTP/1.1, GOAWAY, CORS, the watch timeout,
// throttled long-running answers and the profiling endpoints. One server with HTTP/2 (the
// default) and one with --disable-http2-serving share an etcd.
let etcd: EtcdHandle;
let t: TestApiServer;
let h1only: TestApiServer;
const CM = '/api/v1/namespaces/default/configmaps';

beforeAll(async () => {
  etcd = await startEtcd();
  [t, h1only] = await Promise.all([
    startTestApiServer({
      etcd,
      args: [
        '--goaway-chance=0.02',
        '--cors-allowed-origins=^https://allowed\\.example(:|$),//other\\.example(:|$)',
        '--min-request-timeout=1',
        '--contention-profiling',
        '--external-hostname=api.example.test',
        '--http2-max-streams-per-connection=7',
        '--authorization-mode=RBAC',
      ],
      tokens: ['user-token,alice,alice-uid,""'],
    }),
    startTestApiServer({ etcd, args: ['--disable-http2-serving', '--max-connection-bytes-per-sec=4000'] }),
  ]);
});
afterAll(async () => {
  await Promise.all([t?.stop(), h1only?.stop()]);
  await etcd?.stop();
});

interface H2Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

function h2Session(server: TestApiServer): ClientHttp2Session {
  return connect(server.server.url, { ca: server.server.caPem });
}

function h2Request(
  session: ClientHttp2Session,
  o: { method?: string; path: string; body?: object; token?: string | null },
): Promise<H2Answer> {
  const headers: Record<string, string> = { ':method': o.method ?? 'GET', ':path': o.path };
  if (o.token !== null) headers.authorization = `Bearer ${o.token ?? t.adminToken}`;
  if (o.body) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const stream = session.request(headers);
    let status = 0;
    let got: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      status = Number(h[':status']);
      got = h;
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve({ status, headers: got, text: Buffer.concat(chunks).toString() }));
    stream.on('error', reject);
    stream.end(o.body ? JSON.stringify(o.body) : undefined);
  });
}

/**
 * An HTTP/2 client as Go's: once its connection has had a GOAWAY (this server sends one on
 * 2 % of requests), the next request goes on a new connection.
 */
function h2Client(server: TestApiServer): {
  request: (o: Parameters<typeof h2Request>[1]) => Promise<H2Answer>;
  close: () => void;
} {
  let session = h2Session(server);
  let away = false;
  const watch = (s: ClientHttp2Session): void => {
    s.on('goaway', () => (away = true));
    s.on('error', () => undefined);
  };
  watch(session);
  return {
    request: (o) => {
      if (away || session.closed || session.destroyed) {
        session.close();
        session = h2Session(server);
        away = false;
        watch(session);
      }
      return h2Request(session, o);
    },
    close: () => session.close(),
  };
}

function alpnOf(server: TestApiServer, offered: string[]): Promise<string | false | null> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({
      host: '127.0.0.1',
      port: server.server.port,
      ca: server.server.caPem,
      servername: 'localhost',
      ALPNProtocols: offered,
    });
    s.once('secureConnect', () => {
      resolve(s.alpnProtocol);
      s.end();
    });
    s.once('error', reject);
  });
}

describe('HTTP/2 beside HTTP/1.1', () => {
  it('negotiates h2 by ALPN, http/1.1 for clients that offer only that, and only http/1.1 when HTTP/2 is disabled', async () => {
    expect(await alpnOf(t, ['h2', 'http/1.1'])).toBe('h2');
    expect(await alpnOf(t, ['http/1.1'])).toBe('http/1.1');
    expect(await alpnOf(h1only, ['h2', 'http/1.1'])).toBe('http/1.1');
  });

  it('serves the same API to an HTTP/2 and an HTTP/1.1 client', async () => {
    const h2 = h2Client(t);
    try {
      const created = await h2.request({
        method: 'POST',
        path: CM,
        body: { metadata: { name: 'over-h2' }, data: { a: '1' } },
      });
      // The whole answer on failure: its Status says why.
      expect(created).toMatchObject({ status: 201 });
      const viaH1 = await t.client.get(`${CM}/over-h2`);
      expect({ status: viaH1.status, text: viaH1.text }).toMatchObject({ status: 200 });
      expect(viaH1.json<{ data: { a: string } }>().data.a).toBe('1');
      const viaH2 = await h2.request({ path: `${CM}/over-h2` });
      expect(viaH2).toMatchObject({ status: 200 });
      expect(JSON.parse(viaH2.text)).toEqual(viaH1.json());
      // Errors are Statuses over HTTP/2 too, and a credential is checked as over HTTP/1.1.
      const missing = await h2.request({ path: `${CM}/nope` });
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.text)).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
      const bad = await h2.request({ path: CM, token: 'wrong' });
      expect(bad.status).toBe(401);
      // Discovery and OpenAPI answer over HTTP/2 too.
      expect(await h2.request({ path: '/api' })).toMatchObject({ status: 200 });
      const openapi = await h2.request({ path: '/openapi/v2' });
      expect(openapi.status).toBe(200);
    } finally {
      h2.close();
    }
  });

  it('tells HTTP/2 clients the stream limit of --http2-max-streams-per-connection', async () => {
    const session = h2Session(t);
    try {
      const settings = await new Promise<{ maxConcurrentStreams?: number }>((resolve) =>
        session.once('remoteSettings', resolve),
      );
      expect(settings.maxConcurrentStreams).toBe(7);
    } finally {
      session.close();
    }
  });

  it('streams a watch over HTTP/2 (no HTTP/1.1 chunk framing in the data)', async () => {
    const session = h2Session(t);
    try {
      const stream = session.request({
        ':path': `${CM}?watch=1&timeoutSeconds=10&fieldSelector=metadata.name%3Dwatched-h2`,
        authorization: `Bearer ${t.adminToken}`,
      });
      let text = '';
      stream.on('data', (c: Buffer) => (text += c.toString()));
      const status = await new Promise<number>((resolve) =>
        stream.once('response', (h) => resolve(Number(h[':status']))),
      );
      expect(status).toBe(200);
      expect((await t.client.post(CM, { metadata: { name: 'watched-h2' } })).status).toBe(201);
      expect((await t.client.delete(`${CM}/watched-h2`)).status).toBe(200);
      await waitFor('two watch events over HTTP/2', () => text.split('\n').filter((l) => l !== '').length >= 2);
      const events = text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
      expect(events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
      expect(events[0]?.object.metadata.name).toBe('watched-h2');
      stream.close();
    } finally {
      session.close();
    }
  });

  it('sends a GOAWAY on about --goaway-chance of HTTP/2 requests; the request itself is answered', async () => {
    // 1,000 requests at 0.02 each: 20 GOAWAYs expected. Fewer than 3 has probability ~5e-7,
    // more than 60 far less; "every request" and "none" are both far outside.
    const N = 1000;
    let requests = 0;
    let goaways = 0;
    while (requests < N) {
      const session = h2Session(t);
      let away = false;
      session.on('goaway', () => (away = true));
      session.on('error', () => undefined);
      while (!away && requests < N) {
        let status: number;
        try {
          status = (await h2Request(session, { path: '/version' })).status;
        } catch (e) {
          // A GOAWAY that arrived after the last answer refuses this new stream: not an answer to count.
          await new Promise((resolve) => setImmediate(resolve));
          if (away) break;
          throw e;
        }
        requests++;
        expect(status).toBe(200);
        // The GOAWAY frame may arrive just after the answer's last frame.
        if (!away) await new Promise((resolve) => setImmediate(resolve));
      }
      if (away) goaways++;
      session.close();
    }
    process.stdout.write(`GOAWAY: ${goaways} in ${N} HTTP/2 requests\n`);
    expect(goaways).toBeGreaterThanOrEqual(3);
    expect(goaways).toBeLessThanOrEqual(60);
  });

  it('never sends HTTP/1.1 requests a GOAWAY (their connections stay open)', async () => {
    for (let i = 0; i < 200; i++) expect((await t.client.get('/version')).status).toBe(200);
  });

  it('works with stock kubectl, which speaks HTTP/2 to it', async () => {
    const env = { ...process.env, KUBECONFIG: t.svcconfigPath, GODEBUG: 'http2debug=1' };
    const create = await runCommand('kubectl', ['create', 'configmap', 'by-kubectl', '--from-literal=k=v'], { env });
    expect(create.code).toBe(0);
    // Go's HTTP/2 transport logs its client connection under http2debug.
    expect(create.stderr).toMatch(/http2: Transport/);
    const got = await runCommand('kubectl', ['get', 'configmap', 'by-kubectl', '-o', 'jsonpath={.data.k}'], { env });
    expect(got.stdout).toBe('v');
    const watched = await runCommand(
      'kubectl',
      [
        'get',
        'configmaps',
        '--watch',
        '--request-timeout=2s',
        '--field-selector=metadata.name=by-kubectl',
        '-o',
        'name',
      ],
      { env },
    );
    expect(watched.stdout).toContain('configmap/by-kubectl');
  });
});

describe('--cors-allowed-origins', () => {
  it('answers a preflight from an allowed origin with Kubernetes’ methods and headers, without credentials', async () => {
    const r = await t.client.request('OPTIONS', CM, {
      token: null,
      headers: { origin: 'https://allowed.example', 'access-control-request-method': 'POST' },
    });
    expect(r.status).toBe(204);
    expect(r.headers['access-control-allow-origin']).toBe('https://allowed.example');
    expect(r.headers['access-control-allow-methods']).toBe('POST, GET, OPTIONS, PUT, DELETE, PATCH');
    expect(r.headers['access-control-allow-headers']).toBe(
      'Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, X-Requested-With, If-Modified-Since',
    );
    expect(r.headers['access-control-expose-headers']).toBe('Date');
    expect(r.headers['access-control-allow-credentials']).toBe('true');
  });

  it('adds the headers to an allowed origin’s requests and leaves other origins without them', async () => {
    const ok = await t.client.get(CM, { headers: { origin: 'http://other.example:8080' } });
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe('http://other.example:8080');
    // Anchored: a host that only contains an allowed one does not match.
    for (const origin of ['https://allowed.example.evil.com', 'https://evil.com']) {
      const r = await t.client.get(CM, { headers: { origin } });
      expect(r.status).toBe(200);
      expect(r.headers['access-control-allow-origin']).toBeUndefined();
    }
    // A preflight from an origin not allowed goes through the chain: anonymous OPTIONS is refused.
    const refused = await t.client.request('OPTIONS', CM, { token: null, headers: { origin: 'https://evil.com' } });
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    expect(refused.status).not.toBe(204);
    // No --cors-allowed-origins: CORS is off.
    const off = await h1only.client.request('OPTIONS', CM, {
      token: null,
      headers: { origin: 'https://allowed.example' },
    });
    expect(off.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('long-running answers', () => {
  it('ends a watch without timeoutSeconds cleanly between --min-request-timeout and twice that', async () => {
    const started = Date.now();
    const r = await t.client.get(`${CM}?watch=1`);
    const took = Date.now() - started;
    expect(r.status).toBe(200);
    expect(took).toBeGreaterThanOrEqual(1000);
    expect(took).toBeLessThan(2000 + 1000);
  });

  it('throttles a watch to --max-connection-bytes-per-sec', async () => {
    const before = await h1only.client.get(`${CM}?limit=1`);
    const rv = before.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    const pad = 'p'.repeat(1000);
    for (let i = 0; i < 12; i++)
      expect((await h1only.client.post(CM, { metadata: { name: `slow-${i}` }, data: { pad } })).status).toBe(201);
    // The 12 events (about 13 KB) at 4,000 bytes/s: the last arrives about 3 s after the first.
    const started = Date.now();
    const bytes = await new Promise<number>((resolve, reject) => {
      const req = httpsRequest(
        `${h1only.server.url}${CM}?watch=1&timeoutSeconds=30&resourceVersion=${rv}`,
        { ca: h1only.server.caPem, headers: { authorization: `Bearer ${h1only.adminToken}` } },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => {
            text += c.toString();
            if (text.split('\n').length > 12) {
              req.destroy();
              resolve(Buffer.byteLength(text));
            }
          });
        },
      );
      req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
      req.end();
    });
    const took = Date.now() - started;
    expect(bytes).toBeGreaterThan(12_000);
    expect(took).toBeGreaterThanOrEqual(2500);
    // The HTTP/2 server has no throttle: the same replay takes well under that.
    const fast = Date.now();
    const all = await t.client.get(`${CM}?watch=1&timeoutSeconds=1&resourceVersion=0`);
    expect(all.status).toBe(200);
    expect(Date.now() - fast).toBeLessThan(2500);
  });
});

describe('profiling', () => {
  it('serves a CPU profile, the event loop delay and an index under /debug/pprof/ to an authorized user', async () => {
    const index = await t.client.get('/debug/pprof/');
    expect(index.status).toBe(200);
    expect(index.text).toContain('/debug/pprof/profile');
    const moved = await t.client.get('/debug/pprof');
    expect(moved.status).toBe(302);
    expect(moved.headers.location).toBe('/debug/pprof/');
    const profile = await t.client.get('/debug/pprof/profile?seconds=1');
    expect(profile.status).toBe(200);
    expect(profile.headers['content-disposition']).toContain('.cpuprofile');
    const p = profile.json<{ nodes: unknown[]; startTime: number; endTime: number }>();
    expect(p.nodes.length).toBeGreaterThan(0);
    expect(p.endTime - p.startTime).toBeGreaterThanOrEqual(900_000);
    // The heap snapshot (/debug/pprof/heap) is checked against the binary in
    // bin/svc-apiserver.int.test.ts: here it would be of the whole Jest worker, which took
    // 35 s of the suite.
    // --contention-profiling: the event loop's delay.
    const block = await t.client.get('/debug/pprof/block');
    expect(block.json<{ count: number }>().count).toBeGreaterThan(0);
    expect((await t.client.get('/debug/pprof/nothing')).status).toBe(404);
  });

  it('authorizes /debug/pprof/ like other non-resource URLs: anonymous and ordinary users are refused', async () => {
    const anonymous = await t.client.get('/debug/pprof/', { token: null });
    expect(anonymous.status).toBe(403);
    expect(anonymous.json()).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
    const alice = await t.client.get('/debug/pprof/heap', { token: 'user-token' });
    expect(alice.status).toBe(403);
    expect(alice.json<{ message: string }>().message).toContain('"/debug/pprof/heap"');
  });

  it('serves the profiling endpoints unauthenticated on --debug-socket-path', async () => {
    const socketPath = join(h1only.dir, 'debug.sock');
    const s = await startTestApiServer({ etcd, args: [`--debug-socket-path=${socketPath}`, '--profiling=false'] });
    try {
      const get = (path: string): Promise<{ status: number; text: string }> =>
        new Promise((resolve, reject) => {
          const req = httpRequest({ socketPath, path }, (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          });
          req.on('error', reject);
          req.end();
        });
      const index = await get('/debug/pprof/');
      expect(index.status).toBe(200);
      expect(index.text).toContain('/debug/pprof/cmdline');
      const profile = await get('/debug/pprof/profile?seconds=1');
      expect(profile.status).toBe(200);
      expect((JSON.parse(profile.text) as { nodes: unknown[] }).nodes.length).toBeGreaterThan(0);
      // --profiling=false: the secure port has none (404 for an administrator).
      expect((await s.client.get('/debug/pprof/')).status).toBe(404);
    } finally {
      await s.stop();
    }
  }, 60_000);
});

describe('accept queue', () => {
  it("listens with the kernel's somaxconn as its backlog, as Go's servers do (Node's 511 overflows under a connection storm)", async () => {
    const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8').trim());
    // For a listening socket, ss prints the backlog in the Send-Q column.
    const out = await runCommand('ss', ['-Hltn', `sport = :${t.server.port}`]);
    expect(out.stdout.trim().split(/\s+/)[2]).toBe(String(Math.min(somaxconn, 65535)));
  });

  it('once started, accepts on 16 descriptors of its one listening socket (libuv takes one connection per handle per turn)', async () => {
    await t.server.started;
    // ss -p names every descriptor of the socket: users:(("node",pid=…,fd=…),…).
    const descriptors = async (): Promise<number> => {
      const out = await runCommand('ss', ['-Hltnp', `sport = :${t.server.port}`]);
      return out.stdout.match(new RegExp(`pid=${process.pid},fd=\\d+`, 'g'))?.length ?? 0;
    };
    await waitFor('16 listening descriptors', async () => (await descriptors()) === 16);
  });
});

describe('external hostname', () => {
  it('is the host of externalized URLs (service-account issuer discovery)', async () => {
    const r = await t.client.get('/.well-known/openid-configuration');
    expect(r.status).toBe(200);
    expect(r.json<{ jwks_uri: string }>().jwks_uri).toBe(`https://api.example.test:${t.server.port}/openid/v1/jwks`);
  });
});

describe('bad flag values exit 2', () => {
  it.each([
    [['--goaway-chance=0.03'], '--goaway-chance can not be less than 0 or greater than 0.02'],
    [['--goaway-chance=-0.01'], '--goaway-chance can not be less than 0 or greater than 0.02'],
    [['--goaway-chance=often'], 'strconv.ParseFloat'],
    [['--http2-max-streams-per-connection=-1'], '--http2-max-streams-per-connection can not be negative'],
    [['--http2-max-streams-per-connection=x'], 'strconv.ParseInt'],
    [['--disable-http2-serving=perhaps'], 'strconv.ParseBool'],
    [['--cors-allowed-origins=example\\.com'], 'does not pin to start/end of host'],
    [['--cors-allowed-origins=^https://(ex$'], '--cors-allowed-origins has an invalid regular expression'],
    [['--max-connection-bytes-per-sec=-5'], '--max-connection-bytes-per-sec can not be negative'],
    [['--min-request-timeout=-1'], '--min-request-timeout can not be negative value'],
    [['--contention-profiling=sometimes'], 'strconv.ParseBool'],
    [['--profiling=maybe'], 'strconv.ParseBool'],
  ])('%s', (args, message) => {
    // The binary exits 2 on any refused flag (exitOnFlagError); commander's own parse errors carry 1 here.
    const e = refusal(args);
    expect(e.exitCode).not.toBe(0);
    expect(e.message).toContain(message);
  });
});
