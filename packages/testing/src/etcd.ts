import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from './free-port.js';

export interface StartEtcdOptions {
  /** Cluster size: one member, or a three-member loopback cluster. Default 1. */
  members?: 1 | 3;
  /** How long to wait for the cluster to become writable. Default 30 s. */
  readyTimeoutMs?: number;
  /** Directory under which the temporary data directory is made. Default `os.tmpdir()`. */
  tmpRoot?: string;
  /** The etcd binary. Default `etcd` (on PATH). */
  binary?: string;
}

/**
 * A running throw-away etcd (one member or a loopback cluster of three).
 *
 * Every member process is killed when `stop()` is called, and also when the test process
 * exits or receives SIGINT/SIGTERM/SIGHUP; on Linux the members also get SIGKILL if the
 * process that started them dies without running any handler (`setpriv --pdeathsig`).
 */
export interface EtcdHandle {
  /** Client URLs (`http://127.0.0.1:<port>`), one per member, in member order. */
  readonly endpoints: string[];
  /** The temporary directory holding every member's data; removed by `stop()`. */
  readonly dataDir: string;
  /**
   * Stops every member (followers first, then the leader, which is much faster than
   * stopping them all at once), waits for the processes to exit and removes `dataDir`.
   * Idempotent.
   */
  stop(): Promise<void>;
  /** SIGKILLs member `i` and waits for it to exit; its data is kept for `restartMember`. */
  killMember(i: number): Promise<void>;
  /** Starts member `i` again on the same ports and data; resolves when it serves quorum reads. */
  restartMember(i: number): Promise<void>;
  /** Index of the current leader; throws when no live member reports one. */
  leaderIndex(): Promise<number>;
  /** The last output (JSON log lines) of member `i`, for diagnostics. */
  output(i: number): string;
}

const MAX_LOG_CHARS = 64 * 1024;
const STOP_GRACE_MS = 3000;
const PROBE_TIMEOUT_MS = 1000;
const POLL_INTERVAL_MS = 20;
const START_ATTEMPTS = 4;

interface Member {
  readonly index: number;
  readonly name: string;
  readonly clientPort: number;
  readonly peerPort: number;
  readonly args: string[];
  proc: ChildProcess | undefined;
  exited: Promise<void> | undefined;
  log: string;
}

/** Every member process started by this module and not yet known to have exited. */
const liveProcesses = new Set<ChildProcess>();
/** Data directories not yet removed. */
const liveDirs = new Set<string>();

/**
 * Starts a real etcd (binary `etcd`, 3.4) on free loopback ports in a fresh temporary
 * directory, with fast raft timings (`--heartbeat-interval=10 --election-timeout=100`), and
 * resolves once every member answers a linearizable (quorum) read, which implies the
 * cluster has a leader that has committed in its term, i.e. is writable. The revision of
 * the new cluster is 1 (the probe writes nothing).
 */
export async function startEtcd(opts: StartEtcdOptions = {}): Promise<EtcdHandle> {
  const size = opts.members ?? 1;
  const readyTimeoutMs = opts.readyTimeoutMs ?? 30_000;
  const binary = opts.binary ?? 'etcd';
  installExitHooks();
  const dataDir = mkdtempSync(join(opts.tmpRoot ?? tmpdir(), 'svc-etcd-'));
  liveDirs.add(dataDir);
  let lastError: unknown;
  for (let attempt = 0; attempt < START_ATTEMPTS; attempt++) {
    const members = await planMembers({ size, dataDir, attempt });
    const cluster = new Cluster(binary, dataDir, members);
    try {
      await cluster.start(readyTimeoutMs);
      return cluster;
    } catch (err) {
      lastError = err;
      await cluster.killAll();
      // Another process took a port between picking and binding it: try fresh ports.
      if (!members.some((m) => m.log.includes('address already in use'))) break;
    }
  }
  liveDirs.delete(dataDir);
  await rm(dataDir, { recursive: true, force: true });
  throw lastError;
}

