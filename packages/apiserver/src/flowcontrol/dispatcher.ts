import type { PriorityLevelConfiguration } from '@svc/api';
import type { FlowControlMetrics } from './metrics.js';
import { QueuedRequest, QueueSet } from './queue-set.js';
import { levelMaxSeats, maxSeats, type WorkEstimate } from './work-estimator.js';

/** Why a request was not served: Kubernetes' `reason` label of the rejected-requests counter. */
export type RejectReason = 'queue-full' | 'concurrency-limit' | 'time-out' | 'cancelled';

/** What a priority level is configured to do, worked out from its object and the server's seats. */
export interface LevelLimits {
  exempt: boolean;
  /** Limited level answering 429 at once when its seats are taken (limitResponse Reject). */
  reject: boolean;
  /** NominalCL: ceil(server seats × shares / Σ shares). */
  nominal: number;
  /** Seats the level lends: round(nominal × lendablePercent / 100). */
  lendable: number;
  /** Seats the level may borrow beyond its nominal: round(nominal × borrowingLimitPercent / 100); Infinity when unset. */
  borrowingLimit: number;
  queues: number;
  handSize: number;
  queueLengthLimit: number;
  /** The most seats one request may take (Kubernetes' max seats of a queuing level; 0: not set). */
  maxSeats: number;
}

/** Kubernetes' share-based limits of every level: NominalCL(l) = ceil(ServerCL × NCS(l) / Σ NCS). */
export function levelLimits(
  levels: readonly PriorityLevelConfiguration[],
  serverSeats: number,
): Map<string, LevelLimits> {
  const shares = (pl: PriorityLevelConfiguration): number =>
    pl.spec.type === 'Exempt'
      ? (pl.spec.exempt?.nominalConcurrencyShares ?? 0)
      : (pl.spec.limited?.nominalConcurrencyShares ?? 30);
  const sum = levels.reduce((n, pl) => n + shares(pl), 0);
  const out = new Map<string, LevelLimits>();
  for (const pl of levels) {
    const nominal = sum > 0 ? Math.ceil((serverSeats * shares(pl)) / sum) : 0;
    const percent = pl.spec.type === 'Exempt' ? pl.spec.exempt?.lendablePercent : pl.spec.limited?.lendablePercent;
    const borrowing = pl.spec.limited?.borrowingLimitPercent;
    const q = pl.spec.limited?.limitResponse?.queuing;
    out.set(pl.metadata.name ?? '', {
      exempt: pl.spec.type === 'Exempt',
      reject: pl.spec.limited?.limitResponse?.type === 'Reject',
      nominal,
      lendable: Math.round((nominal * (percent ?? 0)) / 100),
      borrowingLimit: borrowing === undefined ? Infinity : Math.round((nominal * borrowing) / 100),
      queues: q?.queues ?? 0,
      handSize: q?.handSize ?? 0,
      queueLengthLimit: q?.queueLengthLimit ?? 0,
      maxSeats: q ? levelMaxSeats(nominal, q.handSize ?? 0) : 0,
    });
  }
  return out;
}

/** FNV-1a over the flow's identity, 52 bits so the arithmetic stays exact in a double. */
function flowHash(flow: string): number {
  let h = 0xcbf29ce484222325n;
  for (const b of Buffer.from(flow)) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return Number(h >> 12n);
}

/**
 * Kubernetes' shuffle-sharding dealer: a hand of `handSize` distinct queues out of `deck`,
 * drawn from the flow's hash (each draw takes the hash modulo the cards left).
 */
export function dealHand(flow: string, deck: number, handSize: number): number[] {
  let hash = flowHash(flow);
  const hand: number[] = [];
  for (let i = 0; i < handSize; i++) {
    const left = deck - i;
    let card = hash % left;
    hash = Math.floor(hash / left);
    for (const taken of [...hand].sort((a, b) => a - b)) if (card >= taken) card++;
    hand.push(card);
  }
  return hand;
}

/** Time for the dispatcher: milliseconds (monotonic) and timers. */
export interface DispatchClock {
  now(): number;
  /** Runs `fn` after `ms`; returns its cancel. */
  after(ms: number, fn: () => void): () => void;
}

