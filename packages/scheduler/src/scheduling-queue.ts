import type { Pod } from '@svc/api';

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

/**
 * Kubernetes' PriorityQueue: `active` pods (highest `spec.priority` first, then oldest) are
 * handed out by `pop`; failed attempts wait in `backoff` (1 s doubling per attempt up to
 * 10 s) or, when nothing in the cluster changed since the attempt began, among the
 * `unschedulable` until `moveAllToActiveOrBackoff` (a node added or updated, a pod deleted).
 * A key is in at most one part, or in flight between `pop` and `done`/a re-add.
 */
export class SchedulingQueue {
  private readonly pods = new Map<string, { info: QueuedPod; where: Where }>();
  private readonly waiters: Array<() => void> = [];
  private readonly o: Required<Omit<SchedulingQueueOptions, 'onPending'>> & Pick<SchedulingQueueOptions, 'onPending'>;
  /** Incremented by every pop (Kubernetes' scheduling cycle). */
  private cycle = 0;
  /** The cycle during which the last move request arrived. */
  private moveRequestCycle = -1;
  private timer?: ReturnType<typeof setTimeout>;
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
    this.pods.set(key, { info: { key, pod, timestamp: this.o.now(), attempts: 0 }, where: 'active' });
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
      e.where = this.backingOff(e.info) ? 'backoff' : 'active';
      this.changed();
    }
  }

  delete(key: string): void {
    if (this.pods.delete(key)) this.changed();
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
      let best: QueuedPod | undefined;
      for (const e of this.pods.values()) {
        if (e.where !== 'active') continue;
        if (!best || before(e.info, best)) best = e.info;
      }
      if (best) {
        const e = this.pods.get(best.key);
        if (e) e.where = 'inFlight';
        best.attempts++;
        this.cycle++;
        this.changed();
        return { info: best, cycle: this.cycle };
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
    e.where = where;
    this.changed();
  }

  /** Something changed that may let unschedulable pods fit: they move to active, or to back-off while backing off. */
  moveAllToActiveOrBackoff(): void {
    this.moveRequestCycle = this.cycle;
    let moved = false;
    for (const e of this.pods.values()) {
      if (e.where !== 'unschedulable') continue;
      e.where = this.backingOff(e.info) ? 'backoff' : 'active';
      moved = true;
    }
    if (moved) this.changed();
  }

  /** Kubernetes' back-off: initial × 2^(attempts − 1), capped at the maximum. */
  backoffMs(info: QueuedPod): number {
    if (info.attempts === 0) return 0;
    return Math.min(this.o.maxBackoffMs, this.o.initialBackoffMs * 2 ** Math.min(30, info.attempts - 1));
  }

  private backingOff(info: QueuedPod): boolean {
    return info.timestamp + this.backoffMs(info) > this.o.now();
  }

  counts(): { active: number; backoff: number; unschedulable: number } {
    const c = { active: 0, backoff: 0, unschedulable: 0 };
    for (const e of this.pods.values()) if (e.where !== 'inFlight') c[e.where]++;
    return c;
  }

  /** Stops the timers and wakes `pop` (which then resolves undefined). */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.leftoverTimer) clearInterval(this.leftoverTimer);
    for (const w of this.waiters.splice(0)) w();
  }

  /** Moves expired back-offs to active, re-arms the timer for the next expiry, wakes `pop`. */
  private changed(): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const now = this.o.now();
    let next = Infinity;
    for (const e of this.pods.values()) {
      if (e.where !== 'backoff') continue;
      const at = e.info.timestamp + this.backoffMs(e.info);
      if (at <= now) e.where = 'active';
      else next = Math.min(next, at);
    }
    if (next !== Infinity) {
      this.timer = setTimeout(() => this.changed(), Math.max(1, next - now));
      this.timer.unref?.();
    }
    this.o.onPending?.(this.counts());
    if ([...this.pods.values()].some((e) => e.where === 'active')) for (const w of this.waiters.splice(0)) w();
  }

  /** Kubernetes' flushUnschedulablePodsLeftover: pods unschedulable for too long are retried. */
  private flushUnschedulableLeftover(): void {
    const now = this.o.now();
    let moved = false;
    for (const e of this.pods.values()) {
      if (e.where === 'unschedulable' && now - e.info.timestamp > this.o.maxUnschedulableMs) {
        e.where = this.backingOff(e.info) ? 'backoff' : 'active';
        moved = true;
      }
    }
    if (moved) this.changed();
  }
}

/** Kubernetes' PrioritySort: higher priority first, then the earlier queue entry. */
function before(a: QueuedPod, b: QueuedPod): boolean {
  const pa = a.pod.spec?.priority ?? 0;
  const pb = b.pod.spec?.priority ?? 0;
  return pa !== pb ? pa > pb : a.timestamp < b.timestamp;
}