async function planMembers(p: { size: number; dataDir: string; attempt: number }): Promise<Member[]> {
  const ports = await freePorts(p.size * 2);
  const token = `svc-testing-${randomBytes(6).toString('hex')}`;
  const specs = Array.from({ length: p.size }, (_, i) => ({
    index: i,
    name: `m${i}`,
    clientPort: ports[2 * i] ?? 0,
    peerPort: ports[2 * i + 1] ?? 0,
  }));
  const initialCluster = specs.map((s) => `${s.name}=http://127.0.0.1:${s.peerPort}`).join(',');
  return specs.map((s) => ({
    ...s,
    args: [
      `--name=${s.name}`,
      `--data-dir=${join(p.dataDir, `${s.name}-${p.attempt}`)}`,
      `--listen-client-urls=http://127.0.0.1:${s.clientPort}`,
      `--advertise-client-urls=http://127.0.0.1:${s.clientPort}`,
      `--listen-peer-urls=http://127.0.0.1:${s.peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${s.peerPort}`,
      `--initial-cluster=${initialCluster}`,
      '--initial-cluster-state=new',
      `--initial-cluster-token=${token}`,
      '--heartbeat-interval=10',
      '--election-timeout=100',
      '--logger=zap',
      '--log-outputs=stderr',
    ],
    proc: undefined,
    exited: undefined,
    log: '',
  }));
}

class Cluster implements EtcdHandle {
  readonly endpoints: string[];
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly binary: string,
    readonly dataDir: string,
    private readonly members: Member[],
  ) {
    this.endpoints = members.map((m) => `http://127.0.0.1:${m.clientPort}`);
  }

  async start(timeoutMs: number): Promise<void> {
    for (const m of this.members) this.spawnMember(m);
    await Promise.all(this.members.map((m) => this.waitServing(m, timeoutMs)));
  }

  output(i: number): string {
    return this.member(i).log;
  }

  async killMember(i: number): Promise<void> {
    await terminate(this.member(i), 'SIGKILL');
  }

  async restartMember(i: number): Promise<void> {
    const m = this.member(i);
    if (this.stopping) throw new Error('etcd cluster is stopped');
    if (m.proc) throw new Error(`etcd member ${i} is running`);
    this.spawnMember(m);
    await this.waitServing(m, 30_000);
  }

  async leaderIndex(): Promise<number> {
    const statuses = await Promise.all(
      this.members.map(async (m) => {
        if (!m.proc) return undefined;
        try {
          return await gateway<{ header?: { member_id?: string }; leader?: string }>(
            this.endpoints[m.index] ?? '',
            '/v3/maintenance/status',
            {},
          );
        } catch {
          return undefined;
        }
      }),
    );
    const idx = statuses.findIndex(
      (s) => s?.leader !== undefined && s.leader !== '0' && s.leader === s.header?.member_id,
    );
    if (idx < 0) throw new Error('no etcd member reports being the leader');
    return idx;
  }

  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  /** SIGKILLs every member (used when start fails). */
  async killAll(): Promise<void> {
    await Promise.all(this.members.map((m) => terminate(m, 'SIGKILL')));
  }

  private async doStop(): Promise<void> {
    let order = this.members.filter((m) => m.proc);
    if (order.length > 1) {
      const leader = await this.leaderIndex().catch(() => -1);
      order = [...order.filter((m) => m.index !== leader), ...order.filter((m) => m.index === leader)];
    }
    // Followers shut down gracefully in milliseconds. The last member has no quorum left
    // and can hang in a graceful shutdown for seconds; its data is discarded, so kill it.
    for (const [k, m] of order.entries()) {
      await terminate(m, k === order.length - 1 ? 'SIGKILL' : 'SIGTERM');
    }
    liveDirs.delete(this.dataDir);
    await rm(this.dataDir, { recursive: true, force: true });
  }

  private member(i: number): Member {
    const m = this.members[i];
    if (!m) throw new Error(`no etcd member ${i} (cluster of ${this.members.length})`);
    return m;
  }

  private spawnMember(m: Member): void {
    const [cmd, args] = PDEATHSIG
      ? ['setpriv', ['--pdeathsig', 'KILL', '--', this.binary, ...m.args]]
      : [this.binary, m.args];
    const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    m.proc = proc;
    liveProcesses.add(proc);
    const append = (chunk: Buffer): void => {
      m.log += chunk.toString('utf8');
      if (m.log.length > MAX_LOG_CHARS) m.log = m.log.slice(-MAX_LOG_CHARS);
    };
    proc.stdout?.on('data', append);
    proc.stderr?.on('data', append);
    m.exited = new Promise<void>((resolve) => {
      const done = (): void => {
        liveProcesses.delete(proc);
        if (m.proc === proc) m.proc = undefined;
        resolve();
      };
      proc.once('exit', done);
      proc.once('error', (err) => {
        append(Buffer.from(`\nspawn failed: ${err.message}\n`));
        done();
      });
    });
  }

  /** Resolves once `m` answers a linearizable read; rejects if it exits or time runs out. */
  private async waitServing(m: Member, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const endpoint = this.endpoints[m.index] ?? '';
    let lastError = 'not probed';
    while (Date.now() < deadline) {
      if (!m.proc) {
        throw new Error(`etcd member ${m.name} exited while starting:\n${tail(m.log)}`);
      }
      try {
        await gateway(endpoint, '/v3/kv/range', { key: Buffer.from('svc-testing-probe').toString('base64') });
        return;
      } catch (err) {
        lastError = err instanceof Error ? err.message : String(err);
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
    }
    throw new Error(`etcd member ${m.name} not serving after ${timeoutMs} ms (${lastError}):\n${tail(m.log)}`);
  }
}

