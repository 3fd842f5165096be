import type { Duplex } from 'node:stream';

/** Bytes queued towards a slow side before reading from the other side pauses. */
const HIGH_WATER = 1024 * 1024;

/**
 * Copies `from` into `to` until `from` ends, then ends `to` (what `pipe` does), writing what
 * arrives in one turn of the event loop in one go: `to` is corked on the first chunk and
 * uncorked when the turn's I/O is done, so the 16 KiB pieces a TLS socket reads become one
 * `writev` (one TLS write, one system call) instead of one each. Reading pauses while more
 * than `HIGH_WATER` bytes wait in `to`.
 */
function copyBatched(from: Duplex, to: Duplex): void {
  let corked = false;
  let paused = false;
  const flush = (): void => {
    corked = false;
    to.uncork();
  };
  const resume = (): void => {
    paused = false;
    from.resume();
  };
  from.on('data', (chunk: Buffer) => {
    if (to.destroyed || to.writableEnded) return;
    if (!corked) {
      corked = true;
      to.cork();
      setImmediate(flush);
    }
    to.write(chunk);
    if (!paused && to.writableLength >= HIGH_WATER && to.writableNeedDrain) {
      paused = true;
      from.pause();
      to.once('drain', resume);
    }
  });
  from.once('end', () => to.end());
}

/**
 * Joins two connections byte for byte in both directions (an upgraded request and its
 * backend), with Nagle's algorithm off on both so the last piece of a burst is not held back.
 */
export function joinStreams(a: Duplex, b: Duplex): void {
  for (const s of [a, b]) (s as Duplex & { setNoDelay?: (on: boolean) => void }).setNoDelay?.(true);
  copyBatched(a, b);
  copyBatched(b, a);
}
