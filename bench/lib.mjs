// Helpers shared by the benchmarks in bench/*.bench.mjs.
//
// Plain Node ESM on purpose: the benchmarks import the BUILT packages (packages/*/dist), so
// `pnpm build` (tsc -b) must have run first. Nothing here is part of any package.

import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import { createRequire } from 'node:module';
import { tmpdir, loadavg, cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The binary as cluster.sh and the image run it: the bundle scripts/bundle.mjs makes.
 * SVC_BENCH_APISERVER_BIN runs another build instead (e.g. a copy of the bundle made before a
 * change, kept under packages/apiserver/dist/ so its packages resolve), for A/B runs.
 */
export const APISERVER_BIN = process.env.SVC_BENCH_APISERVER_BIN
  ? resolve(ROOT, process.env.SVC_BENCH_APISERVER_BIN)
  : join(ROOT, 'packages/apiserver/dist/bundle/svc-apiserver.cjs');
export { sleep };

const BUILD_HINT = 'build first: `pnpm build` (tsc -b packages/*/tsconfig.json, then node scripts/bundle.mjs)';

/** Throws a readable error when the built packages the benchmarks need are missing. */
export function checkBuilt() {
  const needed = [
    join(ROOT, 'packages/testing/dist/index.js'),
    join(ROOT, 'packages/apiserver/dist/index.js'),
    APISERVER_BIN,
  ];
  const missing = needed.filter((f) => !existsSync(f));
  if (missing.length > 0) {
    throw new BenchSetupError(
      `built packages are missing (${missing.map((f) => f.slice(ROOT.length + 1)).join(', ')}); ${BUILD_HINT}`,
    );
  }
}

/** An error that means "the benchmark could not be set up", printed without a stack. */
export class BenchSetupError extends Error {}

/** `@svc/testing` (startEtcd, freePort, ...), from the root node_modules or, failing that, its dist by path. */
export async function svcTesting() {
  checkBuilt();
  try {
    return await import('@svc/testing');
  } catch (e) {
    if (e?.code !== 'ERR_MODULE_NOT_FOUND' && e?.code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw e;
    return await import(pathToFileURL(join(ROOT, 'packages/testing/dist/index.js')).href);
  }
}

/** The `etcd3` client, resolved the way @svc/apiserver resolves it (same version). */
export function etcd3() {
  const require = createRequire(join(ROOT, 'packages/apiserver/package.json'));
  return require('etcd3');
}

/**
 * Starts a real etcd and a raw etcd3 client to it (the ceiling's client), both stopped when
 * `scope` closes. `clientOptions` go to the Etcd3 constructor.
 */
export async function startEtcdInScope(scope, clientOptions = {}) {
  const { startEtcd } = await svcTesting();
  const { Etcd3 } = etcd3();
  const etcd = await startEtcd();
  scope.defer(() => etcd.stop());
  const client = new Etcd3({ hosts: etcd.endpoints, ...clientOptions });
  scope.defer(() => client.close());
  return { etcd, client };
}

// ---------------------------------------------------------------------------------------
// Cleanup: everything a benchmark starts is registered here and stopped in reverse order.

/**
 * A stack of stop functions. `run(fn)` calls `fn(scope)` and always runs the registered
 * stops afterwards (last registered first), even when `fn` throws; a failing stop is
 * reported and does not prevent the others.
 */
export class Scope {
  #stops = [];

  /** Registers `stop` to run when the scope closes. */
  defer(stop) {
    this.#stops.push(stop);
  }

  async close() {
    const errors = [];
    while (this.#stops.length > 0) {
      const stop = this.#stops.pop();
      try {
        await stop();
      } catch (e) {
        errors.push(e);
      }
    }
    if (errors.length > 0)
      process.stderr.write(`bench: cleanup failed: ${errors.map((e) => e?.message ?? e).join('; ')}\n`);
  }

  static async run(fn) {
    const scope = new Scope();
    try {
      return await fn(scope);
    } finally {
      await scope.close();
    }
  }
}

/** Child processes started here and not yet exited; SIGKILLed if this process exits early (also on SIGINT/SIGTERM/SIGHUP). */
const liveChildren = new Set();
/** Temporary directories made here and not yet removed; removed if this process exits early. */
const liveDirs = new Set();
let hooksInstalled = false;

function installExitHooks() {
  if (hooksInstalled) return;
  hooksInstalled = true;
  const cleanup = () => {
    for (const c of liveChildren) {
      try {
        c.kill('SIGKILL');
      } catch {
        /* gone */
      }
    }
    liveChildren.clear();
    for (const d of liveDirs) {
      try {
        rmSync(d, { recursive: true, force: true });
      } catch {
        /* best effort */
      }
    }
    liveDirs.clear();
  };
  process.on('exit', cleanup);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    const onSignal = () => {
      cleanup();
      process.removeListener(sig, onSignal);
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    };
    process.on(sig, onSignal);
  }
}

/** Spawns a child process that is tracked for cleanup; resolves `exited` with the exit code. */
export function spawnTracked(cmd, args, opts = {}) {
  installExitHooks();
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  liveChildren.add(child);
  let output = '';
  const keep = (d) => {
    output = (output + d.toString()).slice(-32 * 1024);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise((res) => {
    child.once('exit', (code, signal) => {
      liveChildren.delete(child);
      res(code ?? signal);
    });
    child.once('error', (e) => {
      liveChildren.delete(child);
      keep(String(e));
      res(-1);
    });
  });
  return { child, exited, output: () => output };
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
export async function stopProcess(p, graceMs = 5000) {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), graceMs);
  await p.exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------------------------------
// svc-apiserver as a separate process.

/**
 * Spawns `node packages/apiserver/dist/bin/svc-apiserver.js` on a free port with a fresh
 * cert dir, store prefix and an admin token (group system:masters), and waits until
 * /readyz answers 200 (polled every `pollMs`). `readyMs` is the time from spawn() to that
 * first 200. `stop()` sends SIGTERM, waits for the exit and removes the temporary directory.
 */
export async function spawnApiServer({
  etcdEndpoints,
  extraArgs = [],
  pollMs = 10,
  readyTimeoutMs = 30_000,
  restartOf,
}) {
  const { freePort } = await svcTesting();
  installExitHooks();
  // restartOf: a server stopped with stop({ keep: true }) whose directory (--cert-dir, token file)
  // and store prefix this one starts with again, as a restarted server finds them.
  const dir = restartOf?.dir ?? (await mkdtemp(join(tmpdir(), 'svc-bench-apiserver-')));
  liveDirs.add(dir);
  const token = restartOf?.token ?? randomBytes(16).toString('hex');
  const tokenFile = join(dir, 'tokens.csv');
  if (!restartOf) await writeFile(tokenFile, `${token},admin,admin-uid,"system:masters"\n`);
  const port = await freePort();
  const storePrefix = restartOf?.storePrefix ?? `/bench-${randomBytes(4).toString('hex')}`;
  // SVC_BENCH_NODE_ARGS: extra node flags for the server, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`.
  const nodeArgs = (process.env.SVC_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const args = [
    ...nodeArgs,
    APISERVER_BIN,
    '--store-servers',
    etcdEndpoints.join(','),
    '--store-prefix',
    storePrefix,
    '--bind-address',
    '127.0.0.1',
    '--secure-port',
    String(port),
    '--cert-dir',
    join(dir, 'pki'),
    '--token-auth-file',
    tokenFile,
    ...extraArgs,
    // SVC_BENCH_APISERVER_ARGS: extra server flags for every spawn, e.g. `--workers 2`.
    ...(process.env.SVC_BENCH_APISERVER_ARGS ?? '').split(' ').filter(Boolean),
  ];
  const t0 = performance.now();
  const proc = spawnTracked(process.execPath, args, { cwd: ROOT });
  const url = `https://127.0.0.1:${port}`;
  const stop = async ({ keep = false } = {}) => {
    await stopProcess(proc);
    if (keep) return;
    await rm(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
  };
  let exited = false;
  void proc.exited.then(() => {
    exited = true;
  });
  try {
    const deadline = t0 + readyTimeoutMs;
    for (;;) {
      if (exited) throw new Error(`svc-apiserver exited before it was ready:\n${proc.output()}`);
      const status = await probe(`${url}/readyz`, token).catch(() => 0);
      if (status === 200) break;
      if (performance.now() > deadline)
        throw new Error(`svc-apiserver not ready after ${readyTimeoutMs} ms:\n${proc.output()}`);
      await sleep(pollMs);
    }
  } catch (e) {
    await stop();
    throw e;
  }
  const readyMs = performance.now() - t0;
  const caPem = await readFile(join(dir, 'pki', 'ca.crt'), 'utf8');
  return { url, port, token, caPem, storePrefix, dir, readyMs, proc, stop };
}

/** One GET on a fresh connection; resolves the status code. TLS is not verified (timing only). */
function probe(url, token) {
  return new Promise((res, rej) => {
    const req = httpsRequest(
      url,
      { agent: false, rejectUnauthorized: false, headers: { authorization: `Bearer ${token}` }, timeout: 1000 },
      (r) => {
        r.resume();
        r.on('end', () => res(r.statusCode ?? 0));
        r.on('error', rej);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', rej);
    req.end();
  });
}

/** A keep-alive HTTPS client for a spawned server: `call(method, path, body?, contentType?)` → {status, body}. */
export function apiClient(server, { maxSockets = 64 } = {}) {
  const agent = new HttpsAgent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, ca: server.caPem });
  const auth = `Bearer ${server.token}`;
  const headers = { authorization: auth, accept: 'application/json' };
  // A GET that meets a kept-alive socket the server closed meanwhile (ECONNRESET) is sent
  // again, as client-go does for idempotent requests.
  const call = async (method, path, body, contentType) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await callOnce(method, path, body, contentType);
      } catch (e) {
        if (method !== 'GET' || attempt >= 3 || e?.code !== 'ECONNRESET') throw e;
      }
    }
  };
  const callOnce = (method, path, body, contentType = 'application/json') =>
    new Promise((res, rej) => {
      const payload =
        body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
      const h = { ...headers };
      if (payload) {
        h['content-type'] = contentType;
        h['content-length'] = String(payload.length);
      }
      const req = httpsRequest(`${server.url}${path}`, { method, agent, headers: h }, (r) => {
        const chunks = [];
        r.on('data', (c) => chunks.push(c));
        r.on('end', () => res({ status: r.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        r.on('error', rej);
      });
      req.on('error', rej);
      req.end(payload);
    });
  return { call, agent, headers, close: () => agent.destroy() };
}

// ---------------------------------------------------------------------------------------
// Load generation and statistics.

/**
 * Runs `op(i)` with `concurrency` calls in flight until `durationMs` has passed (or `count`
 * operations have been started), after an uncounted warm-up of `warmupMs`. Each call gets a
 * distinct index `i` (warm-up calls included). A call that throws counts as an error.
 * Returns { ops, errors, warmupErrors, firstError, seconds, opsPerSec, p50, p99, max } (latencies in ms).
 */
export async function runLoad({ op, concurrency = 64, durationMs, count, warmupMs = 0 }) {
  if (durationMs === undefined && count === undefined) throw new Error('runLoad: give durationMs or count');
  let next = 0;
  let firstError;
  let warmupErrors = 0;
  if (warmupMs > 0) {
    const until = performance.now() + warmupMs;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < until) {
          try {
            await op(next++);
          } catch (e) {
            warmupErrors++;
            firstError ??= e;
          }
        }
      }),
    );
  }
  let latencies = new Float64Array(1 << 16);
  let n = 0;
  let errors = 0;
  const start = performance.now();
  const until = durationMs === undefined ? Infinity : start + durationMs;
  let started = 0;
  const more = () => performance.now() < until && (count === undefined || started < count);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (more()) {
        started++;
        const t = performance.now();
        try {
          await op(next++);
        } catch (e) {
          errors++;
          firstError ??= e;
          continue;
        }
        if (n === latencies.length) {
          const bigger = new Float64Array(latencies.length * 2);
          bigger.set(latencies);
          latencies = bigger;
        }
        latencies[n++] = performance.now() - t;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const sorted = latencies.subarray(0, n).sort();
  return {
    ops: n,
    errors,
    warmupErrors,
    firstError,
    seconds,
    opsPerSec: n / seconds,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: n > 0 ? sorted[n - 1] : NaN,
  };
}

/** Nearest-rank percentile of an ascending array (NaN when empty). */
/** Throws unless every operation of a `runLoad` result succeeded and at least one completed. */
export function mustNotFail(what, load) {
  if (load.errors + load.warmupErrors > 0) {
    throw new Error(
      `${what}: ${load.errors + load.warmupErrors} operations failed (${load.warmupErrors} in the warm-up); first: ${load.firstError?.message ?? load.firstError}`,
    );
  }
  if (load.ops === 0) throw new Error(`${what}: no operation completed`);
}

export function percentile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

export function median(xs) {
  return percentile(Float64Array.from(xs).sort(), 0.5);
}

// ---------------------------------------------------------------------------------------
// Results and formatting.

/**
 * A benchmark result. `value` and `ceiling` are in the same `unit`; `ratio` is
 * value / ceiling; `short` names it in the summary table. `target` (optional) is { kind: 'ratio' | 'value', op: '>=' | '<=', limit }.
 */
export function result({ name, short = name, value, ceiling, unit, target, detail = '' }) {
  const ratio = value / ceiling;
  let pass;
  if (target) {
    const x = target.kind === 'ratio' ? ratio : value;
    pass = target.op === '>=' ? x >= target.limit : x <= target.limit;
  }
  return { name, short, value, ceiling, unit, ratio, target, pass, detail };
}

export function fmtNum(x, unit) {
  if (!Number.isFinite(x)) return String(x);
  if (unit === 'ms' && x >= 1000) return `${(x / 1000).toFixed(2)} s`;
  const digits = x >= 100 ? 0 : x >= 10 ? 1 : 2;
  return `${x.toFixed(digits)}${unit === '/s' ? '/s' : unit ? ` ${unit}` : ''}`;
}

export function fmtTarget(t) {
  if (!t) return '';
  const op = t.op === '>=' ? '≥' : '≤';
  return t.kind === 'ratio' ? `ratio ${op} ${Number(t.limit.toFixed(2))}` : `${op} ${fmtNum(t.limit, t.unit)}`;
}

/** `name: <figure> (ceiling <figure>, ratio <x>)  [target ...: ok|MISSED]  detail` */
export function formatResult(r) {
  let s = `${r.name}: ${fmtNum(r.value, r.unit)} (ceiling ${fmtNum(r.ceiling, r.unit)}, ratio ${r.ratio.toFixed(2)})`;
  if (r.target) s += `  [target ${fmtTarget(r.target)}: ${r.pass ? 'ok' : 'MISSED'}]`;
  if (r.detail) s += `  ${r.detail}`;
  return s;
}

export function fmtLatency(l) {
  return `p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms`;
}

export function machineLine() {
  const [l1, l5, l15] = loadavg();
  return `node ${process.version}, ${cpus().length} vCPU, load average ${l1.toFixed(2)} ${l5.toFixed(2)} ${l15.toFixed(2)}`;
}

/** Runs a bench module's default export when the module itself is the entry point. */
export async function runIfMain(metaUrl, run) {
  if (process.argv[1] === undefined || pathToFileURL(resolve(process.argv[1])).href !== metaUrl) return;
  console.log(machineLine());
  try {
    const results = await run({ log: (s) => console.log(s) });
    for (const r of results) console.log(formatResult(r));
  } catch (e) {
    console.error(e instanceof BenchSetupError ? `bench: ${e.message}` : e);
    process.exitCode = 1;
  }
}

// ---------------------------------------------------------------------------------------
// A whole cluster through ./scripts/cluster.sh, in a temp SVC_CLUSTER_DIR on free ports.

/** A base such that base+step*i is free for i = 1..count (cluster.sh's node i uses base+step*i). */
async function freeRange(count, step) {
  const { createServer } = await import('node:net');
  const free = (port) =>
    new Promise((done) => {
      const s = createServer()
        .once('error', () => done(false))
        .listen(port, '127.0.0.1', () => s.close(() => done(true)));
    });
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * (40_000 - step * count));
    let ok = true;
    for (let i = 1; i <= count && ok; i++) ok = await free(base + step * i);
    if (ok) return base;
  }
}

