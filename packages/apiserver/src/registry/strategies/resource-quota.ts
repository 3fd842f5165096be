import { fieldErrors, type ApiObject, type FieldError, type ResourceList, type ResourceQuota } from '@svc/api';
import {
  Quantity,
  isResourceQuotaScopeValidForResource,
  isStandardQuotaResourceName,
  isStandardResourceQuotaScope,
  keyPath,
  quantityAt,
  validateResourceQuantityValue,
  validateResourceQuotaResourceName,
} from '@svc/machinery';
import type { Strategy } from '../strategy.js';
import { canonicalizeList } from './limit-range.js';

const TERMINATION_OR_QOS_SCOPES = ['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort'];
const CONFLICTING_SCOPES = [
  ['BestEffort', 'NotBestEffort'],
  ['Terminating', 'NotTerminating'],
];

function canonicalize(q: ResourceQuota): void {
  if (q.spec?.hard) q.spec.hard = canonicalizeList(q.spec.hard);
  if (q.status?.hard) q.status.hard = canonicalizeList(q.status.hard);
  if (q.status?.used) q.status.used = canonicalizeList(q.status.used);
}

/** Names valid for quota, values not negative (and whole where they count objects). */
function validateResourceList(list: ResourceList | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, text] of Object.entries(list ?? {})) {
    const p = keyPath(path, k);
    errs.push(...validateResourceQuotaResourceName(k, p));
    const q = quantityAt(text, p);
    if (q instanceof Quantity) errs.push(...validateResourceQuantityValue(k, q, p));
    else errs.push(q);
  }
  return errs;
}

function validateScopes(q: ResourceQuota): FieldError[] {
  const scopes = q.spec?.scopes ?? [];
  if (scopes.length === 0) return [];
  const errs: FieldError[] = [];
  const hard = Object.keys(q.spec?.hard ?? {}).sort();
  for (const scope of scopes) {
    if (!isStandardResourceQuotaScope(scope))
      errs.push(fieldErrors.invalid('spec.scopes', scopes, 'unsupported scope'));
    for (const k of hard) {
      if (isStandardQuotaResourceName(k) && !isResourceQuotaScopeValidForResource(scope, k))
        errs.push(fieldErrors.invalid('spec.scopes', scopes, 'unsupported scope applied to resource'));
    }
  }
  for (const pair of CONFLICTING_SCOPES) {
    if (pair.every((s) => scopes.includes(s)))
      errs.push(fieldErrors.invalid('spec.scopes', scopes, 'conflicting scopes'));
  }
  return errs;
}

function validateScopeSelector(q: ResourceQuota): FieldError[] {
  const selector = q.spec?.scopeSelector;
  if (!selector) return [];
  const errs: FieldError[] = [];
  const p = 'spec.scopeSelector.matchExpressions';
  const hard = Object.keys(q.spec?.hard ?? {}).sort();
  const seen = new Set<string>();
  for (const req of selector.matchExpressions ?? []) {
    const scope = req.scopeName ?? '';
    if (!isStandardResourceQuotaScope(scope))
      errs.push(fieldErrors.invalid(`${p}.scopeName`, scope, 'unsupported scope'));
    for (const k of hard) {
      if (isStandardQuotaResourceName(k) && !isResourceQuotaScopeValidForResource(scope, k))
        errs.push(fieldErrors.invalid(p, selector, 'unsupported scope applied to resource'));
    }
    if (TERMINATION_OR_QOS_SCOPES.includes(scope) && req.operator !== 'Exists') {
      errs.push(
        fieldErrors.invalid(
          `${p}.operator`,
          req.operator,
          "must be 'Exist' only operator when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort and ResourceQuotaScopeNotBestEffort",
        ),
      );
    }
    switch (req.operator) {
      case 'In':
      case 'NotIn':
        if ((req.values ?? []).length === 0) {
          errs.push(
            fieldErrors.required(
              `${p}.values`,
              "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
            ),
          );
        }
        break;
      case 'Exists':
      case 'DoesNotExist':
        if ((req.values ?? []).length > 0) {
          errs.push(
            fieldErrors.invalid(
              `${p}.values`,
              req.values,
              "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
            ),
          );
        }
        break;
      default:
        errs.push(fieldErrors.invalid(`${p}.operator`, req.operator, 'not a valid selector operator'));
    }
    seen.add(scope);
  }
  for (const pair of CONFLICTING_SCOPES) {
    if (pair.every((s) => seen.has(s))) errs.push(fieldErrors.invalid(p, q.spec?.scopes ?? null, 'conflicting scopes'));
  }
  return errs;
}

function validateSpec(obj: ApiObject): FieldError[] {
  const q = obj as ResourceQuota;
  return [...validateResourceList(q.spec?.hard, 'spec.hard'), ...validateScopes(q), ...validateScopeSelector(q)];
}

function validateStatus(obj: ApiObject): FieldError[] {
  const q = obj as ResourceQuota;
  return [
    ...validateResourceList(q.status?.hard, 'status.hard'),
    ...validateResourceList(q.status?.used, 'status.used'),
  ];
}

function sameSet(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const x = new Set(a ?? []);
  const y = new Set(b ?? []);
  return x.size === y.size && [...x].every((v) => y.has(v));
}

/**
 * core/v1 ResourceQuota: status is the controller's and admission's (reset on create, kept on
 * spec writes; status writes keep the spec); scopes are immutable; Kubernetes' validation of
 * resource names, values, scopes and scope selectors. Quantities are stored canonical.
 */
export const resourceQuotaStrategy: Strategy = {
  prepareForCreate(obj) {
    delete obj.status;
    canonicalize(obj as ResourceQuota);
  },
  prepareForUpdate: (obj) => canonicalize(obj as ResourceQuota),
  prepareForStatusUpdate: (obj) => canonicalize(obj as ResourceQuota),
  validate: (obj) => [...validateSpec(obj), ...validateStatus(obj)],
  validateUpdate(obj, old, ctx) {
    if (ctx.subresource === 'status') return validateStatus(obj);
    const errs = validateSpec(obj);
    const q = obj as ResourceQuota;
    const before = old as ResourceQuota;
    if (!sameSet(q.spec?.scopes, before.spec?.scopes))
      errs.push(fieldErrors.invalid('spec.scopes', q.spec?.scopes ?? null, 'field is immutable'));
    return errs;
  },
};
