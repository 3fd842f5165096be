import { maxSeats, type WorkEstimate } from './work-estimator.js';

/** What Kubernetes' queue set assumes a one-seat request takes before it knows (G: 3 ms). */
export const ESTIMATED_SERVICE_S = 0.003;

/** One request in a level's queue set: its cost in seats and in seat-seconds, and where it waits. */
export class QueuedRequest {
  /** Seats held from dispatch until the final phase ends. */
  readonly width: number;
  /** initialSeats × G + finalSeats × additional latency, in seat-seconds. */
  readonly totalWork: number;
  /** The virtual time (R) when it arrived. */
  arrivalR = 0;
  queue?: FairQueue;
  /** When it was dispatched (ms), once it was. */
  startedAt?: number;

  constructor(readonly estimate: WorkEstimate) {
    this.width = maxSeats(estimate);
    this.totalWork =
      estimate.initialSeats * ESTIMATED_SERVICE_S + (estimate.finalSeats * estimate.additionalLatencyMs) / 1000;
  }
}

/** One queue of a level: its requests waiting in order, and the virtual time its next dispatch may start. */
export class FairQueue {
  readonly waiting: QueuedRequest[] = [];
  /** The virtual time (seat-seconds per queue) at which the queue's next request may start. */
  nextDispatchR = 0;
  seatsInUse = 0;
  executing = 0;
  /** Sums over the waiting requests: seat-seconds (to choose a queue in a hand) and seats. */
  waitingWork = 0;
  waitingSeats = 0;

  get idle(): boolean {
    return this.waiting.length === 0 && this.executing === 0;
  }
}

/**
 * A priority level's queues, served by virtual finish time as Kubernetes 1.32's queue set
 * (fair queuing for server requests):
 *
 * - Virtual time R advances at min(seats requested, the level's seats) / active queues
 *   seat-seconds per second: the service each backlogged queue would get if the seats were
 *   shared equally among the active queues.
 * - A request joins the queue of its flow's hand (shuffle sharding) whose waiting requests
 *   add up to the least work; an idle queue's start time is reset to the current R.
 * - The next request to run is the head whose queue's next start plus its work (its virtual
 *   finish time) is smallest, looked at round robin from after the last queue served so ties
 *   go to the others. If it does not fit the free seats, nothing else is dispatched until it
 *   does (no narrower request jumps ahead).
 * - Dispatch charges the queue the request's estimated work (G = 3 ms per seat, plus the
 *   final seats' work); when it finishes after S seconds the charge is corrected by
 *   (S − G) × initial seats, so a queue pays the seat-seconds its requests really took.
 * - A queue's next start never precedes its head's arrival (Kubernetes' anti-windup).
 */
export class QueueSet {
  private currentR = 0;
  private lastAt: number;
  private queues: FairQueue[] = [];
  private desired = 0;
  private robin = 0;
  private enqueues = 0;
  /** The queue `peek` chose, which `dispatch` makes the round robin's last served. */
  private peeked = 0;
  waitingCount = 0;
  /** Kept as the queues change: queues not idle, and seats held or asked for by their requests. */
  private activeQueues = 0;
  private seatsRequested = 0;

  constructor(
    private readonly o: {
      /** Milliseconds, monotonic. */
      now: () => number;
      /** The level's seats now (its nominal seats less lent, plus what it may borrow). */
      capacity: () => number;
      queues: number;
    },
  ) {
    this.lastAt = o.now();
    this.resize(o.queues);
  }

  get virtualTime(): number {
    return this.currentR;
  }

  /** The number of queues a hand is dealt from; queues beyond it go once they are idle. */
  resize(n: number): void {
    this.sync();
    this.desired = Math.max(n, 0);
    while (this.queues.length < this.desired) this.queues.push(new FairQueue());
    this.prune();
  }

  get queueCount(): number {
    return this.desired;
  }

  /** Advances R for the time since the last change (the state was as it is since then). */
  sync(): void {
    const now = this.o.now();
    const dt = (now - this.lastAt) / 1000;
    this.lastAt = now;
    if (dt > 0) this.currentR += this.ratio() * dt;
  }

  private ratio(): number {
    if (this.activeQueues === 0) return 0;
    return Math.min(this.seatsRequested, this.o.capacity()) / this.activeQueues;
  }

