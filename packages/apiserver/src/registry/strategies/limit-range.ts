import { randomUUID } from 'node:crypto';
import { fieldErrors, type ApiObject, type FieldError, type LimitRange, type LimitRangeItem } from '@svc/api';
import {
  Quantity,
  STANDARD_LIMIT_RANGE_TYPES,
  canonicalQuantity,
  isOvercommitAllowed,
  isQualifiedName,
  keyPath,
  quantityAt,
  validateContainerResourceName,
  validateResourceName,
} from '@svc/machinery';
import type { Strategy } from '../strategy.js';

type ListName = 'max' | 'min' | 'default' | 'defaultRequest' | 'maxLimitRequestRatio';
const LISTS: readonly ListName[] = ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'];

/** Every quantity written back in its canonical text, as Kubernetes re-encodes it. */
export function canonicalizeList(list: Record<string, unknown> | undefined): Record<string, string> | undefined {
  if (!list) return undefined;
  return Object.fromEntries(Object.entries(list).map(([k, v]) => [k, canonicalQuantity(v as string | number)]));
}

/**
 * Kubernetes' v1 defaults of a Container item: the default limit is the max, the default
 * request the default limit, else the min.
 */
function defaultItem(item: LimitRangeItem): void {
  for (const k of LISTS) {
    const v = canonicalizeList(item[k]);
    if (v) item[k] = v;
  }
  if (item.type !== 'Container') return;
  const def = { ...item.default };
  const defReq = { ...item.defaultRequest };
  for (const [k, v] of Object.entries(item.max ?? {})) def[k] ??= v;
  for (const [k, v] of Object.entries(def)) defReq[k] ??= v;
  for (const [k, v] of Object.entries(item.min ?? {})) defReq[k] ??= v;
  if (Object.keys(def).length > 0) item.default = def;
  if (Object.keys(defReq).length > 0) item.defaultRequest = defReq;
}

function prepare(obj: ApiObject): void {
  for (const item of (obj as LimitRange).spec?.limits ?? []) defaultItem(item);
}

/** `%f`: Go's default six decimals. */
function goFloat(n: number): string {
  return Number.isFinite(n) ? n.toFixed(6) : n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
}

function validateTypeName(value: string, path: string): FieldError[] {
  const errs = isQualifiedName(value).map((m) => fieldErrors.invalid(path, value, m));
  if (errs.length > 0) return errs;
  if (!value.includes('/') && !(STANDARD_LIMIT_RANGE_TYPES as readonly string[]).includes(value)) {
    errs.push(fieldErrors.invalid(path, value, 'must be a standard limit type or fully qualified'));
  }
  return errs;
}

