import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { Counter, Gauge, Histogram, collectDefaultMetrics } from 'prom-client';
import { ComponentRegistry, type MetricsPolicy } from '@svc/component-base';

/**
 * The API server's metrics, in a registry of its own (several servers may share a process in
 * tests) that applies the `--disabled-metrics`, `--show-hidden-metrics-for-version` and
 * `--allow-metric-labels*` policy and Kubernetes' stability classes.
 */
export class ApiServerMetrics {
  readonly registry = new ComponentRegistry();
  readonly requestTotal = new Counter({
    name: 'apiserver_request_total',
    registers: [this.registry],
    help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
    labelNames: [
      'verb',
      'dry_run',
      'group',
      'version',
      'resource',
      'subresource',
      'scope',
      'component',
      'code',
    ] as const,
  });
  readonly requestDuration = new Histogram({
    name: 'apiserver_request_duration_seconds',
    registers: [this.registry],
    help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
    labelNames: ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const,
    buckets: [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
  });
  readonly requestedDeprecatedApis = new Gauge({
    name: 'apiserver_requested_deprecated_apis',
    registers: [this.registry],
    help: 'Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
    labelNames: ['group', 'version', 'resource', 'subresource', 'removed_release'] as const,
  });
  readonly storageObjects = new Gauge({
    name: 'apiserver_storage_objects',
    registers: [this.registry],
    help: 'Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.',
    labelNames: ['resource'] as const,
  });
  readonly etcdRequestDuration = new Histogram({
    name: 'etcd_request_duration_seconds',
    registers: [this.registry],
    help: 'Etcd request latency in seconds for each operation and object type.',
    labelNames: ['operation', 'type'] as const,
    buckets: [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
  });
  readonly authorizationDecisions = new Counter({
    name: 'apiserver_authorization_decisions_total',
    registers: [this.registry],
    help: 'Total number of terminal decisions made by an authorizer split by authorizer type, name, and decision.',
    labelNames: ['type', 'name', 'decision'] as const,
  });
  readonly inflight = new Gauge({
    name: 'apiserver_current_inflight_requests',
    registers: [this.registry],
    help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
    labelNames: ['request_kind'] as const,
  });

  readonly admissionStepDuration = new Histogram({
    name: 'apiserver_admission_step_admission_duration_seconds',
    registers: [this.registry],
    help: 'Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).',
    labelNames: ['type', 'operation', 'rejected'] as const,
    buckets: [0.005, 0.025, 0.1, 0.5, 1.0, 2.5],
  });

  readonly authenticationConfigReloads = new Counter({
    name: 'apiserver_authentication_config_controller_automatic_reloads_total',
    registers: [this.registry],
    help: 'Total number of automatic reloads of authentication configuration split by status and apiserver identity.',
    labelNames: ['status', 'apiserver_id_hash'] as const,
  });
  readonly authenticationConfigReloadLastTimestamp = new Gauge({
    name: 'apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds',
    registers: [this.registry],
    help: 'Timestamp of the last automatic reload of authentication configuration split by status and apiserver identity.',
    labelNames: ['status', 'apiserver_id_hash'] as const,
  });

  /** Kubernetes' legacy (Secret-held) service-account token counters (pkg/serviceaccount). */
  readonly legacyTokens = new Counter({
    name: 'serviceaccount_legacy_tokens_total',
    registers: [this.registry],
    help: 'Cumulative legacy service account tokens used',
  });
  readonly legacyAutoTokenUses = new Counter({
    name: 'serviceaccount_legacy_auto_token_uses_total',
    registers: [this.registry],
    help: 'Cumulative auto-generated legacy tokens used',
  });
  readonly legacyManualTokenUses = new Counter({
    name: 'serviceaccount_legacy_manual_token_uses_total',
    registers: [this.registry],
    help: 'Cumulative manually created legacy tokens used',
  });
  readonly invalidLegacyAutoTokenUses = new Counter({
    name: 'serviceaccount_invalid_legacy_auto_token_uses_total',
    registers: [this.registry],
    help: 'Cumulative invalid auto-generated legacy tokens used',
  });

  readonly encryptionConfigReloads = new Counter({
    name: 'apiserver_encryption_config_controller_automatic_reloads_total',
    registers: [this.registry],
    help: 'Total number of reload successes and failures of encryption configuration split by apiserver identity.',
    labelNames: ['status', 'apiserver_id_hash'] as const,
  });
  readonly encryptionConfigReloadLastTimestamp = new Gauge({
    name: 'apiserver_encryption_config_controller_automatic_reload_last_timestamp_seconds',
    registers: [this.registry],
    help: 'Timestamp of the last successful or failed automatic reload of encryption configuration split by apiserver identity.',
    labelNames: ['status', 'apiserver_id_hash'] as const,
  });

  /**
   * Kubernetes 1.32 still declares these two (deprecated in 1.30, so hidden in 1.32): served
   * only with `--show-hidden-metrics-for-version=1.31`, counted with the reloads.
   */
  readonly encryptionConfigReloadFailures = new Counter({
    name: 'apiserver_encryption_config_controller_automatic_reload_failures_total',
    registers: [this.registry],
    help: 'Total number of failed automatic reloads of encryption configuration split by apiserver identity.',
    labelNames: ['apiserver_id_hash'] as const,
  });
  readonly encryptionConfigReloadSuccesses = new Counter({
    name: 'apiserver_encryption_config_controller_automatic_reload_success_total',
    registers: [this.registry],
    help: 'Total number of successful automatic reloads of encryption configuration split by apiserver identity.',
    labelNames: ['apiserver_id_hash'] as const,
  });

  constructor(
    policy: MetricsPolicy = {},
    private readonly apiserverIdHash = `sha256:${createHash('sha256').update(`apiserver-${hostname()}`).digest('hex')}`,
  ) {
    collectDefaultMetrics({ register: this.registry });
    this.registry.configure(policy);
  }

  /** One use of a legacy token: auto-generated, manual, or an invalidated auto-generated one (refused). */
  recordLegacyTokenUse(kind: 'auto' | 'manual' | 'invalid-auto'): void {
    if (kind === 'invalid-auto') {
      this.invalidLegacyAutoTokenUses.inc();
      return;
    }
    this.legacyTokens.inc();
    (kind === 'auto' ? this.legacyAutoTokenUses : this.legacyManualTokenUses).inc();
  }

  /** One automatic reload of `--authentication-config` (Kubernetes' two metrics). */
  recordAuthenticationConfigReload(status: 'success' | 'failure', atSeconds: number): void {
    const labels = { status, apiserver_id_hash: this.apiserverIdHash };
    this.authenticationConfigReloads.inc(labels);
    this.authenticationConfigReloadLastTimestamp.set(labels, atSeconds);
  }

  /**
   * One automatic reload of `--encryption-provider-config` (Kubernetes 1.32's two visible
   * metrics, and the two it deprecated in 1.30, hidden unless hidden metrics are shown).
   */
  recordEncryptionConfigReload(status: 'success' | 'failure', atSeconds: number): void {
    const labels = { status, apiserver_id_hash: this.apiserverIdHash };
    this.encryptionConfigReloads.inc(labels);
    this.encryptionConfigReloadLastTimestamp.set(labels, atSeconds);
    (status === 'success' ? this.encryptionConfigReloadSuccesses : this.encryptionConfigReloadFailures).inc({
      apiserver_id_hash: this.apiserverIdHash,
    });
  }
}

/** Kubernetes' metric verb: uppercase HTTP-ish verb, LIST/WATCH for collections, APPLY for apply patches. */
export function metricVerb(verb: string, method: string): string {
  switch (verb) {
    case 'list':
      return 'LIST';
    case 'watch':
      return 'WATCH';
    case 'get':
      return 'GET';
    case 'create':
      return 'POST';
    case 'update':
      return 'PUT';
    case 'patch':
      return 'PATCH';
    case 'delete':
    case 'deletecollection':
      return 'DELETE';
    default:
      return method.toUpperCase();
  }
}
