/**
 * Value validation of a custom resource against its OpenAPI schema, as Kubernetes runs it:
 * kube-openapi's SchemaValidator (the order of its validators, its messages, `in body`, paths
 * such as `spec.items[0].name` and `spec.labels.key`), its results turned into field errors as
 * apiextensions-apiserver does (Required, NotSupported for enums, TooLong, TooMany, TypeInvalid,
 * else Invalid; errors of anyOf/oneOf/allOf/not at the nil path). With a correlation to the old
 * object it ratchets as CRDValidationRatcheting: errors inside a correlated node that is
 * unchanged are dropped (`apiVersion` and `kind` at the root never ratchet).
 */
import { fieldErrors, type FieldError } from '@svc/api';
import { isJsonObject, jsonEqual } from '@svc/machinery';
import { Correlation } from './correlation.js';
import { formatCheck } from './formats.js';
import { child, shown } from './paths.js';
import { compilePattern } from './regex.js';
import { additionalPropertiesOf, isIntOrString, itemsOf, type JSONSchemaProps } from './types.js';

type Code =
  | 'InvalidType'
  | 'Required'
  | 'TooLong'
  | 'TooShort'
  | 'Pattern'
  | 'Enum'
  | 'MultipleOf'
  | 'Max'
  | 'Min'
  | 'Unique'
  | 'MaxItems'
  | 'MinItems'
  | 'TooFewProperties'
  | 'TooManyProperties'
  | 'UnallowedProperty'
  | 'MultipleOfMustBePositive';

type OpenApiError =
  | { code: Code; name: string; message: string; value?: unknown; valid?: number; values?: unknown[] }
  | { code: 'Composite'; message: string };

/** kube-openapi's Result: errors kept unique by message, and a match count to rank anyOf/oneOf branches. */
class Result {
  errors: OpenApiError[] = [];
  matchCount = 0;

  static of(e: OpenApiError): Result {
    const r = new Result();
    r.errors.push(e);
    return r;
  }

  add(e: OpenApiError): void {
    if (!this.errors.some((x) => x.message === e.message)) this.errors.push(e);
  }

  merge(...others: (Result | undefined)[]): this {
    for (const o of others) {
      if (!o) continue;
      for (const e of o.errors) this.add(e);
      this.matchCount += o.matchCount;
    }
    return this;
  }

  get valid(): boolean {
    return this.errors.length === 0;
  }
}

const IN = 'body';
const INT64_LIMIT = 2 ** 63;

/** A JSON number is an integer when it is whole and within int64, as Go decodes it. */
function isIntegerNumber(v: number): boolean {
  return Number.isInteger(v) && Math.abs(v) < INT64_LIMIT;
}

/** Go's `%v` of a float64. */
export function goFloat(v: number): string {
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : v < 0 ? '-Inf' : 'NaN';
  const abs = Math.abs(v);
  if (v !== 0 && (abs < 1e-4 || abs >= 1e21)) {
    return v.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  }
  return String(v);
}

/** Go's `%v` of a decoded JSON value (enum lists in messages). */
function goValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'number') return goFloat(v);
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (isJsonObject(v)) {
    const keys = Object.keys(v).sort();
    return `map[${keys.map((k) => `${k}:${goValue(v[k])}`).join(' ')}]`;
  }
  return String(v);
}

function typeError(name: string, typeName: string, value: unknown): OpenApiError {
  const msg =
    typeof value === 'string'
      ? `${name} in ${IN} must be of type ${typeName}: ${JSON.stringify(value)}`
      : `${name} in ${IN} must be of type ${typeName}`;
  return { code: 'InvalidType', name, message: msg, value };
}

/** What the type validator sees: the schema's types (int-or-string is both) and a supported format. */
function typesOf(s: JSONSchemaProps): string[] {
  if (isIntOrString(s)) return ['integer', 'string'];
  return s.type ? [s.type] : [];
}

function supportedFormat(s: JSONSchemaProps): string {
  return formatCheck(s.format) ? (s.format ?? '') : '';
}

function infoFor(data: unknown): [string, string] {
  if (typeof data === 'boolean') return ['boolean', ''];
  if (typeof data === 'string') return ['string', ''];
  if (typeof data === 'number') return isIntegerNumber(data) ? ['integer', 'int64'] : ['number', 'double'];
  if (Array.isArray(data)) return ['array', ''];
  return ['object', ''];
}

