// @ts-check
// The per-container shim of svc-runtime: `node container-shim.mjs <container-dir>`.
//
// Contract (svc-runtime relies on every line):
// - reads <dir>/process.json {argv, env, cwd, logPath, stdin, stdinOnce, tty} and starts argv
//   in its own process group (pgid = pid); stdin is /dev/null unless `stdin`;
// - with `stdin`, keeps the container's stdin open and feeds it what attach sessions write into
//   the FIFO <dir>/stdin (made by the shim, mode 0600); with `stdinOnce` the container's stdin
//   ends when the first writer of the FIFO closes it (the first attach detaching), otherwise
//   it stays open across attaches;
// - with `tty`, runs argv on a pseudo-terminal (node-pty; its own session, pid = pgid), its
//   output logged as stdout, and applies the sizes `{"Width":..,"Height":..}` written as lines
//   into the FIFO <dir>/resize; the end of stdin (stdinOnce) is the terminal's EOF character;
// - on start writes <dir>/started.json {pid, shimPid, startedAt} (atomically), then one JSON
//   line {pid, startedAt} on its stdout; if the start fails, one line {error} and exit 1; with
//   `readyFile` (a container with mounts, whose mount script writes a line into that file once
//   they are made) it does both only when the file has content or the process has exited, so
//   that no exec session enters the container's namespace before its volumes are there;
// - owns the log: every stdout/stderr line goes to logPath in the CRI format
//   `<RFC3339Nano> <stdout|stderr> <F|P> <text>` (lines over 16 KiB split into P chunks, the
//   last chunk F), appending, so logging goes on while svc-runtime restarts; SIGUSR1 reopens
//   the file (ReopenContainerLog); no logPath → output discarded;
// - when the main process exits, kills what is left of its process group (as a container's
//   init ending ends the container), drains the output, then writes <dir>/exit.json
//   {exitCode, signal, finishedAt} (exitCode = 128 + signal number when killed) and exits.
// Times are nanoseconds since the epoch, as decimal strings.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const MAX_LINE = 16 * 1024;
const dir = process.argv[2] ?? '';
const spec = JSON.parse(fs.readFileSync(path.join(dir, 'process.json'), 'utf8'));

const nowNs = () => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)) * 1000n;
const rfc3339Nano = (/** @type {bigint} */ ns) =>
  `${new Date(Number(ns / 1000000n)).toISOString().slice(0, 19)}.${String(ns % 1000000000n).padStart(9, '0')}Z`;

function writeJsonAtomic(/** @type {string} */ name, /** @type {unknown} */ value) {
  const file = path.join(dir, name);
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(value));
  fs.renameSync(`${file}.tmp`, file);
}

/** @type {number | null} */
let logFd = null;
function openLog() {
  if (!spec.logPath) return;
  try {
    fs.mkdirSync(path.dirname(spec.logPath), { recursive: true });
    logFd = fs.openSync(spec.logPath, 'a');
  } catch (e) {
    process.stderr.write(`cannot open log ${spec.logPath}: ${e}\n`);
  }
}
openLog();
process.on('SIGUSR1', () => {
  if (logFd !== null) fs.closeSync(logFd);
  logFd = null;
  openLog();
});

function writeEntry(/** @type {string} */ stream, /** @type {string} */ tag, /** @type {Buffer} */ text) {
  if (logFd === null) return;
  try {
    fs.writeSync(
      logFd,
      Buffer.concat([Buffer.from(`${rfc3339Nano(nowNs())} ${stream} ${tag} `), text, Buffer.from('\n')]),
    );
  } catch (e) {
    process.stderr.write(`log write failed: ${e}\n`);
  }
}

function pump(/** @type {import('node:stream').Readable | null} */ input, /** @type {string} */ stream) {
  if (!input) return;
  let buf = Buffer.alloc(0);
  input.on('data', (/** @type {Buffer} */ chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      const nl = buf.indexOf(10);
      if (nl >= 0 && nl < MAX_LINE) {
        writeEntry(stream, 'F', buf.subarray(0, nl));
        buf = buf.subarray(nl + 1);
      } else if (buf.length >= MAX_LINE) {
        writeEntry(stream, 'P', buf.subarray(0, MAX_LINE));
        buf = buf.subarray(MAX_LINE);
      } else break;
    }
  });
  input.on('end', () => {
    if (buf.length > 0) writeEntry(stream, 'F', buf);
  });
}

/** Makes the FIFO `name` in the container's directory (Node has no mkfifo). */
function makeFifo(/** @type {string} */ name) {
  const file = path.join(dir, name);
  fs.rmSync(file, { force: true });
  execFileSync('mkfifo', ['-m', '600', file]);
  return file;
}

/**
 * Reads the FIFO `file` as a stream: held open for reading and writing (never at its end) or,
 * with `once`, opened for reading only once a writer opens it, so it ends when the writers
 * have closed it. `release` unblocks a pending open so that the shim can exit.
 */
function readFifo(/** @type {string} */ file, /** @type {boolean} */ once, /** @type {(s: net.Socket) => void} */ use) {
  if (!once) {
    use(new net.Socket({ fd: fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_NONBLOCK), writable: false }));
    return () => undefined;
  }
  let pending = true;
  fs.open(file, 'r', (err, fd) => {
    pending = false;
    if (!err) use(new net.Socket({ fd, writable: false }));
  });
  return () => {
    if (!pending) return;
    try {
      fs.closeSync(fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
    } catch {
      // no reader pending after all
    }
  };
}

