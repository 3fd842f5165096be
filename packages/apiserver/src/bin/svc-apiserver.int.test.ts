// The svc-apiserver binary as a process: --help, flag errors (exit 2, one line), and a real
// start against etcd until /readyz answers 200, then SIGTERM → exit 0, unbundled and as
// installed (the bundle with its V8 code cache, which it remakes when missing).
// Needs the build (`tsc -b packages/*/tsconfig.json`, then `node scripts/bundle.mjs`).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { ClientRequest, IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, startEtcd, waitFor, type EtcdHandle } from '@svc/testing';

const BIN = resolve(__dirname, '../../dist/bin/svc-apiserver.js');
const BUNDLE_DIR = resolve(__dirname, '../../dist/bundle');

interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Resolves when `child` exits, or rejects after `ms` (killing it). */
function exited(child: ChildProcess, out: { stdout: string; stderr: string }, ms: number): Promise<RunResult> {
  return new Promise((resolveRun, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`svc-apiserver did not exit within ${ms} ms; stderr: ${out.stderr.slice(-2000)}`));
    }, ms);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolveRun({ code, signal, ...out });
    });
  });
}

function spawnBin(
  args: string[],
  bin = BIN,
  detached = false,
): { child: ChildProcess; out: { stdout: string; stderr: string } } {
  // detached: a process group of its own, as a terminal gives a command (Ctrl-C signals the group).
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'], detached });
  const out = { stdout: '', stderr: '' };
  child.stdout?.on('data', (d: Buffer) => {
    out.stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out.stderr += d.toString();
  });
  return { child, out };
}

/** Runs the binary to completion and waits for its output streams to close. */
async function run(args: string[], ms = 15_000): Promise<RunResult> {
  const { child, out } = spawnBin(args);
  const closed = new Promise<void>((r) => child.on('close', () => r()));
  const result = await exited(child, out, ms);
  await closed;
  return { ...result, stdout: out.stdout, stderr: out.stderr };
}

beforeAll(() => {
  for (const f of [BIN, join(BUNDLE_DIR, 'svc-apiserver.cjs')])
    if (!existsSync(f))
      throw new Error(`${f} is missing: build first (tsc -b packages/*/tsconfig.json, then node scripts/bundle.mjs)`);
});

describe('--help', () => {
  let help: RunResult;
  /** Help entries by flag, each on one line with whitespace collapsed. */
  let entries: Map<string, string>;

  beforeAll(async () => {
    help = await run(['--help']);
    entries = new Map();
    for (const raw of help.stdout.split(/\n(?=\s*-)/)) {
      const entry = raw.replace(/\s+/g, ' ').trim();
      const flag = /(--[a-z0-9-]+)/.exec(entry)?.[1];
      if (flag) entries.set(flag, entry);
    }
  });

  it('exits 0 and prints usage on stdout', () => {
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/svc-apiserver/);
    expect(help.stderr).toBe('');
  });

  it.each([
    ['--store-servers', 'http://127.0.0.1:2379'],
    ['--store-prefix', '"/registry"'],
    ['--store-healthcheck-timeout', '2s'],
    ['--store-readycheck-timeout', '2s'],
    ['--store-count-metric-poll-period', '1m0s'],
    ['--bind-address', '"0.0.0.0"'],
    ['--secure-port', '6443'],
    ['--anonymous-auth', 'true'],
    ['--livez-grace-period', '0s'],
    ['--shutdown-delay-duration', '0s'],
    ['--max-requests-inflight', '400'],
    ['--max-mutating-requests-inflight', '200'],
    ['--naming', '"svc"'],
    ['--logging-format', '"text"'],
    ['--v', '0'],
  ])('lists %s with its default %s', (flag, def) => {
    const entry = entries.get(flag);
    expect(entry).toBeDefined();
    expect(entry).toMatch(new RegExp(`default: ${def.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\)`));
  });

  it('shows the spec defaults of --event-ttl (1h0m0s) and --lease-reuse-duration-seconds (60)', () => {
    expect(entries.get('--event-ttl')).toMatch(/default: 1h0m0s\)/);
    expect(entries.get('--lease-reuse-duration-seconds')).toMatch(/default: 60\)/);
  });

  it('says --authorization-mode defaults to AlwaysAllow', () => {
    expect(entries.get('--authorization-mode')).toMatch(/default[^.;]*AlwaysAllow/i);
  });

  it('lists every flag of the issue', () => {
    for (const flag of [
      '--store-servers',
      '--store-prefix',
      '--store-cafile',
      '--store-certfile',
      '--store-keyfile',
      '--store-healthcheck-timeout',
      '--store-readycheck-timeout',
      '--store-count-metric-poll-period',
      '--bind-address',
      '--secure-port',
      '--cert-dir',
      '--tls-cert-file',
      '--tls-private-key-file',
      '--advertise-address',
      '--token-auth-file',
      '--anonymous-auth',
      '--authorization-mode',
      '--feature-gates',
      '--runtime-config',
      '--livez-grace-period',
      '--shutdown-delay-duration',
      '--max-requests-inflight',
      '--max-mutating-requests-inflight',
      '--naming',
      '--logging-format',
      '--v',
    ]) {
      expect(entries.has(flag)).toBe(true);
    }
    expect(help.stdout).toMatch(/^\s*-v, --v\b/m);
  });
});

