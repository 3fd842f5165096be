import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

export interface StartRedisOptions {
  /** How long to wait for Redis to answer PING. Default 10 s. */
  readyTimeoutMs?: number;
  /** The binary. Default `redis-server` (Debian's `redis-server` package). */
  binary?: string;
  /** `appendfsync`: `always` (default: an acknowledged write is on disk, as etcd's) or `everysec`. */
  appendfsync?: 'always' | 'everysec';
}

/**
 * A throw-away Redis on a free loopback port with its own temporary directory and
 * persistence on: the append-only file (`appendonly yes`, `appendfsync always` unless asked
 * otherwise), no RDB snapshots. Killed when `stop()` is called or the test process exits.
 */
export interface RedisHandle {
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Its working directory (the append-only file lives here); removed by `stop()`. */
  readonly dir: string;
  /** SIGTERM (Redis writes and fsyncs its AOF and exits), then start again on the same port and directory. */
  restart(): Promise<void>;
  /** The last output of the process, for diagnostics. */
  output(): string;
  stop(): Promise<void>;
}

const MAX_LOG_CHARS = 32 * 1024;
const live = new Set<ChildProcess>();
const liveDirs = new Set<string>();
let hooks = false;

const PDEATHSIG =
  process.platform === 'linux' &&
  (spawnSync('setpriv', ['--help'], { encoding: 'utf8' }).stdout ?? '').includes('--pdeathsig');

export async function startRedis(opts: StartRedisOptions = {}): Promise<RedisHandle> {
  installHooks();
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  liveDirs.add(dir);
  const port = await freePort();
  const server = new RedisServer({
    binary: opts.binary ?? 'redis-server',
    dir,
    port,
    appendfsync: opts.appendfsync ?? 'always',
    readyTimeoutMs: opts.readyTimeoutMs ?? 10_000,
  });
  try {
    await server.start();
  } catch (err) {
    await server.stop();
    throw err;
  }
  return server;
}

class RedisServer implements RedisHandle {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  private proc: ChildProcess | undefined;
  private exited: Promise<void> | undefined;
  private log = '';
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly o: { binary: string; dir: string; port: number; appendfsync: string; readyTimeoutMs: number },
  ) {
    this.port = o.port;
    this.dir = o.dir;
    this.url = `redis://127.0.0.1:${o.port}`;
  }

  output(): string {
    return this.log;
  }

  async start(): Promise<void> {
    const args = [
      '--port',
      String(this.o.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      this.o.dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      this.o.appendfsync,
      '--save',
      '',
      '--daemonize',
      'no',
      '--protected-mode',
      'yes',
    ];
    const [cmd, argv] = PDEATHSIG
      ? ['setpriv', ['--pdeathsig', 'KILL', '--', this.o.binary, ...args]]
      : [this.o.binary, args];
    const proc = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    live.add(proc);
    const append = (chunk: Buffer): void => {
      this.log = (this.log + chunk.toString('utf8')).slice(-MAX_LOG_CHARS);
    };
    proc.stdout?.on('data', append);
    proc.stderr?.on('data', append);
    this.exited = new Promise<void>((resolve) => {
      const done = (): void => {
        live.delete(proc);
        if (this.proc === proc) this.proc = undefined;
        resolve();
      };
      proc.once('exit', done);
      proc.once('error', (err) => {
        append(Buffer.from(`\nspawn failed: ${err.message}\n`));
        done();
      });
    });
    const deadline = Date.now() + this.o.readyTimeoutMs;
    for (;;) {
      if (!this.proc) throw new Error(`redis-server exited while starting:\n${this.log}`);
      if (await ping(this.o.port)) return;
      if (Date.now() > deadline)
        throw new Error(`redis-server not answering after ${this.o.readyTimeoutMs} ms:\n${this.log}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async restart(): Promise<void> {
    await this.terminate('SIGTERM');
    await this.start();
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.terminate('SIGKILL');
      liveDirs.delete(this.dir);
      await rm(this.dir, { recursive: true, force: true });
    })();
    return this.stopping;
  }

  private async terminate(signal: NodeJS.Signals): Promise<void> {
    const proc = this.proc;
    const exited = this.exited;
    if (!proc || !exited) return;
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/** Whether Redis on `port` answers PING with PONG (and has loaded its data). */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    let buf = '';
    const done = (ok: boolean): void => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(1000, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => {
      buf += d.toString('utf8');
      if (buf.includes('\r\n')) done(buf.startsWith('+PONG'));
    });
  });
}

function installHooks(): void {
  if (hooks) return;
  hooks = true;
  process.once('exit', () => {
    for (const p of live) {
      try {
        p.kill('SIGKILL');
      } catch {
        /* gone */
      }
    }
    for (const d of liveDirs) rmSync(d, { recursive: true, force: true });
  });
}
