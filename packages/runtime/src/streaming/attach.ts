import { open, stat } from 'node:fs/promises';
import { SUCCESS, type CommandOptions, type CommandSession, type StreamStatus } from './remote-command.js';

/** How often the log is read for new output. */
const POLL_MS = 100;

/**
 * An attach session on a container's output: what the container writes from now on, read
 * from its CRI log (`<time> <stdout|stderr> <P|F> <text>`, which its shim owns) and handed to
 * `stdout`/`stderr` (both to `stdout` with a TTY). It ends with Success once the container has
 * stopped and its last output was read, or when the client leaves. The container's stdin is
 * not reachable (its shim gives it /dev/null), so stdin is read and dropped.
 */
export function attachToOutput(
  o: Pick<CommandOptions, 'stdout' | 'stderr' | 'tty'> & { logPath: string; running: () => boolean },
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
  const done = (async (): Promise<StreamStatus> => {
    let offset = await stat(o.logPath).then(
      (s) => s.size,
      () => 0,
    );
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
  return {
    writeStdin: () => undefined,
    endStdin: () => undefined,
    kill: () => {
      stopped = true;
    },
    done,
  };
}
