// /livez, /readyz, /healthz and /metrics over HTTPS against a real etcd; the store check with
// etcd stopped; readyz during a graceful shutdown.
import { randomBytes } from 'node:crypto';
import { startTestApiServer, waitFor, type HttpResponse, type TestApiServer } from '@svc/testing';

let t: TestApiServer;

beforeAll(async () => {
  t = await startTestApiServer();
});

afterAll(async () => {
  await t?.stop();
});

function lines(res: HttpResponse): string[] {
  return res.text.split('\n').filter((l) => l !== '');
}

describe.each(['livez', 'readyz', 'healthz'])('/%s', (endpoint) => {
  it('answers 200 ok', async () => {
    const res = await t.client.get(`/${endpoint}`);
    expect(res.status).toBe(200);
    expect(res.text).toBe('ok');
    expect(String(res.headers['content-type'])).toMatch(/^text\/plain/);
  });

  it('lists every check with ?verbose and ends with "healthz check passed"', async () => {
    const res = await t.client.get(`/${endpoint}?verbose`);
    expect(res.status).toBe(200);
    const l = lines(res);
    expect(l[0]).toBe('[+]ping ok');
    expect(l).toEqual(expect.arrayContaining(['[+]ping ok', '[+]log ok', '[+]store ok']));
    expect(l.some((x) => /^\[\+\]poststarthook\/[a-z0-9/-]+ ok$/.test(x))).toBe(true);
    if (endpoint === 'readyz') expect(l).toContain('[+]shutdown ok');
    expect(l.at(-1)).toBe('healthz check passed');
    for (const x of l.slice(0, -1)) expect(x).toMatch(/^\[\+\]\S+ ok$/);
  });

  it('reports an excluded check as "excluded: ok"', async () => {
    const res = await t.client.get(`/${endpoint}?verbose&exclude=store`);
    expect(res.status).toBe(200);
    const l = lines(res);
    expect(l).toContain('[+]store excluded: ok');
    expect(l).not.toContain('[+]store ok');
    expect(l).toContain('[+]ping ok');
    expect(l.at(-1)).toBe('healthz check passed');
  });

  it('serves one check under /<endpoint>/<check>', async () => {
    const ping = await t.client.get(`/${endpoint}/ping`);
    expect(ping.status).toBe(200);
    expect(ping.text).toBe('ok');
    const store = await t.client.get(`/${endpoint}/store`);
    expect(store.status).toBe(200);
    expect(store.text).toBe('ok');
  });

  it('answers 404 for an unknown check', async () => {
    const res = await t.client.get(`/${endpoint}/no-such-check`);
    expect(res.status).toBe(404);
  });
});

it('/readyz/poststarthook/<hook> serves a post-start hook check', async () => {
  const verbose = lines(await t.client.get('/readyz?verbose'));
  const hook = verbose.map((l) => /^\[\+\](poststarthook\/\S+) ok$/.exec(l)?.[1]).find((x) => x !== undefined);
  expect(hook).toBeDefined();
  const res = await t.client.get(`/readyz/${hook as string}`);
  expect(res.status).toBe(200);
  expect(res.text).toBe('ok');
});

