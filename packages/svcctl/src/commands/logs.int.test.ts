// svcctl logs through the API server's pods/log: a real HTTPS server in this process stands in for
// the node agent's /containerLogs (it demands the API server's client certificate, as the agent
// does); stock kubectl reads the same logs for comparison.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestCa, waitFor } from '@svc/testing';
import { expectSameAsKubectl, startSvcctlEnv, type RunResult, type SvcctlEnv } from '../svcctl-testing.js';

/** `/containerLogs/<ns>/<pod>/<container>`: fixed lines, `previous`, `tailLines`, and followers fed by `push`. */
class NodeLogs {
  readonly logs = new Map<string, { current: string[]; previous?: string[] }>();
  private readonly followers = new Set<ServerResponse>();
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

  get followerCount(): number {
    return this.followers.size;
  }

  push(line: string): void {
    for (const f of this.followers) f.write(`${line}\n`);
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'https://x');
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    const log = this.logs.get(m ? `${m[1]}/${m[2]}/${m[3]}` : '');
    const q = url.searchParams;
    let lines = q.get('previous') === 'true' ? log?.previous : log?.current;
    if (!lines) {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end(`container "${m?.[3] ?? ''}" in pod "${m?.[2] ?? ''}" has no log`);
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
    this.followers.add(res);
    res.on('close', () => this.followers.delete(res));
  }

  async stop(): Promise<void> {
    for (const f of this.followers) f.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

describe.each([['kubernetes'], ['svc']])('svcctl logs (--naming=%s)', (naming) => {
  let env: SvcctlEnv;
  let dir: string;
  const node = new NodeLogs();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svcctl-logs-'));
    const servingCa = await createTestCa('node-ca');
    const clientCa = await createTestCa('apiserver-client-ca');
    const serving = await servingCa.issue({
      commonName: 'node-a',
      usages: ['server'],
      hosts: ['localhost', '127.0.0.1'],
    });
    const client = await clientCa.issue({ commonName: 'apiserver-node-client', organizations: ['system:masters'] });
    await writeFile(join(dir, 'ca.crt'), servingCa.certPem);
    await writeFile(join(dir, 'client.crt'), client.certPem);
    await writeFile(join(dir, 'client.key'), client.keyPem);
    await node.start({ cert: serving.certPem, key: serving.keyPem, clientCa: clientCa.certPem });
    node.logs.set('default/one/app', { current: ['line 1', 'line 2', 'line 3'], previous: ['old 1', 'old 2'] });
    node.logs.set('default/two/a', { current: ['from a'] });
    node.logs.set('default/two/b', { current: ['from b 1', 'from b 2'] });
    env = await startSvcctlEnv({
      args: [
        ...(naming === 'kubernetes' ? ['--naming=kubernetes'] : []),
        '--svclet-client-certificate',
        join(dir, 'client.crt'),
        '--svclet-client-key',
        join(dir, 'client.key'),
        '--svclet-certificate-authority',
        join(dir, 'ca.crt'),
      ],
    });
    await env.ok(['create', 'serviceaccount', 'default']);
    const pod = (name: string, containers: string[], nodeName?: string): object => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app: 'logs' } },
      spec: { ...(nodeName ? { nodeName } : {}), containers: containers.map((n) => ({ name: n, image: 'busybox' })) },
    });
    await env.ok([
      'create',
      '-f',
      await env.manifest(
        { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' } },
        pod('one', ['app'], 'node-a'),
        pod('two', ['a', 'b'], 'node-a'),
      ),
    ]);
    // A node's addresses and agent port are status, which create ignores.
    await env.ok([
      'patch',
      'node',
      'node-a',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
          daemonEndpoints: { kubeletEndpoint: { Port: node.port } },
        },
      }),
    ]);
    await env.ok([
      'create',
      '-f',
      await env.manifest({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'pending' },
        spec: { containers: [{ name: 'app', image: 'busybox' }] },
      }),
    ]);
  });
  afterAll(async () => {
    await env?.stop();
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const same = (args: string[]): Promise<RunResult> => expectSameAsKubectl(env, args);

  it('prints a container log as kubectl does (--tail, --previous, -c, --prefix, --all-containers, -l)', async () => {
    expect((await same(['logs', 'one'])).stdout).toBe('line 1\nline 2\nline 3\n');
    expect((await same(['logs', 'pod/one', '--tail=1'])).stdout).toBe('line 3\n');
    expect((await same(['logs', 'one', '--previous'])).stdout).toBe('old 1\nold 2\n');
    expect((await same(['logs', 'two', '-c', 'b'])).stdout).toBe('from b 1\nfrom b 2\n');
    await same(['logs', 'two', 'b']);
    const defaulted = await same(['logs', 'two']);
    expect(defaulted.stderr).toBe('Defaulted container "a" out of: a, b\n');
    await same(['logs', 'one', '--prefix']);
    await same(['logs', 'two', '--all-containers']);
    await same(['logs', 'two', '--all-containers', '--prefix=false']);
    await same(['logs', '-l', 'app=logs']);
    await same(['logs', '-l', 'app=logs', '--prefix', '--tail=1']);
  });

  it('reports what it cannot log as kubectl does', async () => {
    expect((await same(['logs', 'missing'])).code).toBe(1);
    expect((await same(['logs', 'two', '-c', 'nope'])).code).toBe(1);
    expect((await same(['logs', 'two', '-c', 'b', '--previous'])).code).toBe(1);
    // A pod not on a node yet: the API server's answer, as kubectl shows it.
    await same(['logs', 'pending']);
    expect((await same(['logs'])).code).toBe(1);
    expect((await same(['logs', 'one', '--since=5x'])).code).toBe(1);
    expect((await same(['logs', 'one', '--since=5'])).code).toBe(1);
    await same(['logs', 'one', '--since=1h']);
  });

  it('follows a log with -f until stopped', async () => {
    const stop = new AbortController();
    let seen = '';
    const running = env.run(['logs', '-f', 'one'], { signal: stop.signal, onOut: (s) => (seen += s) });
    await waitFor(
      'the follower and the first lines',
      () => node.followerCount === 1 && seen === 'line 1\nline 2\nline 3\n',
    );
    node.push('line 4');
    await waitFor('the pushed line', () => seen.endsWith('line 4\n'));
    stop.abort();
    expect((await running).code).toBe(0);
  });
});
