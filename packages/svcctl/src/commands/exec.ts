import { StringDecoder } from 'node:string_decoder';
import { Readable } from 'node:stream';
import type WebSocket from 'ws';
import { STREAMING_PROTOCOLS } from '@svc/api/names';
import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';
import { resourcePath } from '../discovery.js';
import { CliError } from '../errors.js';
import { dialStream } from '../streaming/ws-dial.js';
import { attachablePod, defaultContainer, type Pod } from '../streaming/pods.js';
import type { SvcctlIo } from '../io.js';

export interface ExecOptions {
  stdin?: boolean;
  tty?: boolean;
  container?: string;
  quiet?: boolean;
}

/** remotecommand's channels over WebSocket; v5 adds the close signal. */
const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const ERROR = 3;
const RESIZE = 4;
const CLOSE = 255;

interface StreamStatus {
  status?: string;
  reason?: string;
  message?: string;
  details?: { causes?: Array<{ reason?: string; message?: string }> };
}

/** Where a channel's bytes go: `outBytes`/`errBytes`, else decoded text to `out`/`err`. */
function sink(io: SvcctlIo, which: 'out' | 'err'): { write(b: Buffer): void; end(): void } {
  const bytes = which === 'out' ? io.outBytes : io.errBytes;
  if (bytes) return { write: (b) => bytes(b), end: () => undefined };
  const d = new StringDecoder('utf8');
  const text = (s: string): void => (which === 'out' ? io.out(s) : io.err(s));
  return { write: (b) => text(d.write(b)), end: () => text(d.end()) };
}

/** Sends standard input on channel 0, then v5's close signal (v4 has no way to end stdin). */
async function pumpStdin(o: { ws: WebSocket; input: NodeJS.ReadableStream; v5: boolean }): Promise<void> {
  for await (const chunk of o.input) {
    if (o.ws.readyState !== o.ws.OPEN) return;
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    o.ws.send(Buffer.concat([Buffer.of(STDIN), b]));
  }
  if (o.v5 && o.ws.readyState === o.ws.OPEN) o.ws.send(Buffer.of(CLOSE, STDIN));
}

/** Runs the session until the server closes it; resolves with the Status of the error channel. */
function runSession(o: {
  ws: WebSocket;
  io: SvcctlIo;
  protocol: string;
  stdin?: NodeJS.ReadableStream;
  tty: boolean;
}): Promise<StreamStatus | undefined> {
  const { ws, io } = o;
  const out = sink(io, 'out');
  const err = sink(io, 'err');
  let errorText = '';
  const v5 = o.protocol === STREAMING_PROTOCOLS.remoteCommandV5;
  const cleanups: Array<() => void> = [];
  if (o.tty && io.terminal) {
    const term = io.terminal;
    const sendSize = (): void => {
      const size = term.size();
      if (size && ws.readyState === ws.OPEN)
        ws.send(
          Buffer.concat([Buffer.of(RESIZE), Buffer.from(JSON.stringify({ Width: size.columns, Height: size.rows }))]),
        );
    };
    sendSize();
    cleanups.push(term.onResize(sendSize));
    term.setRaw(true);
    cleanups.push(() => term.setRaw(false));
  }
  if (o.stdin) {
    void pumpStdin({ ws, input: o.stdin, v5 }).catch(() => undefined);
  }
  const onAbort = (): void => ws.close(1000);
  io.signal?.addEventListener('abort', onAbort, { once: true });
  cleanups.push(() => io.signal?.removeEventListener('abort', onAbort));
  return new Promise((resolve, reject) => {
    ws.on('message', (data: Buffer) => {
      if (data.length === 0) return;
      const body = data.subarray(1);
      if (data[0] === STDOUT) out.write(body);
      else if (data[0] === STDERR) err.write(body);
      else if (data[0] === ERROR) errorText += body.toString('utf8');
    });
    ws.once('error', (e) => {
      for (const c of cleanups) c();
      reject(e);
    });
    ws.once('close', () => {
      for (const c of cleanups) c();
      out.end();
      err.end();
      if (o.stdin && 'pause' in o.stdin) (o.stdin as Readable).pause();
      if (!errorText) return resolve(undefined);
      try {
        resolve(JSON.parse(errorText) as StreamStatus);
      } catch {
        reject(new CliError(`error stream protocol error: invalid character in ${JSON.stringify(errorText)}`));
      }
    });
  });
}

/**
 * `exec POD [-c CONTAINER] [-i] [-t] -- COMMAND [args...]`: the pods/exec subresource over
 * WebSocket (`v5.channel.k8s.io`, else v4). Output is streamed as it comes; the command's
 * exit code becomes svcctl's, with kubectl's "command terminated with exit code N".
 */
export async function run(inv: Invocation<ExecOptions>): Promise<void> {
  const { io, opts } = inv;
  const dash = inv.dashIndex;
  const args = inv.args;
  const before = dash === undefined ? args : args.slice(0, dash);
  const command = dash === undefined ? [] : args.slice(dash);
  if (before.length === 0) throw new CliError('pod, type/name or --filename must be specified');
  if (before.length > 1)
    throw new CliError(
      "exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead\nSee 'svcctl exec -h' for help and examples",
    );
  if (command.length === 0) throw new CliError('you must specify at least one command for the container');
  let tty = opts.tty === true && opts.stdin === true;
  if (tty && !io.terminal) {
    tty = false;
    if (!opts.quiet) io.err('Unable to use a TTY - input is not a terminal or the right kind of file\n');
  }
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    const pod: Pod = await attachablePod(session, { discovery, arg: before[0] ?? '' });
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed')
      throw new CliError(`cannot exec into a container in a completed pod; current phase is ${phase}`);
    const container = opts.container ?? defaultContainer(pod, { naming: discovery.naming, io, quiet: opts.quiet });
    const q = new URLSearchParams();
    for (const c of command) q.append('command', c);
    q.set('container', container);
    if (opts.stdin) q.set('stdin', 'true');
    q.set('stdout', 'true');
    if (!tty) q.set('stderr', 'true');
    if (tty) q.set('tty', 'true');
    const podRes = discovery.builtin({ group: '', resource: 'pods' });
    const path = `${resourcePath(podRes, { namespace: pod.metadata?.namespace, name: pod.metadata?.name, subresource: 'exec' })}?${q.toString()}`;
    const { ws, protocol } = await dialStream(session, {
      path,
      protocols: [STREAMING_PROTOCOLS.remoteCommandV5, STREAMING_PROTOCOLS.remoteCommandV4],
      globals: inv.globals,
      signal: io.signal,
    });
    let stdin: NodeJS.ReadableStream | undefined;
    if (opts.stdin) stdin = io.stdin ?? Readable.from([Buffer.from(await io.readStdin())]);
    const status = await runSession({ ws, io, protocol, stdin, tty });
    if (!status || status.status === 'Success') return;
    if (status.status !== 'Failure') throw new CliError('error stream protocol error: unknown error');
    if (status.reason === 'NonZeroExitCode') {
      const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
      const code = Number(cause?.message);
      if (Number.isInteger(code)) {
        io.err(`command terminated with exit code ${code}\n`);
        inv.fail(code);
        return;
      }
      throw new CliError(`command terminated with non-zero exit code: ${status.message ?? ''}`);
    }
    throw new CliError(status.message ?? 'error stream protocol error: unknown error');
  } finally {
    session.close();
  }
}