/** Sends `signal`, escalating to SIGKILL after a grace period; resolves when the process exited. */
async function terminate(m: Member, signal: NodeJS.Signals): Promise<void> {
  const proc = m.proc;
  const exited = m.exited;
  if (!proc || !exited) return;
  proc.kill(signal);
  if (signal === 'SIGKILL') return exited;
  let timer: NodeJS.Timeout | undefined;
  const escalate = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      proc.kill('SIGKILL');
      resolve();
    }, STOP_GRACE_MS);
  });
  await Promise.race([exited, escalate]);
  clearTimeout(timer);
  await exited;
}

/** POSTs to etcd's JSON gRPC gateway; throws unless it answers 200 with a JSON header. */
async function gateway<T>(endpoint: string, path: string, body: object): Promise<T> {
  const res = await fetch(`${endpoint}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

function tail(log: string): string {
  return log.split('\n').slice(-30).join('\n');
}

/** Whether `setpriv --pdeathsig` is available to tie member lifetimes to this process. */
const PDEATHSIG =
  process.platform === 'linux' &&
  (spawnSync('setpriv', ['--help'], { encoding: 'utf8' }).stdout ?? '').includes('--pdeathsig');

let hooksInstalled = false;

/**
 * Kills every member and removes every data directory synchronously on exit, and on
 * SIGINT/SIGTERM/SIGHUP; the signal is then re-raised when nobody else handles it, so the
 * process still ends as it would have without these hooks.
 */
function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  const cleanup = (): void => {
    for (const proc of liveProcesses) {
      try {
        proc.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
    liveProcesses.clear();
    for (const dir of liveDirs) {
      try {
        rmSync(dir, { recursive: true, force: true });
      } catch {
        /* best effort */
      }
    }
    liveDirs.clear();
  };
  process.on('exit', cleanup);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      cleanup();
      process.removeListener(sig, onSignal);
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    };
    process.on(sig, onSignal);
  }
}