function validateType(s: JSONSchemaProps, data: unknown, name: string): Result | undefined {
  const types = typesOf(s);
  const format = supportedFormat(s);
  if (data === null || data === undefined) {
    if (types.length > 0 && !types.includes('null') && !s.nullable)
      return Result.of(typeError(name, types.join(','), 'null'));
    return undefined;
  }
  const [schType, fmt] = infoFor(data);
  const isNumeric = types.includes('number') || types.includes('integer');
  const isFloatInt = schType === 'number' && Number.isSafeInteger(data) && types.includes('integer');
  const isIntFloat = schType === 'integer' && types.includes('number');
  const stringLike = typeof data === 'string' || Array.isArray(data);
  if (!stringLike && format !== '' && !(types.includes(schType) || format === fmt || isFloatInt || isIntFloat)) {
    return Result.of(typeError(name, format, fmt));
  }
  if (!isNumeric && format !== '' && stringLike) return undefined;
  if (!(types.includes(schType) || isFloatInt || isIntFloat))
    return Result.of(typeError(name, types.join(','), schType));
  return undefined;
}

/** One node (kube-openapi's SchemaValidator.Validate). */
interface Node {
  s: JSONSchemaProps;
  data: unknown;
  /** The path as kube-openapi names it: `spec.items[0]`, empty at the root. */
  name: string;
  corr?: Correlation;
}

function validateNode(n: Node): Result {
  const r = new Result();
  const { s, data, name } = n;
  if (data === null || data === undefined) {
    r.merge(validateType(s, data, name), validateEnum(s, data, name));
    return r;
  }
  const step = (x: Result | undefined) => {
    r.merge(x);
    r.matchCount++;
  };
  if (typesOf(s).length > 0 || supportedFormat(s) !== '') step(validateType(s, data, name));
  step(validateJunctors(n));
  if (typeof data === 'string') {
    step(validateString(s, data, name));
    if (supportedFormat(s) !== '') step(validateFormat(s, data, name));
  }
  if (typeof data === 'number') step(validateNumber(s, data, name));
  if (Array.isArray(data)) step(validateArray(n, data));
  step(validateEnum(s, data, name));
  if (isJsonObject(data)) step(validateObject(n, data));
  r.matchCount++;
  return r;
}

/** A property or item validator: ratcheted when it correlates with an unchanged old value. */
function validateChild(n: Node): Result {
  const r = validateNode(n);
  if (n.corr && !r.valid && n.corr.unchanged()) {
    const kept = new Result();
    kept.matchCount = r.matchCount;
    return kept;
  }
  return r;
}

function composite(message: string): OpenApiError {
  return { code: 'Composite', message };
}

function validateJunctors(n: Node): Result {
  const main = new Result();
  const { s, name } = n;
  const sub = (x: JSONSchemaProps) => validateNode({ ...n, s: x });
  const q = JSON.stringify(name);
  if (s.anyOf && s.anyOf.length > 0) {
    let best: Result | undefined;
    let first: Result | undefined;
    for (const x of s.anyOf) {
      const r = sub(x);
      if (r.valid) {
        best = undefined;
        first = r;
        break;
      }
      if (!best || r.matchCount > best.matchCount) best = r;
    }
    if (!first) main.add(composite(`${q} must validate at least one schema (anyOf)`));
    main.merge(best ?? first);
  }
  if (s.oneOf && s.oneOf.length > 0) {
    let best: Result | undefined;
    let first: Result | undefined;
    let validated = 0;
    for (const x of s.oneOf) {
      const r = sub(x);
      if (r.valid) {
        validated++;
        best = undefined;
        first ??= r;
        continue;
      }
      if (validated === 0 && (!best || r.matchCount > best.matchCount)) best = r;
    }
    if (validated !== 1) {
      const more = validated === 0 ? 'Found none valid' : `Found ${validated} valid alternatives`;
      main.add(composite(`${q} must validate one and only one schema (oneOf). ${more}`));
      main.merge(best);
    } else {
      main.merge(first);
    }
  }
  if (s.allOf && s.allOf.length > 0) {
    let validated = 0;
    for (const x of s.allOf) {
      const r = sub(x);
      if (r.valid) validated++;
      main.merge(r);
    }
    if (validated !== s.allOf.length) {
      main.add(composite(`${q} must validate all the schemas (allOf)${validated === 0 ? '. None validated' : ''}`));
    }
  }
  if (s.not && sub(s.not).valid) main.add(composite(`${q} must not validate the schema (not)`));
  main.matchCount++;
  return main;
}