describe('flag errors exit 2 with exactly one line on stderr', () => {
  it.each([
    ['an unknown flag', ['--no-such-flag'], /--no-such-flag/],
    ['a bad duration', ['--store-readycheck-timeout=soon'], /--store-readycheck-timeout.*soon/],
    ['a bad duration (shutdown delay)', ['--shutdown-delay-duration', '5 minutes'], /--shutdown-delay-duration/],
    ['a bad bool', ['--anonymous-auth=maybe'], /--anonymous-auth.*maybe/],
    ['a bad int', ['--max-requests-inflight=many'], /--max-requests-inflight.*many/],
    ['a bad port', ['--secure-port=70000'], /--secure-port/],
    ['an unknown feature gate', ['--feature-gates=NoSuchGate=true'], /--feature-gates.*NoSuchGate/],
    ['a bad naming', ['--naming=other'], /--naming/],
    [
      'an unknown group version in --runtime-config',
      ['--runtime-config=nosuch.svc.io/v1=false'],
      /--runtime-config.*nosuch\.svc\.io\/v1/,
    ],
    ['an unknown resource in --runtime-config', ['--runtime-config=v1/widgets=false'], /--runtime-config.*v1\/widgets/],
    ['a bad value in --runtime-config', ['--runtime-config=v1=maybe'], /--runtime-config/],
    ['a zero --event-ttl', ['--event-ttl=0s'], /--event-ttl must be greater than 0/],
    [
      'a malformed --store-servers-overrides entry',
      ['--store-servers-overrides=/events'],
      /--store-servers-overrides: invalid entry "\/events": must be of format: group\/resource#servers/,
    ],
    [
      'an unknown scheme in --store-servers-overrides',
      ['--store-servers-overrides=/events#memcached://127.0.0.1:11211'],
      /--store-servers-overrides: .*unsupported scheme "memcached"/,
    ],
    [
      'a zero --lease-reuse-duration-seconds',
      ['--lease-reuse-duration-seconds=0'],
      /--lease-reuse-duration-seconds must be greater than 0/,
    ],
    ['an unknown endpoint reconciler', ['--endpoint-reconciler-type=etcd'], /--endpoint-reconciler-type.*etcd/],
    ['a node port outside the range', ['--svc-service-node-port=443'], /--svc-service-node-port.*30000-32767/],
    ['an advertise address that is no IP', ['--advertise-address=nowhere'], /--advertise-address.*failed to parse IP/],
    ['zero delete-collection workers', ['--delete-collection-workers=0'], /--delete-collection-workers/],
    [
      'a peer flag without its gate',
      ['--peer-advertise-ip=10.0.0.1'],
      /--peer-advertise-ip requires UnknownVersionInteroperabilityProxy/,
    ],
    [
      'a missing egress selector file',
      ['--egress-selector-config-file=/nonexistent'],
      /--egress-selector-config-file.*ENOENT/,
    ],
  ])('%s', async (_what, args, mentions) => {
    const r = await run(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const l = r.stderr.split('\n').filter((x) => x !== '');
    expect(l).toHaveLength(1);
    expect(l[0]).toMatch(mentions);
    expect(r.stderr.endsWith('\n')).toBe(true);
  });
});

describe('serving', () => {
  let etcd: EtcdHandle;
  let dir: string;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    etcd = await startEtcd();
    dir = await mkdtemp(join(tmpdir(), 'svc-apiserver-bin-'));
    // The installed binary, from a copy of the bundle (its code cache is removed below).
    await cp(BUNDLE_DIR, join(dir, 'bundle'), { recursive: true });
  });

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await etcd?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  interface Served {
    child: ChildProcess;
    out: { stdout: string; stderr: string };
    exit: Promise<RunResult>;
    /** One request on a new connection (so several workers take them in turn); the status and body. */
    call(
      method: string,
      path: string,
      body?: unknown,
    ): Promise<{ status: number; text: string; headers: IncomingHttpHeaders }>;
    /** A watch on a new connection: the events' lines as they arrive; `close()` ends it. */
    watch(path: string): { lines: string[]; close(): void };
  }

  /** Starts `bin` with `extra` flags on a fresh store prefix and waits for /readyz 200. */
  async function serve(bin: string, extra: string[] = [], detached = false): Promise<Served> {
    const token = randomBytes(16).toString('hex');
    await writeFile(join(dir, 'tokens.csv'), `${token},admin,admin-uid,"system:masters"\n`);
    const port = await freePort();
    const started = spawnBin(
      [
        '--store-servers',
        etcd.endpoints.join(','),
        '--store-prefix',
        `/registry-bin-${randomBytes(3).toString('hex')}`,
        '--bind-address',
        '127.0.0.1',
        '--secure-port',
        String(port),
        '--cert-dir',
        join(dir, 'pki'),
        '--token-auth-file',
        join(dir, 'tokens.csv'),
        ...extra,
      ],
      bin,
      detached,
    );
    child = started.child;
    const exit = exited(child, started.out, 60_000);
    exit.catch(() => undefined);
    const options = async (method: string, path: string): Promise<RequestOptions> => ({
      host: '127.0.0.1',
      port,
      path,
      method,
      ca: await readFile(join(dir, 'pki', 'ca.crt'), 'utf8'),
      agent: false,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    const call = async (
      method: string,
      path: string,
      body?: unknown,
    ): Promise<{ status: number; text: string; headers: IncomingHttpHeaders }> => {
      const o = await options(method, path);
      return new Promise((resolveCall, reject) => {
        const req = httpsRequest(o, (res) => {
          let text = '';
          res.on('data', (d: Buffer) => {
            text += d.toString();
          });
          res.on('end', () => resolveCall({ status: res.statusCode ?? 0, text, headers: res.headers }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body === undefined ? undefined : JSON.stringify(body));
      });
    };
    const watch = (path: string): { lines: string[]; close(): void } => {
      const lines: string[] = [];
      let buffered = '';
      let req: ClientRequest | undefined;
      void options('GET', path).then((o) => {
        req = httpsRequest(o, (res) =>
          res.on('data', (d: Buffer) => {
            buffered += d.toString();
            const parts = buffered.split('\n');
            buffered = parts.pop() ?? '';
            lines.push(...parts.filter((l) => l !== ''));
          }),
        );
        req.on('error', () => undefined);
        req.end();
      });
      return { lines, close: () => req?.destroy() };
    };
    await waitFor(
      'svc-apiserver /readyz 200',
      async () => {
        if (child?.exitCode !== null)
          throw new Error(`exited early with ${String(child?.exitCode)}: ${started.out.stderr}`);
        const r = await call('GET', '/readyz').catch(() => ({ status: 0, text: '', headers: {} }));
        return r.status === 200 && r.text === 'ok' ? r : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    return { child: started.child, out: started.out, exit, call, watch };
  }

  /** Stops the server with SIGTERM: exit 0. */
  async function stop(s: Served): Promise<void> {
    s.child.kill('SIGTERM');
    const r = await s.exit;
    expect(r.signal).toBeNull();
    expect(r.code).toBe(0);
  }

  /** Starts `bin`, lists namespaces, stops it. */
  async function serveOnce(bin: string): Promise<void> {
    const s = await serve(bin);
    const namespaces = await s.call('GET', '/api/v1/namespaces');
    expect(namespaces.status).toBe(200);
    const names = (JSON.parse(namespaces.text) as { items: Array<{ metadata: { name: string } }> }).items.map(
      (i) => i.metadata.name,
    );
    expect(names).toEqual(expect.arrayContaining(['default', 'svc-system', 'svc-public', 'svc-node-lease']));
    await stop(s);
  }

  it('reaches /readyz 200 against real etcd, serves a heap snapshot of itself and exits 0 on SIGTERM', async () => {
    const s = await serve(BIN);
    // /debug/pprof/heap (--profiling, on by default): a V8 heap snapshot of this server process,
    // checked here rather than in the Jest worker that runs in-process servers, whose heap is large.
    const heap = await s.call('GET', '/debug/pprof/heap');
    expect(heap.status).toBe(200);
    expect(String(heap.headers['content-disposition'])).toContain('.heapsnapshot');
    const snapshot = JSON.parse(heap.text) as { snapshot: { node_count: number }; nodes: number[] };
    expect(snapshot.snapshot.node_count).toBeGreaterThan(10_000);
    expect(snapshot.nodes.length).toBeGreaterThan(snapshot.snapshot.node_count);
    await stop(s);
  });

  it('does the same installed (dist/bundle/svc-apiserver.cjs): with the code cache made at build, and without it, which it writes when it exits', async () => {
    const bundle = join(dir, 'bundle');
    const caches = async (): Promise<string[]> => (await readdir(bundle)).filter((f) => f.endsWith('.v8cache'));
    // Strict, as the ES modules it is made of: the directive opens the script.
    expect((await readFile(join(bundle, 'svc-apiserver.main.cjs'), 'latin1')).slice(0, 14)).toBe("'use strict';\n");
    // ASCII only (the bundler escapes what esbuild leaves in comments and regular expressions),
    // so the loader reads it as one-byte Latin-1 text instead of decoding UTF-8.
    expect((await readFile(join(bundle, 'svc-apiserver.main.cjs'))).every((b) => b < 0x80)).toBe(true);
    expect(await readFile(join(bundle, 'svc-apiserver.cjs'), 'utf8')).toMatch(/encoding: "latin1"/);
    const [cache] = await caches();
    expect(cache).toMatch(/^svc-apiserver\.main\.cjs\.[0-9a-f]{16}\.v\d+\.\d+\.\d+-\w+\.v8cache$/);
    const built = await readFile(join(bundle, cache ?? ''));

    // V8 accepts the cache: it is used, not written again.
    await serveOnce(join(bundle, 'svc-apiserver.cjs'));
    expect((await readFile(join(bundle, cache ?? ''))).equals(built)).toBe(true);

    await rm(join(bundle, cache ?? ''));
    await serveOnce(join(bundle, 'svc-apiserver.cjs'));
    expect(await caches()).toEqual([cache]);
    expect((await readFile(join(bundle, cache ?? ''))).length).toBeGreaterThan(100_000);
    expect((await readdir(bundle)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  describe('--workers 2', () => {
    const CMS = '/api/v1/namespaces/default/configmaps';
    /** The pids of `pid`'s child processes (ps exits 1 when there are none). */
    const childrenOf = (pid: number): number[] =>
      spawnSync('ps', ['--ppid', String(pid), '-o', 'pid='], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter((l) => l.trim() !== '')
        .map(Number);
    let s: Served;
    let workers: number[];

    beforeAll(async () => {
      s = await serve(BIN, ['--workers', '2']);
      // The second worker starts once the first listens: wait for it to serve too.
      await waitFor('two workers serving', () => (s.out.stderr.match(/serving securely/g) ?? []).length === 2, {
        timeoutMs: 30_000,
        intervalMs: 50,
      });
      workers = childrenOf(s.child.pid ?? 0);
    });

    it('serves from two processes under one supervisor', () => {
      expect(workers).toHaveLength(2);
      expect(workers).not.toContain(s.child.pid);
    });

    it('keeps the resource-version guarantees across connections that land on either worker', async () => {
      const created = await s.call('POST', CMS, { metadata: { name: 'across' }, data: { a: '1' } });
      expect(created.status).toBe(201);
      const rv = (JSON.parse(created.text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      // Connections are handed to the workers in turn: of six, three reach each.
      const watches = Array.from({ length: 2 }, () => s.watch(`${CMS}?watch=1&resourceVersion=${rv}`));
      for (let i = 0; i < 6; i++) {
        // A consistent read sees the write, whichever worker answers.
        const got = await s.call('GET', `${CMS}/across`);
        expect(got.status).toBe(200);
        expect(JSON.parse(got.text)).toMatchObject({ data: { a: '1' }, metadata: { resourceVersion: rv } });
        // A list not older than the write waits for that worker's cache to have it.
        const listed = await s.call('GET', `${CMS}?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`);
        expect(listed.status).toBe(200);
        const items = (JSON.parse(listed.text) as { items: Array<{ metadata: { name: string } }> }).items;
        expect(items.map((i) => i.metadata.name)).toContain('across');
      }
      const updated = await s.call('PUT', `${CMS}/across`, {
        metadata: { name: 'across', resourceVersion: rv },
        data: { a: '2' },
      });
      expect(updated.status).toBe(200);
      const next = (JSON.parse(updated.text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      // Watches from the create's version, on either worker, get the update and nothing before it.
      for (const w of watches) {
        await waitFor('the update on the watch', () => w.lines.length >= 1, { timeoutMs: 10_000, intervalMs: 20 });
        const first = JSON.parse(w.lines[0] ?? '{}') as {
          type: string;
          object: { metadata: { resourceVersion: string } };
        };
        expect(first.type).toBe('MODIFIED');
        expect(first.object.metadata.resourceVersion).toBe(next);
        w.close();
      }
    });

    it('stops every worker on SIGTERM and exits 0', async () => {
      await stop(s);
      expect(childrenOf(s.child.pid ?? 0)).toEqual([]);
      for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow();
    });

    it("exits 0 on a terminal's Ctrl-C (SIGINT to the whole process group)", async () => {
      const group = await serve(BIN, ['--workers', '2'], true);
      await waitFor('two workers', () => childrenOf(group.child.pid ?? 0).length === 2, {
        timeoutMs: 30_000,
        intervalMs: 50,
      });
      const pids = childrenOf(group.child.pid ?? 0);
      process.kill(-(group.child.pid ?? 0), 'SIGINT');
      const r = await group.exit;
      expect({ code: r.code, signal: r.signal }).toEqual({ code: 0, signal: null });
      for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    });

    it('stops the whole server when a worker dies, exiting non-zero', async () => {
      const again = await serve(BIN, ['--workers', '2']);
      await waitFor('two workers', () => childrenOf(again.child.pid ?? 0).length === 2, {
        timeoutMs: 30_000,
        intervalMs: 50,
      });
      const [first, second] = childrenOf(again.child.pid ?? 0);
      process.kill(first ?? 0, 'SIGKILL');
      const r = await again.exit;
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(new RegExp(`worker ${first} exited \\(SIGKILL\\); stopping the others`));
      expect(() => process.kill(second ?? 0, 0)).toThrow();
    });
  });
});
