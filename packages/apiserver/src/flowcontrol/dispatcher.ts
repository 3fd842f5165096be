import type { PriorityLevelConfiguration } from '@svc/api';
import type { FlowControlMetrics } from './metrics.js';

/** Why a request was not served: Kubernetes' `reason` label of the rejected-requests counter. */
export type RejectReason = 'queue-full' | 'concurrency-limit' | 'time-out' | 'cancelled';

/** One request waiting for seats in a queue of its priority level. */
interface Waiter {
  readonly flowSchema: string;
  readonly width: number;
  readonly arrivedAt: number;
  readonly admit: (outcome: RejectReason | undefined) => void;
  timer?: NodeJS.Timeout;
}

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

/** One priority level: its limits, its queues and the seats its requests hold. */
export class PriorityLevel {
  executing = 0;
  private queues: Waiter[][] = [];
  private next = 0;

  constructor(
    readonly name: string,
    public limits: LevelLimits,
  ) {
    this.resize();
  }

  reconfigure(limits: LevelLimits): void {
    this.limits = limits;
    this.resize();
  }

  private resize(): void {
    const n = Math.max(this.limits.queues, 0);
    if (this.queues.length === n) return;
    const waiting = this.queues.flat();
    this.queues = Array.from({ length: n }, () => []);
    // Requests already waiting stay in line, in the first queue when the level stopped queueing.
    for (const w of waiting) (this.queues[0] ?? (this.queues[0] = [])).push(w);
    this.next = 0;
  }

  get waiting(): number {
    return this.queues.reduce((n, q) => n + q.length, 0);
  }

  /** Kubernetes' choice in the flow's hand: the queue holding the fewest seats' worth of waiting requests. */
  enqueue(flow: string, w: Waiter): boolean {
    if (this.queues.length === 0) return false;
    const hand = dealHand(flow, this.queues.length, Math.min(this.limits.handSize, this.queues.length));
    let best = hand[0] ?? 0;
    for (const i of hand) if ((this.queues[i]?.length ?? 0) < (this.queues[best]?.length ?? 0)) best = i;
    const q = this.queues[best] ?? [];
    if (q.length >= this.limits.queueLengthLimit) return false;
    q.push(w);
    return true;
  }

  remove(w: Waiter): boolean {
    for (const q of this.queues) {
      const i = q.indexOf(w);
      if (i >= 0) {
        q.splice(i, 1);
        return true;
      }
    }
    return false;
  }

  /** The head of the next non-empty queue, round robin, so each flow's queue gets its turn. */
  peek(): { queue: number; waiter: Waiter } | undefined {
    for (let k = 0; k < this.queues.length; k++) {
      const i = (this.next + k) % this.queues.length;
      const w = this.queues[i]?.[0];
      if (w) return { queue: i, waiter: w };
    }
    return undefined;
  }

  take(queue: number): void {
    this.queues[queue]?.shift();
    this.next = (queue + 1) % this.queues.length;
  }
}

export interface Admission {
  level: PriorityLevel;
  flowSchema: string;
  /** The flow (schema and distinguisher) whose queues the request may join. */
  flow: string;
  width: number;
  /** How long it may wait in a queue (Kubernetes: a quarter of the request's deadline, at most 1m). */
  waitLimitMs: number;
  signal: AbortSignal;
}

/**
 * The server's seats (`--max-requests-inflight` + `--max-mutating-requests-inflight`) shared by
 * the priority levels. A level runs requests on its own seats (nominal minus lendable) and,
 * beyond them, on a pool of every level's lendable seats, up to its borrowing limit. Borrowing
 * is decided at each dispatch instead of Kubernetes' adjustment every 10 s: a level that
 * needs its lent seats back has them as soon as the borrowers' requests finish.
 */
export class Dispatcher {
  private readonly levels = new Map<string, PriorityLevel>();
  private poolUsed = 0;
  private readonly borrowed = new Map<PriorityLevel, number>();

