import { fieldErrors, type ApiObject, type FieldError, type RuntimeClass, type Toleration } from '@svc/api';
import { isDns1123Label, validateLabels, validateResourceRequirements, validateTolerations } from '@svc/machinery';
import type { Strategy } from '../strategy.js';
import { canonicalizeList } from './limit-range.js';

function canonicalize(obj: ApiObject): void {
  const rc = obj as RuntimeClass;
  if (rc.overhead?.podFixed) rc.overhead.podFixed = canonicalizeList(rc.overhead.podFixed);
}

/** Unique by key, operator, value and effect (the list keys of the API). */
function validateUniqueTolerations(tolerations: readonly Toleration[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  tolerations.forEach((t, i) => {
    const key = JSON.stringify([t.key ?? '', t.operator ?? '', t.value ?? '', t.effect ?? '']);
    if (seen.has(key)) errs.push(fieldErrors.duplicate(`${path}[${i}]`, t));
    seen.add(key);
  });
  return errs;
}

/**
 * Kubernetes' ValidateRuntimeClass: the handler a DNS label; the overhead checked as a
 * container's limits (at `overhead.limits[...]`); the node selector as labels; tolerations
 * (reported under `scheduling.tolerations.tolerations[i]`, as Kubernetes nests that path) unique.
 */
function validate(obj: ApiObject): FieldError[] {
  const rc = obj as RuntimeClass;
  const handler = rc.handler ?? '';
  const errs = isDns1123Label(handler).map((m) => fieldErrors.invalid('handler', handler, m));
  if (rc.overhead) errs.push(...validateResourceRequirements({ limits: rc.overhead.podFixed }, 'overhead'));
  if (rc.scheduling) {
    const s = rc.scheduling;
    if (s.nodeSelector) errs.push(...validateLabels(s.nodeSelector, 'scheduling.nodeSelector'));
    errs.push(...validateTolerations(s.tolerations ?? [], 'scheduling.tolerations.tolerations'));
    errs.push(...validateUniqueTolerations(s.tolerations ?? [], 'scheduling.tolerations'));
  }
  return errs;
}

/** node/v1 RuntimeClass: validated as Kubernetes does; the handler is immutable. */
export const runtimeClassStrategy: Strategy = {
  prepareForCreate: canonicalize,
  prepareForUpdate: canonicalize,
  validate,
  validateUpdate(obj, old) {
    const errs = validate(obj);
    if ((obj as RuntimeClass).handler !== (old as RuntimeClass).handler)
      errs.push(fieldErrors.invalid('handler', (obj as RuntimeClass).handler, 'field is immutable'));
    return errs;
  },
};
