import { spawn } from 'node:child_process';
import { spawn as spawnPty } from '@lydell/node-pty';
import { killGroup, signalNumber } from '../exec-sync.js';

/** What the error channel carries at the end (Kubernetes' metav1.Status as kubelet writes it, without kind). */
export interface StreamStatus {
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  code?: number;
  details?: { causes: Array<{ reason?: string; message: string }> };
}

export const SUCCESS: StreamStatus = { metadata: {}, status: 'Success' };

/** Kubernetes' answer for a command that exited non-zero: reason NonZeroExitCode with an ExitCode cause, which kubectl turns into its own exit code. */
export function exitStatus(argv: readonly string[], code: number): StreamStatus {
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${argv.join(' ')}], exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  };
}

/** An error of the runtime itself, as kubelet reports it (an InternalError Status). */
export function internalErrorStatus(message: string): StreamStatus {
  return {
    metadata: {},
    status: 'Failure',
    message: `Internal error occurred: ${message}`,
    reason: 'InternalError',
    code: 500,
    details: { causes: [{ message }] },
  };
}

export interface CommandOptions {
  /** The command line started: the client's command, perhaps behind `nsenter`/`setpriv` (see process-runtime.ts). */
  argv: string[];
  /** The client's command, for messages (default `argv`). */
  command?: string[];
  cwd: string;
  env: Record<string, string>;
  stdin: boolean;
  /** Runs the command on a pseudo-terminal (its output, stdout and stderr alike, goes to `stdout`). */
  tty: boolean;
  /** Where output goes; a stream not asked for is dropped. */
  stdout?: (b: Buffer) => void;
  stderr?: (b: Buffer) => void;
}

export interface CommandSession {
  writeStdin(b: Buffer): void;
  endStdin(): void;
  /** Kills the command's process group (the client went away). */
  kill(): void;
  /** A new terminal size (TTY sessions; ignored otherwise). */
  resize?(columns: number, rows: number): void;
  /** Settles once the command ended and all its output was handed on: the error channel's Status. */
  done: Promise<StreamStatus>;
}

/**
 * Runs `argv` in its own process group with the container's environment and working
 * directory, streaming its output as it comes. A command that cannot be started ends with an
 * InternalError Status naming why, as kubelet reports a runtime's exec failure.
 */
export function startCommand(o: CommandOptions): CommandSession {
  if (o.tty) return startOnTerminal(o);
  const [file = '', ...args] = o.argv;
  const child = spawn(file, args, {
    cwd: o.cwd,
    env: o.env,
    detached: true,
    stdio: [o.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  const out = o.stdout;
  const err = o.tty ? o.stdout : o.stderr;
  child.stdout?.on('data', (b: Buffer) => out?.(b));
  child.stderr?.on('data', (b: Buffer) => err?.(b));
  child.stdin?.on('error', () => undefined);
  const done = new Promise<StreamStatus>((resolve) => {
    child.once('error', (e: NodeJS.ErrnoException) => {
      const why = e.code === 'EACCES' ? 'permission denied' : 'executable file not found in $PATH';
      resolve(
        internalErrorStatus(
          `error executing command in container: failed to exec in container: exec: ${JSON.stringify(file)}: ${why}`,
        ),
      );
    });
    child.once('close', (code, signal) => {
      const exitCode = code ?? 128 + (signal ? signalNumber(signal) : 0);
      resolve(exitCode === 0 ? SUCCESS : exitStatus(o.command ?? o.argv, exitCode));
    });
  });
  return {
    writeStdin: (b) => {
      if (child.stdin && !child.stdin.writableEnded) child.stdin.write(b);
    },
    endStdin: () => {
      if (child.stdin && !child.stdin.writableEnded) child.stdin.end();
    },
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) killGroup(child, 'SIGKILL');
    },
    done,
  };
}

/** Kubernetes' terminal size until the client sends one. */
const DEFAULT_COLUMNS = 80;
const DEFAULT_ROWS = 24;

/**
 * `startCommand` on a pseudo-terminal (node-pty): a session of its own with the terminal as
 * its controlling tty, TERM=xterm unless the container sets it; the end of stdin is the
 * terminal's EOF character.
 */
function startOnTerminal(o: CommandOptions): CommandSession {
  const [file = '', ...args] = o.argv;
  let term: ReturnType<typeof spawnPty>;
  try {
    term = spawnPty(file, args, {
      name: o.env.TERM ?? 'xterm',
      cols: DEFAULT_COLUMNS,
      rows: DEFAULT_ROWS,
      cwd: o.cwd,
      env: { TERM: 'xterm', ...o.env },
    });
  } catch (e) {
    const why = (e as Error).message;
    return {
      writeStdin: () => undefined,
      endStdin: () => undefined,
      kill: () => undefined,
      done: Promise.resolve(
        internalErrorStatus(`error executing command in container: failed to exec in container: ${why}`),
      ),
    };
  }
  let exited = false;
  term.onData((d) => o.stdout?.(Buffer.from(d, 'utf8')));
  const done = new Promise<StreamStatus>((resolve) => {
    term.onExit(({ exitCode, signal }) => {
      exited = true;
      const code = signal ? 128 + signal : exitCode;
      // A command that could not be started: node-pty's child exits 1 after printing execvp's error.
      resolve(code === 0 ? SUCCESS : exitStatus(o.command ?? o.argv, code));
    });
  });
  return {
    writeStdin: (b) => {
      if (!exited) term.write(b.toString('utf8'));
    },
    endStdin: () => {
      if (!exited) term.write('\x04');
    },
    kill: () => {
      if (!exited) killGroup(term.pid, 'SIGKILL');
    },
    resize: (columns, rows) => {
      if (!exited && columns > 0 && rows > 0) term.resize(columns, rows);
    },
    done,
  };
}
