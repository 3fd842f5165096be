import { fieldErrors, group, groupSpellings, type ApiObject, type FieldError } from '@svc/api';
import {
  validateDnsSubdomain,
  validateLabelSelector,
  validatePathSegmentName,
  type LabelSelectorObject,
} from '@svc/machinery';
import type { Strategy } from '../strategy.js';

/** rbac/v1 PolicyRule as stored. */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind: string;
  apiGroup?: string;
  name: string;
  namespace?: string;
}

export interface RoleRef {
  apiGroup: string;
  kind: string;
  name: string;
}

/** Kubernetes' ValidatePolicyRule: verbs required; non-resource URLs only in cluster roles, never mixed with resources. */
export function validatePolicyRule(rule: PolicyRule, namespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!rule.verbs?.length) errs.push(fieldErrors.required(`${path}.verbs`, 'verbs must contain at least one value'));
  if (rule.nonResourceURLs?.length) {
    if (namespaced)
      errs.push(
        fieldErrors.invalid(
          `${path}.nonResourceURLs`,
          rule.nonResourceURLs,
          'namespaced rules cannot apply to non-resource URLs',
        ),
      );
    if (rule.apiGroups?.length || rule.resources?.length || rule.resourceNames?.length) {
      errs.push(
        fieldErrors.invalid(
          `${path}.nonResourceURLs`,
          rule.nonResourceURLs,
          'rules cannot apply to both regular resources and non-resource URLs',
        ),
      );
    }
    rule.nonResourceURLs.forEach((u, i) => {
      const star = u.indexOf('*');
      if (!u.startsWith('/') && u !== '*')
        errs.push(fieldErrors.invalid(`${path}.nonResourceURLs[${i}]`, u, 'must start with /'));
      else if (star >= 0 && star !== u.length - 1)
        errs.push(fieldErrors.invalid(`${path}.nonResourceURLs[${i}]`, u, '* is only allowed as the last character'));
    });
    return errs;
  }
  if (!rule.apiGroups?.length)
    errs.push(fieldErrors.required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  if (!rule.resources?.length)
    errs.push(fieldErrors.required(`${path}.resources`, 'resource rules must supply at least one resource'));
  return errs;
}

function validateRules(obj: ApiObject, namespaced: boolean): FieldError[] {
  return ((obj.rules as PolicyRule[] | undefined) ?? []).flatMap((r, i) =>
    validatePolicyRule(r, namespaced, `rules[${i}]`),
  );
}

function validateClusterRole(obj: ApiObject): FieldError[] {
  const errs = validateRules(obj, false);
  const agg = obj.aggregationRule as { clusterRoleSelectors?: LabelSelectorObject[] } | undefined | null;
  if (agg) {
    const sels = agg.clusterRoleSelectors ?? [];
    if (sels.length === 0)
      errs.push(
        fieldErrors.required(
          'aggregationRule.clusterRoleSelectors',
          'at least one clusterRoleSelector required if aggregationRule is non-nil',
        ),
      );
    sels.forEach((sel, i) => errs.push(...validateLabelSelector(sel, `aggregationRule.clusterRoleSelectors[${i}]`)));
  }
  return errs;
}

const isRbacGroup = (g: string | undefined): boolean =>
  g !== undefined && groupSpellings(group('rbac.authorization')).includes(g);

/** Kubernetes' ValidateRoleBindingSubject. */
export function validateSubject(s: Subject, namespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!s.name) errs.push(fieldErrors.required(`${path}.name`));
  switch (s.kind) {
    case 'ServiceAccount':
      if (s.apiGroup) errs.push(fieldErrors.notSupported(`${path}.apiGroup`, s.apiGroup, ['']));
      if (s.name) errs.push(...validateDnsSubdomain(s.name, `${path}.name`));
      if (!namespaced && !s.namespace) errs.push(fieldErrors.required(`${path}.namespace`));
      break;
    case 'User':
    case 'Group':
      if (!isRbacGroup(s.apiGroup))
        errs.push(fieldErrors.notSupported(`${path}.apiGroup`, s.apiGroup ?? '', [group('rbac.authorization')]));
      break;
    default:
      errs.push(fieldErrors.notSupported(`${path}.kind`, s.kind, ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

function validateBinding(obj: ApiObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = (obj.roleRef ?? {}) as Partial<RoleRef>;
  if (!isRbacGroup(ref.apiGroup))
    errs.push(fieldErrors.notSupported('roleRef.apiGroup', ref.apiGroup ?? '', [group('rbac.authorization')]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(ref.kind ?? '')) errs.push(fieldErrors.notSupported('roleRef.kind', ref.kind ?? '', kinds));
  if (!ref.name) errs.push(fieldErrors.required('roleRef.name'));
  else errs.push(...validatePathSegmentName(ref.name, 'roleRef.name'));
  ((obj.subjects as Subject[] | undefined) ?? []).forEach((s, i) =>
    errs.push(...validateSubject(s, namespaced, `subjects[${i}]`)),
  );
  return errs;
}

/** roleRef is immutable: bindings may be updated for their subjects only. */
function validateRoleRefUnchanged(obj: ApiObject, old: ApiObject): FieldError[] {
  const a = (obj.roleRef ?? {}) as Partial<RoleRef>;
  const b = (old.roleRef ?? {}) as Partial<RoleRef>;
  // Both spellings of the group name the same group.
  const same =
    a.kind === b.kind &&
    a.name === b.name &&
    (a.apiGroup === b.apiGroup || (isRbacGroup(a.apiGroup) && isRbacGroup(b.apiGroup)));
  return same ? [] : [fieldErrors.invalid('roleRef', obj.roleRef, 'cannot change roleRef')];
}

export const roleStrategy: Strategy = {
  validate: (o) => validateRules(o, true),
  validateUpdate: (o) => validateRules(o, true),
  allowUnconditionalUpdate: true,
};
export const clusterRoleStrategy: Strategy = {
  validate: validateClusterRole,
  validateUpdate: validateClusterRole,
  allowUnconditionalUpdate: true,
};
export const roleBindingStrategy: Strategy = {
  validate: (o) => validateBinding(o, true),
  validateUpdate: (o, old) => [...validateBinding(o, true), ...validateRoleRefUnchanged(o, old)],
  allowUnconditionalUpdate: true,
};
export const clusterRoleBindingStrategy: Strategy = {
  validate: (o) => validateBinding(o, false),
  validateUpdate: (o, old) => [...validateBinding(o, false), ...validateRoleRefUnchanged(o, old)],
  allowUnconditionalUpdate: true,
};
