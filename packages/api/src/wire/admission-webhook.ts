import type { ApiObject } from '../types.js';
import type { MatchCondition, RuleWithOperations } from './admission-policy.js';
import type { LabelSelectorObject } from './meta.js';

/**
 * admissionregistration/v1 MutatingWebhookConfiguration and ValidatingWebhookConfiguration, as
 * stored: the server defaults `failurePolicy` (Fail), `matchPolicy` (Equivalent), both
 * selectors (`{}`), `timeoutSeconds` (10), each rule's `scope` (`*`), a service's `port` (443)
 * and, for mutating webhooks, `reinvocationPolicy` (Never).
 */

export interface WebhookServiceReference {
  namespace: string;
  name: string;
  path?: string;
  port?: number;
}

/** Exactly one of `url` (https) and `service`; `caBundle` is base64 of PEM. */
export interface WebhookClientConfig {
  url?: string;
  service?: WebhookServiceReference;
  caBundle?: string;
}

export interface ValidatingWebhook {
  name: string;
  clientConfig: WebhookClientConfig;
  rules?: RuleWithOperations[];
  /** `Fail` or `Ignore`. */
  failurePolicy?: string;
  /** `Exact` or `Equivalent`. */
  matchPolicy?: string;
  namespaceSelector?: LabelSelectorObject;
  objectSelector?: LabelSelectorObject;
  /** `None` or `NoneOnDryRun` (`Some`, `Unknown` only in objects from before v1). */
  sideEffects: string;
  timeoutSeconds?: number;
  /** AdmissionReview versions the webhook understands, preferred first (`v1`, `v1beta1`). */
  admissionReviewVersions: string[];
  matchConditions?: MatchCondition[];
}

export interface MutatingWebhook extends ValidatingWebhook {
  /** `Never` or `IfNeeded`. */
  reinvocationPolicy?: string;
}

export interface ValidatingWebhookConfiguration extends ApiObject {
  webhooks?: ValidatingWebhook[];
}

export interface MutatingWebhookConfiguration extends ApiObject {
  webhooks?: MutatingWebhook[];
}
