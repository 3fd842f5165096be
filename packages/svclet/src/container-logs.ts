import { open, stat, type FileHandle } from 'node:fs/promises';
import { sleep } from '@svc/machinery';

// Reading CRI-format container logs (Kubernetes' kuberuntime/logs): each line of the file is
// `<RFC 3339 timestamp> <stdout|stderr> <F|P>[:<more tags>] <text>`; `P` (partial) lines run on
// into the next line, `F` (full) lines end one.

export interface ReadLogOptions {
  /** The last this many lines of the file (counted as file lines, as Kubernetes does); absent = all. */
  tailLines?: number;
  /** Lines stamped before this time (ms) are skipped. */
  sinceTime?: number;
  /** Prefix each output line with its timestamp and a space. */
  timestamps?: boolean;
  /** Keep reading as the file grows (and is rotated) until `signal` fires or `running()` is false at the end of the file. */
  follow?: boolean;
  /** Whether the container still runs (follow mode); checked whenever the end of the file is reached. */
  running?: () => boolean;
  /** How often a followed file is looked at again (default 100 ms). */
  pollMs?: number;
  signal?: AbortSignal;
}

interface CriLine {
  timestamp: string;
  partial: boolean;
  text: Buffer;
}

const SPACE = 0x20;
const NEWLINE = 0x0a;

/** One file line (without its newline); undefined when it is not in the CRI format (such lines are skipped). */
export function parseCriLine(line: Buffer): CriLine | undefined {
  const a = line.indexOf(SPACE);
  const b = a < 0 ? -1 : line.indexOf(SPACE, a + 1);
  const c = b < 0 ? -1 : line.indexOf(SPACE, b + 1);
  // `<ts> <stream> <tag>` with no text and no space after the tag still counts (c < 0).
  if (b < 0) return undefined;
  const timestamp = line.subarray(0, a).toString();
  const stream = line.subarray(a + 1, b).toString();
  const tags = line.subarray(b + 1, c < 0 ? line.length : c).toString();
  if (Number.isNaN(Date.parse(timestamp)) || (stream !== 'stdout' && stream !== 'stderr')) return undefined;
  const tag = tags.split(':')[0];
  if (tag !== 'F' && tag !== 'P') return undefined;
  return { timestamp, partial: tag === 'P', text: c < 0 ? Buffer.alloc(0) : line.subarray(c + 1) };
}

/** Offset of the first of the last `n` lines of the first `size` bytes (a final newline ends a line, it does not start one). */
async function tailOffset(fh: FileHandle, size: number, n: number): Promise<number> {
  if (n <= 0) return size;
  const buf = Buffer.alloc(64 * 1024);
  let pos = size;
  let count = 0;
  while (pos > 0) {
    const len = Math.min(buf.length, pos);
    pos -= len;
    await fh.read(buf, 0, len, pos);
    for (let i = len - 1; i >= 0; i--) {
      if (buf[i] !== NEWLINE || pos + i === size - 1) continue;
      if (++count === n) return pos + i + 1;
    }
  }
  return 0;
}

/**
 * The container output in a CRI log file, as the client of `/containerLogs` gets it: the text
 * of each line, full lines ending in a newline, partial ones running on. Without `follow` it
 * ends at the end of the file (an unfinished last line included); with `follow` it waits for
 * more, reopens the path when the file is replaced (rotation) or starts over when truncated,
 * and ends when `signal` fires or the container stopped and everything was read.
 */
export async function* readCriLog(path: string, o: ReadLogOptions = {}): AsyncGenerator<Buffer> {
  let fh = await open(path, 'r');
  try {
    const first = await fh.stat();
    let ino = first.ino;
    let pos = o.tailLines === undefined ? 0 : await tailOffset(fh, first.size, o.tailLines);
    let pending = Buffer.alloc(0);
    let atLineStart = true;
    /** Set once the old file of a rotation has been read to its end after the rename was seen. */
    let drained = false;
    /** Set once the file has been read to its end after the container was seen stopped. */
    let finalRead = false;
    const buf = Buffer.alloc(64 * 1024);
    const emit = function* (line: Buffer): Generator<Buffer> {
      const parsed = parseCriLine(line);
      if (!parsed) return;
      if (o.sinceTime !== undefined && Date.parse(parsed.timestamp) < o.sinceTime) {
        atLineStart = !parsed.partial;
        return;
      }
      const out: Buffer[] = [];
      if (o.timestamps && atLineStart) out.push(Buffer.from(`${parsed.timestamp} `));
      out.push(parsed.text);
      if (!parsed.partial) out.push(Buffer.from('\n'));
      atLineStart = !parsed.partial;
      yield Buffer.concat(out);
    };
    for (;;) {
      if (o.signal?.aborted) return;
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead > 0) {
        pos += bytesRead;
        let data = Buffer.concat([pending, buf.subarray(0, bytesRead)]);
        let nl: number;
        while ((nl = data.indexOf(NEWLINE)) >= 0) {
          yield* emit(data.subarray(0, nl));
          data = data.subarray(nl + 1);
        }
        pending = Buffer.from(data);
        continue;
      }
      // End of the file.
      if (!o.follow) {
        if (pending.length > 0) yield* emit(pending);
        return;
      }
      const now = await stat(path).catch(() => undefined);
      if (now && now.ino !== ino) {
        // Rotated. Lines may have reached the old file between the read above and the rename:
        // read it to its end once more before continuing with the new one.
        if (!drained) {
          drained = true;
          continue;
        }
        drained = false;
        await fh.close();
        fh = await open(path, 'r');
        ino = (await fh.stat()).ino;
        pos = 0;
        pending = Buffer.alloc(0);
        continue;
      }
      if (now && now.size < pos) {
        pos = 0;
        pending = Buffer.alloc(0);
        continue;
      }
      if (o.running && !o.running()) {
        // The container stopped after the read above found the end: read to the end once more,
        // for what it wrote last, then stop.
        if (!finalRead) {
          finalRead = true;
          continue;
        }
        if (pending.length > 0) yield* emit(pending);
        return;
      }
      await sleep(o.pollMs ?? 100, o.signal);
    }
  } finally {
    await fh.close();
  }
}
