/** Validation results; only the generic store turns them into a 422 `Invalid` Status. */
export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid';

export interface FieldError {
  path: string;
  type: FieldErrorType;
  /** The offending value, when the message shows it. */
  value?: unknown;
  detail?: string;
}

const LABELS: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueTypeInvalid: 'Invalid value',
};

function showValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null) return 'null';
  return JSON.stringify(v);
}

/** Kubernetes' message for one field error without the path: `Invalid value: "X": detail`. */
export function fieldErrorBody(e: FieldError): string {
  const label = LABELS[e.type];
  const showsValue =
    'value' in e &&
    e.type !== 'FieldValueRequired' &&
    e.type !== 'FieldValueForbidden' &&
    e.type !== 'FieldValueTooMany';
  let s = label;
  if (showsValue) s += `: ${showValue(e.value)}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

export function fieldErrorMessage(e: FieldError): string {
  return `${e.path}: ${fieldErrorBody(e)}`;
}

export const fieldErrors = {
  required: (path: string, detail?: string): FieldError => ({ path, type: 'FieldValueRequired', detail }),
  invalid: (path: string, value: unknown, detail?: string): FieldError => ({
    path,
    type: 'FieldValueInvalid',
    value,
    detail,
  }),
  forbidden: (path: string, detail: string): FieldError => ({ path, type: 'FieldValueForbidden', detail }),
  notSupported: (path: string, value: unknown, allowed: string[]): FieldError => ({
    path,
    type: 'FieldValueNotSupported',
    value,
    detail: `supported values: ${allowed.map((a) => JSON.stringify(a)).join(', ')}`,
  }),
  duplicate: (path: string, value: unknown): FieldError => ({ path, type: 'FieldValueDuplicate', value }),
  tooLong: (path: string, value: unknown, max: number): FieldError => ({
    path,
    type: 'FieldValueTooLong',
    value,
    detail: `may not be more than ${max} bytes`,
  }),
  typeInvalid: (path: string, value: unknown, detail: string): FieldError => ({
    path,
    type: 'FieldValueTypeInvalid',
    value,
    detail,
  }),
};
