import { fieldErrors, type ApiObject, type FieldError, type StorageClass, type TopologySelectorTerm } from '@svc/api';
import { isQualifiedName, utf8Length } from '@svc/machinery';
import { deepEqual } from '../object-utils.js';
import type { Strategy } from '../strategy.js';
import { GO_NIL } from './persistent-volume.js';

const MAX_PARAMETERS = 512;
const MAX_PARAMETERS_SIZE = 256 * 1024;
const RECLAIM_POLICIES = ['Delete', 'Retain'];
const BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'];

const tooLong = (path: string, max: number): FieldError => ({
  path,
  type: 'FieldValueTooLong',
  detail: `may not be more than ${max} bytes`,
});
const invalidEach = (path: string, value: unknown, msgs: string[]): FieldError[] =>
  msgs.map((m) => fieldErrors.invalid(path, value, m));

/** Kubernetes' ValidateTopologySelectorTerm: values required and unique, keys unique label names. Returns the term as key → values. */
export function validateTopologySelectorTerm(
  term: TopologySelectorTerm,
  path: string,
): { expressions: Map<string, Set<string>>; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const expressions = new Map<string, Set<string>>();
  (term.matchLabelExpressions ?? []).forEach((req, i) => {
    const p = `${path}.matchLabelExpressions[${i}]`;
    const values = new Set<string>();
    const list = req.values ?? [];
    if (list.length === 0) errors.push(fieldErrors.required(`${p}.values`, ''));
    list.forEach((v, j) => {
      if (values.has(v)) errors.push(fieldErrors.duplicate(`${p}.values[${j}]`, v));
      values.add(v);
    });
    errors.push(...invalidEach(`${p}.key`, req.key ?? '', isQualifiedName(req.key ?? '')));
    if (expressions.has(req.key)) errors.push(fieldErrors.duplicate(`${p}.key`, req.key));
    expressions.set(req.key, values);
  });
  return { expressions, errors };
}

function sameExpressions(a: Map<string, Set<string>>, b: Map<string, Set<string>>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (!w || w.size !== v.size || [...v].some((x) => !w.has(x))) return false;
  }
  return true;
}

/** Kubernetes' ValidateStorageClass (storage/validation). */
export function validateStorageClass(sc: StorageClass): FieldError[] {
  const errs: FieldError[] = [];
  const provisioner = sc.provisioner ?? '';
  if (provisioner.length === 0) errs.push(fieldErrors.required('provisioner', ''));
  else errs.push(...invalidEach('provisioner', provisioner.toLowerCase(), isQualifiedName(provisioner.toLowerCase())));
  const params = Object.entries(sc.parameters ?? {});
  if (params.length > MAX_PARAMETERS) {
    errs.push(tooLong('parameters', MAX_PARAMETERS));
  } else {
    let size = 0;
    for (const [k, v] of params) {
      if (k.length < 1) errs.push(fieldErrors.invalid('parameters', k, 'field can not be empty.'));
      size += utf8Length(k) + utf8Length(v);
    }
    if (size > MAX_PARAMETERS_SIZE) errs.push(tooLong('parameters', MAX_PARAMETERS_SIZE));
  }
  if (sc.reclaimPolicy && !RECLAIM_POLICIES.includes(sc.reclaimPolicy))
    errs.push(fieldErrors.notSupported('reclaimPolicy', sc.reclaimPolicy, RECLAIM_POLICIES));
  if (sc.volumeBindingMode === undefined) errs.push(fieldErrors.required('volumeBindingMode', ''));
  else if (!BINDING_MODES.includes(sc.volumeBindingMode))
    errs.push(fieldErrors.notSupported('volumeBindingMode', sc.volumeBindingMode, BINDING_MODES));
  const seen: Array<Map<string, Set<string>>> = [];
  (sc.allowedTopologies ?? []).forEach((term, i) => {
    const path = `allowedTopologies[${i}]`;
    const { expressions, errors } = validateTopologySelectorTerm(term, path);
    errs.push(...errors);
    if (seen.some((t) => sameExpressions(t, expressions)))
      errs.push(fieldErrors.duplicate(`${path}.matchLabelExpressions`, ''));
    seen.push(expressions);
  });
  return errs;
}

/** v1 defaults: reclaimPolicy Delete, volumeBindingMode Immediate. */
function setDefaults(o: ApiObject): void {
  const sc = o as StorageClass;
  sc.reclaimPolicy ??= 'Delete';
  sc.volumeBindingMode ??= 'Immediate';
}

/**
 * storage/v1 StorageClass, as Kubernetes 1.32: v1 defaults, validation, and parameters,
 * provisioner, reclaimPolicy and volumeBindingMode immutable (Kubernetes' messages).
 */
export const storageClassStrategy: Strategy = {
  prepareForCreate: setDefaults,
  prepareForUpdate: setDefaults,
  validate: (obj) => validateStorageClass(obj as StorageClass),
  validateUpdate(obj, old) {
    const sc = obj as StorageClass;
    const prev = old as StorageClass;
    const errs = validateStorageClass(sc);
    if (!deepEqual(sc.parameters ?? {}, prev.parameters ?? {}))
      errs.push(fieldErrors.forbidden('parameters', 'updates to parameters are forbidden.'));
    if ((sc.provisioner ?? '') !== (prev.provisioner ?? ''))
      errs.push(fieldErrors.forbidden('provisioner', 'updates to provisioner are forbidden.'));
    if (sc.reclaimPolicy !== prev.reclaimPolicy)
      errs.push(fieldErrors.forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
    if (sc.volumeBindingMode !== prev.volumeBindingMode)
      errs.push(fieldErrors.invalid('volumeBindingMode', sc.volumeBindingMode ?? GO_NIL, 'field is immutable'));
    return errs;
  },
  allowUnconditionalUpdate: true,
};
