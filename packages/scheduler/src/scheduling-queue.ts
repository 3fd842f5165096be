import type { Pod } from '@svc/api';
import { IndexedHeap } from './indexed-heap.js';

/** A pod waiting to be scheduled (Kubernetes' QueuedPodInfo). */
export interface QueuedPod {
  /** `namespace/name`. */
  key: string;
  pod: Pod;
  /** When the pod last entered the queue (ms); back-off counts from here. */
  timestamp: number;
  /** Scheduling attempts so far. */
  attempts: number;
}

export interface SchedulingQueueOptions {
  /** `podInitialBackoffSeconds` (1 s) and `podMaxBackoffSeconds` (10 s), in ms. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** A pod left this long among the unschedulable ones is retried anyway (Kubernetes: 5 min). */
  maxUnschedulableMs?: number;
  /** Told the sizes of the three parts after every change (the `scheduler_pending_pods` gauge). */
  onPending?(counts: { active: number; backoff: number; unschedulable: number }): void;
  now?: () => number;
}

type Where = 'active' | 'backoff' | 'unschedulable' | 'inFlight';

interface Entry {
  info: QueuedPod;
  where: Where;
  /** Insertion order: the tie-break among pods of equal priority and queue time. */
  seq: number;
  /** Its place in the active or back-off heap (-1 elsewhere). */
  heapIndex: number;
}

/**
 * Kubernetes' PriorityQueue: `active` pods (highest `spec.priority` first, then oldest) are
 * handed out by `pop`; failed attempts wait in `backoff` (1 s doubling per attempt up to
 * 10 s) or, when nothing in the cluster changed since the attempt began, among the
 * `unschedulable` until `moveAllToActiveOrBackoff` (a node added or updated, a pod deleted).
 * A key is in at most one part, or in flight between `pop` and `done`/a re-add. As in
 * Kubernetes, active and back-off are heaps: a change costs O(log n), not a pass over every
 * pending pod (with tens of thousands pending, passes per event kept the event loop busy for
 * seconds at a time).
 */
export class SchedulingQueue {
  private readonly pods = new Map<string, Entry>();
  private readonly active = new IndexedHeap<Entry>((a, b) => before(a, b));
  private readonly backoff = new IndexedHeap<Entry>((a, b) => this.expiry(a) < this.expiry(b));
  private readonly unschedulable = new Set<Entry>();
  private readonly waiters: Array<() => void> = [];
  private readonly o: Required<Omit<SchedulingQueueOptions, 'onPending'>> & Pick<SchedulingQueueOptions, 'onPending'>;
  /** Incremented by every pop (Kubernetes' scheduling cycle). */
  private cycle = 0;
  /** The cycle during which the last move request arrived. */
  private moveRequestCycle = -1;
  private seq = 0;
  private timer?: ReturnType<typeof setTimeout>;
  /** When `timer` fires. */
  private timerAt = Infinity;
  private leftoverTimer?: ReturnType<typeof setInterval>;
  private closed = false;

  constructor(o: SchedulingQueueOptions = {}) {
    this.o = {
      initialBackoffMs: o.initialBackoffMs ?? 1000,
      maxBackoffMs: o.maxBackoffMs ?? 10_000,
      maxUnschedulableMs: o.maxUnschedulableMs ?? 300_000,
      now: o.now ?? Date.now,
      onPending: o.onPending,
    };
    this.leftoverTimer = setInterval(() => this.flushUnschedulableLeftover(), 30_000);
    this.leftoverTimer.unref?.();
  }

  /** A new pending pod: queued as active unless already known. */
  add(key: string, pod: Pod): void {
    if (this.closed || this.pods.has(key)) return;
    const e: Entry = {
      info: { key, pod, timestamp: this.o.now(), attempts: 0 },
      where: 'inFlight',
      seq: this.seq++,
      heapIndex: -1,
    };
    this.pods.set(key, e);
    this.place(e, 'active');
    this.changed();
  }

  /** The pod changed: its newest version is kept; an unschedulable pod whose spec or labels changed is retried. */
  update(key: string, pod: Pod): void {
    const e = this.pods.get(key);
    if (!e) return this.add(key, pod);
    const old = e.info.pod;
    e.info.pod = pod;
    if (
      e.where === 'unschedulable' &&
      (JSON.stringify(old.spec) !== JSON.stringify(pod.spec) ||
        JSON.stringify(old.metadata.labels) !== JSON.stringify(pod.metadata.labels))
    ) {
      this.place(e, this.backingOff(e.info) ? 'backoff' : 'active');
      this.changed();
    }
  }

  delete(key: string): void {
    const e = this.pods.get(key);
    if (!e) return;
    this.take(e);
    this.pods.delete(key);
    this.changed();
  }

  /** Whether the pod is queued or in flight. */
  has(key: string): boolean {
    return this.pods.has(key);
  }

