import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import { status } from '@grpc/grpc-js';
import { CriError } from './cri-proto.js';
import type { ExecSyncResponse } from './cri-types.js';

/** Output beyond this many bytes per stream is dropped, as the CRI asks (CVE-2022-1708). */
export const EXEC_OUTPUT_CAP = 16 * 1024 * 1024;

export interface ExecOptions {
  /** The command line started: the probe's command, perhaps behind `nsenter`/`setpriv`. */
  argv: string[];
  /** The probe's command, for messages (default `argv`). */
  command?: string[];
  cwd: string;
  env: Record<string, string>;
  /** Seconds; 0 waits for the command however long it runs. */
  timeout: number;
  /** Processes in flight, so that the server can kill them when it closes. */
  running?: Set<ChildProcess>;
}

/**
 * Runs `argv` to completion in its own process group and answers its output and exit code
 * (128 + signal when killed). A command that cannot be started answers 127 (not found) or
 * 126 (not executable) with the reason on stderr, as a shell would. Past `timeout` the
 * whole group is killed and the call fails with DEADLINE_EXCEEDED, which kubelet (and the
 * svclet) treat as a probe timeout.
 */
export function execSync(opts: ExecOptions): Promise<ExecSyncResponse> {
  return new Promise((resolve, reject) => {
    const [file = '', ...args] = opts.argv;
    const child = spawn(file, args, {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    opts.running?.add(child);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const collect = (into: Buffer[]) => {
      let size = 0;
      return (chunk: Buffer): void => {
        if (size >= EXEC_OUTPUT_CAP) return;
        const part = chunk.subarray(0, EXEC_OUTPUT_CAP - size);
        size += part.length;
        into.push(part);
      };
    };
    child.stdout.on('data', collect(out));
    child.stderr.on('data', collect(err));
    let timedOut = false;
    const timer =
      opts.timeout > 0
        ? setTimeout(() => {
            timedOut = true;
            killGroup(child, 'SIGKILL');
          }, opts.timeout * 1000)
        : undefined;
    const done = (): void => {
      clearTimeout(timer);
      opts.running?.delete(child);
    };
    child.on('error', (e: NodeJS.ErrnoException) => {
      done();
      const code = e.code === 'EACCES' ? 126 : 127;
      const why = code === 126 ? 'permission denied' : 'executable file not found in $PATH';
      resolve({
        stdout: Buffer.alloc(0),
        stderr: Buffer.from(`exec: ${JSON.stringify(file)}: ${why}\n`),
        exitCode: code,
      });
    });
    child.on('close', (code, signal) => {
      done();
      if (timedOut) {
        reject(
          new CriError(
            status.DEADLINE_EXCEEDED,
            `command ${JSON.stringify((opts.command ?? opts.argv).join(' '))} timed out after ${opts.timeout}s`,
          ),
        );
        return;
      }
      const exitCode = code ?? 128 + (signal ? signalNumber(signal) : 0);
      resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err), exitCode });
    });
  });
}

export function signalNumber(signal: NodeJS.Signals): number {
  return (constants.signals as Record<string, number>)[signal] ?? 0;
}

/** Signals the process group led by `child` (all it started), or the process alone if it has no group. */
export function killGroup(child: ChildProcess | number, signal: NodeJS.Signals): void {
  const pid = typeof child === 'number' ? child : child.pid;
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}