/** @type {Array<() => void>} */
const releases = [];

/**
 * @typedef {{ pid: number, onStarted: (f: () => void) => void, onFailed: (f: (e: Error) => void) => void,
 *   onExit: (f: (code: number | null, signal: NodeJS.Signals | null) => void) => void,
 *   onClose: (f: () => void) => void }} Started
 */

/** Starts argv with pipes (or none) for its streams. @returns {Started} */
function startPiped() {
  const output = spec.logPath ? 'pipe' : 'ignore';
  const child = spawn(spec.argv[0], spec.argv.slice(1), {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    stdio: [spec.stdin ? 'pipe' : 'ignore', output, output],
  });
  pump(child.stdout, 'stdout');
  pump(child.stderr, 'stderr');
  if (spec.stdin && child.stdin) {
    const stdin = child.stdin;
    stdin.on('error', () => undefined);
    releases.push(
      readFifo(makeFifo('stdin'), spec.stdinOnce === true, (s) => {
        s.pipe(stdin);
      }),
    );
  }
  return {
    get pid() {
      return child.pid ?? 0;
    },
    onStarted: (f) => child.on('spawn', f),
    onFailed: (f) => child.on('error', f),
    onExit: (f) => child.on('exit', f),
    onClose: (f) => child.on('close', f),
  };
}

/** Starts argv on a pseudo-terminal. @returns {Promise<Started>} */
async function startOnTerminal() {
  const { spawn: spawnPty } = await import('@lydell/node-pty');
  const term = spawnPty(spec.argv[0], spec.argv.slice(1), {
    name: spec.env.TERM ?? 'xterm',
    cols: 80,
    rows: 24,
    cwd: spec.cwd,
    env: { TERM: 'xterm', ...spec.env },
  });
  const out = new (await import('node:stream')).PassThrough();
  term.onData((d) => out.write(Buffer.from(d, 'utf8')));
  pump(out, 'stdout');
  if (spec.stdin) {
    releases.push(
      readFifo(makeFifo('stdin'), spec.stdinOnce === true, (s) => {
        s.on('data', (/** @type {Buffer} */ b) => term.write(b.toString('utf8')));
        s.on('end', () => term.write('\x04'));
      }),
    );
  }
  releases.push(
    readFifo(makeFifo('resize'), false, (s) => {
      let buf = '';
      s.on('data', (/** @type {Buffer} */ b) => {
        buf += b.toString('utf8');
        const lines = buf.split('\n');
        buf = lines.pop() ?? '';
        for (const line of lines) {
          try {
            const size = JSON.parse(line);
            if (size.Width > 0 && size.Height > 0) term.resize(size.Width, size.Height);
          } catch {
            // not a size
          }
        }
      });
    }),
  );
  /** @type {Array<(code: number | null, signal: NodeJS.Signals | null) => void>} */
  const exits = [];
  /** @type {Array<() => void>} */
  const closes = [];
  term.onExit(({ exitCode, signal }) => {
    const name = signal ? Object.entries(os.constants.signals).find(([, n]) => n === signal)?.[0] : undefined;
    for (const f of exits) f(signal ? null : exitCode, /** @type {NodeJS.Signals | null} */ (name ?? null));
    out.end();
    setImmediate(() => closes.forEach((f) => f()));
  });
  return {
    pid: term.pid,
    onStarted: (f) => setImmediate(f),
    onFailed: () => undefined,
    onExit: (f) => exits.push(f),
    onClose: (f) => closes.push(f),
  };
}

const child = spec.tty ? await startOnTerminal() : startPiped();

child.onFailed((e) => {
  fs.writeSync(1, `${JSON.stringify({ error: e.message })}\n`);
  process.exit(1);
});
let reported = false;
function reportStarted() {
  if (reported) return;
  reported = true;
  const startedAt = String(nowNs());
  writeJsonAtomic('started.json', { pid: child.pid, shimPid: process.pid, startedAt });
  fs.writeSync(1, `${JSON.stringify({ pid: child.pid, startedAt })}\n`);
}
/** Whether the mount script has written its line into the ready file. */
function mounted() {
  try {
    return fs.statSync(spec.readyFile).size > 0;
  } catch {
    return false;
  }
}
child.onStarted(() => {
  if (!spec.readyFile) return reportStarted();
  const watcher = fs.watch(path.dirname(spec.readyFile), () => {
    if (mounted()) whenReady();
  });
  const whenReady = () => {
    if (reported) return;
    watcher.close();
    reportStarted();
  };
  if (mounted()) whenReady();
  child.onExit(whenReady);
});

/** @type {{ exitCode: number, signal: string | null, finishedAt: string } | undefined} */
let exit;
child.onExit((code, signal) => {
  const num = signal ? os.constants.signals[signal] : 0;
  exit = { exitCode: code ?? 128 + num, signal, finishedAt: String(nowNs()) };
  try {
    process.kill(-(child.pid ?? 0), 'SIGKILL');
  } catch {
    // the group is already gone
  }
});
child.onClose(() => {
  writeJsonAtomic('exit.json', exit);
  if (logFd !== null) fs.closeSync(logFd);
  for (const release of releases) release();
  process.exit(0);
});