  constructor(private readonly metrics: FlowControlMetrics) {}

  /** Replaces the levels' limits; a level that went away keeps serving what already waits in it. */
  configure(limits: Map<string, LevelLimits>): void {
    for (const [name, l] of limits) {
      const existing = this.levels.get(name);
      if (existing) existing.reconfigure(l);
      else this.levels.set(name, new PriorityLevel(name, l));
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

  /** Takes the seats when the level may run `width` more now. */
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
    if (borrowedNow + extra > mayBorrow || this.poolUsed + extra > this.poolSize()) return false;
    level.executing += width;
    this.borrowed.set(level, borrowedNow + extra);
    this.poolUsed += extra;
    return true;
  }

  private finish(level: PriorityLevel, width: number): void {
    level.executing -= width;
    const borrowedNow = this.borrowed.get(level) ?? 0;
    const giveBack = Math.min(borrowedNow, width);
    if (giveBack > 0) {
      this.borrowed.set(level, borrowedNow - giveBack);
      this.poolUsed -= giveBack;
    }
    this.dispatch();
  }

  /**
   * Waits for seats (or not at all): resolves with a release function once the request may
   * run, or with the reason it may not. Exempt levels never wait.
   */
  async admit(a: Admission): Promise<{ release: () => void } | { rejected: RejectReason }> {
    const { level, width } = a;
    const labels = { flow_schema: a.flowSchema, priority_level: level.name };
    const started = (): { release: () => void } => {
      this.metrics.executingSeats.inc(labels, width);
      let released = false;
      return {
        release: () => {
          if (released) return;
          released = true;
          this.metrics.executingSeats.dec(labels, width);
          if (level.limits.exempt) level.executing -= width;
          else this.finish(level, width);
        },
      };
    };
    if (level.limits.exempt) {
      level.executing += width;
      this.metrics.waitDuration.observe({ execute: 'true', ...labels }, 0);
      return started();
    }
    if (level.peek() === undefined && this.tryStart(level, width)) {
      this.metrics.waitDuration.observe({ execute: 'true', ...labels }, 0);
      return started();
    }
    if (level.limits.reject || level.limits.queues === 0) return { rejected: 'concurrency-limit' };
    const outcome = await new Promise<RejectReason | undefined>((resolve) => {
      const w: Waiter = { flowSchema: a.flowSchema, width, arrivedAt: performance.now(), admit: resolve };
      if (!level.enqueue(a.flow, w)) {
        resolve('queue-full');
        return;
      }
      this.metrics.inqueue.inc(labels);
      const leave = (reason: RejectReason): void => {
        if (!level.remove(w)) return;
        clearTimeout(w.timer);
        this.metrics.inqueue.dec(labels);
        this.metrics.waitDuration.observe({ execute: 'false', ...labels }, (performance.now() - w.arrivedAt) / 1000);
        resolve(reason);
      };
      w.timer = setTimeout(() => leave('time-out'), a.waitLimitMs);
      a.signal.addEventListener('abort', () => leave('cancelled'), { once: true });
      this.dispatch();
    });
    if (outcome) return { rejected: outcome };
    return started();
  }

  /** Starts queued requests while seats allow, every level in turn. */
  private dispatch(): void {
    for (const level of this.levels.values()) {
      if (level.limits.exempt) continue;
      for (;;) {
        const head = level.peek();
        if (!head || !this.tryStart(level, head.waiter.width)) break;
        level.take(head.queue);
        clearTimeout(head.waiter.timer);
        const labels = { flow_schema: head.waiter.flowSchema, priority_level: level.name };
        this.metrics.inqueue.dec(labels);
        this.metrics.waitDuration.observe(
          { execute: 'true', ...labels },
          (performance.now() - head.waiter.arrivedAt) / 1000,
        );
        head.waiter.admit(undefined);
      }
    }
  }
}
