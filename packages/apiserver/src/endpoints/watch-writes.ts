/**
 * Writes of every open watch go out in passes: one synchronous sweep that writes each
 * watch's pending frames to its socket in one write. A TLS write costs about the same
 * (tens of microseconds) whether it carries one event or twenty, so under load the number
 * of writes, not of events, decides the server's CPU.
 *
 * A pass runs as soon as possible when the last one started long enough ago, else at the
 * end of the interval. The interval adapts to the cost of a pass: twice the time its writes
 * took, within [MIN_INTERVAL_MS, MAX_INTERVAL_MS]. So an idle server answers a lone watcher
 * at once, and a busy one spends at most about half its time writing to watchers, with
 * events that arrive meanwhile batched into the next pass. A pass writes SLICE sockets per
 * turn of the event loop, so requests (the writes that make the events) are not held up
 * behind it. A watch takes its next events from storage only once its previous write went
 * out, so each watch writes at most once a pass.
 */
const MIN_INTERVAL_MS = 5;
const MAX_INTERVAL_MS = 50;
/** Writes per turn of the event loop: a pass yields between slices so requests keep moving. */
const SLICE = 64;

interface Pending {
  frames: Buffer[];
  resolve: (ok: boolean) => void;
}

export class WatchWriteScheduler {
  private pending = new Map<NodeJS.WritableStream, Pending>();
  private lastPassStart = -Infinity;
  private interval = MIN_INTERVAL_MS;
  private scheduled = false;
  private passing = false;

  /** Queues `frames` for `socket`'s next write; resolves with `socket.write`'s answer once written. */
  write(socket: NodeJS.WritableStream, frames: Buffer[]): Promise<boolean> {
    const queued = this.pending.get(socket);
    if (queued) {
      queued.frames.push(...frames);
      return new Promise((resolve) => {
        const previous = queued.resolve;
        queued.resolve = (ok) => { previous(ok); resolve(ok); };
      });
    }
    return new Promise((resolve) => {
      this.pending.set(socket, { frames, resolve });
      this.schedule();
    });
  }

  /** The current pause between passes (milliseconds), for tests and metrics. */
  get intervalMs(): number {
    return this.interval;
  }

  private schedule(): void {
    if (this.scheduled || this.passing) return;
    this.scheduled = true;
    const wait = this.lastPassStart + this.interval - performance.now();
    if (wait <= 0) setImmediate(() => this.pass());
    else setTimeout(() => this.pass(), wait);
  }

  private pass(): void {
    this.scheduled = false;
    const start = performance.now();
    const batch = [...this.pending];
    this.pending = new Map();
    let took = 0;
    let i = 0;
    const slice = (): void => {
      const t0 = performance.now();
      for (const end = Math.min(batch.length, i + SLICE); i < end; i++) {
        const [socket, p] = batch[i] as [NodeJS.WritableStream, Pending];
        let ok = false;
        try {
          ok = socket.write(p.frames.length === 1 ? p.frames[0] as Buffer : Buffer.concat(p.frames));
        } catch {
          // A socket destroyed meanwhile: its watch ends on the response's `close`.
        }
        p.resolve(ok);
      }
      took += performance.now() - t0;
      if (i < batch.length) {
        setImmediate(slice);
        return;
      }
      this.lastPassStart = start;
      this.interval = Math.min(MAX_INTERVAL_MS, Math.max(MIN_INTERVAL_MS, 2 * took));
      this.passing = false;
      if (this.pending.size > 0) this.schedule();
    };
    this.passing = true;
    slice();
  }
}

