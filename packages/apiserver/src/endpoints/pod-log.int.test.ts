// pods/log end to end: a real HTTPS server in this process stands in for a node agent
// (it demands the API server's client certificate), a Node points at it, pods are bound to it,
// and stock kubectl reads logs through the API server.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createTestCa,
  closedPort,
  startKubectlEnv,
  waitFor,
  type KubectlEnv,
  createDefaultServiceAccount,
} from '@svc/testing';
import { createServer as createTcpServer } from 'node:net';
import { SvcletClient } from '../server/svclet-client.js';
import { parseFlags, refusal } from '../options-testing.js';

const CLIENT_CN = 'svc-apiserver-svclet-client';

interface Seen {
  path: string;
  query: URLSearchParams;
  host: string;
  clientCn: string;
}

/** A node agent's `/containerLogs` endpoint over mTLS, with logs the test writes and followers it can feed. */
class FakeSvclet {
  readonly seen: Seen[] = [];
  readonly logs = new Map<string, { current: string[]; previous?: string[] }>();
  private readonly followers = new Map<string, Set<ServerResponse>>();
  server!: Server;
  port = 0;

  async start(tls: { cert: string; key: string; clientCa: string }): Promise<void> {
    this.server = createServer(
      { cert: tls.cert, key: tls.key, ca: tls.clientCa, requestCert: true, rejectUnauthorized: true },
      (req, res) => this.serve(req, res),
    );
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as AddressInfo).port;
  }

  followerCount(key: string): number {
    return this.followers.get(key)?.size ?? 0;
  }

  /** Appends a line to a container's log and sends it to its followers. */
  push(key: string, line: string): void {
    this.logs.get(key)?.current.push(line);
    for (const f of this.followers.get(key) ?? []) f.write(`${line}\n`);
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'https://x');
    const cert = (req.socket as TLSSocket).getPeerCertificate();
    this.seen.push({
      path: url.pathname,
      query: url.searchParams,
      host: req.headers.host ?? '',
      clientCn: String(cert.subject?.CN ?? ''),
    });
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    const key = m ? `${m[1]}/${m[2]}/${m[3]}` : '';
    const log = this.logs.get(key);
    if (!log) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`container ${key} not found`);
      return;
    }
    const q = url.searchParams;
    let lines = q.get('previous') === 'true' ? log.previous : log.current;
    if (!lines) {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end(`previous terminated container "${m?.[3] ?? ''}" in pod "${m?.[2] ?? ''}" not found`);
      return;
    }
    const tail = q.get('tailLines');
    if (tail !== null) lines = lines.slice(Math.max(0, lines.length - Number(tail)));
    res.writeHead(200, { 'content-type': 'text/plain' });
    for (const l of lines) res.write(`${l}\n`);
    if (q.get('follow') !== 'true') {
      res.end();
      return;
    }
    const set = this.followers.get(key) ?? new Set();
    this.followers.set(key, set);
    set.add(res);
    res.on('close', () => set.delete(res));
  }

  async stop(): Promise<void> {
    for (const set of this.followers.values()) for (const f of set) f.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

describe('pods/log', () => {
  let env: KubectlEnv;
  let dir: string;
  const svclet = new FakeSvclet();
  let pki: {
    caFile: string;
    certFile: string;
    keyFile: string;
    caPem: string;
    clientCert: string;
    clientKey: string;
    clientCa: string;
  };
  const path = (pod: string, q = ''): string => `/api/v1/namespaces/default/pods/${pod}/log${q ? `?${q}` : ''}`;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-pod-log-'));
    const servingCa = await createTestCa('svclet-ca');
    const clientCa = await createTestCa('apiserver-client-ca');
    const serving = await servingCa.issue({
      commonName: 'node-a',
      usages: ['server'],
      hosts: ['localhost', '127.0.0.1'],
    });
    const client = await clientCa.issue({ commonName: CLIENT_CN, organizations: ['system:masters'] });
    pki = {
      caFile: join(dir, 'svclet-ca.crt'),
      certFile: join(dir, 'client.crt'),
      keyFile: join(dir, 'client.key'),
      caPem: servingCa.certPem,
      clientCert: client.certPem,
      clientKey: client.keyPem,
      clientCa: clientCa.certPem,
    };
    await writeFile(pki.caFile, servingCa.certPem);
    await writeFile(pki.certFile, client.certPem);
    await writeFile(pki.keyFile, client.keyPem);
    await svclet.start({ cert: serving.certPem, key: serving.keyPem, clientCa: clientCa.certPem });
    svclet.logs.set('default/one/app', { current: ['line 1', 'line 2', 'line 3'], previous: ['old 1', 'old 2'] });
    svclet.logs.set('default/two/b', { current: ['from b'] });
    env = await startKubectlEnv({
      args: [
        '--svclet-client-certificate',
        pki.certFile,
        '--svclet-client-key',
        pki.keyFile,
        '--svclet-certificate-authority',
        pki.caFile,
      ],
    });
    const c = env.server.client;
    await createDefaultServiceAccount(c, 'default');
    const node = (name: string, status: object) =>
      c.post('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name }, status });
    const pod = (name: string, containers: string[], nodeName?: string) =>
      c.post('/api/v1/namespaces/default/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name },
        spec: { ...(nodeName ? { nodeName } : {}), containers: containers.map((n) => ({ name: n, image: 'busybox' })) },
      });
    const closed = await closedPort();
    const created = await Promise.all([
      // Hostname comes first in the default preference: the agent is reached as `localhost`.
      node('node-a', {
        addresses: [
          { type: 'InternalIP', address: '127.0.0.1' },
          { type: 'Hostname', address: 'localhost' },
        ],
        daemonEndpoints: { kubeletEndpoint: { Port: svclet.port } },
      }),
      node('node-closed', {
        addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
        daemonEndpoints: { kubeletEndpoint: { Port: closed } },
      }),
      node('node-noaddr', { addresses: [] }),
      pod('one', ['app'], 'node-a'),
      pod('two', ['a', 'b'], 'node-a'),
      pod('pending', ['app']),
      pod('lost', ['app'], 'node-closed'),
      pod('noaddr', ['app'], 'node-noaddr'),
      pod('orphan', ['app'], 'node-missing'),
    ]);
    for (const r of created) expect(r.status).toBe(201);
  });

  afterAll(async () => {
    await env?.stop();
    await svclet.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("kubectl logs prints the container log, fetched with the API server's client certificate from the preferred address", async () => {
    const before = svclet.seen.length;
    const r = await env.ok(['logs', 'one']);
    expect(r.stdout).toBe('line 1\nline 2\nline 3\n');
    const seen = svclet.seen.slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.path).toBe('/containerLogs/default/one/app');
    expect(seen[0]?.clientCn).toBe(CLIENT_CN);
    expect(seen[0]?.host).toBe(`localhost:${svclet.port}`);
  });

  it('kubectl logs --tail, --previous and -c pass through', async () => {
    expect((await env.ok(['logs', 'one', '--tail=1'])).stdout).toBe('line 3\n');
    expect(svclet.seen.at(-1)?.query.get('tailLines')).toBe('1');
    expect((await env.ok(['logs', 'one', '--previous'])).stdout).toBe('old 1\nold 2\n');
    expect(svclet.seen.at(-1)?.query.get('previous')).toBe('true');
    expect((await env.ok(['logs', 'two', '-c', 'b'])).stdout).toBe('from b\n');
    expect(svclet.seen.at(-1)?.path).toBe('/containerLogs/default/two/b');
  });

  it("passes the agent's 400 through as BadRequest with its text", async () => {
    const r = await env.server.client.get(path('two', 'container=b&previous=true'));
    expect(r.status).toBe(400);
    expect(r.json()).toMatchObject({
      kind: 'Status',
      reason: 'BadRequest',
      message: 'previous terminated container "b" in pod "two" not found',
    });
    const k = await env.run(['logs', 'two', '-c', 'b', '--previous']);
    expect(k.code).not.toBe(0);
    expect(k.stderr).toMatch(/previous terminated container "b" in pod "two" not found/);
  });

  it('kubectl logs -f streams new lines as they come and the upstream stream ends when kubectl goes', async () => {
    const child = spawn('kubectl', ['logs', '-f', 'one'], {
      env: { ...process.env, KUBECONFIG: env.server.svcconfigPath, HOME: env.home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      await waitFor('the existing lines', () => out.includes('line 3\n'), { timeoutMs: 30_000 });
      await waitFor('the follower', () => svclet.followerCount('default/one/app') === 1);
      expect(svclet.seen.at(-1)?.query.get('follow')).toBe('true');
      svclet.push('default/one/app', 'line 4');
      await waitFor('the new line', () => out.endsWith('line 4\n'));
      svclet.push('default/one/app', 'line 5');
      await waitFor('another new line', () => out.endsWith('line 5\n'));
    } finally {
      child.kill('SIGTERM');
    }
    await exited;
    await waitFor('the agent to see the stream end', () => svclet.followerCount('default/one/app') === 0);
  });

  it("several containers and none named: 400 with Kubernetes' message; an unknown container: 400", async () => {
    const r = await env.server.client.get(path('two'));
    expect(r.status).toBe(400);
    expect(r.json()).toMatchObject({
      reason: 'BadRequest',
      message: 'a container name must be specified for pod two, choose one of: [a b]',
    });
    const bad = await env.server.client.get(path('one', 'container=nope'));
    expect(bad.status).toBe(400);
    expect(bad.json()).toMatchObject({ reason: 'BadRequest', message: 'container nope is not valid for pod one' });
  });

  it('a pod not yet scheduled answers 204 with no body, as Kubernetes (kubectl prints nothing)', async () => {
    const r = await env.server.client.get(path('pending'));
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    const k = await env.run(['logs', 'pending']);
    expect(k.code).toBe(0);
    expect(k.stdout).toBe('');
  });

  it('an unreachable node: 500 with the transport error; a node without usable address: 500; a missing node: 404', async () => {
    const lost = await env.server.client.get(path('lost'));
    expect(lost.status).toBe(500);
    const status = lost.json<{ reason?: string; message: string }>();
    expect(status.reason).toBeUndefined();
    expect(status.message).toMatch(
      /^Get "https:\/\/127\.0\.0\.1:\d+\/containerLogs\/default\/lost\/app": .*ECONNREFUSED/,
    );
    const k = await env.run(['logs', 'lost']);
    expect(k.code).not.toBe(0);
    expect(k.stderr).toMatch(/Error from server: Get "https:\/\/127\.0\.0\.1:\d+\/containerLogs\/default\/lost\/app"/);

    const noaddr = await env.server.client.get(path('noaddr'));
    expect(noaddr.status).toBe(500);
    expect(noaddr.json()).toMatchObject({ message: 'no preferred addresses found; known addresses: []' });
    const orphan = await env.server.client.get(path('orphan'));
    expect(orphan.status).toBe(404);
    expect(orphan.json()).toMatchObject({ reason: 'NotFound', message: 'nodes "node-missing" not found' });
  });

  it('options are validated as PodLogOptions; a missing pod is 404', async () => {
    const r = await env.server.client.get(path('one', 'tailLines=-1&limitBytes=0'));
    expect(r.status).toBe(422);
    expect(r.json()).toMatchObject({ reason: 'Invalid', details: { kind: 'PodLogOptions', name: 'one' } });
    expect(r.json<{ message: string }>().message).toMatch(
      /tailLines: Invalid value: -1: must be greater than or equal to 0/,
    );
    expect((await env.server.client.get(path('one', 'follow=maybe'))).status).toBe(400);
    const missing = await env.server.client.get(path('nobody'));
    expect(missing.status).toBe(404);
    expect(missing.json()).toMatchObject({ message: 'pods "nobody" not found' });
    expect((await env.server.client.post(path('one'), {})).status).toBe(405);
  });

  it('discovery lists pods/log with the get verb only', async () => {
    const doc = (await env.server.client.get('/api/v1')).json<{
      resources: Array<{ name: string; verbs: string[]; kind: string }>;
    }>();
    expect(doc.resources.find((r) => r.name === 'pods/log')).toEqual({
      name: 'pods/log',
      singularName: '',
      namespaced: true,
      kind: 'Pod',
      verbs: ['get'],
    });
  });

  it('the node agent client verifies serving certificates only when given a CA, and presents its certificate', async () => {
    const url = new URL(`https://127.0.0.1:${svclet.port}/containerLogs/default/one/app`);
    const flags = {
      clientCertificate: pki.certFile,
      clientKey: pki.keyFile,
      timeoutMs: 5000,
      preferredAddressTypes: ['InternalIP'],
    };
    const unverified = new SvcletClient(flags);
    const ok = await unverified.get(url, new AbortController().signal);
    expect(ok.statusCode).toBe(200);
    ok.resume();
    unverified.close();
    const otherCa = await createTestCa('someone-else');
    await writeFile(join(dir, 'other-ca.crt'), otherCa.certPem);
    const strict = new SvcletClient({ ...flags, certificateAuthority: join(dir, 'other-ca.crt') });
    await expect(strict.get(url, new AbortController().signal)).rejects.toThrow(
      /^Get "https:\/\/127\.0\.0\.1:\d+\/containerLogs\/default\/one\/app": /,
    );
    strict.close();
    const anonymous = new SvcletClient({ ...flags, clientCertificate: undefined, clientKey: undefined });
    await expect(anonymous.get(url, new AbortController().signal)).rejects.toThrow();
    anonymous.close();
  });

  it('--svclet-timeout bounds connecting and the TLS handshake', async () => {
    // Accepts connections and never answers the TLS handshake.
    const held: Socket[] = [];
    const silent = createTcpServer((sock) => {
      held.push(sock);
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const port = (silent.address() as AddressInfo).port;
    const client = new SvcletClient({ timeoutMs: 200, preferredAddressTypes: ['InternalIP'] });
    const started = Date.now();
    await expect(
      client.get(new URL(`https://127.0.0.1:${port}/containerLogs/a/b/c`), new AbortController().signal),
    ).rejects.toThrow(`Get "https://127.0.0.1:${port}/containerLogs/a/b/c": dial tcp 127.0.0.1:${port}: i/o timeout`);
    expect(Date.now() - started).toBeLessThan(3000);
    client.close();
    for (const sock of held) sock.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  });
});

describe('--svclet-* flags', () => {
  it("defaults as Kubernetes' --kubelet-* flags", () => {
    expect(parseFlags().svclet).toEqual({
      timeoutMs: 5000,
      preferredAddressTypes: ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'],
    });
    expect(
      parseFlags('--svclet-preferred-address-types=InternalIP,Hostname', '--svclet-timeout=2s').svclet,
    ).toMatchObject({ timeoutMs: 2000, preferredAddressTypes: ['InternalIP', 'Hostname'] });
  });

  it('refuses unknown address types and a certificate without its key', () => {
    expect(refusal(['--svclet-preferred-address-types=InternalIP,Bogus']).message).toMatch(
      /--svclet-preferred-address-types: unsupported value "Bogus"/,
    );
    expect(refusal(['--svclet-client-certificate=/x.crt']).message).toMatch(
      /--svclet-client-certificate and --svclet-client-key must be given together/,
    );
  });
});
