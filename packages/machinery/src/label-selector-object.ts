/**
 * The object form of label selectors (metav1.LabelSelector, e.g. `spec.selector`): conversion
 * to a `LabelSelector` and validation, as Kubernetes does.
 */
import { badRequest, fieldErrors, type FieldError, type LabelSelectorObject } from '@svc/api';
import { LabelSelector, type Requirement, type SelectorOperator } from './label-selector.js';
import { isValidLabelValue, validateLabels, validateQualifiedName } from './validation.js';

/** metav1.LabelSelector and its requirement: @svc/api's wire types, re-exported for machinery's callers. */
export type { LabelSelectorObject, LabelSelectorRequirement } from '@svc/api';

const OBJECT_OPERATORS: Record<string, SelectorOperator> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
};

/**
 * Kubernetes' LabelSelectorAsSelector: a missing selector matches nothing, an empty one
 * everything. Throws BadRequest on an invalid selector.
 */
export function labelSelectorFromObject(obj: LabelSelectorObject | null | undefined): LabelSelector {
  if (obj === null || obj === undefined) return LabelSelector.nothing();
  const labels = Object.entries(obj.matchLabels ?? {});
  const exprs = obj.matchExpressions ?? [];
  if (labels.length + exprs.length === 0) return LabelSelector.everything();
  const reqs: Requirement[] = labels.map(([key, v]) => ({ key, operator: '=', values: [v] }));
  for (const e of exprs) {
    const operator = Object.prototype.hasOwnProperty.call(OBJECT_OPERATORS, e.operator)
      ? OBJECT_OPERATORS[e.operator]
      : undefined;
    if (operator === undefined)
      throw badRequest(`${JSON.stringify(e.operator)} is not a valid label selector operator`);
    reqs.push({ key: e.key, operator, values: [...(e.values ?? [])] });
  }
  return LabelSelector.fromRequirements(reqs);
}

/** Kubernetes' ValidateLabelSelector (metav1 validation) for a selector in an object's spec. */
export function validateLabelSelector(obj: LabelSelectorObject | null | undefined, path: string): FieldError[] {
  if (obj === null || obj === undefined) return [];
  const errs = validateLabels(obj.matchLabels ?? {}, `${path}.matchLabels`);
  (obj.matchExpressions ?? []).forEach((e, i) => {
    const p = `${path}.matchExpressions[${i}]`;
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0)
          errs.push(fieldErrors.required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0)
          errs.push(
            fieldErrors.forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
          );
        break;
      default:
        errs.push(fieldErrors.invalid(`${p}.operator`, e.operator, 'not a valid selector operator'));
    }
    errs.push(...validateQualifiedName(e.key, `${p}.key`));
    values.forEach((v, j) => {
      for (const detail of isValidLabelValue(v)) errs.push(fieldErrors.invalid(`${p}.values[${j}]`, v, detail));
    });
  });
  return errs;
}