  /**
   * The next active pod, marked in flight, and its scheduling cycle; waits while none is
   * active. Resolves undefined once closed.
   */
  async pop(): Promise<{ info: QueuedPod; cycle: number } | undefined> {
    for (;;) {
      if (this.closed) return undefined;
      const e = this.active.pop();
      if (e) {
        e.where = 'inFlight';
        e.info.attempts++;
        this.cycle++;
        this.changed();
        return { info: e.info, cycle: this.cycle };
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** The attempt ended with the pod bound or dropped: it leaves the queue. */
  done(key: string): void {
    const e = this.pods.get(key);
    if (e?.where === 'inFlight') this.delete(key);
  }

  /**
   * The attempt of `cycle` found no node: back-off if something changed since that cycle
   * began, else unschedulable until the next move request. Ignored unless the pod is in flight.
   */
  addUnschedulable(info: QueuedPod, cycle: number): void {
    this.requeue(info, this.moveRequestCycle >= cycle ? 'backoff' : 'unschedulable');
  }

  /** The attempt failed for another reason (an API error): back-off. */
  addBackoff(info: QueuedPod): void {
    this.requeue(info, 'backoff');
  }

  private requeue(info: QueuedPod, where: 'backoff' | 'unschedulable'): void {
    const e = this.pods.get(info.key);
    if (!e || e.where !== 'inFlight') return;
    info.timestamp = this.o.now();
    e.info = info;
    this.place(e, where);
    this.changed();
  }

  /** Something changed that may let unschedulable pods fit: they move to active, or to back-off while backing off. */
  moveAllToActiveOrBackoff(): void {
    this.moveRequestCycle = this.cycle;
    if (this.unschedulable.size === 0) return;
    for (const e of [...this.unschedulable]) this.place(e, this.backingOff(e.info) ? 'backoff' : 'active');
    this.changed();
  }

  /** Kubernetes' back-off: initial × 2^(attempts − 1), capped at the maximum. */
  backoffMs(info: QueuedPod): number {
    if (info.attempts === 0) return 0;
    return Math.min(this.o.maxBackoffMs, this.o.initialBackoffMs * 2 ** Math.min(30, info.attempts - 1));
  }

  private backingOff(info: QueuedPod): boolean {
    return this.expiry({ info }) > this.o.now();
  }

  private expiry(e: { info: QueuedPod }): number {
    return e.info.timestamp + this.backoffMs(e.info);
  }

  counts(): { active: number; backoff: number; unschedulable: number } {
    return { active: this.active.size, backoff: this.backoff.size, unschedulable: this.unschedulable.size };
  }

  /** Stops the timers and wakes `pop` (which then resolves undefined). */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.leftoverTimer) clearInterval(this.leftoverTimer);
    for (const w of this.waiters.splice(0)) w();
  }

  /** Takes `e` out of the part it is in (it is then in flight, as far as the parts go). */
  private take(e: Entry): void {
    if (e.where === 'active') this.active.remove(e);
    else if (e.where === 'backoff') this.backoff.remove(e);
    else if (e.where === 'unschedulable') this.unschedulable.delete(e);
    e.where = 'inFlight';
  }

  private place(e: Entry, where: Exclude<Where, 'inFlight'>): void {
    this.take(e);
    e.where = where;
    if (where === 'active') this.active.push(e);
    else if (where === 'backoff') this.backoff.push(e);
    else this.unschedulable.add(e);
  }

  /** Moves expired back-offs to active, arms the timer for the next expiry, wakes `pop`. */
  private changed(): void {
    if (this.closed) return;
    const now = this.o.now();
    for (let e = this.backoff.peek(); e && this.expiry(e) <= now; e = this.backoff.peek()) this.place(e, 'active');
    const top = this.backoff.peek();
    const next = top ? this.expiry(top) : Infinity;
    if (next !== this.timerAt) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      this.timerAt = next;
      if (next !== Infinity) {
        this.timer = setTimeout(
          () => {
            this.timerAt = Infinity;
            this.timer = undefined;
            this.changed();
          },
          Math.max(1, next - now),
        );
        this.timer.unref?.();
      }
    }
    this.o.onPending?.(this.counts());
    if (this.active.size > 0) for (const w of this.waiters.splice(0)) w();
  }

  /** Kubernetes' flushUnschedulablePodsLeftover: pods unschedulable for too long are retried. */
  private flushUnschedulableLeftover(): void {
    const now = this.o.now();
    let moved = false;
    for (const e of [...this.unschedulable]) {
      if (now - e.info.timestamp > this.o.maxUnschedulableMs) {
        this.place(e, this.backingOff(e.info) ? 'backoff' : 'active');
        moved = true;
      }
    }
    if (moved) this.changed();
  }
}

/** Kubernetes' PrioritySort: higher priority first, then the earlier queue entry (then the earlier added). */
function before(a: Entry, b: Entry): boolean {
  const pa = a.info.pod.spec?.priority ?? 0;
  const pb = b.info.pod.spec?.priority ?? 0;
  if (pa !== pb) return pa > pb;
  return a.info.timestamp !== b.info.timestamp ? a.info.timestamp < b.info.timestamp : a.seq < b.seq;
}
