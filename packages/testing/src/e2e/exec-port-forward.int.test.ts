// `kubectl exec` and `kubectl port-forward` end to end on `./scripts/cluster.sh up` (real
// processes, needs the build): stock kubectl → svc-apiserver → svclet → svc-runtime's streaming
// server and back, over WebSocket (kubectl 1.32's default) and SPDY (its fallback), plus a
// WebSocket client of our own for the protocol details kubectl does not show (negotiation, the
// v5 close signal, resize, the Status on the error channel, the normal close).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { networkInterfaces, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import WebSocket from 'ws';
import YAML from 'yaml';
import { group } from '@svc/api';
import { clusterScriptEnv } from '../cluster-script-env.js';
import { kubectl, type KubectlResult } from '../kubectl.js';
import { runCommand } from '../run-command.js';
import { waitFor } from '../wait.js';
import { httpGetLocal, sha256Hex } from '../http-get.js';

const ROOT = resolve(__dirname, '../../../..');
const MIB = 1024 * 1024;
/** The web pod's payload: 20 MiB of a repeated pattern, hashed on both ends. */
const BIG_BYTES = 20 * MIB;

/**
 * The nodes' and pods' address: the machine's first non-loopback IPv4 address, as proxying to
 * pods, services and nodes refuses loopback addresses (as Kubernetes does) and Services get
 * endpoints only for such an address.
 */
const NODE_IP =
  Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address ?? '127.0.0.1';

const log = (s: string): void => {
  process.stderr.write(`[exec-port-forward] ${s}\n`);
};

/**
 * A Node HTTP server for the web pod on every address: `/` answers a greeting, `/big`
 * BIG_BYTES bytes, `/echo/<status>...` the request it got as JSON with that status; a
 * WebSocket upgrade is accepted and answered with one text message naming its path. A second
 * server on `loopbackPort`, bound to 127.0.0.1 only, answers a greeting of its own.
 */
function webServerScript(port: number, loopbackPort: number): string {
  return [
    "const http = require('http');",
    "const crypto = require('crypto');",
    'const chunk = Buffer.alloc(1024 * 1024, "0123456789abcdef");',
    'const server = http.createServer((req, res) => {',
    "  if (req.url.startsWith('/echo/')) {",
    "    let body = '';",
    "    req.on('data', (b) => (body += b));",
    "    req.on('end', () => {",
    "      res.writeHead(Number(req.url.split('/')[2].split('?')[0]) || 200, { 'content-type': 'application/json', 'x-backend': 'web' });",
    '      res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));',
    '    });',
    '    return;',
    '  }',
    `  if (req.url !== '/big') return res.end('hello from the pod\\n');`,
    `  res.writeHead(200, { 'content-length': ${BIG_BYTES} });`,
    `  let left = ${BIG_BYTES / MIB};`,
    '  const more = () => { while (left > 0) { left--; if (!res.write(chunk)) return res.once("drain", more); } res.end(); };',
    '  more();',
    '});',
    "server.on('upgrade', (req, socket) => {",
    "  const key = req.headers['sec-websocket-key'] + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';",
    "  const accept = crypto.createHash('sha1').update(key).digest('base64');",
    "  socket.write('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Accept: ' + accept + '\\r\\n\\r\\n');",
    "  const text = Buffer.from('upgraded at ' + req.url);",
    '  socket.write(Buffer.concat([Buffer.from([0x81, text.length]), text]));',
    "  socket.on('data', () => undefined);",
    '});',
    `server.listen(${port}, '0.0.0.0');`,
    `http.createServer((req, res) => res.end('hello from the pod loopback\\n')).listen(${loopbackPort}, '127.0.0.1');`,
  ].join('\n');
}

interface Forward {
  child: ChildProcess;
  localPort: number;
  output: () => string;
}