function validateString(s: JSONSchemaProps, data: string, name: string): Result | undefined {
  const length = [...data].length;
  if (s.maxLength !== undefined && length > s.maxLength) {
    const message = `${name} in ${IN} should be at most ${s.maxLength} chars long`;
    return Result.of({ code: 'TooLong', name, message, value: data, valid: s.maxLength });
  }
  if (s.minLength !== undefined && length < s.minLength) {
    const message = `${name} in ${IN} should be at least ${s.minLength} chars long`;
    return Result.of({ code: 'TooShort', name, message, value: data, valid: s.minLength });
  }
  if (s.pattern) {
    const re = compilePattern(s.pattern);
    const shownPattern = re instanceof Error ? `${s.pattern}, but pattern is invalid: ${re.message}` : s.pattern;
    if (re instanceof Error || !re.test(data)) {
      return Result.of({
        code: 'Pattern',
        name,
        message: `${name} in ${IN} should match '${shownPattern}'`,
        value: data,
      });
    }
  }
  return undefined;
}

function validateFormat(s: JSONSchemaProps, data: string, name: string): Result | undefined {
  const check = formatCheck(s.format);
  return check && !check(data) ? Result.of(typeError(name, s.format ?? '', data)) : undefined;
}

/** swag.IsFloat64AJSONInteger: whole within 2^53, allowing a relative error of 1e-9. */
function isJsonInteger(f: number): boolean {
  if (!Number.isFinite(f) || Math.abs(f) > 2 ** 53 - 1) return false;
  const g = Math.trunc(f);
  if (f === g) return true;
  const diff = Math.abs(f - g);
  if (g === 0) return diff < 1e-9 * Number.MIN_VALUE;
  return diff / Math.min(Math.abs(f) + Math.abs(g), Number.MAX_VALUE) < 1e-9;
}

function validateNumber(s: JSONSchemaProps, data: number, name: string): Result {
  const res = new Result();
  const isInt = isIntegerNumber(data);
  const bound = (b: number) => (isInt ? Math.trunc(b) : b);
  if (s.multipleOf !== undefined) {
    const factor = bound(s.multipleOf);
    if (factor <= 0) {
      const message = `factor MultipleOf declared for ${name} must be positive: ${goFloat(factor)}`;
      res.add({ code: 'MultipleOfMustBePositive', name, message, value: factor });
    } else {
      const ok = isInt ? data % factor === 0 : isJsonInteger(factor < 1 ? (1 / factor) * data : data / factor);
      if (!ok) {
        const message = `${name} in ${IN} should be a multiple of ${goFloat(factor)}`;
        res.add({ code: 'MultipleOf', name, message, value: data });
      }
    }
  }
  if (s.minimum !== undefined) {
    const min = bound(s.minimum);
    const excl = s.exclusiveMinimum === true;
    if (excl ? data <= min : data < min) {
      const message = `${name} in ${IN} should be greater than ${excl ? '' : 'or equal to '}${goFloat(min)}`;
      res.add({ code: 'Min', name, message, value: data });
    }
  }
  if (s.maximum !== undefined) {
    const max = bound(s.maximum);
    const excl = s.exclusiveMaximum === true;
    if (excl ? data >= max : data > max) {
      const message = `${name} in ${IN} should be less than ${excl ? '' : 'or equal to '}${goFloat(max)}`;
      res.add({ code: 'Max', name, message, value: data });
    }
  }
  res.matchCount++;
  return res;
}

function validateArray(n: Node, data: unknown[]): Result {
  const { s, name } = n;
  const res = new Result();
  const items = itemsOf(s);
  if (items) {
    data.forEach((v: unknown, i) => {
      res.merge(validateChild({ s: items, data: v, name: `${name}[${i}]`, corr: n.corr?.index(i) }));
    });
  }
  if (s.minItems !== undefined && data.length < s.minItems) {
    const message = `${name} in ${IN} should have at least ${s.minItems} items`;
    res.add({ code: 'MinItems', name, message, value: data.length, valid: s.minItems });
  }
  if (s.maxItems !== undefined && data.length > s.maxItems) {
    const message = `${name} in ${IN} should have at most ${s.maxItems} items`;
    res.add({ code: 'MaxItems', name, message, value: data.length, valid: s.maxItems });
  }
  if (s.uniqueItems && data.some((v, i) => data.slice(0, i).some((u) => jsonEqual(u, v)))) {
    res.add({ code: 'Unique', name, message: `${name} in ${IN} shouldn't contain duplicates` });
  }
  res.matchCount++;
  return res;
}

