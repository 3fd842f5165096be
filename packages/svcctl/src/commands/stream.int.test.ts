// svcctl exec and port-forward end to end on `./scripts/cluster.sh up` (real processes, needs
// the build): svcctl → svc-apiserver → svclet → svc-runtime's streaming server, over WebSocket
// (remotecommand v5, and port-forward's SPDY tunnelled in WebSocket). Outputs and exit codes
// are compared with stock kubectl's for the same command lines.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  clusterScriptEnv,
  httpGetLocal,
  kubectl,
  runCommand,
  sha256Hex,
  waitFor,
  type KubectlResult,
} from '@svc/testing';
import { svcctl, type RunResult } from '../svcctl-testing.js';
import type { Terminal } from '../io.js';

const ROOT = resolve(__dirname, '../../../..');
const MIB = 1024 * 1024;
const BIG = 8 * MIB;

/** A Node HTTP server for the web pod: `/` a greeting, `/big` BIG bytes. */
function webServer(port: number): string {
  return [
    "const http = require('http');",
    'const chunk = Buffer.alloc(1024 * 1024, "0123456789abcdef");',
    'http.createServer((req, res) => {',
    `  if (req.url !== '/big') return res.end('hello from the pod\\n');`,
    `  res.writeHead(200, { 'content-length': ${BIG} });`,
    `  let left = ${BIG / MIB};`,
    '  const more = () => { while (left > 0) { left--; if (!res.write(chunk)) return res.once("drain", more); } res.end(); };',
    '  more();',
    `}).listen(${port}, '127.0.0.1');`,
  ].join('\n');
}

