import type {
  ApiObject,
  FieldError,
  MatchResources,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
} from '@svc/api';
import { validateBinding, validatePolicy, validatePolicyStatus } from '../../admission/policy/validation.js';
import type { Strategy } from '../strategy.js';

/** Kubernetes' v1 defaults of MatchResources: Equivalent, empty selectors, each rule's scope `*`. */
function defaultMatchResources(m: MatchResources | undefined): void {
  if (!m) return;
  m.matchPolicy ??= 'Equivalent';
  m.namespaceSelector ??= {};
  m.objectSelector ??= {};
  for (const r of [...(m.resourceRules ?? []), ...(m.excludeResourceRules ?? [])]) r.scope ??= '*';
}

function defaultPolicy(obj: ApiObject): ValidatingAdmissionPolicy {
  const p = obj as ValidatingAdmissionPolicy;
  const spec = (p.spec ??= {});
  spec.failurePolicy ??= 'Fail';
  defaultMatchResources(spec.matchConstraints);
  return p;
}

function defaultBinding(obj: ApiObject): ValidatingAdmissionPolicyBinding {
  const b = obj as ValidatingAdmissionPolicyBinding;
  defaultMatchResources((b.spec ??= {}).matchResources);
  return b;
}

/**
 * ValidatingAdmissionPolicy: defaults, Kubernetes' validation (CEL compiled), status reset on
 * create and kept by spec writes; updates need a resourceVersion. Kubernetes' paramKind read
 * check on writes is an admission step (admission/policy/param-authorization.ts).
 */
export const validatingAdmissionPolicyStrategy: Strategy = {
  allowUnconditionalUpdate: false,
  prepareForCreate(obj) {
    defaultPolicy(obj).status = {};
  },
  prepareForUpdate(obj) {
    defaultPolicy(obj);
  },
  validate(obj): FieldError[] {
    return validatePolicy(obj as ValidatingAdmissionPolicy);
  },
  validateUpdate(obj, old, ctx): FieldError[] {
    if (ctx.subresource === 'status') return validatePolicyStatus(obj as ValidatingAdmissionPolicy);
    return validatePolicy(obj as ValidatingAdmissionPolicy, old as ValidatingAdmissionPolicy);
  },
};

/** ValidatingAdmissionPolicyBinding: defaults and Kubernetes' validation; updates need a resourceVersion. */
export const validatingAdmissionPolicyBindingStrategy: Strategy = {
  allowUnconditionalUpdate: false,
  prepareForCreate(obj) {
    defaultBinding(obj);
  },
  prepareForUpdate(obj) {
    defaultBinding(obj);
  },
  validate(obj): FieldError[] {
    return validateBinding(obj as ValidatingAdmissionPolicyBinding);
  },
};
