import type { WebSocket } from 'ws';
import { STREAMING_PROTOCOLS } from '@svc/component-base';
import { startCommand, type CommandOptions, type CommandSession } from './remote-command.js';
import type { SpdyConnection, SpdyStream } from './spdy-connection.js';

/** Kubernetes' channel numbers of remotecommand over WebSocket; v5 adds the close signal. */
const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const ERROR = 3;
const RESIZE = 4;
const CLOSE = 255;

/** How long the client has to open every stream it announced over SPDY (Kubernetes' 30s). */
const STREAM_CREATION_MS = 30_000;

/** Applies resize messages: JSON `{"Width":..,"Height":..}` objects, one or more per chunk. */
function resize(session: CommandSession, b: Buffer): void {
  for (const line of b.toString('utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const size = JSON.parse(line) as { Width?: unknown; Height?: unknown };
      if (typeof size.Width === 'number' && typeof size.Height === 'number') session.resize?.(size.Width, size.Height);
    } catch {
      // not a size: ignored, as Kubernetes logs and goes on
    }
  }
}

/** What a session asks for: the command (exec) or the container's own streams (attach). */
export interface CommandRequest {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
  /** Starts the session with output going to the given writers. */
  start(io: Pick<CommandOptions, 'stdout' | 'stderr'>): CommandSession;
}

/** An exec request as a `CommandRequest`. */
export function execRequest(
  o: Omit<CommandOptions, 'stdout' | 'stderr'> & { stdout: boolean; stderr: boolean },
): CommandRequest {
  return {
    stdin: o.stdin,
    stdout: o.stdout,
    stderr: o.stderr,
    tty: o.tty,
    start: (io) =>
      startCommand({ argv: o.argv, command: o.command, cwd: o.cwd, env: o.env, stdin: o.stdin, tty: o.tty, ...io }),
  };
}

/**
 * remotecommand over WebSocket (`v5.channel.k8s.io`, `v4.channel.k8s.io`): each binary
 * message is a channel byte and its data; stdin on 0, output on 1 and 2, resize on 4 (applied
 * to a TTY session's terminal), v5's close signal `[255, 0]` ends stdin; the Status
 * goes on 3 at the end, then a normal close. The client leaving kills the command.
 */
export function commandOverWebSocket(ws: WebSocket, o: { protocol: string; request: CommandRequest }): void {
  const send = (channel: number, b: Buffer): void => {
    if (ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.of(channel), b]));
  };
  const r = o.request;
  const session = r.start({
    stdout: r.stdout ? (b) => send(STDOUT, b) : undefined,
    stderr: r.stderr ? (b) => send(STDERR, b) : undefined,
  });
  ws.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
    const b = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    if (b.length === 0) return;
    if (b[0] === STDIN) session.writeStdin(b.subarray(1));
    else if (b[0] === RESIZE) resize(session, b.subarray(1));
    else if (b[0] === CLOSE && b[1] === STDIN && o.protocol === STREAMING_PROTOCOLS.remoteCommandV5) session.endStdin();
  });
  ws.on('close', () => session.kill());
  void session.done.then((status) => {
    send(ERROR, Buffer.from(JSON.stringify(status)));
    ws.close(1000);
  });
}

/**
 * remotecommand over SPDY (v4, v3, v2 `channel.k8s.io`): the client opens one stream per
 * `streamType` it uses (error, stdin, stdout, stderr, resize with a TTY); the session starts
 * once all have arrived. At the end stdout and stderr are closed, the Status written on the
 * error stream (v4; v2 and v3 write only a failure's message) and the connection closed.
 */
export function commandOverSpdy(
  conn: SpdyConnection,
  o: { protocol: string; request: CommandRequest },
): (s: SpdyStream) => void {
  const r = o.request;
  const expected = new Set(['error']);
  if (r.stdin) expected.add('stdin');
  if (r.stdout) expected.add('stdout');
  if (r.stderr && !r.tty) expected.add('stderr');
  if (r.tty && o.protocol !== STREAMING_PROTOCOLS.remoteCommandV2) expected.add('resize');
  const streams = new Map<string, SpdyStream>();
  const timer = setTimeout(() => conn.close(), STREAM_CREATION_MS);
  let started = false;
  const begin = (): void => {
    started = true;
    clearTimeout(timer);
    const out = streams.get('stdout');
    const err = streams.get('stderr');
    const session = r.start({ stdout: out && ((b) => void out.write(b)), stderr: err && ((b) => void err.write(b)) });
    const stdin = streams.get('stdin');
    stdin?.onData((b) => session.writeStdin(b));
    stdin?.onEnd(() => session.endStdin());
    streams.get('resize')?.onData((b) => resize(session, b));
    conn.onClose(() => session.kill());
    void session.done.then((status) => {
      out?.end();
      err?.end();
      const e = streams.get('error');
      const v4 = o.protocol === STREAMING_PROTOCOLS.remoteCommandV4;
      if (e && (v4 || status.status === 'Failure'))
        e.write(Buffer.from(v4 ? JSON.stringify(status) : (status.message ?? '')));
      e?.end();
      conn.closeWhenWritten();
    });
  };
  return (s) => {
    const type = s.headers.streamtype ?? '';
    if (!expected.has(type) || streams.has(type) || started) {
      conn.reset(s.id);
      return;
    }
    streams.set(type, s);
    if (streams.size === expected.size) begin();
  };
}