/** Starts `kubectl port-forward pod/<pod> :<port>` and waits for the local port it chose. */
async function portForward(o: {
  config: string;
  pod: string;
  port: number;
  env?: NodeJS.ProcessEnv;
}): Promise<Forward> {
  // -v=4: kubectl logs "fallback to secondary dialer" when its WebSocket tunnel is refused.
  const child = spawn('kubectl', ['port-forward', '-v=4', `pod/${o.pod}`, `:${o.port}`], {
    env: { ...process.env, KUBECONFIG: o.config, ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
  const localPort = await waitFor(
    'kubectl port-forward to report its local port',
    () => {
      if (child.exitCode !== null) throw new Error(`kubectl port-forward exited ${child.exitCode}: ${out}`);
      const m = /Forwarding from 127\.0\.0\.1:(\d+) ->/.exec(out);
      return m ? Number(m[1]) : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 50 },
  );
  return { child, localPort, output: () => out };
}

async function stopForward(f: Forward): Promise<void> {
  if (f.child.exitCode !== null) return;
  const exited = new Promise<void>((ok) => f.child.once('exit', () => ok()));
  f.child.kill('SIGTERM');
  await exited;
}

/** What our own WebSocket client saw of one exec. */
interface WsExec {
  protocol: string;
  stdout: string;
  stderr: string;
  status: { status?: string; reason?: string; details?: { causes?: Array<{ reason?: string; message?: string }> } };
  closeCode: number;
}

describe('kubectl exec and port-forward on cluster.sh up (stock kubectl)', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let admin: string;
  let server: string;
  let token: string;
  let ca: Buffer;
  let webPort: number;
  let loopbackPort: number;
  /** A port nothing listens on. */
  let closedPort: number;
  let upOk = false;

  const k = (args: string[], o: { stdin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<KubectlResult> =>
    o.env
      ? runCommand('kubectl', args, {
          env: { ...process.env, KUBECONFIG: admin, ...o.env },
          stdin: o.stdin,
          timeoutMs: 60_000,
        })
      : kubectl(admin, args, { stdin: o.stdin, timeoutMs: 60_000 });
  const kOk = async (...args: string[]): Promise<string> => {
    const r = await k(args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: exit ${r.code}\n${r.stderr}${r.stdout}`);
    return r.stdout;
  };

  /** One request to the API server with the admin's token (as `as`, when given); resolves with the answer. */
  function api(o: {
    method?: string;
    path: string;
    body?: string;
    headers?: Record<string, string>;
    as?: string;
  }): Promise<{ code: number; headers: Record<string, string | string[] | undefined>; body: string }> {
    const headers: Record<string, string> = { Authorization: `Bearer ${token}`, ...o.headers };
    if (o.as) headers['Impersonate-User'] = o.as;
    return new Promise((ok, fail) => {
      const req = httpsRequest(`${server}${o.path}`, { method: o.method ?? 'GET', ca, headers }, (res) => {
        let body = '';
        res.on('data', (b: Buffer) => (body += b.toString()));
        res.on('end', () => ok({ code: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', fail);
      req.end(o.body);
    });
  }

  /** Opens `pods/<pod>/exec` with our client, sends `stdin` then v5's close signal, and collects the channels. */
  function wsExec(o: {
    pod: string;
    command: string[];
    protocols: string[];
    stdin?: string;
    resize?: { Width: number; Height: number };
    tty?: boolean;
    as?: string;
  }): Promise<WsExec> {
    const q = new URLSearchParams();
    for (const c of o.command) q.append('command', c);
    q.set('stdout', 'true');
    if (o.tty) q.set('tty', 'true');
    else q.set('stderr', 'true');
    if (o.stdin !== undefined) q.set('stdin', 'true');
    const url = `${server.replace(/^https/, 'wss')}/api/v1/namespaces/default/pods/${o.pod}/exec?${q.toString()}`;
    const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
    if (o.as) headers['Impersonate-User'] = o.as;
    return new Promise((ok, fail) => {
      const ws = new WebSocket(url, o.protocols, { ca, headers });
      const seen = { stdout: '', stderr: '', error: '' };
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (b: Buffer) => (body += b.toString()));
        res.on('end', () => fail(new Error(`${res.statusCode} ${body}`)));
      });
      ws.on('error', fail);
      ws.on('open', () => {
        if (o.resize) ws.send(Buffer.concat([Buffer.of(4), Buffer.from(JSON.stringify(o.resize))]));
        if (o.stdin !== undefined) {
          ws.send(Buffer.concat([Buffer.of(0), Buffer.from(o.stdin)]));
          ws.send(Buffer.of(255, 0));
        }
      });
      ws.on('message', (data: Buffer) => {
        const text = data.subarray(1).toString();
        if (data[0] === 1) seen.stdout += text;
        else if (data[0] === 2) seen.stderr += text;
        else if (data[0] === 3) seen.error += text;
      });
      ws.on('close', (code) =>
        ok({
          protocol: ws.protocol,
          stdout: seen.stdout,
          stderr: seen.stderr,
          status: JSON.parse(seen.error || '{}') as WsExec['status'],
          closeCode: code,
        }),
      );
    });
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-exec-'));
    admin = join(dir, 'admin.svcconfig');
    const cluster = await clusterScriptEnv({ dir, extra: 3, nodeIp: NODE_IP });
    env = cluster.env;
    [webPort = 0, closedPort = 0, loopbackPort = 0] = cluster.extraPorts;
    const started = Date.now();
    const up = await runCommand('bash', ['scripts/cluster.sh', 'up', '--nodes', '1'], {
      env,
      cwd: ROOT,
      timeoutMs: 240_000,
    });
    log(`up: exit ${up.code} in ${Date.now() - started} ms`);
    if (up.code !== 0) throw new Error(`cluster.sh up failed:\n${up.stdout}${up.stderr}`);
    upOk = true;
    const config = YAML.parse(readFileSync(admin, 'utf8')) as {
      clusters: Array<{ cluster: { server: string; 'certificate-authority-data': string } }>;
      users: Array<{ user: { token: string } }>;
    };
    server = config.clusters[0]?.cluster.server ?? '';
    ca = Buffer.from(config.clusters[0]?.cluster['certificate-authority-data'] ?? '', 'base64');
    token = config.users[0]?.user.token ?? '';
    await kOk('run', 'shell', '--image=busybox', '--restart=Never', '--', 'sleep', '3600');
    await kOk(
      'run',
      'web',
      '--image=busybox',
      '--restart=Never',
      '--',
      'node',
      '-e',
      webServerScript(webPort, loopbackPort),
    );
    await kOk('wait', '--for=condition=Ready', 'pod/shell', 'pod/web', '--timeout=90s');
    await waitFor('the web pod to serve', async () => (await httpGetLocal(webPort, '/')).toString().includes('hello'), {
      timeoutMs: 20_000,
      intervalMs: 100,
    });
  }, 300_000);

  afterAll(async () => {
    if (!dir) return;
    const down = await runCommand('bash', ['scripts/cluster.sh', 'down'], { env, cwd: ROOT, timeoutMs: 120_000 });
    if (down.code !== 0) log(`down failed:\n${down.stdout}${down.stderr}`);
    let left = '';
    try {
      await waitFor(
        'no process of the cluster left',
        () => {
          left = spawnSync('pgrep', ['-af', dir], { encoding: 'utf8' }).stdout.trim();
          return left === '';
        },
        { timeoutMs: 10_000, intervalMs: 200 },
      );
    } catch {
      /* reported below */
    }
    await rm(dir, { recursive: true, force: true });
    expect(left).toBe('');
  }, 180_000);

  it('exec prints the output and exits with the command’s code', async () => {
    expect(upOk).toBe(true);
    expect(await k(['exec', 'shell', '--', 'echo', 'hi'])).toMatchObject({ code: 0, stdout: 'hi\n' });
    const r = await k(['exec', 'shell', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('out\n');
    expect(r.stderr).toBe('err\ncommand terminated with exit code 3\n');
    // The container's environment and working directory.
    const cwd = (await kOk('exec', 'shell', '--', 'pwd')).trim();
    expect(cwd).toMatch(/\/containers\/[0-9a-f]+\/work$/);
    expect((await kOk('exec', 'shell', '--', 'sh', '-c', 'echo $HOSTNAME')).trim()).toBe('shell');
  });

  it('exec runs as the container’s user; runAsNonRoot refuses root as kubelet does', async () => {
    const pod = (name: string, podSc: object, containers: Array<{ name: string; securityContext?: object }>) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name },
        spec: {
          securityContext: podSc,
          containers: containers.map((c) => ({ ...c, image: 'busybox', command: ['sleep', '3600'] })),
        },
      });
    const manifests = [
      pod('as-user', { runAsUser: 4321, runAsGroup: 5432, fsGroup: 6543, supplementalGroups: [7654] }, [
        { name: 'pod-user' },
        { name: 'own-user', securityContext: { runAsUser: 4322, runAsGroup: 5433 } },
      ]),
      pod('non-root-image', { runAsNonRoot: true }, [{ name: 'c' }]),
      pod('non-root-uid-0', {}, [{ name: 'c', securityContext: { runAsNonRoot: true, runAsUser: 0 } }]),
    ];
    for (const m of manifests) expect((await k(['apply', '-f', '-'], { stdin: m })).code).toBe(0);
    await kOk('wait', '--for=condition=Ready', 'pod/as-user', '--timeout=60s');
    const ids = ['sh', '-c', 'id -u; id -g; id -G'];
    // The pod's user and group; its fsGroup and supplementalGroups as supplementary groups.
    expect(await kOk('exec', 'as-user', '-c', 'pod-user', '--', ...ids)).toBe('4321\n5432\n5432 6543 7654\n');
    // A container's own securityContext wins over the pod's.
    expect(await kOk('exec', 'as-user', '-c', 'own-user', '--', ...ids)).toBe('4322\n5433\n5433 6543 7654\n');
    const waiting = async (name: string) => {
      const uid = await kOk('get', 'pod', name, '-o', 'jsonpath={.metadata.uid}');
      const state = await waitFor(`pod ${name} to wait with CreateContainerConfigError`, async () => {
        const w = JSON.parse(
          (await kOk('get', 'pod', name, '-o', 'jsonpath={.status.containerStatuses[0].state.waiting}')) || '{}',
        ) as { reason?: string; message?: string };
        return w.reason === 'CreateContainerConfigError' && w;
      });
      return { uid, message: state.message };
    };
    const image = await waiting('non-root-image');
    expect(image.message).toBe(
      `container has runAsNonRoot and image will run as root (pod: "non-root-image_default(${image.uid})", container: c)`,
    );
    const uid0 = await waiting('non-root-uid-0');
    expect(uid0.message).toBe(
      `container's runAsUser breaks non-root policy (pod: "non-root-uid-0_default(${uid0.uid})", container: c)`,
    );
    await kOk('delete', 'pod', 'as-user', 'non-root-image', 'non-root-uid-0', '--wait=false');
  });

  it('exec -i passes piped stdin and ends it', async () => {
    expect(
      await k(['exec', '-i', 'shell', '--', 'sh', '-c', 'tr a-z A-Z; echo done'], { stdin: 'piped in\n' }),
    ).toMatchObject({
      code: 0,
      stdout: 'PIPED IN\ndone\n',
    });
  });

  it('exec over SPDY when kubectl is told not to use WebSocket', async () => {
    const spdy = { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' };
    expect(await k(['exec', 'shell', '--', 'sh', '-c', 'echo spdy; exit 4'], { env: spdy })).toMatchObject({
      code: 4,
      stdout: 'spdy\n',
    });
    expect(await k(['exec', '-i', 'shell', '--', 'cat'], { env: spdy, stdin: 'through spdy\n' })).toMatchObject({
      code: 0,
      stdout: 'through spdy\n',
    });
  });

  it('answers errors as Kubernetes does, before any upgrade', async () => {
    const missingPod = await k(['exec', 'nope', '--', 'true']);
    expect(missingPod).toMatchObject({ code: 1, stderr: 'Error from server (NotFound): pods "nope" not found\n' });
    const badContainer = await k(['exec', 'shell', '-c', 'nope', '--', 'true']);
    expect(badContainer).toMatchObject({
      code: 1,
      stderr: 'Error from server (BadRequest): container nope is not valid for pod shell\n',
    });
    const noSuchCommand = await k(['exec', 'shell', '--', 'no-such-command']);
    expect(noSuchCommand.code).toBe(1);
    expect(noSuchCommand.stderr).toContain('executable file not found in $PATH');
    // A reader may get the pod but not exec into it: the SPDY POST is `create` on pods/exec.
    const rbac = group('rbac.authorization');
    const grants = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: `${rbac}/v1`,
          kind: 'Role',
          metadata: { name: 'pod-reader', namespace: 'default' },
          rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
        },
        {
          apiVersion: `${rbac}/v1`,
          kind: 'RoleBinding',
          metadata: { name: 'pod-reader', namespace: 'default' },
          roleRef: { apiGroup: rbac, kind: 'Role', name: 'pod-reader' },
          subjects: [{ apiGroup: rbac, kind: 'User', name: 'reader' }],
        },
      ],
    };
    expect(await k(['create', '-f', '-'], { stdin: JSON.stringify(grants) })).toMatchObject({ code: 0 });
    const forbidden = await k(['--as=reader', 'exec', 'shell', '--', 'true']);
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toContain(
      'pods "shell" is forbidden: User "reader" cannot create resource "pods/exec" in API group "" in the namespace "default"',
    );
    // ...and the WebSocket GET is `get` on pods/exec (Kubernetes 1.32).
    await expect(
      wsExec({ pod: 'shell', command: ['true'], protocols: ['v5.channel.k8s.io'], as: 'reader' }),
    ).rejects.toThrow(/^403 .*cannot get resource \\"pods\/exec\\"/);
    // A plain request (no upgrade) is refused with a Status.
    const plain = await new Promise<{ code: number; body: string }>((ok, fail) => {
      const req = httpsRequest(
        `${server}/api/v1/namespaces/default/pods/shell/exec?command=true&stdout=true`,
        { ca, headers: { Authorization: `Bearer ${token}` } },
        (res) => {
          let body = '';
          res.on('data', (b: Buffer) => (body += b.toString()));
          res.on('end', () => ok({ code: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', fail);
      req.end();
    });
    expect(plain.code).toBe(400);
    expect(JSON.parse(plain.body)).toMatchObject({
      kind: 'Status',
      reason: 'BadRequest',
      message: 'Upgrade request required',
    });
  });

  it('speaks v5.channel.k8s.io and v4 to a WebSocket client of our own', async () => {
    const v5 = await wsExec({
      pod: 'shell',
      command: ['sh', '-c', 'cat; echo gone >&2; exit 7'],
      protocols: ['v5.channel.k8s.io', 'v4.channel.k8s.io'],
      stdin: 'closed by signal\n',
      resize: { Width: 80, Height: 24 },
    });
    expect(v5).toMatchObject({
      protocol: 'v5.channel.k8s.io',
      stdout: 'closed by signal\n',
      stderr: 'gone\n',
      closeCode: 1000,
    });
    expect(v5.status).toMatchObject({
      status: 'Failure',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '7' }] },
    });
    const v4 = await wsExec({ pod: 'shell', command: ['echo', 'four'], protocols: ['v4.channel.k8s.io'] });
    expect(v4).toMatchObject({
      protocol: 'v4.channel.k8s.io',
      stdout: 'four\n',
      closeCode: 1000,
      status: { status: 'Success' },
    });
    await expect(wsExec({ pod: 'shell', command: ['true'], protocols: ['v1.channel.k8s.io'] })).rejects.toThrow(
      /^400 /,
    );
  });

  it('runs a TTY session on a pseudo-terminal that follows resize', async () => {
    const tty = await wsExec({
      pod: 'shell',
      command: ['sh', '-c', 'read x; tty; stty size'],
      protocols: ['v5.channel.k8s.io'],
      tty: true,
      resize: { Width: 100, Height: 30 },
      stdin: 'go\n',
    });
    expect(tty).toMatchObject({ protocol: 'v5.channel.k8s.io', closeCode: 1000, status: { status: 'Success' } });
    expect(tty.stdout).toMatch(/\/dev\/pts\/\d+\r\n30 100\r\n/);
  });

  it('port-forward reaches the pod’s port over WebSocket and SPDY, several connections at once', async () => {
    const direct = await httpGetLocal(webPort, '/big');
    expect(direct.length).toBe(BIG_BYTES);
    const want = sha256Hex(direct);
    for (const [name, extra] of [
      ['websocket', {}],
      ['spdy', { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' }],
    ] as const) {
      const f = await portForward({ config: admin, pod: 'web', port: webPort, env: extra });
      try {
        expect((await httpGetLocal(f.localPort, '/')).toString()).toBe('hello from the pod\n');
        const bodies = await Promise.all([1, 2, 3, 4].map(() => httpGetLocal(f.localPort, '/big')));
        for (const b of bodies) expect(sha256Hex(b)).toBe(want);
        let t = Date.now();
        await httpGetLocal(webPort, '/big');
        const directMs = Date.now() - t;
        t = Date.now();
        await httpGetLocal(f.localPort, '/big');
        const forwardedMs = Date.now() - t;
        log(`port-forward (${name}) of ${BIG_BYTES / MIB} MiB: ${forwardedMs} ms, direct ${directMs} ms`);
        // The WebSocket case really tunnels over WebSocket: kubectl did not fall back to SPDY.
        if (name === 'websocket') expect(f.output()).not.toMatch(/fallback to secondary dialer/);
      } finally {
        await stopForward(f);
      }
    }
    // Port-forward connects to the pod's localhost (the pod's IP here is the node's, not a
    // loopback address), so a server bound to 127.0.0.1 only is reached, as in Kubernetes.
    const f = await portForward({ config: admin, pod: 'web', port: loopbackPort });
    try {
      expect((await httpGetLocal(f.localPort, '/')).toString()).toBe('hello from the pod loopback\n');
    } finally {
      await stopForward(f);
    }
  });

  /**
   * `pods/web/portforward?ports=...` over plain WebSocket channels with our own client: sends
   * `request` on each port's data channel and collects every channel until the server closes.
   */
  function wsPortForward(o: { ports: number[]; protocol?: string; request: string }): Promise<{
    protocol: string;
    first: Record<number, number>;
    channels: Record<number, string>;
    closeCode: number;
  }> {
    const q = o.ports.length > 0 ? `?ports=${o.ports.join(',')}` : '';
    const url = `${server.replace(/^https/, 'wss')}/api/v1/namespaces/default/pods/web/portforward${q}`;
    const base64 = o.protocol === 'v4.base64.channel.k8s.io';
    return new Promise((ok, fail) => {
      const ws = new WebSocket(url, o.protocol ? [o.protocol] : [], {
        ca,
        headers: { Authorization: `Bearer ${token}` },
      });
      const first: Record<number, number> = {};
      const channels: Record<number, string> = {};
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (b: Buffer) => (body += b.toString()));
        res.on('end', () => fail(new Error(`${res.statusCode} ${body}`)));
      });
      ws.on('error', fail);
      ws.on('message', (data: Buffer, isBinary: boolean) => {
        const channel = base64 && !isBinary ? data[0]! - 0x30 : data[0]!;
        const body = base64 && !isBinary ? Buffer.from(data.subarray(1).toString(), 'base64') : data.subarray(1);
        // Each channel's first message is its port, 2 bytes little-endian.
        if (first[channel] === undefined) {
          first[channel] = body.readUInt16LE(0);
          if (channel % 2 === 0) {
            const payload = Buffer.from(o.request);
            ws.send(base64 ? `${channel}${payload.toString('base64')}` : Buffer.concat([Buffer.of(channel), payload]));
          }
          return;
        }
        channels[channel] = (channels[channel] ?? '') + body.toString();
      });
      ws.on('close', (code) => ok({ protocol: ws.protocol, first, channels, closeCode: code }));
    });
  }

  it('port-forward over plain WebSocket channels (v4.channel.k8s.io, base64), as the official clients speak it', async () => {
    const get = 'GET / HTTP/1.1\r\nHost: pod\r\nConnection: close\r\n\r\n';
    const binary = await wsPortForward({ ports: [webPort, closedPort], protocol: 'v4.channel.k8s.io', request: get });
    expect(binary.protocol).toBe('v4.channel.k8s.io');
    expect(binary.first).toEqual({ 0: webPort, 1: webPort, 2: closedPort, 3: closedPort });
    expect(binary.channels[0]).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nhello from the pod\n$/);
    expect(binary.channels[3]).toMatch(
      new RegExp(
        `^error forwarding port ${closedPort} to pod [0-9a-f]+, uid : failed to connect to .*:${closedPort}: `,
      ),
    );
    expect(binary.channels[1]).toBeUndefined();
    expect(binary.closeCode).toBe(1000);

    const text = await wsPortForward({ ports: [webPort], protocol: 'v4.base64.channel.k8s.io', request: get });
    expect(text.protocol).toBe('v4.base64.channel.k8s.io');
    expect(text.first).toEqual({ 0: webPort, 1: webPort });
    expect(text.channels[0]).toMatch(/hello from the pod\n$/);

    // Without ports the node agent refuses before any upgrade, as kubelet does.
    await expect(wsPortForward({ ports: [], protocol: 'v4.channel.k8s.io', request: get })).rejects.toThrow(
      /^400 query parameter "port" is required/,
    );

    // The official Python client's portforward(), unchanged.
    const script = [
      'import sys',
      'from kubernetes import client, config',
      'from kubernetes.stream import portforward',
      'config.load_kube_config(config_file=sys.argv[1])',
      'port = int(sys.argv[2])',
      "pf = portforward(client.CoreV1Api().connect_get_namespaced_pod_portforward, 'web', 'default', ports=str(port))",
      'sock = pf.socket(port)',
      'sock.setblocking(True)',
      "sock.sendall(b'GET / HTTP/1.1\\r\\nHost: pod\\r\\nConnection: close\\r\\n\\r\\n')",
      "data = b''",
      'while True:',
      '    chunk = sock.recv(65536)',
      '    if not chunk:',
      '        break',
      '    data += chunk',
      'sock.close()',
      'print(data.decode().split("\\r\\n\\r\\n", 1)[1], end="")',
      'print("error:", pf.error(port))',
    ].join('\n');
    await writeFile(join(dir, 'portforward.py'), script);
    const py = await runCommand('/usr/bin/python3', [join(dir, 'portforward.py'), admin, String(webPort)], {
      timeoutMs: 60_000,
    });
    expect({ code: py.code, stdout: py.stdout, stderr: py.stderr }).toEqual({
      code: 0,
      stdout: 'hello from the pod\nerror: None\n',
      stderr: '',
    });
  });

  it('attach follows the container’s output until it exits', async () => {
    await kOk(
      'run',
      'ticker',
      '--image=busybox',
      '--restart=Never',
      '--',
      'sh',
      '-c',
      'until [ -e stop ]; do echo tick; echo tock >&2; sleep 0.2; done',
    );
    await kOk('wait', '--for=condition=Ready', 'pod/ticker', '--timeout=60s');
    const child = spawn('kubectl', ['attach', 'ticker'], {
      env: { ...process.env, KUBECONFIG: admin },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
    try {
      await waitFor('attached output', () => out.includes('tick\n') && err.includes('tock\n'), { timeoutMs: 20_000 });
      await kOk('exec', 'ticker', '--', 'touch', 'stop');
      expect(await exited).toBe(0);
    } finally {
      child.kill();
    }
  });

  it('run -i --rm attaches stdin (stdinOnce) and deletes the pod; attach -i feeds a container’s open stdin', async () => {
    const run = await k(['run', '-i', '--rm', '--restart=Never', '--image=busybox', 'runi', '--', 'sh'], {
      stdin: 'echo hi from stdin; exit 0\n',
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('hi from stdin\n');
    expect(run.stdout).toContain('pod "runi" deleted');
    expect((await k(['get', 'pod', 'runi'])).stderr).toContain('pods "runi" not found');

    // stdin without stdinOnce stays open across attaches: each attach's line reaches the same shell.
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'reader' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'reader',
            image: 'busybox',
            stdin: true,
            command: ['sh', '-c', 'read a; echo got $a; read b; echo got $b; exit 5'],
          },
        ],
      },
    };
    await k(['create', '-f', '-'], { stdin: JSON.stringify(pod) });
    await kOk('wait', '--for=condition=Ready', 'pod/reader', '--timeout=60s');
    const first = spawn('kubectl', ['attach', '-i', 'reader'], {
      env: { ...process.env, KUBECONFIG: admin },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    first.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const firstExit = new Promise<void>((ok) => first.once('exit', () => ok()));
    first.stdin.end('one\n');
    try {
      await waitFor('the first line echoed', () => out.includes('got one\n'), { timeoutMs: 20_000 });
    } finally {
      first.kill();
    }
    await firstExit;
    const second = await k(['attach', '-i', 'reader'], { stdin: 'two\n' });
    expect(second.stdout).toContain('got two\n');
    expect((await kOk('logs', 'reader')).split('\n')).toEqual(['got one', 'got two', '']);
    const phase = await waitFor(
      'the reader pod to fail with exit code 5',
      async () => {
        const p = JSON.parse(await kOk('get', 'pod', 'reader', '-o', 'json')) as {
          status: { phase: string; containerStatuses?: Array<{ state?: { terminated?: { exitCode: number } } }> };
        };
        return p.status.phase === 'Failed' ? p.status.containerStatuses?.[0]?.state?.terminated?.exitCode : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(phase).toBe(5);
  });

  it('attach to a tty container joins its terminal, which follows resize', async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'terminal' },
      spec: {
        containers: [
          {
            name: 'terminal',
            image: 'busybox',
            stdin: true,
            tty: true,
            command: ['sh', '-c', 'while read x; do tty; stty size; done'],
          },
        ],
      },
    };
    await k(['create', '-f', '-'], { stdin: JSON.stringify(pod) });
    await kOk('wait', '--for=condition=Ready', 'pod/terminal', '--timeout=60s');
    const url = `${server.replace(/^https/, 'wss')}/api/v1/namespaces/default/pods/terminal/attach?stdin=true&stdout=true&tty=true`;
    const ws = new WebSocket(url, ['v5.channel.k8s.io'], { ca, headers: { Authorization: `Bearer ${token}` } });
    let out = '';
    ws.on('message', (data: Buffer) => {
      if (data[0] === 1) out += data.subarray(1).toString();
    });
    await new Promise<void>((ok, fail) => {
      ws.once('open', () => ok());
      ws.once('error', fail);
    });
    try {
      ws.send(Buffer.concat([Buffer.of(4), Buffer.from(JSON.stringify({ Width: 100, Height: 30 }))]));
      await waitFor(
        'the terminal’s size as sent',
        () => {
          ws.send(Buffer.concat([Buffer.of(0), Buffer.from('\n')]));
          return /\/dev\/pts\/\d+\r\n30 100\r\n/.test(out);
        },
        { timeoutMs: 20_000, intervalMs: 200 },
      );
    } finally {
      ws.close();
      await kOk('delete', 'pod', 'terminal', '--grace-period=0');
    }
  });

  it('proxies to a pod: method, path, query, body and headers pass through, the answer streams back', async () => {
    const base = `/api/v1/namespaces/default/pods/web:${webPort}/proxy`;
    expect(await kOk('get', '--raw', `${base}/`)).toBe('hello from the pod\n');
    expect(await kOk('get', '--raw', `/api/v1/namespaces/default/pods/http:web:${webPort}/proxy/`)).toBe(
      'hello from the pod\n',
    );
    const r = await api({
      method: 'POST',
      path: `${base}/echo/201/a%2Fb?x=1&y=two`,
      body: 'payload',
      headers: { 'Content-Type': 'text/plain', 'X-Custom': 'yes', Connection: 'keep-alive, X-Drop', 'X-Drop': 'no' },
    });
    expect(r.code).toBe(201);
    expect(r.headers['x-backend']).toBe('web');
    const seen = JSON.parse(r.body) as { method: string; url: string; body: string; headers: Record<string, string> };
    expect(seen).toMatchObject({ method: 'POST', url: '/echo/201/a%2Fb?x=1&y=two', body: 'payload' });
    expect(seen.headers).toMatchObject({ 'x-custom': 'yes', 'content-type': 'text/plain' });
    for (const h of ['authorization', 'impersonate-user', 'x-drop']) expect(seen.headers[h]).toBeUndefined();
    expect(seen.headers['x-forwarded-for']).toBeTruthy();
    // A WebSocket upgrade is passed on and joined.
    const ws = new WebSocket(`${server.replace(/^https/, 'wss')}${base}/ws?q=1`, {
      ca,
      headers: { Authorization: `Bearer ${token}` },
    });
    try {
      const first = await new Promise<string>((ok, fail) => {
        ws.once('message', (data: Buffer) => ok(data.toString()));
        ws.once('error', fail);
      });
      expect(first).toBe('upgraded at /ws?q=1');
    } finally {
      ws.terminate();
    }
  });

  it('authorizes proxy requests by their method on the proxy subresource, and answers errors as Kubernetes', async () => {
    const rbac = group('rbac.authorization');
    const grants = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: `${rbac}/v1`,
          kind: 'Role',
          metadata: { name: 'proxy-reader', namespace: 'default' },
          rules: [{ apiGroups: [''], resources: ['pods/proxy'], verbs: ['get'] }],
        },
        {
          apiVersion: `${rbac}/v1`,
          kind: 'RoleBinding',
          metadata: { name: 'proxy-reader', namespace: 'default' },
          roleRef: { apiGroup: rbac, kind: 'Role', name: 'proxy-reader' },
          subjects: [{ apiGroup: rbac, kind: 'User', name: 'proxier' }],
        },
      ],
    };
    expect(await k(['create', '-f', '-'], { stdin: JSON.stringify(grants) })).toMatchObject({ code: 0 });
    const path = `/api/v1/namespaces/default/pods/web:${webPort}/proxy/echo/200`;
    expect((await api({ path, as: 'proxier' })).code).toBe(200);
    for (const [method, verb] of [
      ['POST', 'create'],
      ['PUT', 'update'],
      ['PATCH', 'patch'],
      ['DELETE', 'delete'],
    ] as const) {
      const r = await api({ method, path, as: 'proxier' });
      expect(r.code).toBe(403);
      expect((JSON.parse(r.body) as { message: string }).message).toBe(
        `pods "web:${webPort}" is forbidden: User "proxier" cannot ${verb} resource "pods/proxy" in API group "" in the namespace "default"`,
      );
    }
    const status = async (p: string): Promise<{ code: number; reason?: string; message?: string }> => {
      const r = await api({ path: p });
      return { code: r.code, ...(JSON.parse(r.body) as { reason?: string; message?: string }) };
    };
    expect(await status('/api/v1/namespaces/default/pods/nope/proxy/')).toMatchObject({
      code: 404,
      reason: 'NotFound',
      message: 'pods "nope" not found',
    });
    expect(await status('/api/v1/namespaces/default/pods/a:b:c:d/proxy/')).toMatchObject({
      code: 400,
      message: 'invalid pod request "a:b:c:d"',
    });
    expect(await status(`/api/v1/namespaces/default/pods/web:${closedPort}/proxy/`)).toMatchObject({
      code: 503,
      reason: 'ServiceUnavailable',
      message: `error trying to reach service: dial tcp ${NODE_IP}:${closedPort}: connect: connection refused`,
    });
    // A pod that has no IP (never scheduled).
    await kOk(
      'run',
      'unplaced',
      '--image=busybox',
      '--restart=Never',
      '--overrides={"spec":{"nodeSelector":{"nowhere":"x"}}}',
      '--',
      'sleep',
      '60',
    );
    expect(await status('/api/v1/namespaces/default/pods/unplaced/proxy/')).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'address not allowed',
    });
  });

  it('proxies to a service through a ready endpoint, resolving its port by name or number', async () => {
    const services = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web' },
          spec: { selector: { run: 'web' }, ports: [{ name: 'http', port: 80, targetPort: webPort }] },
        },
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'empty' },
          spec: { selector: { run: 'nothing' }, ports: [{ port: 80 }] },
        },
      ],
    };
    expect(await k(['create', '-f', '-'], { stdin: JSON.stringify(services) })).toMatchObject({ code: 0 });
    await waitFor(
      'the web service’s endpoint and the empty one’s Endpoints',
      async () =>
        (await kOk('get', 'endpoints', 'web', '-o', 'jsonpath={.subsets[0].addresses[0].ip}')).trim() === NODE_IP &&
        (await k(['get', 'endpoints', 'empty'])).code === 0,
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    for (const id of ['web:http', 'web:80', 'http:web:80'])
      expect(await kOk('get', '--raw', `/api/v1/namespaces/default/services/${id}/proxy/`)).toBe(
        'hello from the pod\n',
      );
    const status = async (id: string): Promise<{ code: number; reason?: string; message?: string }> => {
      const r = await api({ path: `/api/v1/namespaces/default/services/${id}/proxy/` });
      return { code: r.code, ...(JSON.parse(r.body) as { reason?: string; message?: string }) };
    };
    expect(await status('web:81')).toMatchObject({
      code: 503,
      reason: 'ServiceUnavailable',
      message: 'no service port 81 found for service "web"',
    });
    expect(await status('web:nope')).toMatchObject({ code: 503, message: 'no endpoints available for service "web"' });
    expect(await status('empty')).toMatchObject({ code: 503, message: 'no endpoints available for service "empty"' });
    expect(await status('nope:80')).toMatchObject({ code: 404, message: 'services "nope" not found' });
    const r = await k(['get', '--raw', '/api/v1/namespaces/default/services/empty/proxy/']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('ServiceUnavailable');
  });

  it('proxies to the node agent with the API server’s client certificate (nodes/proxy)', async () => {
    const node = (await kOk('get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}')).trim();
    const metrics = await kOk('get', '--raw', `/api/v1/nodes/${node}/proxy/metrics`);
    expect(metrics).toContain('# TYPE');
    expect(await kOk('get', '--raw', `/api/v1/nodes/${node}/proxy/healthz`)).toBe('ok');
    const pods = JSON.parse(await kOk('get', '--raw', `/api/v1/nodes/${node}/proxy/pods`)) as { kind: string };
    expect(pods.kind).toBe('PodList');
    const missing = await api({ path: '/api/v1/nodes/nope/proxy/metrics' });
    expect(missing.code).toBe(404);
    expect((JSON.parse(missing.body) as { message: string }).message).toBe('nodes "nope" not found');
  });

  it('a Service’s endpoints follow its pod’s readiness probe: not ready, ready, not ready again', async () => {
    // The probe runs `test -f` in the container's environment: the pod is Ready while the file exists.
    const flag = join(dir, 'gate-ready');
    const objects = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'gate', labels: { run: 'gate' } },
          spec: {
            containers: [
              {
                name: 'gate',
                image: 'busybox',
                command: ['sleep', '3600'],
                readinessProbe: { exec: { command: ['test', '-f', flag] }, periodSeconds: 1, failureThreshold: 1 },
              },
            ],
          },
        },
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'gate' },
          spec: { selector: { run: 'gate' }, ports: [{ port: 80, targetPort: 8080 }] },
        },
      ],
    };
    expect(await k(['create', '-f', '-'], { stdin: JSON.stringify(objects) })).toMatchObject({ code: 0 });
    interface Address {
      ip: string;
      targetRef?: { name?: string };
    }
    interface Slice {
      metadata: { ownerReferences?: Array<{ kind: string; name: string }> };
      endpoints?: Array<{ targetRef?: { name?: string }; conditions?: { ready?: boolean } }>;
    }
    /** The pod's place in the Endpoints (`ready`/`notReady`) and its EndpointSlice condition, as one string. */
    const seen = async (): Promise<string> => {
      const ep = JSON.parse(await kOk('get', 'endpoints', 'gate', '-o', 'json')) as {
        subsets?: Array<{ addresses?: Address[]; notReadyAddresses?: Address[] }>;
      };
      const names = (as: Address[] | undefined): string =>
        (as ?? []).map((a) => `${a.targetRef?.name ?? '?'}@${a.ip}`).join(',');
      const subset = ep.subsets?.[0];
      const slices = (JSON.parse(await kOk('get', 'endpointslices', '-o', 'json')) as { items: Slice[] }).items.filter(
        (sl) => sl.metadata.ownerReferences?.some((o) => o.kind === 'Service' && o.name === 'gate'),
      );
      const conditions = slices
        .flatMap((sl) => sl.endpoints ?? [])
        .map((e) => `${e.targetRef?.name ?? '?'}:${String(e.conditions?.ready)}`)
        .join(',');
      return `ready=[${names(subset?.addresses)}] notReady=[${names(subset?.notReadyAddresses)}] slice=[${conditions}]`;
    };
    const expectSeen = async (want: string): Promise<void> => {
      let last = '';
      try {
        await waitFor(
          want,
          async () => {
            last = await seen();
            return last === want;
          },
          { timeoutMs: 30_000, intervalMs: 250 },
        );
      } catch (e) {
        throw new Error(`${(e as Error).message}; last seen: ${last}`, { cause: e });
      }
    };
    await kOk('wait', '--for=jsonpath={.status.phase}=Running', 'pod/gate', '--timeout=60s');
    await expectSeen(`ready=[] notReady=[gate@${NODE_IP}] slice=[gate:false]`);
    await writeFile(flag, '');
    await expectSeen(`ready=[gate@${NODE_IP}] notReady=[] slice=[gate:true]`);
    expect(
      (await kOk('get', 'pod', 'gate', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')).trim(),
    ).toBe('True');
    await rm(flag);
    await expectSeen(`ready=[] notReady=[gate@${NODE_IP}] slice=[gate:false]`);
    await kOk('delete', 'service', 'gate');
    await kOk('delete', 'pod', 'gate', '--grace-period=0', '--force');
  }, 180_000);

  it('an HPA scales a Deployment on the memory its pods use, as the node agent reports it', async () => {
    // Requests of 1Mi: a sleeping process uses more than that, so utilization is well over the
    // 50 % target and the HPA scales to its maximum on the node agent's real numbers.
    const objects = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'hog' },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: 'hog' } },
            template: {
              metadata: { labels: { app: 'hog' } },
              spec: {
                containers: [
                  {
                    name: 'hog',
                    image: 'busybox',
                    command: ['sleep', '3600'],
                    resources: { requests: { memory: '1Mi', cpu: '10m' } },
                  },
                ],
              },
            },
          },
        },
        {
          apiVersion: 'autoscaling/v2',
          kind: 'HorizontalPodAutoscaler',
          metadata: { name: 'hog' },
          spec: {
            scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'hog' },
            minReplicas: 1,
            maxReplicas: 3,
            metrics: [
              {
                type: 'Resource',
                resource: { name: 'memory', target: { type: 'Utilization', averageUtilization: 50 } },
              },
            ],
          },
        },
      ],
    };
    expect(await k(['create', '-f', '-'], { stdin: JSON.stringify(objects) })).toMatchObject({ code: 0 });
    interface Hpa {
      status?: {
        desiredReplicas?: number;
        currentMetrics?: Array<{ resource?: { name: string; current?: { averageUtilization?: number } } }>;
        conditions?: Array<{ type: string; status: string; reason?: string }>;
      };
    }
    let hpa: Hpa = {};
    let replicas = '';
    try {
      await waitFor(
        'the HPA to scale hog to 3 on its memory utilization',
        async () => {
          hpa = JSON.parse(await kOk('get', 'hpa', 'hog', '-o', 'json')) as Hpa;
          replicas = (await kOk('get', 'deployment', 'hog', '-o', 'jsonpath={.spec.replicas}')).trim();
          return replicas === '3' && hpa.status?.desiredReplicas === 3;
        },
        { timeoutMs: 120_000, intervalMs: 1000 },
      );
    } catch (e) {
      throw new Error(`${(e as Error).message}; replicas ${replicas}, HPA status ${JSON.stringify(hpa.status)}`, {
        cause: e,
      });
    }
    const memory = hpa.status?.currentMetrics?.find((m) => m.resource?.name === 'memory');
    log(`hog memory utilization ${memory?.resource?.current?.averageUtilization ?? '?'} %`);
    expect(memory?.resource?.current?.averageUtilization).toBeGreaterThan(50);
    expect(hpa.status?.conditions?.find((c) => c.type === 'ScalingActive')).toMatchObject({ status: 'True' });
    await kOk('delete', 'hpa', 'hog');
    await kOk('delete', 'deployment', 'hog');
  }, 180_000);

  it('cp copies a file into a container and back (tar over exec)', async () => {
    const local = join(dir, 'to-pod.txt');
    const content = `copied ${'x'.repeat(100_000)}\n`;
    await writeFile(local, content);
    const inPod = join(dir, 'in-pod', 'x.txt');
    await kOk('exec', 'shell', '--', 'mkdir', '-p', join(dir, 'in-pod'));
    await kOk('cp', local, `shell:${inPod}`);
    expect(await kOk('exec', 'shell', '--', 'cat', inPod)).toBe(content);
    const back = join(dir, 'from-pod.txt');
    await kOk('cp', `shell:${inPod}`, back);
    expect(await readFile(back, 'utf8')).toBe(content);
    // A missing file: tar in the pod complains on stderr and writes an empty archive. kubectl
    // 1.32 exits 0 as soon as it has read the empty archive, racing its own goroutine that
    // prints the complaint (seen: 1 run in 10 prints nothing), so only that is asserted here
    // and the complaint and tar's exit code through exec, which waits for every stream.
    const missing = await k(['cp', `shell:${join(dir, 'no-such-file')}`, join(dir, 'never')]);
    expect(missing.code).toBe(0);
    await expect(readFile(join(dir, 'never'))).rejects.toThrow(/ENOENT/);
    const tar = await k(['exec', 'shell', '--', 'tar', 'cf', '-', join(dir, 'no-such-file')]);
    expect(tar.code).toBe(2);
    expect(tar.stderr).toContain('No such file or directory');
    expect(tar.stderr).toContain('command terminated with exit code 2');
    // the empty archive tar still writes: two zero blocks, padded to its 10 KiB record
    expect(tar.stdout).toBe('\0'.repeat(10240));
  });

  it('debug -it adds an ephemeral container the node starts, attached to its stdin', async () => {
    const r = await k(['debug', '-it', 'shell', '--image=busybox', '--target=shell', '--', 'sh'], {
      stdin: 'echo hi from debug; exit 0\n',
    });
    expect(r.stdout).toContain('hi from debug');
    expect(r.code).toBe(0);
    type Pod = {
      spec: { ephemeralContainers?: Array<{ name: string; targetContainerName?: string }> };
      status: {
        ephemeralContainerStatuses?: Array<{ name: string; state: { terminated?: { exitCode: number } } }>;
      };
    };
    const pod = await waitFor(
      'the ephemeral container’s terminated status',
      async () => {
        const p = JSON.parse(await kOk('get', 'pod', 'shell', '-o', 'json')) as Pod;
        return p.status.ephemeralContainerStatuses?.[0]?.state.terminated ? p : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    const name = pod.spec.ephemeralContainers?.[0]?.name ?? '';
    expect(name).toMatch(/^debugger-/);
    expect(pod.spec.ephemeralContainers?.[0]?.targetContainerName).toBe('shell');
    expect(pod.status.ephemeralContainerStatuses?.[0]).toMatchObject({
      name,
      state: { terminated: { exitCode: 0 } },
    });
  });

  it('pods/ephemeralcontainers: only additions, without ports or probes, authorized as its own subresource', async () => {
    const path = '/api/v1/namespaces/default/pods/shell/ephemeralcontainers';
    const got = await api({ path });
    expect(got.code).toBe(200);
    const pod = JSON.parse(got.body) as {
      kind: string;
      metadata: { resourceVersion: string };
      spec: { ephemeralContainers?: Array<{ name: string }> };
    };
    expect(pod.kind).toBe('Pod');
    const existing = pod.spec.ephemeralContainers?.[0]?.name ?? '';
    expect(existing).toMatch(/^debugger-/);
    const patch = (container: object, as?: string): ReturnType<typeof api> =>
      api({
        method: 'PATCH',
        path,
        as,
        headers: { 'Content-Type': 'application/strategic-merge-patch+json' },
        body: JSON.stringify({ spec: { ephemeralContainers: [container] } }),
      });
    const message = (r: { body: string }): string => (JSON.parse(r.body) as { message: string }).message;
    const ported = await patch({ name: 'ported', image: 'busybox', ports: [{ containerPort: 80 }] });
    expect(ported.code).toBe(422);
    expect(message(ported)).toMatch(
      /^Pod "shell" is invalid: spec\.ephemeralContainers\[\d\]\.ports: Forbidden: cannot be set for an Ephemeral Container$/,
    );
    const probed = await patch({ name: 'probed', image: 'busybox', readinessProbe: { exec: { command: ['true'] } } });
    expect(message(probed)).toContain('readinessProbe: Forbidden: cannot be set for an Ephemeral Container');
    const targeted = await patch({ name: 'targeted', image: 'busybox', targetContainerName: 'nope' });
    expect(message(targeted)).toMatch(/targetContainerName: Not found: "nope"/);
    const changed = await patch({ name: existing, image: 'other' });
    expect(changed.code).toBe(422);
    expect(message(changed)).toContain(`existing ephemeral containers "${existing}" may not be changed`);
    const removed = await api({
      method: 'PUT',
      path,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...pod, spec: { ...pod.spec, ephemeralContainers: [] } }),
    });
    expect(removed.code).toBe(422);
    expect(message(removed)).toContain(`existing ephemeral containers "${existing}" may not be removed`);
    const forbidden = await patch({ name: 'other', image: 'busybox' }, 'proxier');
    expect(forbidden.code).toBe(403);
    expect(message(forbidden)).toContain(
      'User "proxier" cannot patch resource "pods/ephemeralcontainers" in API group "" in the namespace "default"',
    );
    const created = await k(['create', '-f', '-'], {
      stdin: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'born-ephemeral' },
        spec: {
          containers: [{ name: 'c', image: 'busybox', command: ['true'] }],
          ephemeralContainers: [{ name: 'e', image: 'busybox' }],
        },
      }),
    });
    expect(created.code).toBe(1);
    expect(created.stderr).toContain('spec.ephemeralContainers: Forbidden: cannot be set on create');
  });

  it('exec round trip (kubectl exec -- true)', async () => {
    const times: number[] = [];
    for (let i = 0; i < 9; i++) {
      const t = Date.now();
      await kOk('exec', 'shell', '--', 'true');
      times.push(Date.now() - t);
    }
    times.sort((a, b) => a - b);
    log(`kubectl exec -- true: p50 ${times[4]} ms (min ${times[0]}, max ${times[8]})`);
    expect(times[4]).toBeLessThan(5000);
  });
});
