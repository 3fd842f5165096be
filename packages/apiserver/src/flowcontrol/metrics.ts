import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Kubernetes' `apiserver_flowcontrol_*` metrics (names, help texts and labels of 1.32). */
export class FlowControlMetrics {
  readonly dispatched: Counter<'flow_schema' | 'priority_level'>;
  readonly rejected: Counter<'flow_schema' | 'priority_level' | 'reason'>;
  readonly inqueue: Gauge<'flow_schema' | 'priority_level'>;
  readonly executingSeats: Gauge<'flow_schema' | 'priority_level'>;
  readonly waitDuration: Histogram<'flow_schema' | 'priority_level' | 'execute'>;
  readonly nominalLimit: Gauge<'priority_level'>;
  readonly workEstimatedSeats: Histogram<'flow_schema' | 'priority_level'>;
  readonly watchCountSamples: Histogram<'flow_schema' | 'priority_level'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.dispatched = new Counter({
      name: 'apiserver_flowcontrol_dispatched_requests_total',
      help: 'Number of requests executed by API Priority and Fairness subsystem',
      labelNames: ['flow_schema', 'priority_level'] as const,
      registers,
    });
    this.rejected = new Counter({
      name: 'apiserver_flowcontrol_rejected_requests_total',
      help: 'Number of requests rejected by API Priority and Fairness subsystem',
      labelNames: ['flow_schema', 'priority_level', 'reason'] as const,
      registers,
    });
    this.inqueue = new Gauge({
      name: 'apiserver_flowcontrol_current_inqueue_requests',
      help: 'Number of requests currently pending in queues of the API Priority and Fairness subsystem',
      labelNames: ['flow_schema', 'priority_level'] as const,
      registers,
    });
    this.executingSeats = new Gauge({
      name: 'apiserver_flowcontrol_current_executing_seats',
      help: 'Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem',
      labelNames: ['flow_schema', 'priority_level'] as const,
      registers,
    });
    this.waitDuration = new Histogram({
      name: 'apiserver_flowcontrol_request_wait_duration_seconds',
      help: 'Length of time a request spent waiting in its queue',
      labelNames: ['flow_schema', 'priority_level', 'execute'] as const,
      buckets: [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30],
      registers,
    });
    this.nominalLimit = new Gauge({
      name: 'apiserver_flowcontrol_nominal_limit_seats',
      help: 'Nominal number of execution seats configured for each priority level',
      labelNames: ['priority_level'] as const,
      registers,
    });
    this.workEstimatedSeats = new Histogram({
      name: 'apiserver_flowcontrol_work_estimated_seats',
      help: 'Number of estimated seats (maximum of initial and final seats) associated with requests in API Priority and Fairness',
      labelNames: ['flow_schema', 'priority_level'] as const,
      buckets: [1, 2, 4, 10],
      registers,
    });
    this.watchCountSamples = new Histogram({
      name: 'apiserver_flowcontrol_watch_count_samples',
      help: 'count of watchers for mutating requests in API Priority and Fairness',
      labelNames: ['flow_schema', 'priority_level'] as const,
      buckets: [0, 1, 10, 100, 1000, 10000],
      registers,
    });
  }
}
