import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface CacheSizes {
  nodes: number;
  pods: number;
  assumed_pods: number;
}

export type AttemptResult = 'scheduled' | 'unschedulable' | 'error';

/** The scheduler's own metrics under Kubernetes' names (the profile label is always the default scheduler's). */
export class SchedulerMetrics {
  private readonly attempts: Counter<'result' | 'profile'>;
  private readonly attemptDuration: Histogram<'result' | 'profile'>;
  private readonly pending: Gauge<'queue'>;
  /** The leader's cache, read at scrape time (none while standing by). */
  private cache: (() => CacheSizes) | undefined;

  constructor(
    registry: Registry,
    private readonly profile: string,
  ) {
    const registers = [registry];
    this.attempts = new Counter({
      name: 'scheduler_schedule_attempts_total',
      registers,
      labelNames: ['result', 'profile'],
      help: "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
    });
    this.attemptDuration = new Histogram({
      name: 'scheduler_scheduling_attempt_duration_seconds',
      registers,
      labelNames: ['result', 'profile'],
      help: 'Scheduling attempt latency in seconds (scheduling algorithm + binding)',
      buckets: [
        0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384,
      ],
    });
    this.pending = new Gauge({
      name: 'scheduler_pending_pods',
      registers,
      labelNames: ['queue'],
      help: "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.",
    });
    const sizes = (): CacheSizes | undefined => this.cache?.();
    new Gauge({
      name: 'scheduler_scheduler_cache_size',
      registers,
      labelNames: ['type'],
      help: 'Number of nodes, pods, and assumed (bound) pods in the scheduler cache.',
      collect() {
        const s = sizes() ?? { nodes: 0, pods: 0, assumed_pods: 0 };
        for (const [type, n] of Object.entries(s)) this.set({ type }, n);
      },
    });
    for (const result of ['scheduled', 'unschedulable', 'error'] as const) this.attempts.inc({ result, profile }, 0);
    this.setPending({ active: 0, backoff: 0, unschedulable: 0, gated: 0 });
  }

  attempt(result: AttemptResult, ms: number): void {
    this.attempts.inc({ result, profile: this.profile });
    this.attemptDuration.observe({ result, profile: this.profile }, ms / 1000);
  }

  /** Reports `sizes` of the running scheduler's cache (undefined: it stopped). */
  observeCache(sizes: (() => CacheSizes) | undefined): void {
    this.cache = sizes;
  }

  setPending(c: { active: number; backoff: number; unschedulable: number; gated?: number }): void {
    for (const [queue, n] of Object.entries(c)) this.pending.set({ queue }, n);
  }
}
