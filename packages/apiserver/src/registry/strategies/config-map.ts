import { fieldErrors, type ApiObject, type FieldError } from '@svc/api';
import { validateConfigMapKey } from '@svc/machinery';
import type { Strategy } from '../strategy.js';

const MAX_TOTAL = 1024 * 1024;

/** Keys valid, no key in both maps, and the ConfigMap/Secret total-size limit (1 MiB). */
export function validateDataKeys(
  maps: Array<[string, Record<string, string> | undefined]>,
  sizeOf: (v: string) => number,
): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let total = 0;
  for (const [path, m] of maps) {
    for (const [k, v] of Object.entries(m ?? {})) {
      errs.push(...validateConfigMapKey(k, `${path}[${k}]`));
      if (seen.has(k)) errs.push(fieldErrors.invalid(`${path}[${k}]`, k, 'duplicate of key present in another map'));
      seen.add(k);
      total += sizeOf(v);
    }
  }
  if (total > MAX_TOTAL) errs.push(fieldErrors.tooLong('', '<omitted>', MAX_TOTAL));
  return errs;
}

/** `immutable: true` freezes the data and cannot be undone. */
export function validateImmutable(obj: ApiObject, old: ApiObject, fields: string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  if (obj.immutable !== true)
    errs.push(fieldErrors.forbidden('immutable', 'field is immutable when `immutable` is set'));
  for (const f of fields) {
    if (JSON.stringify(obj[f] ?? {}) !== JSON.stringify(old[f] ?? {}))
      errs.push(fieldErrors.forbidden(f, 'field is immutable when `immutable` is set'));
  }
  return errs;
}

const validate = (obj: ApiObject): FieldError[] =>
  validateDataKeys(
    [
      ['data', obj.data as Record<string, string> | undefined],
      ['binaryData', obj.binaryData as Record<string, string> | undefined],
    ],
    (v) => v.length,
  );

export const configMapStrategy: Strategy = {
  validate,
  validateUpdate: (obj, old) => [...validate(obj), ...validateImmutable(obj, old, ['data', 'binaryData'])],
  allowUnconditionalUpdate: true,
};
