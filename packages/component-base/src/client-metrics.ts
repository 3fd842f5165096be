import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** What a RestClient reports (structurally `@svc/client`'s `RequestMetrics`). */
export interface ClientRequestObserver {
  observe(r: { method: string; host: string; code: number; ms: number }): void;
  throttled(ms: number): void;
  retried(r: { method: string; host: string; code: number }): void;
}

/** What a work queue reports (structurally `@svc/client`'s `WorkQueueMetrics`). */
export interface QueueObserver {
  added(): void;
  depth(n: number): void;
  queued(ms: number): void;
  worked(ms: number): void;
  retried(): void;
}

const LATENCY_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];
const QUEUE_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10];

/**
 * A component's client-side metrics under Kubernetes' names: `rest_client_*` for API
 * requests, `workqueue_*` per queue name, and `leader_election_master_status`.
 */
export class ComponentMetrics {
  private readonly requests: Counter<'code' | 'method' | 'host'>;
  private readonly requestLatency: Histogram<'verb' | 'host'>;
  private readonly rateLimiterLatency: Histogram<'verb' | 'host'>;
  private readonly requestRetries: Counter<'code' | 'verb' | 'host'>;
  private readonly adds: Counter<'name'>;
  private readonly depthGauge: Gauge<'name'>;
  private readonly queueLatency: Histogram<'name'>;
  private readonly workLatency: Histogram<'name'>;
  private readonly retries: Counter<'name'>;
  private readonly leader: Gauge<'name'>;

  constructor(readonly registry: Registry) {
    const registers = [registry];
    this.requests = new Counter({
      name: 'rest_client_requests_total',
      help: 'Number of HTTP requests, partitioned by status code, method, and host.',
      labelNames: ['code', 'method', 'host'],
      registers,
    });
    this.requestLatency = new Histogram({
      name: 'rest_client_request_duration_seconds',
      help: 'Request latency in seconds. Broken down by verb and host.',
      labelNames: ['verb', 'host'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.rateLimiterLatency = new Histogram({
      name: 'rest_client_rate_limiter_duration_seconds',
      help: 'Client side rate limiter latency in seconds. Broken down by verb and host.',
      labelNames: ['verb', 'host'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.requestRetries = new Counter({
      name: 'rest_client_request_retries_total',
      help: 'Number of request retries, partitioned by status code, verb, and host.',
      labelNames: ['code', 'verb', 'host'],
      registers,
    });
    this.adds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: ['name'],
      registers,
    });
    this.depthGauge = new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames: ['name'],
      registers,
    });
    this.queueLatency = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested.',
      labelNames: ['name'],
      buckets: QUEUE_BUCKETS,
      registers,
    });
    this.workLatency = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes.',
      labelNames: ['name'],
      buckets: QUEUE_BUCKETS,
      registers,
    });
    this.retries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: ['name'],
      registers,
    });
    this.leader = new Gauge({
      name: 'leader_election_master_status',
      help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
      labelNames: ['name'],
      registers,
    });
  }

  /** For `new RestClient(config, { metrics })`. */
  client(): ClientRequestObserver {
    return {
      observe: ({ method, host, code, ms }) => {
        this.requests.inc({ code: code === 0 ? '<error>' : String(code), method, host });
        this.requestLatency.observe({ verb: method, host }, ms / 1000);
      },
      throttled: (ms) => this.rateLimiterLatency.observe({ verb: '', host: '' }, ms / 1000),
      retried: ({ method, host, code }) => this.requestRetries.inc({ code: String(code), verb: method, host }),
    };
  }

  /** For the work queue named `name` (one per controller). */
  queue(name: string): QueueObserver {
    this.depthGauge.set({ name }, 0);
    return {
      added: () => this.adds.inc({ name }),
      depth: (n) => this.depthGauge.set({ name }, n),
      queued: (ms) => this.queueLatency.observe({ name }, ms / 1000),
      worked: (ms) => this.workLatency.observe({ name }, ms / 1000),
      retried: () => this.retries.inc({ name }),
    };
  }

  /** Records whether this process holds the lease `name`. */
  setLeader(name: string, leading: boolean): void {
    this.leader.set({ name }, leading ? 1 : 0);
  }
}