/**
 * `cluster.sh up --nodes <nodes>` in a fresh temp directory with every port free; `down`
 * (and removal of the directory, and SIGKILL of leftovers, which then fail the bench) is
 * registered on `scope`. Resolves with the directory, the env, the ports and `up`'s time.
 * `args` are more `up` arguments (e.g. `--simulated-nodes 1000`), `env` more environment
 * (e.g. SVC_CONTROLLER_MANAGER_ARGS).
 */
export async function clusterUp(
  scope,
  { nodes = 1, prefix = 'svc-bench-cluster-', timeoutMs = 240_000, args = [], env: moreEnv = {} } = {},
) {
  const { freePorts } = await svcTesting();
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const [etcd, etcdPeer, apiserver, controllerManager, scheduler] = await freePorts(5);
  const env = {
    ...process.env,
    SVC_CLUSTER_DIR: dir,
    SVC_ETCD_PORT: String(etcd),
    SVC_ETCD_PEER_PORT: String(etcdPeer),
    SVC_APISERVER_PORT: String(apiserver),
    SVC_CONTROLLER_MANAGER_PORT: String(controllerManager),
    SVC_SCHEDULER_PORT: String(scheduler),
    SVC_NODE_PORT_BASE: String(await freeRange(nodes, 1)),
    SVC_NODE_HEALTHZ_PORT_BASE: String(await freeRange(nodes, 100)),
    ...moreEnv,
  };
  scope.defer(async () => {
    await spawnTracked('bash', ['scripts/cluster.sh', 'down'], { cwd: ROOT, env }).exited;
    const { spawnSync } = await import('node:child_process');
    let left = '';
    for (let i = 0; i < 50; i++) {
      left = spawnSync('pgrep', ['-af', dir], { encoding: 'utf8' }).stdout.trim();
      if (!left) break;
      await sleep(200);
    }
    if (left) spawnSync('pkill', ['-9', '-f', dir]);
    await rm(dir, { recursive: true, force: true });
    if (left) throw new Error(`processes left after cluster.sh down:\n${left}`);
  });
  const t0 = performance.now();
  const up = spawnTracked('bash', ['scripts/cluster.sh', 'up', '--nodes', String(nodes), ...args], { cwd: ROOT, env });
  const timer = setTimeout(() => up.child.kill('SIGKILL'), timeoutMs);
  const code = await up.exited;
  clearTimeout(timer);
  const upMs = performance.now() - t0;
  if (code !== 0) throw new Error(`cluster.sh up --nodes ${nodes} exited with ${code}:\n${up.output().slice(-3000)}`);
  return { dir, env, upMs, ports: { etcd, apiserver } };
}