describe('/metrics', () => {
  it('exposes request, storage, etcd and process metrics in Prometheus text', async () => {
    const ns = `metrics-${randomBytes(3).toString('hex')}`;
    expect(
      (await t.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }))
        .status,
    ).toBe(201);
    expect(
      (
        await t.client.post(`/api/v1/namespaces/${ns}/configmaps`, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'm' },
        })
      ).status,
    ).toBe(201);
    expect((await t.client.get(`/api/v1/namespaces/${ns}/configmaps`)).status).toBe(200);
    expect((await t.client.get(`/api/v1/namespaces/${ns}/configmaps/absent`)).status).toBe(404);

    // apiserver_storage_objects is polled after start-up: wait for its first value.
    const text = await waitFor('apiserver_storage_objects for namespaces', async () => {
      const res = await t.client.get('/metrics');
      return res.status === 200 && /^apiserver_storage_objects\{resource="namespaces"\} \d+$/m.test(res.text)
        ? res
        : undefined;
    });
    expect(String(text.headers['content-type'])).toMatch(/^text\/plain/);
    const m = text.text;

    const requestLines = m.split('\n').filter((l) => l.startsWith('apiserver_request_total{'));
    const has = (labels: Record<string, string>): boolean =>
      requestLines.some((l) => Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
    expect(
      has({
        verb: 'POST',
        group: '',
        version: 'v1',
        resource: 'configmaps',
        scope: 'namespace',
        component: 'apiserver',
        code: '201',
      }),
    ).toBe(true);
    expect(has({ verb: 'LIST', resource: 'configmaps', scope: 'namespace', code: '200' })).toBe(true);
    expect(has({ verb: 'GET', resource: 'configmaps', scope: 'resource', code: '404' })).toBe(true);
    expect(requestLines.every((l) => /subresource="[^"]*"/.test(l))).toBe(true);

    expect(m).toMatch(/^apiserver_request_duration_seconds_bucket\{/m);
    expect(m).toMatch(/^apiserver_storage_objects\{resource="namespaces"\} ([4-9]|\d\d+)$/m); // the four system namespaces at least
    expect(m).toMatch(/^etcd_request_duration_seconds_bucket\{[^}]*operation="create"[^}]*\}/m);
    expect(m).toMatch(/^etcd_request_duration_seconds_count\{[^}]*type="configmaps"[^}]*\} \d+/m);
    expect(m).toMatch(/^process_cpu_seconds_total \d/m);
  });
});

describe('with etcd stopped', () => {
  let down: TestApiServer;

  beforeAll(async () => {
    down = await startTestApiServer({
      args: ['--store-healthcheck-timeout=500ms', '--store-readycheck-timeout=500ms'],
    });
  });

  afterAll(async () => {
    await down?.stop();
  });

  it('the store check fails: 500 and "[-]store failed: reason withheld"', async () => {
    expect((await down.client.get('/readyz')).status).toBe(200);
    await down.etcd.stop();

    const readyz = await waitFor(
      'readyz to fail',
      async () => {
        const res = await down.client.get('/readyz?verbose');
        return res.status === 500 ? res : undefined;
      },
      { timeoutMs: 15_000 },
    );
    const l = lines(readyz);
    expect(l).toContain('[-]store failed: reason withheld');
    expect(l).toContain('[+]ping ok');
    expect(l.at(-1)).not.toBe('healthz check passed');
    expect(readyz.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|deadline/i);

    for (const endpoint of ['livez', 'healthz']) {
      const res = await down.client.get(`/${endpoint}`);
      expect(res.status).toBe(500);
      expect(lines(res)).toContain('[-]store failed: reason withheld');
    }
    const one = await down.client.get('/readyz/store');
    expect(one.status).toBe(500);

    // Excluding the failing check makes the endpoint pass again.
    const excluded = await down.client.get('/readyz?exclude=store');
    expect(excluded.status).toBe(200);
  });
});

describe('graceful shutdown', () => {
  it('readyz fails at once while requests are still served for --shutdown-delay-duration, then the server stops', async () => {
    const s = await startTestApiServer({ etcd: t.etcd, args: ['--shutdown-delay-duration=2s'] });
    try {
      expect((await s.client.get('/readyz')).status).toBe(200);
      const began = Date.now();
      let finished = false;
      const done = s.server.shutdown().then(() => {
        finished = true;
      });

      const readyz = await s.client.get('/readyz?verbose');
      expect(readyz.status).toBe(500);
      expect(lines(readyz)).toContain('[-]shutdown failed: reason withheld');
      expect(lines(readyz)).toContain('[+]store ok');
      const plain = await s.client.get('/readyz');
      expect(plain.status).toBe(500);
      expect(lines(plain)).toContain('[-]shutdown failed: reason withheld');

      // Still serving other requests during the delay.
      expect((await s.client.get('/livez')).status).toBe(200);
      const ns = await s.client.get('/api/v1/namespaces/default');
      expect(ns.status).toBe(200);
      const created = await s.client.post('/api/v1/namespaces/default/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `during-shutdown-${randomBytes(3).toString('hex')}` },
      });
      expect(created.status).toBe(201);
      expect(finished).toBe(false);

      await done;
      expect(Date.now() - began).toBeGreaterThanOrEqual(1900);
      await expect(s.client.get('/readyz')).rejects.toThrow();
    } finally {
      await s.stop();
    }
  });
});
