import {
  fieldErrors,
  type ApiObject,
  type CSIStorageCapacity,
  type FieldError,
  type LabelSelectorObject,
} from '@svc/api';
import { isDns1123Subdomain, validateLabelSelector } from '@svc/machinery';
import { deepEqual } from '../object-utils.js';
import type { Strategy } from '../strategy.js';
import { isQuantity, quantitySign } from './storage-quantity.js';

const capacityOf = (o: ApiObject): CSIStorageCapacity => o as CSIStorageCapacity;

const goString = (s: string): string => JSON.stringify(s);
const goStrings = (list: readonly string[] | undefined): string =>
  list === undefined ? '[]string(nil)' : `[]string{${list.map(goString).join(', ')}}`;

/** How Go's `%#v` prints a metav1.LabelSelector (the value of Kubernetes' immutability message). */
function goLabelSelector(sel: LabelSelectorObject): string {
  const labels = sel.matchLabels;
  const matchLabels =
    labels === undefined
      ? 'map[string]string(nil)'
      : `map[string]string{${Object.keys(labels)
          .sort()
          .map((k) => `${goString(k)}:${goString(labels[k] ?? '')}`)
          .join(', ')}}`;
  const exprs = sel.matchExpressions;
  const matchExpressions =
    exprs === undefined
      ? '[]v1.LabelSelectorRequirement(nil)'
      : `[]v1.LabelSelectorRequirement{${exprs
          .map(
            (e) =>
              `v1.LabelSelectorRequirement{Key:${goString(e.key)}, Operator:${goString(e.operator)}, Values:${goStrings(e.values)}}`,
          )
          .join(', ')}}`;
  return `v1.LabelSelector{MatchLabels:${matchLabels}, MatchExpressions:${matchExpressions}}`;
}

/** Kubernetes' ValidateCSIStorageCapacity: the topology selector, the class name, a capacity not below zero. */
function validate(obj: ApiObject): FieldError[] {
  const c = capacityOf(obj);
  const errs = validateLabelSelector(c.nodeTopology, 'nodeTopology');
  const className = c.storageClassName ?? '';
  for (const m of isDns1123Subdomain(className)) errs.push(fieldErrors.invalid('storageClassName', className, m));
  if (c.capacity !== undefined) {
    if (!isQuantity(c.capacity))
      errs.push(
        fieldErrors.invalid(
          'capacity',
          c.capacity,
          "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
      );
    else if (quantitySign(c.capacity) < 0)
      errs.push(fieldErrors.invalid('capacity', String(c.capacity), 'must be greater than or equal to 0'));
  }
  return errs;
}

/**
 * storage/v1 CSIStorageCapacity (Kubernetes' csiStorageCapacityStrategy, 1.32): namespaced, no
 * defaults; storageClassName and nodeTopology immutable (the inputs of the driver's GetCapacity).
 */
export const csiStorageCapacityStrategy: Strategy = {
  validate,
  validateUpdate(obj, old) {
    const c = capacityOf(obj);
    const prev = capacityOf(old);
    const errs = validate(obj);
    if (!deepEqual(c.nodeTopology, prev.nodeTopology))
      errs.push(
        c.nodeTopology
          ? {
              path: 'nodeTopology',
              type: 'FieldValueInvalid',
              detail: `${goLabelSelector(c.nodeTopology)}: field is immutable`,
            }
          : fieldErrors.invalid('nodeTopology', null, 'field is immutable'),
      );
    if ((c.storageClassName ?? '') !== (prev.storageClassName ?? ''))
      errs.push(fieldErrors.invalid('storageClassName', c.storageClassName ?? '', 'field is immutable'));
    return errs;
  },
};
