import type { ApiObject } from '../types.js';
import type { LabelSelectorObject } from './meta.js';

/**
 * admissionregistration/v1 ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding, as
 * stored: the server defaults `failurePolicy`, `matchPolicy`, both selectors and each rule's
 * `scope` before validating.
 */

/** `*`, `CREATE`, `UPDATE`, `DELETE`, `CONNECT`. */
export type AdmissionOperation = string;

/** admissionregistration/v1 RuleWithOperations (Rule inlined). */
export interface RuleWithOperations {
  operations?: AdmissionOperation[];
  apiGroups?: string[];
  apiVersions?: string[];
  /** `pods`, `pods/status`, `*`, `*\/scale`, `pods/*`, `*\/*`. */
  resources?: string[];
  /** `Cluster`, `Namespaced` or `*` (the default). */
  scope?: string;
}

/** admissionregistration/v1 NamedRuleWithOperations. */
export interface NamedRuleWithOperations extends RuleWithOperations {
  resourceNames?: string[];
}

/** admissionregistration/v1 MatchResources. */
export interface MatchResources {
  namespaceSelector?: LabelSelectorObject;
  objectSelector?: LabelSelectorObject;
  resourceRules?: NamedRuleWithOperations[];
  excludeResourceRules?: NamedRuleWithOperations[];
  /** `Exact` or `Equivalent` (the default). */
  matchPolicy?: string;
}

/** admissionregistration/v1 MatchCondition. */
export interface MatchCondition {
  name: string;
  expression: string;
}

export interface ParamKind {
  apiVersion?: string;
  kind?: string;
}

export interface PolicyValidation {
  expression: string;
  message?: string;
  /** `Forbidden`, `Invalid` or `RequestEntityTooLarge`. */
  reason?: string;
  messageExpression?: string;
}

export interface PolicyVariable {
  name: string;
  expression: string;
}

export interface AuditAnnotation {
  key: string;
  valueExpression: string;
}

export interface ValidatingAdmissionPolicySpec {
  paramKind?: ParamKind;
  matchConstraints?: MatchResources;
  validations?: PolicyValidation[];
  /** `Fail` (the default) or `Ignore`. */
  failurePolicy?: string;
  auditAnnotations?: AuditAnnotation[];
  matchConditions?: MatchCondition[];
  variables?: PolicyVariable[];
}

export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

export interface ValidatingAdmissionPolicyStatus {
  observedGeneration?: number;
  typeChecking?: { expressionWarnings?: ExpressionWarning[] };
  conditions?: Array<{
    type: string;
    status: string;
    observedGeneration?: number;
    lastTransitionTime?: string;
    reason?: string;
    message?: string;
  }>;
}

export interface ValidatingAdmissionPolicy extends ApiObject {
  spec?: ValidatingAdmissionPolicySpec;
  status?: ValidatingAdmissionPolicyStatus;
}

export interface ParamRef {
  name?: string;
  namespace?: string;
  selector?: LabelSelectorObject;
  /** `Allow` or `Deny`. */
  parameterNotFoundAction?: string;
}

export interface ValidatingAdmissionPolicyBindingSpec {
  policyName?: string;
  paramRef?: ParamRef;
  matchResources?: MatchResources;
  /** `Deny`, `Warn`, `Audit`. */
  validationActions?: string[];
}

export interface ValidatingAdmissionPolicyBinding extends ApiObject {
  spec?: ValidatingAdmissionPolicyBindingSpec;
}
