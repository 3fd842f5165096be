import { Counter, Histogram, type Registry } from 'prom-client';

/** `admit` for mutating webhooks, `validating` for validating ones (Kubernetes' label values). */
export type WebhookStep = 'admit' | 'validating';

/** Why a webhook rejected a request (Kubernetes' error_type label). */
export type RejectionType = 'calling_webhook_error' | 'apiserver_internal_error' | 'no_error';

/**
 * Kubernetes' admission webhook metrics, registered once per registry (both webhook plugins
 * share them): latency, requests and rejections per webhook and fail-open calls.
 */
export class WebhookMetrics {
  private readonly duration: Histogram<'name' | 'type' | 'operation' | 'rejected'>;
  private readonly requests: Counter<'name' | 'type' | 'operation' | 'code' | 'rejected'>;
  private readonly rejections: Counter<'name' | 'type' | 'operation' | 'error_type' | 'rejection_code'>;
  private readonly failOpen: Counter<'name' | 'type'>;

  private constructor(registry: Registry) {
    const registers = [registry];
    this.duration = new Histogram({
      name: 'apiserver_admission_webhook_admission_duration_seconds',
      help: 'Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).',
      labelNames: ['name', 'type', 'operation', 'rejected'],
      buckets: [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25],
      registers,
    });
    this.requests = new Counter({
      name: 'apiserver_admission_webhook_request_total',
      help: 'Admission webhook request total, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
      labelNames: ['name', 'type', 'operation', 'code', 'rejected'],
      registers,
    });
    this.rejections = new Counter({
      name: 'apiserver_admission_webhook_rejection_count',
      help: 'Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
      labelNames: ['name', 'type', 'operation', 'error_type', 'rejection_code'],
      registers,
    });
    this.failOpen = new Counter({
      name: 'apiserver_admission_webhook_fail_open_count',
      help: 'Admission webhook fail open count, identified by name and broken out for each admission type (validating or admit).',
      labelNames: ['name', 'type'],
      registers,
    });
  }

  private static readonly byRegistry = new WeakMap<Registry, WebhookMetrics>();

  static of(registry: Registry): WebhookMetrics {
    let m = WebhookMetrics.byRegistry.get(registry);
    if (!m) {
      m = new WebhookMetrics(registry);
      WebhookMetrics.byRegistry.set(registry, m);
    }
    return m;
  }

  /** One call: its latency and outcome (`code` 0 for the server's own failures). */
  observe(o: { name: string; type: WebhookStep; operation: string; seconds: number; rejected: boolean; code: number }) {
    const rejected = String(o.rejected);
    this.requests.inc({
      name: o.name,
      type: o.type,
      operation: o.operation,
      code: String(Math.min(o.code, 600)),
      rejected,
    });
    this.duration.observe({ name: o.name, type: o.type, operation: o.operation, rejected }, o.seconds);
  }

  rejection(o: { name: string; type: WebhookStep; operation: string; errorType: RejectionType; code: number }): void {
    this.rejections.inc({
      name: o.name,
      type: o.type,
      operation: o.operation,
      error_type: o.errorType,
      rejection_code: String(Math.min(o.code, 600)),
    });
  }

  failedOpen(name: string, type: WebhookStep): void {
    this.failOpen.inc({ name, type });
  }
}
