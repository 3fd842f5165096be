import { labelSelector } from '../../../meta-schema.js';
import { s } from '../../../schema.js';

// Field numbers of Kubernetes' admissionregistration/v1 generated.proto. Required fields and
// enums are left to validation (Kubernetes' messages), not the decoder.

/** Rule's fields, inlined in RuleWithOperations at field 2 (`embeddedIn` of the caller). */
function ruleFields(embeddedIn: readonly number[]) {
  return {
    apiGroups: s.atomic(s.str(), { tag: 1, embeddedIn }),
    apiVersions: s.atomic(s.str(), { tag: 2, embeddedIn }),
    resources: s.atomic(s.str(), { tag: 3, embeddedIn }),
    scope: s.str({ tag: 4, embeddedIn }),
  };
}

/** RuleWithOperations: operations, and Rule inlined. */
export const ruleWithOperations = s.obj({
  operations: s.atomic(s.str(), { tag: 1 }),
  ...ruleFields([2]),
});

/** NamedRuleWithOperations: resourceNames, and RuleWithOperations inlined at field 2. */
export const namedRuleWithOperations = s.obj(
  {
    resourceNames: s.atomic(s.str(), { tag: 1 }),
    operations: s.atomic(s.str(), { tag: 1, embeddedIn: 2 }),
    ...ruleFields([2, 2]),
  },
  { structType: 'atomic' },
);

export const matchResources = s.obj(
  {
    namespaceSelector: { ...labelSelector, tag: 1 },
    objectSelector: { ...labelSelector, tag: 2 },
    resourceRules: s.atomic(namedRuleWithOperations, { tag: 3 }),
    excludeResourceRules: s.atomic(namedRuleWithOperations, { tag: 4 }),
    matchPolicy: s.str({ tag: 7 }),
  },
  { structType: 'atomic' },
);

export const matchCondition = s.obj({ name: s.str({ tag: 1 }), expression: s.str({ tag: 2 }) });

/** A `matchConditions` list: a map keyed by name. */
export const matchConditions = (tag: number) => s.keyed(matchCondition, ['name'], { tag });
