import type { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';

/** Bytes queued towards a slow side before reading from the other side pauses. */
const HIGH_WATER = 1024 * 1024;
/**
 * Bytes gathered under one cork at most. Four 16 KiB TLS records (or one 64 KiB plain read)
 * make one write; batches of a whole turn's I/O (up to `HIGH_WATER`) cost more CPU per byte
 * in the TLS write they feed (one copy of the whole batch, then a record stream far larger
 * than the socket buffer takes at once): ~10% of the forwarded path's throughput.
 */
const BATCH_BYTES = 64 * 1024;

/**
 * Copies `from` into `to` until `from` ends, then ends `to` (what `pipe` does), in batches:
 * `to` is corked on the first chunk and uncorked once `BATCH_BYTES` are written or the event
 * loop's I/O turn is done, whichever comes first, so the 16 KiB pieces a TLS socket reads go
 * out as one `writev` (one TLS write, one system call) instead of one each. Reading pauses
 * while more than `HIGH_WATER` bytes wait in `to`.
 */
function copyBatched(from: Duplex, to: Duplex): void {
  let corked = false;
  let batched = 0;
  let scheduled = false;
  let paused = false;
  const uncork = (): void => {
    if (!corked) return;
    corked = false;
    batched = 0;
    to.uncork();
  };
  const endOfTurn = (): void => {
    scheduled = false;
    uncork();
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
      if (!scheduled) {
        scheduled = true;
        setImmediate(endOfTurn);
      }
    }
    to.write(chunk);
    batched += chunk.length;
    if (batched >= BATCH_BYTES) uncork();
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

/**
 * Calls `fn` once, on the first of `stream`'s 'drain' or `closer`'s 'close' (the stream itself
 * unless told), and removes both listeners then, so a writer that waits often gathers none.
 */
export function onDrainOrClose(stream: EventEmitter, fn: () => void, closer: EventEmitter = stream): void {
  const done = (): void => {
    stream.off('drain', done);
    closer.off('close', done);
    fn();
  };
  stream.on('drain', done);
  closer.on('close', done);
}
