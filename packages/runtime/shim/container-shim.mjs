// @ts-check
// The per-container shim of svc-runtime: `node container-shim.mjs <container-dir>`.
//
// Contract (svc-runtime relies on every line):
// - reads <dir>/process.json {argv, env, cwd, logPath} and starts argv in its own process
//   group (pgid = pid), stdin /dev/null;
// - on start writes <dir>/started.json {pid, shimPid, startedAt} (atomically), then one JSON
//   line {pid, startedAt} on its stdout; if the start fails, one line {error} and exit 1;
// - owns the log: every stdout/stderr line goes to logPath in the CRI format
//   `<RFC3339Nano> <stdout|stderr> <F|P> <text>` (lines over 16 KiB split into P chunks, the
//   last chunk F), appending, so logging goes on while svc-runtime restarts; SIGUSR1 reopens
//   the file (ReopenContainerLog); no logPath → output discarded;
// - when the main process exits, kills what is left of its process group (as a container's
//   init ending ends the container), drains the output, then writes <dir>/exit.json
//   {exitCode, signal, finishedAt} (exitCode = 128 + signal number when killed) and exits.
// Times are nanoseconds since the epoch, as decimal strings.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
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

const output = spec.logPath ? 'pipe' : 'ignore';
const child = spawn(spec.argv[0], spec.argv.slice(1), {
  cwd: spec.cwd,
  env: spec.env,
  detached: true,
  stdio: ['ignore', output, output],
});
pump(child.stdout, 'stdout');
pump(child.stderr, 'stderr');

child.on('error', (e) => {
  fs.writeSync(1, `${JSON.stringify({ error: e.message })}\n`);
  process.exit(1);
});
child.on('spawn', () => {
  const startedAt = String(nowNs());
  writeJsonAtomic('started.json', { pid: child.pid, shimPid: process.pid, startedAt });
  fs.writeSync(1, `${JSON.stringify({ pid: child.pid, startedAt })}\n`);
});

/** @type {{ exitCode: number, signal: string | null, finishedAt: string } | undefined} */
let exit;
child.on('exit', (code, signal) => {
  const num = signal ? os.constants.signals[signal] : 0;
  exit = { exitCode: code ?? 128 + num, signal, finishedAt: String(nowNs()) };
  try {
    process.kill(-(child.pid ?? 0), 'SIGKILL');
  } catch {
    // the group is already gone
  }
});
child.on('close', () => {
  writeJsonAtomic('exit.json', exit);
  if (logFd !== null) fs.closeSync(logFd);
  process.exit(0);
});
