import { fieldErrors, serviceAccountTokenSecretKey, type ApiObject, type FieldError } from '@svc/api';
import type { Strategy } from '../strategy.js';
import { validateDataKeys, validateImmutable } from './config-map.js';

/** `stringData` is merged into `data` (base64) on every write and never stored. */
function mergeStringData(obj: ApiObject): void {
  const stringData = obj.stringData as Record<string, string> | undefined;
  if (stringData && typeof stringData === 'object') {
    const data = { ...(obj.data as Record<string, string> | undefined) };
    for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    obj.data = data;
  }
  delete obj.stringData;
}

const validate = (obj: ApiObject): FieldError[] => {
  const errs = validateDataKeys(
    [['data', obj.data as Record<string, string> | undefined]],
    (v) => Buffer.from(v, 'base64').length,
  );
  // As Kubernetes' ValidateSecret: a legacy token Secret names its account (the controller fills the rest).
  const account = serviceAccountTokenSecretKey('service-account.name');
  if (obj.type === serviceAccountTokenSecretKey('type') && !obj.metadata.annotations?.[account])
    errs.push(fieldErrors.required(`metadata.annotations[${account}]`));
  return errs;
};

export const secretStrategy: Strategy = {
  prepareForCreate(obj) {
    mergeStringData(obj);
    if (!obj.type) obj.type = 'Opaque';
  },
  prepareForUpdate(obj) {
    mergeStringData(obj);
    if (!obj.type) obj.type = 'Opaque';
  },
  validate,
  validateUpdate(obj, old) {
    const errs = [...validate(obj), ...validateImmutable(obj, old, ['data'])];
    if (obj.type !== old.type) errs.push(fieldErrors.invalid('type', obj.type, 'field is immutable'));
    return errs;
  },
};
