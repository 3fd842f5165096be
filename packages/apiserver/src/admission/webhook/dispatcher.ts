import { group } from '@svc/api';
import type { Logger } from '@svc/component-base';
import type { AdmissionAttributes } from '../admission.js';
import { admissionForbidden } from '../admission-errors.js';
import type { VersionConverter } from './conversion.js';
import { CallingWebhookError, WebhookRejection } from './errors.js';
import type { MatchDeps } from './matching.js';
import type { WebhookMetrics, WebhookStep } from './metrics.js';
import type { WebhookAccessor, WebhookSource } from './source.js';

/** What both webhook plugins use. */
export interface WebhookDeps extends MatchDeps {
  source: WebhookSource;
  converter: VersionConverter;
  metrics: WebhookMetrics;
  log: Logger;
}

/** Kubernetes' WaitForReady: a request before the first list of configurations waits for it (403 after 10 s). */
export async function waitReady(deps: WebhookDeps, attrs: AdmissionAttributes): Promise<void> {
  const ready = deps.source.ready();
  if (ready === true || (await ready)) return;
  throw admissionForbidden(attrs, 'not yet ready to handle request');
}

export interface CallOutcome {
  hook: WebhookAccessor;
  step: WebhookStep;
  attrs: AdmissionAttributes;
  /** `performance.now()` when the call started. */
  started: number;
  /** Position of the webhook in the list (audit annotation keys). */
  index: number;
  round: number;
  error?: unknown;
}

/**
 * Records one call's metrics and applies the webhook's failurePolicy, as Kubernetes'
 * dispatchers: a call that failed fails open under `Ignore` (logged, counted, annotated
 * `failed-open.<mutation|validating>.webhook.admission.<suffix>/round_<r>_index_<i>`) and closed
 * under `Fail` (500); a denial is the webhook's Status; anything else is thrown as it is.
 */
export function settle(deps: WebhookDeps, o: CallOutcome): void {
  const { hook, step, attrs } = o;
  const name = hook.hook.name;
  const operation = attrs.operation;
  const seconds = (performance.now() - o.started) / 1000;
  const e = o.error;
  if (e === undefined) {
    deps.metrics.observe({ name, type: step, operation, seconds, rejected: false, code: 200 });
    return;
  }
  if (e instanceof CallingWebhookError) {
    const ignore = hook.hook.failurePolicy === 'Ignore';
    if (!ignore)
      deps.metrics.rejection({ name, type: step, operation, errorType: 'calling_webhook_error', code: e.code });
    deps.metrics.observe({ name, type: step, operation, seconds, rejected: !ignore, code: e.code });
    if (!ignore) {
      deps.log.warn('Failed calling webhook, failing closed', { webhook: name, error: e.message });
      throw e.toStatusError();
    }
    deps.log.warn('Failed calling webhook, failing open', { webhook: name, error: e.message });
    deps.metrics.failedOpen(name, step);
    const prefix = step === 'admit' ? 'mutation' : 'validating';
    attrs.annotations[`failed-open.${prefix}.webhook.${group('admission')}/round_${o.round}_index_${o.index}`] = name;
    return;
  }
  if (e instanceof WebhookRejection) {
    const code = e.status.code;
    deps.metrics.rejection({ name, type: step, operation, errorType: 'no_error', code });
    deps.metrics.observe({ name, type: step, operation, seconds, rejected: true, code });
    throw e.status;
  }
  deps.metrics.rejection({ name, type: step, operation, errorType: 'apiserver_internal_error', code: 0 });
  deps.metrics.observe({ name, type: step, operation, seconds, rejected: true, code: 0 });
  throw e;
}
