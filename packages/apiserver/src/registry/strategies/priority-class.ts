import { fieldErrors, group, statusError, type ApiObject, type FieldError, type PriorityClass } from '@svc/api';
import type { Strategy } from '../strategy.js';

/** Values above this are reserved for the system classes. */
export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;
export const SYSTEM_PRIORITY_CLASS_PREFIX = 'system-';

/** The classes `poststarthook/scheduling/bootstrap-system-priority-classes` creates (Kubernetes' values and descriptions). */
export const SYSTEM_PRIORITY_CLASSES: ReadonlyArray<{ name: string; value: number; description: string }> = [
  {
    name: 'system-node-critical',
    value: 2 * HIGHEST_USER_DEFINABLE_PRIORITY + 1000,
    description: 'Used for system critical pods that must not be moved from their current node.',
  },
  {
    name: 'system-cluster-critical',
    value: 2 * HIGHEST_USER_DEFINABLE_PRIORITY,
    description:
      'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
  },
];

/** Why `name` may not carry the system prefix with these values, or undefined when it is a system class as defined. */
function systemClassError(pc: PriorityClass): string | undefined {
  const known = SYSTEM_PRIORITY_CLASSES.find((c) => c.name === pc.metadata.name);
  if (!known) return `${pc.metadata.name ?? ''} is not a known system priority class`;
  if (known.value !== pc.value) return `value of ${known.name} PriorityClass must be ${known.value}`;
  if (pc.globalDefault === true) return `globalDefault of ${known.name} PriorityClass must be false`;
  return undefined;
}

export function validatePreemptionPolicy(policy: unknown, path: string): FieldError[] {
  if (policy === 'PreemptLowerPriority' || policy === 'Never') return [];
  if (policy === '') return [fieldErrors.required(path, '')];
  return [fieldErrors.notSupported(path, policy, ['PreemptLowerPriority', 'Never'])];
}

function validate(obj: ApiObject): FieldError[] {
  const pc = obj as PriorityClass;
  const errs: FieldError[] = [];
  if ((pc.metadata.name ?? '').startsWith(SYSTEM_PRIORITY_CLASS_PREFIX)) {
    const why = systemClassError(pc);
    if (why) {
      errs.push(
        fieldErrors.forbidden(
          'metadata.name',
          `priority class names with '${SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. error: ${why}`,
        ),
      );
    }
  } else if ((pc.value ?? 0) > HIGHEST_USER_DEFINABLE_PRIORITY) {
    errs.push(
      fieldErrors.forbidden(
        'value',
        `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`,
      ),
    );
  }
  if (pc.preemptionPolicy !== undefined)
    errs.push(...validatePreemptionPolicy(pc.preemptionPolicy, 'preemptionPolicy'));
  return errs;
}

function defaults(obj: ApiObject): void {
  const pc = obj as PriorityClass;
  pc.value ??= 0;
  pc.preemptionPolicy ??= 'PreemptLowerPriority';
}

/**
 * scheduling/v1 PriorityClass: `preemptionPolicy` defaults to PreemptLowerPriority; the
 * `system-` prefix is reserved for the system classes as defined, other classes stay at or
 * below 1000000000; `value` and `preemptionPolicy` are immutable; the system classes cannot be
 * deleted (403, as Kubernetes' storage refuses it).
 */
export const priorityClassStrategy: Strategy = {
  prepareForCreate: defaults,
  prepareForUpdate: defaults,
  validate,
  validateUpdate(obj, old) {
    const pc = obj as PriorityClass;
    const before = old as PriorityClass;
    const errs = validate(obj);
    if (pc.value !== before.value) errs.push(fieldErrors.forbidden('value', 'may not be changed in an update.'));
    if (pc.preemptionPolicy !== before.preemptionPolicy)
      errs.push(fieldErrors.invalid('preemptionPolicy', pc.preemptionPolicy ?? null, 'field is immutable'));
    return errs;
  },
  beforeDelete(obj) {
    const name = obj.metadata.name ?? '';
    if (SYSTEM_PRIORITY_CLASSES.some((c) => c.name === name)) {
      const g = group('scheduling');
      throw statusError(
        'Forbidden',
        `priorityclasses.${g} "${name}" is forbidden: this is a system priority class and cannot be deleted`,
        { name, group: g, kind: 'priorityclasses' },
      );
    }
    return undefined;
  },
};
