/**
 * Metric stability classes (Kubernetes' component-base `StabilityLevel`) and the declared class
 * and deprecation of the metrics our components serve, by name, as Kubernetes 1.32 declares them.
 * A metric missing here is ALPHA; metrics of the runtime collectors (`process_*`, `nodejs_*`) are
 * raw and carry no class, as Go's runtime collectors carry none in Kubernetes.
 */
export type StabilityLevel = 'ALPHA' | 'BETA' | 'STABLE';

export interface MetricStability {
  stability: StabilityLevel;
  /** `major.minor` of the release that deprecated the metric. */
  deprecatedVersion?: string;
}

const STABLE: MetricStability = { stability: 'STABLE' };
const BETA: MetricStability = { stability: 'BETA' };

/** Kubernetes 1.32's declared class of the metrics we serve (ALPHA when absent). */
export const METRIC_STABILITY: Readonly<Record<string, MetricStability>> = {
  apiserver_admission_controller_admission_duration_seconds: STABLE,
  apiserver_admission_step_admission_duration_seconds: STABLE,
  apiserver_admission_webhook_admission_duration_seconds: STABLE,
  apiserver_current_inflight_requests: STABLE,
  apiserver_longrunning_requests: STABLE,
  apiserver_request_duration_seconds: STABLE,
  apiserver_request_total: STABLE,
  apiserver_requested_deprecated_apis: STABLE,
  apiserver_response_sizes: STABLE,
  apiserver_storage_objects: STABLE,
  apiserver_flowcontrol_current_executing_requests: BETA,
  apiserver_flowcontrol_current_executing_seats: BETA,
  apiserver_flowcontrol_current_inqueue_requests: BETA,
  apiserver_flowcontrol_dispatched_requests_total: BETA,
  apiserver_flowcontrol_nominal_limit_seats: BETA,
  apiserver_flowcontrol_rejected_requests_total: BETA,
  apiserver_flowcontrol_request_wait_duration_seconds: BETA,
  apiserver_flowcontrol_request_concurrency_limit: { stability: 'ALPHA', deprecatedVersion: '1.30' },
  apiserver_encryption_config_controller_automatic_reload_failures_total: {
    stability: 'ALPHA',
    deprecatedVersion: '1.30',
  },
  apiserver_encryption_config_controller_automatic_reload_success_total: {
    stability: 'ALPHA',
    deprecatedVersion: '1.30',
  },
  node_collector_evictions_total: STABLE,
  scheduler_framework_extension_point_duration_seconds: STABLE,
  scheduler_pending_pods: STABLE,
  scheduler_pod_scheduling_attempts: STABLE,
  scheduler_preemption_attempts_total: STABLE,
  scheduler_preemption_victims: STABLE,
  scheduler_queue_incoming_pods_total: STABLE,
  scheduler_schedule_attempts_total: STABLE,
  scheduler_scheduling_attempt_duration_seconds: STABLE,
  scheduler_pod_scheduling_sli_duration_seconds: BETA,
  registered_metrics_total: BETA,
  disabled_metrics_total: BETA,
  hidden_metrics_total: BETA,
};

/** Whether `name` comes from a runtime collector (no stability class, never hidden). */
export function isRawMetric(name: string): boolean {
  return name.startsWith('process_') || name.startsWith('nodejs_');
}

/**
 * Releases a deprecated metric of each class stays visible (spec, deprecation rule 11b: STABLE 3
 * releases, BETA 1). ALPHA metrics may go at once; like Kubernetes we still show them, marked,
 * in the release that deprecates them, so their window is 1 too.
 */
export const DEPRECATED_VISIBLE_RELEASES: Readonly<Record<StabilityLevel, number>> = {
  STABLE: 3,
  BETA: 1,
  ALPHA: 1,
};

/** `major.minor` → [major, minor]; throws on anything else. */
export function parseMajorMinor(v: string): [number, number] {
  const m = /^(\d+)\.(\d+)$/.exec(v.trim());
  if (!m) throw new Error(`version ${JSON.stringify(v)} is not of the form <major>.<minor>`);
  return [Number(m[1]), Number(m[2])];
}

/** Minor releases from `from` to `to` (same major assumed, as within Kubernetes 1.x). */
export function minorsBetween(from: string, to: string): number {
  const [fm, fn] = parseMajorMinor(from);
  const [tm, tn] = parseMajorMinor(to);
  return (tm - fm) * 1000 + (tn - fn);
}

/**
 * Whether a metric deprecated in `deprecatedVersion` is hidden in `currentVersion`: once its
 * class's visible window has passed (spec: a STABLE metric deprecated in 1.29 is hidden in 1.32).
 */
export function isHiddenIn(m: MetricStability, currentVersion: string): boolean {
  if (m.deprecatedVersion === undefined) return false;
  return minorsBetween(m.deprecatedVersion, currentVersion) >= DEPRECATED_VISIBLE_RELEASES[m.stability];
}
