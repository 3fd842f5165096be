import { constants, openSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { Socket } from 'node:net';
import { SUCCESS, type CommandOptions, type CommandSession, type StreamStatus } from './remote-command.js';

/** How often the log is read for new output. */
const POLL_MS = 100;

/**
 * Opens the shim's FIFO `path` for writing without waiting (the shim holds its reading end
 * while the container runs); undefined when nobody reads it (the container has ended).
 */
async function openFifo(path: string): Promise<Socket | undefined> {
  try {
    // A FIFO's non-blocking open does not wait; a plain descriptor, which the socket owns from here.
    const fd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    const s = new Socket({ fd, readable: false, writable: true });
    s.on('error', () => s.destroy());
    return s;
  } catch {
    return undefined;
  }
}

/**
 * An attach session on a container: what the container writes from now on, read from its CRI
 * log (`<time> <stdout|stderr> <P|F> <text>`, which its shim owns) and handed to
 * `stdout`/`stderr` (both to `stdout` with a TTY). With `stdinPath` the client's stdin goes
 * into the shim's stdin FIFO of the container, and the end of the client's stdin closes this
 * session's writing end (which ends the container's stdin when it was started with
 * `stdinOnce`); without it stdin is dropped. With `resizePath` terminal sizes go to the shim.
 * The log offset is taken before stdin is opened, so output caused by the input is not
 * missed. It ends with Success once the container has stopped and its last output was read,
 * or when the client leaves.
 */
export function attachToOutput(
  o: Pick<CommandOptions, 'stdout' | 'stderr' | 'tty'> & {
    logPath: string;
    running: () => boolean;
    stdinPath?: string;
    resizePath?: string;
  },
): CommandSession {
  let stopped = false;
  let partial = '';
  const emit = (line: string): void => {
    // `<time> <stream> <tag> <text>`; the text itself may hold spaces.
    const a = line.indexOf(' ');
    const b = line.indexOf(' ', a + 1);
    const c = line.indexOf(' ', b + 1);
    if (a < 0 || b < 0 || c < 0) return;
    const stream = line.slice(a + 1, b);
    const text = line.slice(c + 1) + (line.slice(b + 1, c) === 'F' ? '\n' : '');
    const to = stream === 'stderr' && !o.tty ? o.stderr : o.stdout;
    to?.(Buffer.from(text));
  };
  const startOffset = stat(o.logPath).then(
    (s) => s.size,
    () => 0,
  );
  const stdin = o.stdinPath ? startOffset.then(() => openFifo(o.stdinPath ?? '')) : Promise.resolve(undefined);
  const resize = o.resizePath ? openFifo(o.resizePath) : Promise.resolve(undefined);
  const closeStdin = (): void => {
    void stdin.then((s) => s?.end());
  };
  const done = (async (): Promise<StreamStatus> => {
    let offset = await startOffset;
    for (;;) {
      if (stopped) return SUCCESS;
      const alive = o.running();
      const size = await stat(o.logPath).then(
        (s) => s.size,
        () => offset,
      );
      if (size < offset) offset = 0; // rotated or truncated: read the new file from its start
      if (size > offset) {
        const f = await open(o.logPath, 'r');
        try {
          const buf = Buffer.alloc(size - offset);
          const { bytesRead } = await f.read(buf, 0, buf.length, offset);
          offset += bytesRead;
          const lines = (partial + buf.subarray(0, bytesRead).toString('utf8')).split('\n');
          partial = lines.pop() ?? '';
          for (const line of lines) emit(line);
        } finally {
          await f.close();
        }
      }
      if (!alive) return SUCCESS;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  })();
  void done.then(() => {
    closeStdin();
    void resize.then((s) => s?.destroy());
  });
  return {
    writeStdin: (b) => {
      void stdin.then((s) => {
        if (s && !s.writableEnded) s.write(b);
      });
    },
    endStdin: closeStdin,
    kill: () => {
      stopped = true;
      closeStdin();
    },
    resize: (columns, rows) => {
      void resize.then((s) => {
        if (s && !s.writableEnded && columns > 0 && rows > 0)
          s.write(`${JSON.stringify({ Width: columns, Height: rows })}\n`);
      });
    },
    done,
  };
}