function validateEnum(s: JSONSchemaProps, data: unknown, name: string): Result | undefined {
  if (!s.enum || s.enum.length === 0) return undefined;
  if (data !== null && data !== undefined && s.enum.some((e) => e !== null && jsonEqual(e, data))) return undefined;
  const message = `${name} in ${IN} should be one of ${goValue(s.enum)}`;
  return Result.of({ code: 'Enum', name, message, value: data ?? null, values: s.enum });
}

function validateObject(n: Node, data: Record<string, unknown>): Result {
  const { s, name } = n;
  const res = new Result();
  const count = Object.keys(data).length;
  if (s.minProperties !== undefined && count < s.minProperties) {
    const message = `${name} in ${IN} should have at least ${s.minProperties} properties`;
    res.add({ code: 'TooFewProperties', name, message, value: count, valid: s.minProperties });
  }
  if (s.maxProperties !== undefined && count > s.maxProperties) {
    const message = `${name} in ${IN} should have at most ${s.maxProperties} properties`;
    res.add({ code: 'TooManyProperties', name, message, value: count, valid: s.maxProperties });
  }
  const props = s.properties ?? {};
  const childCorr = (k: string) => (name === '' && (k === 'kind' || k === 'apiVersion') ? undefined : n.corr?.key(k));
  if (s.additionalProperties === false) {
    for (const k of Object.keys(data)) {
      if (!Object.hasOwn(props, k)) {
        res.add({
          code: 'UnallowedProperty',
          name,
          message: `${name}.${k} in ${IN} is a forbidden property`,
          value: k,
        });
      }
    }
  } else {
    const ap = additionalPropertiesOf(s);
    if (ap) {
      for (const [k, v] of Object.entries(data)) {
        if (!Object.hasOwn(props, k))
          res.merge(validateChild({ s: ap, data: v, name: `${name}.${k}`, corr: childCorr(k) }));
      }
    }
  }
  for (const [k, ps] of Object.entries(props)) {
    if (!Object.hasOwn(data, k)) continue;
    res.merge(validateChild({ s: ps, data: data[k], name: name === '' ? k : `${name}.${k}`, corr: childCorr(k) }));
  }
  for (const k of s.required ?? []) {
    if (!Object.hasOwn(data, k)) {
      const rName = `${name}.${k}`;
      res.add({ code: 'Required', name: rName, message: `${rName} in ${IN} is required` });
    }
  }
  return res;
}

/** Kubernetes' kubeOpenAPIResultToFieldErrors: `base` is the field path of the validated value. */
function toFieldErrors(base: string, errors: OpenApiError[]): FieldError[] {
  return errors.map((e): FieldError => {
    if (e.code === 'Composite') return fieldErrors.invalid(shown(base), '', e.message);
    const path = shown(e.name !== '' && e.name !== '.' ? child(base, e.name.replace(/^\./, '')) : base);
    const value = e.value ?? '';
    switch (e.code) {
      case 'Required':
        return fieldErrors.required(path);
      case 'Enum':
        return fieldErrors.notSupported(
          path,
          e.value,
          (e.values ?? []).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
        );
      case 'TooLong':
        return { path, type: 'FieldValueTooLong', detail: `may not be more than ${e.valid ?? -1} bytes` };
      case 'MaxItems':
      case 'TooManyProperties':
        return { path, type: 'FieldValueTooMany', value, detail: `must have at most ${e.valid ?? -1} items` };
      case 'InvalidType':
        return fieldErrors.typeInvalid(path, value, e.message);
      default:
        return fieldErrors.invalid(path, value, e.message);
    }
  });
}

/** The schema errors of `value` at field path `path` ('' for a whole object). */
export function openApiErrors(schema: JSONSchemaProps, value: unknown, path: string): FieldError[] {
  return toFieldErrors(path, validateNode({ s: schema, data: value, name: '' }).errors);
}

/** As `openApiErrors`, ratcheting unchanged values against `old`. */
export function openApiUpdateErrors(
  schema: JSONSchemaProps,
  change: { value: unknown; old: unknown },
  path: string,
): FieldError[] {
  const corr = new Correlation(change.value, change.old, schema);
  return toFieldErrors(path, validateChild({ s: schema, data: change.value, name: '', corr }).errors);
}