/** Kubernetes' ValidateLimitRange, with its paths and messages (quantities shown in their canonical text). */
export function validateLimitRange(obj: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const seenTypes = new Set<string>();
  ((obj as LimitRange).spec?.limits ?? []).forEach((limit, i) => {
    const p = `spec.limits[${i}]`;
    const type = limit.type ?? '';
    errs.push(...validateTypeName(type, `${p}.type`));
    if (seenTypes.has(type)) errs.push(fieldErrors.duplicate(`${p}.type`, type));
    seenTypes.add(type);
    const nameCheck = type === 'Pod' || type === 'Container' ? validateContainerResourceName : validateResourceName;
    const values: Record<ListName, Map<string, Quantity>> = {
      max: new Map(),
      min: new Map(),
      default: new Map(),
      defaultRequest: new Map(),
      maxLimitRequestRatio: new Map(),
    };
    const keys = new Set<string>();
    const read = (list: ListName): void => {
      for (const [k, text] of Object.entries(limit[list] ?? {})) {
        const path = keyPath(`${p}.${list}`, k);
        errs.push(...nameCheck(k, path));
        keys.add(k);
        const q = quantityAt(text, path);
        if (q instanceof Quantity) values[list].set(k, q);
        else errs.push(q);
      }
    };
    read('max');
    read('min');
    if (type === 'Pod') {
      if (Object.keys(limit.default ?? {}).length > 0)
        errs.push(fieldErrors.forbidden(`${p}.default`, "may not be specified when `type` is 'Pod'"));
      if (Object.keys(limit.defaultRequest ?? {}).length > 0)
        errs.push(fieldErrors.forbidden(`${p}.defaultRequest`, "may not be specified when `type` is 'Pod'"));
    } else {
      read('default');
      read('defaultRequest');
    }
    if (type === 'PersistentVolumeClaim' && limit.min?.storage === undefined && limit.max?.storage === undefined) {
      errs.push(
        fieldErrors.required(
          `${p}.limits`,
          'either minimum or maximum storage value is required, but neither was provided',
        ),
      );
    }
    read('maxLimitRequestRatio');
    for (const k of [...keys].sort()) {
      const min = values.min.get(k);
      const max = values.max.get(k);
      const def = values.default.get(k);
      const defReq = values.defaultRequest.get(k);
      const ratio = values.maxLimitRequestRatio.get(k);
      const at = (list: ListName): string => keyPath(`${p}.${list}`, k);
      if (min && max && min.cmp(max) > 0)
        errs.push(fieldErrors.invalid(at('min'), `${min}`, `min value ${min} is greater than max value ${max}`));
      if (defReq && min && min.cmp(defReq) > 0) {
        errs.push(
          fieldErrors.invalid(
            at('defaultRequest'),
            `${defReq}`,
            `min value ${min} is greater than default request value ${defReq}`,
          ),
        );
      }
      if (defReq && max && defReq.cmp(max) > 0) {
        errs.push(
          fieldErrors.invalid(
            at('defaultRequest'),
            `${defReq}`,
            `default request value ${defReq} is greater than max value ${max}`,
          ),
        );
      }
      if (defReq && def && defReq.cmp(def) > 0) {
        errs.push(
          fieldErrors.invalid(
            at('defaultRequest'),
            `${defReq}`,
            `default request value ${defReq} is greater than default limit value ${def}`,
          ),
        );
      }
      if (def && min && min.cmp(def) > 0)
        errs.push(
          fieldErrors.invalid(at('default'), `${min}`, `min value ${min} is greater than default value ${def}`),
        );
      if (def && max && def.cmp(max) > 0)
        errs.push(
          fieldErrors.invalid(at('default'), `${max}`, `default value ${def} is greater than max value ${max}`),
        );
      if (ratio && ratio.cmp(Quantity.of(1)) < 0)
        errs.push(fieldErrors.invalid(at('maxLimitRequestRatio'), `${ratio}`, `ratio ${ratio} is less than 1`));
      if (ratio && min && max) {
        const limit = Number(max.milliValue()) / Number(min.milliValue());
        if (Number(ratio.milliValue()) / 1000 > limit) {
          errs.push(
            fieldErrors.invalid(
              at('maxLimitRequestRatio'),
              `${ratio}`,
              `ratio ${ratio} is greater than max/min = ${goFloat(limit)}`,
            ),
          );
        }
      }
      if (!isOvercommitAllowed(k) && def && defReq && def.cmp(defReq) !== 0) {
        errs.push(
          fieldErrors.invalid(
            at('defaultRequest'),
            `${defReq}`,
            `default value ${def} must equal to defaultRequest value ${defReq} in ${k}`,
          ),
        );
      }
    }
  });
  return errs;
}

/**
 * core/v1 LimitRange: a nameless one gets a UUID (before generateName is looked at, as in
 * Kubernetes), Container items get their defaults, quantities are canonical; PUT may create.
 */
export const limitRangeStrategy: Strategy = {
  prepareForCreate(obj) {
    if (!obj.metadata.name) obj.metadata.name = randomUUID();
    prepare(obj);
  },
  prepareForUpdate: (obj) => prepare(obj),
  validate: validateLimitRange,
  validateUpdate: (obj) => validateLimitRange(obj),
  allowCreateOnUpdate: true,
};
