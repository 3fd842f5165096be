import type { Writable } from 'node:stream';
import { onDrainOrClose } from '@svc/component-base';

/**
 * Writes of every open watch go out in passes: one sweep that writes each watch's pending
 * frames to its socket in one write. A TLS write costs about the same (tens of
 * microseconds) whether it carries one event or twenty, so under load the number of
 * writes, not of events, decides the server's CPU.
 *
 * A pass runs as soon as possible when the last one started long enough ago, else at the
 * end of the interval. The interval adapts to the cost of a pass: twice the time its writes
 * took, within [MIN_INTERVAL_MS, MAX_INTERVAL_MS]. So an idle server answers a lone watcher
 * at once, and a busy one spends at most about half its time writing to watchers.
 *
 * A pass has two steps. First every watch with frames on their way may hand over what else
 * arrived since (its `write` resolves; it takes its queued events from storage, which
 * settles within the same turn of the event loop, and adds them). Then, on the next turn,
 * the writes: so an event waits for one pass, not two. The writes go SLICE sockets per
 * turn of the event loop, so requests (the writes that make the events) are not held up
 * behind them. A socket whose buffer is full takes no more frames until it drains: its
 * watch waits in `write`, and its events wait in storage (which ends a watch that falls
 * too far behind).
 */
const MIN_INTERVAL_MS = 5;
const MAX_INTERVAL_MS = 50;
/** Writes per turn of the event loop. */
const SLICE = 64;

interface Pending {
  frames: Buffer[];
  /** Watches waiting to hand over more (resolved at the next pass, or once written). */
  waiters: Array<() => void>;
}

export class WatchWriteScheduler {
  private pending = new Map<Writable, Pending>();
  /** Sockets whose last write filled their buffer, until they drain or close. */
  private readonly blocked = new Set<Writable>();
  private lastPassStart = -Infinity;
  private interval = MIN_INTERVAL_MS;
  private scheduled = false;
  private passing = false;

  /**
   * Queues `frames` for `socket`. Resolves when the watch may hand over its next events:
   * when the pass that writes these starts, or once they are written, or (buffer full) once
   * the socket drained or closed, or when `flush(socket)` is called (the watch is ending).
   */
  write(socket: Writable, frames: Buffer[]): Promise<void> {
    let p = this.pending.get(socket);
    if (!p) {
      p = { frames: [], waiters: [] };
      this.pending.set(socket, p);
    }
    p.frames.push(...frames);
    const entry = p;
    this.schedule();
    return new Promise((resolve) => {
      entry.waiters.push(resolve);
    });
  }

  /** Writes what is still queued for `socket` now (its watch is ending) and forgets it. */
  flush(socket: Writable): void {
    const p = this.pending.get(socket);
    this.pending.delete(socket);
    this.blocked.delete(socket);
    if (!p) return;
    if (p.frames.length > 0 && !socket.destroyed) writeFrames(socket, p.frames);
    release(p);
  }

  private schedule(): void {
    if (this.scheduled || this.passing) return;
    this.scheduled = true;
    const wait = this.lastPassStart + this.interval - performance.now();
    if (wait <= 0) setImmediate(() => this.pass());
    else setTimeout(() => this.pass(), wait);
  }

  /** Step one: the watches with frames on their way hand over what else arrived. */
  private pass(): void {
    this.scheduled = false;
    this.passing = true;
    const start = performance.now();
    for (const [socket, p] of this.pending) if (!this.blocked.has(socket)) release(p);
    setImmediate(() => this.writeAll(start));
  }

  /** Step two: one write per socket, SLICE sockets per turn of the event loop. */
  private writeAll(start: number): void {
    const batch = [...this.pending].filter(([socket]) => !this.blocked.has(socket));
    for (const [socket] of batch) this.pending.delete(socket);
    let took = 0;
    let i = 0;
    const slice = (): void => {
      const t0 = performance.now();
      for (const end = Math.min(batch.length, i + SLICE); i < end; i++) {
        const [socket, p] = batch[i] as [Writable, Pending];
        if (!socket.destroyed && !writeFrames(socket, p.frames)) this.block(socket);
        release(p);
      }
      took += performance.now() - t0;
      if (i < batch.length) {
        setImmediate(slice);
        return;
      }
      this.passing = false;
      this.lastPassStart = start;
      this.interval = Math.min(MAX_INTERVAL_MS, Math.max(MIN_INTERVAL_MS, 2 * took));
      if (this.hasWork()) this.schedule();
    };
    slice();
  }

  /** Whether some socket has frames and room for them. */
  private hasWork(): boolean {
    for (const socket of this.pending.keys()) if (!this.blocked.has(socket)) return true;
    return false;
  }

  private block(socket: Writable): void {
    this.blocked.add(socket);
    onDrainOrClose(socket, () => {
      if (!this.blocked.delete(socket)) return;
      if (socket.destroyed) {
        const p = this.pending.get(socket);
        this.pending.delete(socket);
        if (p) release(p);
      }
      if (this.hasWork()) this.schedule();
    });
  }
}

function release(p: Pending): void {
  const waiters = p.waiters;
  p.waiters = [];
  for (const w of waiters) w();
}

/** One write of `frames`; false when the socket's buffer is full (or the write failed). */
function writeFrames(socket: Writable, frames: Buffer[]): boolean {
  try {
    return socket.write(frames.length === 1 ? (frames[0] as Buffer) : Buffer.concat(frames));
  } catch {
    // A socket destroyed meanwhile: its watch ends on the response's `close`.
    return false;
  }
}