/**
 * The admin client of a `clusterUp` cluster: `server` ({url, token, caPem}), a keep-alive `api`
 * (closed with `scope`) and `must(method, path, body?, want?)`, which answers the parsed body or throws.
 */
export async function clusterClient(scope, { dir, ports }) {
  const server = {
    url: `https://127.0.0.1:${ports.apiserver}`,
    token: (await readFile(join(dir, 'tokens.csv'), 'utf8')).split(',')[0],
    caPem: await readFile(join(dir, 'pki', 'ca.crt'), 'utf8'),
  };
  const api = apiClient(server, { maxSockets: 8 });
  scope.defer(() => api.close());
  const must = async (method, path, body, want = [200, 201]) => {
    const r = await api.call(method, path, body);
    if (!want.includes(r.status)) throw new Error(`${method} ${path}: ${r.status} ${r.body.slice(0, 300)}`);
    return JSON.parse(r.body);
  };
  return { server, api, must };
}

/** Runs a watch on `path` (from `resourceVersion` when given) until `scope` closes; `onObject` gets each ADDED/MODIFIED object and the time it arrived. */
export function watchObjects(server, { path, resourceVersion, scope, onObject }) {
  const ac = new AbortController();
  scope.defer(() => ac.abort());
  const req = httpsRequest(
    `${server.url}${path}?watch=1${resourceVersion ? `&resourceVersion=${resourceVersion}` : ''}`,
    { ca: server.caPem, headers: { authorization: `Bearer ${server.token}` }, signal: ac.signal },
    (res) => {
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        const now = performance.now();
        buf += c;
        for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (!line.trim()) continue;
          const e = JSON.parse(line);
          if (e.type === 'ADDED' || e.type === 'MODIFIED') onObject(e.object, now);
        }
      });
      res.on('error', () => undefined);
    },
  );
  req.on('error', () => undefined);
  req.end();
}

/** Sums the API server's `apiserver_request_total` series of 2xx mutating requests on `resource` (`/metrics` text). */
export function mutatingRequests(metricsText, resource) {
  let n = 0;
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    if (!line.includes(`resource="${resource}"`) || !/code="2\d\d"/.test(line)) continue;
    if (!/verb="(POST|PUT|PATCH|DELETE|APPLY|CREATE|UPDATE)"/.test(line)) continue;
    n += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
  }
  return n;
}