  /**
   * Puts the request in the queue of `hand` (queue indexes) holding the least waiting work,
   * looked at from a rotating offset; false (a 429) when the level's seats are all taken and
   * that queue is at `queueLengthLimit`.
   */
  enqueue(r: QueuedRequest, o: { hand: readonly number[]; queueLengthLimit: number; levelFull: boolean }): boolean {
    this.sync();
    const hand = o.hand.length > 0 ? o.hand : [0];
    const offset = this.enqueues++ % hand.length;
    let best: FairQueue | undefined;
    for (let i = 0; i < hand.length; i++) {
      const q = this.queues[hand[(offset + i) % hand.length] ?? 0];
      if (q && (!best || q.waitingWork < best.waitingWork)) best = q;
    }
    if (!best) return false;
    if (o.levelFull && best.waiting.length >= o.queueLengthLimit) return false;
    if (best.idle) {
      best.nextDispatchR = this.currentR;
      this.activeQueues++;
    }
    this.seatsRequested += r.width;
    r.arrivalR = this.currentR;
    r.queue = best;
    best.waiting.push(r);
    best.waitingWork += r.totalWork;
    best.waitingSeats += r.width;
    this.waitingCount++;
    this.bound(best);
    return true;
  }

  /** The request with the smallest virtual finish time, without taking it. */
  peek(): QueuedRequest | undefined {
    this.sync();
    const n = this.queues.length;
    let best: { r: QueuedRequest; finish: number; index: number } | undefined;
    for (let k = 1; k <= n; k++) {
      const index = (this.robin + k) % n;
      const q = this.queues[index];
      const head = q?.waiting[0];
      if (!q || !head) continue;
      const finish = q.nextDispatchR + head.totalWork;
      if (!best || finish < best.finish) best = { r: head, finish, index };
    }
    if (best) this.peeked = best.index;
    return best?.r;
  }

  /** Takes the request `peek` returned: it runs now, its queue is charged its work. */
  dispatch(r: QueuedRequest): void {
    const q = r.queue;
    if (!q || q.waiting[0] !== r) throw new Error('dispatch of a request that is not at the head of its queue');
    q.waiting.shift();
    q.waitingWork -= r.totalWork;
    q.waitingSeats -= r.width;
    this.waitingCount--;
    q.executing++;
    q.seatsInUse += r.width;
    q.nextDispatchR += r.totalWork;
    r.startedAt = this.o.now();
    this.robin = this.peeked;
    this.bound(q);
  }

  /** A waiting request leaves (timed out, cancelled); false when it was no longer waiting. */
  remove(r: QueuedRequest): boolean {
    const q = r.queue;
    const i = q ? q.waiting.indexOf(r) : -1;
    if (!q || i < 0) return false;
    this.sync();
    q.waiting.splice(i, 1);
    q.waitingWork -= r.totalWork;
    q.waitingSeats -= r.width;
    this.waitingCount--;
    this.seatsRequested -= r.width;
    if (q.idle) this.activeQueues--;
    this.bound(q);
    this.prune();
    return true;
  }

  /** The request finished: its queue's charge is corrected by what it really took. */
  finish(r: QueuedRequest): void {
    const q = r.queue;
    if (!q) return;
    this.sync();
    q.executing--;
    if (q.idle) this.activeQueues--;
    const tookS = (this.o.now() - (r.startedAt ?? this.o.now())) / 1000;
    q.nextDispatchR -= r.estimate.initialSeats * (ESTIMATED_SERVICE_S - tookS);
    this.bound(q);
  }

  /** Its seats are free (at the end of the final phase). */
  releaseSeats(r: QueuedRequest): void {
    const q = r.queue;
    if (!q) return;
    this.sync();
    q.seatsInUse -= r.width;
    this.seatsRequested -= r.width;
    this.prune();
  }

  /** Anti-windup: a queue's next dispatch is never earlier in virtual time than its head's arrival. */
  private bound(q: FairQueue): void {
    const head = q.waiting[0];
    if (head && q.nextDispatchR < head.arrivalR) q.nextDispatchR = head.arrivalR;
  }

  /** Drops idle queues beyond the configured number. */
  private prune(): void {
    if (this.queues.length <= this.desired) return;
    const kept = this.queues.filter((q, i) => i < this.desired || !q.idle || q.seatsInUse > 0);
    if (kept.length === this.queues.length) return;
    this.queues = kept;
    this.robin = Math.min(this.robin, Math.max(kept.length - 1, 0));
  }

  /** The queue behind an index of a hand (tests and metrics). */
  queue(index: number): FairQueue | undefined {
    return this.queues[index];
  }
}