const realClock: DispatchClock = {
  now: () => performance.now(),
  after: (ms, fn) => {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
};

/** One priority level: its limits, its queue set and the seats its requests hold. */
export class PriorityLevel {
  /** Seats held by its requests (running, or in their final phase). */
  executing = 0;
  /** Requests running (not counting those in their final phase). */
  running = 0;
  readonly queueSet: QueueSet;

  constructor(
    readonly name: string,
    public limits: LevelLimits,
    o: { now: () => number; capacity: () => number },
  ) {
    this.queueSet = new QueueSet({
      now: o.now,
      capacity: o.capacity,
      queues: limits.reject ? 0 : Math.max(limits.queues, 0),
    });
  }

  reconfigure(limits: LevelLimits): void {
    this.limits = limits;
    this.queueSet.resize(limits.reject ? 0 : Math.max(limits.queues, 0));
  }

  get waiting(): number {
    return this.queueSet.waitingCount;
  }
}

export interface Admission {
  level: PriorityLevel;
  flowSchema: string;
  /** The flow (schema and distinguisher) whose queues the request may join. */
  flow: string;
  /** Its seats and how long it holds them (the work estimator's). */
  estimate: WorkEstimate;
  /** How long it may wait in a queue (Kubernetes: a quarter of the request's deadline, at most 1m). */
  waitLimitMs: number;
  signal?: AbortSignal;
}

/** The answer to a request for seats: run (and call `release` when done), or the reason not to. */
export type Decision = { release: () => void } | { rejected: RejectReason };

/**
 * The server's seats (`--max-requests-inflight` + `--max-mutating-requests-inflight`) shared by
 * the priority levels. Within a level, requests wait in queues served by virtual finish time
 * (`queue-set.ts`); a request holds as many seats as the work estimator gave it. A level runs
 * requests on its own seats (nominal minus lendable) and, beyond them, on a pool of every
 * level's lendable seats, up to its borrowing limit. Borrowing is decided at each dispatch
 * instead of Kubernetes' adjustment every 10 s: a level that needs its lent seats back has them
 * as soon as the borrowers' requests finish.
 */
export class Dispatcher {
  private readonly levels = new Map<string, PriorityLevel>();
  private poolUsed = 0;
  private readonly borrowed = new Map<PriorityLevel, number>();

  constructor(
    private readonly metrics: FlowControlMetrics,
    private readonly clock: DispatchClock = realClock,
  ) {}

  /** Replaces the levels' limits; a level that went away keeps serving what already waits in it. */
  configure(limits: Map<string, LevelLimits>): void {
    for (const [name, l] of limits) {
      const existing = this.levels.get(name);
      if (existing) existing.reconfigure(l);
      else {
        const level: PriorityLevel = new PriorityLevel(name, l, {
          now: () => this.clock.now(),
          capacity: () => this.capacity(level),
        });
        this.levels.set(name, level);
      }
      this.metrics.nominalLimit.set({ priority_level: name }, l.exempt ? 0 : l.nominal);
    }
    this.dispatch();
  }

  level(name: string): PriorityLevel | undefined {
    return this.levels.get(name);
  }

  private poolSize(): number {
    let n = 0;
    for (const l of this.levels.values()) if (!l.limits.exempt) n += l.limits.lendable;
    return n;
  }

  /** The seats the level could hold now: its own, plus what it has borrowed and could still borrow. */
  capacity(level: PriorityLevel): number {
    const own = level.limits.nominal - level.limits.lendable;
    const borrowedNow = this.borrowed.get(level) ?? 0;
    const mayBorrow = level.limits.lendable + level.limits.borrowingLimit;
    const free = Math.max(0, this.poolSize() - this.poolUsed);
    return own + Math.min(mayBorrow, borrowedNow + free);
  }

  /**
   * Takes the seats when the level may run `width` more now. As Kubernetes, a request wider
   * than the level could ever hold (its own seats and all it may borrow) runs alone once
   * nothing else of the level runs.
   */
  private tryStart(level: PriorityLevel, width: number): boolean {
    const own = level.limits.nominal - level.limits.lendable;
    const borrowedNow = this.borrowed.get(level) ?? 0;
    const ownInUse = level.executing - borrowedNow;
    if (ownInUse + width <= own) {
      level.executing += width;
      return true;
    }
    const extra = ownInUse + width - own;
    const mayBorrow = level.limits.lendable + level.limits.borrowingLimit;
    if (borrowedNow + extra <= mayBorrow && this.poolUsed + extra <= this.poolSize()) {
      level.executing += width;
      this.borrowed.set(level, borrowedNow + extra);
      this.poolUsed += extra;
      return true;
    }
    if (level.running === 0 && width > own + Math.min(mayBorrow, this.poolSize())) {
      level.executing += width;
      return true;
    }
    return false;
  }

  private giveBack(level: PriorityLevel, width: number): void {
    level.executing -= width;
    const borrowedNow = this.borrowed.get(level) ?? 0;
    const back = Math.min(borrowedNow, width);
    if (back > 0) {
      this.borrowed.set(level, borrowedNow - back);
      this.poolUsed -= back;
    }
  }

  /**
   * Asks for seats: `decide` is called once, at once or when the request leaves its queue, with
   * a release function (call it when the request is done) or the reason it may not run.
   * Exempt levels never wait; `Reject` levels (and levels without queues) never queue.
   */
  request(a: Admission, decide: (d: Decision) => void): void {
    const { level } = a;
    const labels = { flow_schema: a.flowSchema, priority_level: level.name };
    const width = maxSeats(a.estimate);
    const run = (r?: QueuedRequest): void => {
      this.metrics.executingSeats.inc(labels, width);
      level.running++;
      let released = false;
      decide({
        release: () => {
          if (released) return;
          released = true;
          level.running--;
          if (r) level.queueSet.finish(r);
          const free = (): void => {
            if (r) level.queueSet.releaseSeats(r);
            this.metrics.executingSeats.dec(labels, width);
            if (level.limits.exempt) level.executing -= width;
            else {
              this.giveBack(level, width);
              this.dispatch();
            }
          };
          // The final phase: the seats stay taken while watchers are notified.
          if (a.estimate.finalSeats > 0 && a.estimate.additionalLatencyMs > 0 && !level.limits.exempt)
            this.clock.after(a.estimate.additionalLatencyMs, free);
          else free();
        },
      });
    };
    if (level.limits.exempt) {
      level.executing += width;
      this.metrics.waitDuration.observe({ execute: 'true', ...labels }, 0);
      run();
      return;
    }
    if (level.limits.reject || level.queueSet.queueCount === 0) {
      if (!this.tryStart(level, width)) {
        decide({ rejected: 'concurrency-limit' });
        return;
      }
      this.metrics.waitDuration.observe({ execute: 'true', ...labels }, 0);
      run();
      return;
    }
    const r = new QueuedRequest(a.estimate);
    const arrivedAt = this.clock.now();
    const queued = level.queueSet.enqueue(r, {
      hand: dealHand(a.flow, level.queueSet.queueCount, Math.min(level.limits.handSize, level.queueSet.queueCount)),
      queueLengthLimit: level.limits.queueLengthLimit,
      levelFull: level.executing >= this.capacity(level),
    });
    if (!queued) {
      decide({ rejected: 'queue-full' });
      return;
    }
    this.metrics.inqueue.inc(labels);
    let cancelTimer = (): void => undefined;
    const onAbort = (): void => leave('cancelled');
    const settle = (): void => {
      cancelTimer();
      a.signal?.removeEventListener('abort', onAbort);
      this.metrics.inqueue.dec(labels);
    };
    const leave = (reason: RejectReason): void => {
      if (!level.queueSet.remove(r)) return;
      settle();
      this.metrics.waitDuration.observe({ execute: 'false', ...labels }, (this.clock.now() - arrivedAt) / 1000);
      decide({ rejected: reason });
      // The head may have changed: a narrower request behind a wide one may fit now.
      this.dispatchLevel(level);
    };
    this.onDispatch.set(r, () => {
      settle();
      this.metrics.waitDuration.observe({ execute: 'true', ...labels }, (this.clock.now() - arrivedAt) / 1000);
      run(r);
    });
    cancelTimer = this.clock.after(a.waitLimitMs, () => leave('time-out'));
    a.signal?.addEventListener('abort', onAbort, { once: true });
    this.dispatchLevel(level);
  }

  /** What to do when a queued request is dispatched. */
  private readonly onDispatch = new WeakMap<QueuedRequest, () => void>();

  /** `request` as a promise. */
  admit(a: Admission): Promise<Decision> {
    return new Promise((resolve) => this.request(a, resolve));
  }

  /** Starts queued requests while seats allow, every level in turn. */
  private dispatch(): void {
    for (const level of this.levels.values()) if (!level.limits.exempt) this.dispatchLevel(level);
  }

  /** Starts the level's requests by virtual finish time while the next one fits. */
  private dispatchLevel(level: PriorityLevel): void {
    const qs = level.queueSet;
    while (qs.waitingCount > 0) {
      const next = qs.peek();
      if (!next || !this.tryStart(level, next.width)) return;
      qs.dispatch(next);
      const go = this.onDispatch.get(next);
      this.onDispatch.delete(next);
      go?.();
    }
  }
}
