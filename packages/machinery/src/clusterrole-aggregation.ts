import type { ApiObject } from '@svc/api';
import { jsonEqual } from './json-compare.js';
import { labelSelectorFromObject, type LabelSelectorObject } from './label-selector-object.js';

/** An RBAC PolicyRule as it appears in a ClusterRole's `rules`. */
export interface AggregatedPolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const RULE_FIELDS = ['verbs', 'apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const;

/** Kubernetes' semantic equality of two rules: an absent list equals an empty one. */
export function policyRuleEqual(a: AggregatedPolicyRule, b: AggregatedPolicyRule): boolean {
  return RULE_FIELDS.every((f) => jsonEqual(a[f] ?? [], b[f] ?? []));
}

/** Semantic equality of two rule lists (same rules, same order; absent equals empty). */
export function policyRulesEqual(
  a: readonly AggregatedPolicyRule[] | undefined,
  b: readonly AggregatedPolicyRule[] | undefined,
): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((r, i) => policyRuleEqual(r, y[i] as AggregatedPolicyRule));
}

/**
 * The `rules` an aggregated ClusterRole must have, as Kubernetes' ClusterRole aggregation
 * controller computes them: for each selector of `aggregationRule.clusterRoleSelectors` in
 * order, the ClusterRoles it matches (never `target` itself) by name (byte order), each of
 * their rules appended unless an equal one is already there. Undefined when `target` has no
 * `aggregationRule`. Throws on an invalid selector. The API server and the controller manager
 * both use this, so the two never disagree on a role's rules.
 */
export function aggregateClusterRoleRules(
  target: ApiObject,
  all: Iterable<ApiObject>,
): AggregatedPolicyRule[] | undefined {
  const rule = target.aggregationRule as { clusterRoleSelectors?: LabelSelectorObject[] } | null | undefined;
  if (rule === undefined || rule === null) return undefined;
  const roles = [...all]
    .filter((o) => o.metadata.name !== target.metadata.name)
    .sort((a, b) =>
      (a.metadata.name ?? '') < (b.metadata.name ?? '')
        ? -1
        : (a.metadata.name ?? '') > (b.metadata.name ?? '')
          ? 1
          : 0,
    );
  const out: AggregatedPolicyRule[] = [];
  for (const sel of rule.clusterRoleSelectors ?? []) {
    const selector = labelSelectorFromObject(sel);
    for (const role of roles) {
      if (!selector.matches(role.metadata.labels ?? {})) continue;
      for (const r of (role.rules as AggregatedPolicyRule[] | undefined) ?? []) {
        if (!out.some((x) => policyRuleEqual(x, r))) out.push(r);
      }
    }
  }
  return out;
}