describe('svcctl exec and port-forward on cluster.sh up', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let admin: string;
  let webPort: number;
  let spare: number;

  const ours = (args: string[], o: { stdin?: string; terminal?: Terminal } = {}): Promise<RunResult> =>
    svcctl(args, { env: { KUBECONFIG: admin, HOME: dir }, stdin: o.stdin, terminal: o.terminal });
  const theirs = (args: string[], o: { stdin?: string } = {}): Promise<KubectlResult> =>
    kubectl(admin, args, { stdin: o.stdin, timeoutMs: 60_000, home: dir });
  /** svcctl and kubectl give the same exit code and output. */
  const same = async (args: string[], o: { stdin?: string } = {}): Promise<RunResult> => {
    const [a, b] = await Promise.all([ours(args, o), theirs(args, o)]);
    expect({ args, ...a, stderr: a.stderr.replace(/svcctl/g, 'kubectl') }).toEqual({ args, ...b });
    return a;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svcctl-stream-'));
    admin = join(dir, 'admin.svcconfig');
    const cluster = await clusterScriptEnv({ dir, extra: 2 });
    env = cluster.env;
    [webPort = 0, spare = 0] = cluster.extraPorts;
    const up = await runCommand('bash', ['scripts/cluster.sh', 'up', '--nodes', '1'], {
      env,
      cwd: ROOT,
      timeoutMs: 240_000,
    });
    if (up.code !== 0) throw new Error(`cluster.sh up failed:\n${up.stdout}${up.stderr}`);
    const ok = async (...args: string[]): Promise<void> => {
      const r = await theirs(args);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    };
    await ok('run', 'shell', '--image=busybox', '--restart=Never', '--', 'sleep', '3600');
    await ok(
      'run',
      'web',
      '--image=busybox',
      '--restart=Never',
      '--port',
      String(webPort),
      '--',
      'node',
      '-e',
      webServer(webPort),
    );
    await ok('create', 'service', 'clusterip', 'web', `--tcp=80:${webPort}`);
    // kubectl create service selects app=web; the pod kubectl run made is labelled run=web.
    await ok('label', 'pod', 'web', 'app=web');
    await ok('wait', '--for=condition=Ready', 'pod/shell', 'pod/web', '--timeout=90s');
    await waitFor('the web pod to serve', async () => (await httpGetLocal(webPort, '/')).toString().includes('hello'), {
      timeoutMs: 20_000,
      intervalMs: 100,
    });
  }, 300_000);

  afterAll(async () => {
    if (!dir) return;
    const down = await runCommand('bash', ['scripts/cluster.sh', 'down'], { env, cwd: ROOT, timeoutMs: 120_000 });
    if (down.code !== 0) process.stderr.write(`cluster.sh down failed:\n${down.stdout}${down.stderr}\n`);
    await waitFor('no process of the cluster left', () => spawnSync('pgrep', ['-f', dir]).status !== 0, {
      timeoutMs: 10_000,
      intervalMs: 200,
    }).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }, 180_000);

  it('exec prints the output and exits with the command’s code, as kubectl', async () => {
    await same(['exec', 'shell', '--', 'echo', 'hi']);
    const r = await same(['exec', 'shell', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(r).toMatchObject({ code: 3, stdout: 'out\n', stderr: 'err\ncommand terminated with exit code 3\n' });
    await same(['exec', 'pod/shell', '-c', 'shell', '--', 'sh', '-c', 'echo $HOSTNAME; pwd | grep -c /work']);
    await same(['exec', '-i', 'shell', '--', 'sh', '-c', 'tr a-z A-Z; echo done'], { stdin: 'piped in\nand more\n' });
    // A service names the first pod it selects. Not compared: kubectl 1.32's own run of this
    // fails here ("Unknown stream id 1, discarding message", "closed all streams").
    expect(await ours(['exec', 'svc/web', '--', 'echo', 'through the service'])).toEqual({
      code: 0,
      stdout: 'through the service\n',
      stderr: '',
    });
  });

  it('exec reports errors as kubectl does', async () => {
    await same(['exec', 'nope', '--', 'true']);
    await same(['exec', 'shell', '-c', 'nope', '--', 'true']);
    await same(['exec', 'shell', '--', 'no-such-command']);
    await same(['exec']);
    await same(['exec', 'shell']);
    await same(['exec', 'shell', 'ls']);
    await same(['exec', 'svc/nope', '--', 'true']);
    // -t without a terminal: kubectl's notice, then an ordinary session.
    await same(['exec', '-i', '-t', 'shell', '--', 'echo', 'no tty'], { stdin: '' });
  });

  it('exec -it runs on a pseudo-terminal in raw mode and sends the terminal size', async () => {
    const raw: boolean[] = [];
    let resized: (() => void) | undefined;
    const terminal: Terminal = {
      setRaw: (on) => raw.push(on),
      size: () => ({ columns: 100, rows: 30 }),
      onResize: (fn) => {
        resized = fn;
        return () => {
          resized = undefined;
        };
      },
    };
    const r = await ours(['exec', '-it', 'shell', '--', 'sh', '-c', 'read x; tty; stty size'], {
      stdin: 'go\n',
      terminal,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\/dev\/pts\/\d+\r\n30 100\r\n/);
    expect(raw).toEqual([true, false]);
    expect(resized).toBeUndefined();
  });

  it('port-forward pod, svc and LOCAL:REMOTE forms, several connections at once', async () => {
    const want = sha256Hex(await httpGetLocal(webPort, '/big'));
    for (const [target, spec, local] of [
      ['pod/web', `:${webPort}`, undefined],
      ['web', `${spare}:${webPort}`, spare],
      ['svc/web', ':80', undefined],
    ] as const) {
      const abort = new AbortController();
      let out = '';
      let ended: RunResult | undefined;
      const running = svcctl(['port-forward', target, spec], {
        env: { KUBECONFIG: admin, HOME: dir },
        signal: abort.signal,
        onOut: (s) => (out += s),
      }).then((r) => (ended = r));
      try {
        const port = await waitFor(
          `port-forward ${target} to listen`,
          () => {
            if (ended) throw new Error(`port-forward ended: ${JSON.stringify(ended)}`);
            const m = /^Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)\n/m.exec(out);
            return m ? { local: Number(m[1]), remote: Number(m[2]) } : undefined;
          },
          { timeoutMs: 20_000, intervalMs: 50 },
        );
        expect(port.remote).toBe(webPort);
        if (local) expect(port.local).toBe(local);
        expect((await httpGetLocal(port.local, '/')).toString()).toBe('hello from the pod\n');
        const bodies = await Promise.all([1, 2, 3, 4].map(() => httpGetLocal(port.local, '/big')));
        for (const b of bodies) expect(sha256Hex(b)).toBe(want);
        expect(out).toContain(`Handling connection for ${port.local}\n`);
      } finally {
        abort.abort();
      }
      expect((await running).code).toBe(0);
    }
  });

  it('port-forward prints kubectl’s lines and errors', async () => {
    // The first line kubectl prints for the same fixed ports.
    const abort = new AbortController();
    let out = '';
    const running = svcctl(['port-forward', 'pod/web', `${spare}:${webPort}`], {
      env: { KUBECONFIG: admin, HOME: dir },
      signal: abort.signal,
      onOut: (s) => (out += s),
    });
    const line = await waitFor('a Forwarding line', () => /^Forwarding from .*\n/.exec(out)?.[0], {
      timeoutMs: 20_000,
    });
    abort.abort();
    expect((await running).code).toBe(0);
    expect(line).toBe(`Forwarding from 127.0.0.1:${spare} -> ${webPort}\n`);
    await same(['port-forward', 'nope', '8080']);
    await same(['port-forward', 'web']);
    await same(['port-forward', 'web', 'abc']);
    await same(['port-forward', 'web', '8080:70000']);
    await same(['port-forward', 'web', '8080:nope']);
    await same(['port-forward', 'svc/web', '8080:81']);
  });
});
