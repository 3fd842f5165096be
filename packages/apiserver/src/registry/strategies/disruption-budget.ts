import { fieldErrors, type ApiObject, type FieldError, type PodDisruptionBudget } from '@svc/api';
import { validateLabelSelector } from '@svc/machinery';
import type { Strategy } from '../strategy.js';
import { percentOf, validateIntOrPercent, type IntOrPercent } from './apps.js';

const budgetOf = (o: ApiObject): PodDisruptionBudget => o as PodDisruptionBudget;

/** Kubernetes' IsNotMoreThan100Percent. */
function notOver100(v: IntOrPercent | undefined, path: string): FieldError[] {
  const p = percentOf(v);
  return p !== undefined && p > 100 ? [fieldErrors.invalid(path, v, 'must not be greater than 100%')] : [];
}

/** Kubernetes' ValidatePodDisruptionBudgetSpec (policy/v1, 1.32). */
function validateSpec(pdb: PodDisruptionBudget): FieldError[] {
  const s = pdb.spec ?? {};
  const errs: FieldError[] = [];
  if (s.minAvailable !== undefined && s.maxUnavailable !== undefined)
    errs.push(fieldErrors.invalid('spec', s, 'minAvailable and maxUnavailable cannot be both set'));
  for (const key of ['minAvailable', 'maxUnavailable'] as const) {
    const path = `spec.${key}`;
    errs.push(...validateIntOrPercent(s[key], path), ...notOver100(s[key], path));
  }
  errs.push(...validateLabelSelector(s.selector, 'spec.selector'));
  const policy = s.unhealthyPodEvictionPolicy;
  if (policy !== undefined && policy !== 'IfHealthyBudget' && policy !== 'AlwaysAllow')
    errs.push(fieldErrors.notSupported('spec.unhealthyPodEvictionPolicy', policy, ['AlwaysAllow', 'IfHealthyBudget']));
  return errs;
}

/** Kubernetes' ValidatePodDisruptionBudgetStatusUpdate for policy/v1: counts not negative. */
function validateStatus(pdb: PodDisruptionBudget): FieldError[] {
  const st = pdb.status;
  if (!st) return [];
  return (['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods'] as const).flatMap((k) =>
    (st[k] ?? 0) < 0 ? [fieldErrors.invalid(`status.${k}`, st[k], 'must be greater than or equal to 0')] : [],
  );
}

/**
 * policy/v1 PodDisruptionBudget: status starts at zero counts (written by the disruption
 * controller and by evictions through `status`), the spec is validated on every write.
 */
export const podDisruptionBudgetStrategy: Strategy = {
  prepareForCreate(obj) {
    obj.status = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
  },
  validate: (obj) => validateSpec(budgetOf(obj)),
  validateUpdate(obj, _old, ctx) {
    const pdb = budgetOf(obj);
    if (ctx.subresource === 'status') return validateStatus(pdb);
    return [...validateSpec(pdb), ...validateStatus(pdb)];
  },
};
