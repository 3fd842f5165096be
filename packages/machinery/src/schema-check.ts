/**
 * Checks a decoded JSON value against a `Schema` from the catalog: types, enums, formats,
 * required fields, and fields the schema does not know. Paths follow Kubernetes' strict
 * decoding style: `spec.containers[0].image`, map entries as `metadata.labels.app`.
 * `null` stands for an absent field: it is never a type error, but does not satisfy `required`.
 */
import { fieldErrors, type FieldError, type Schema, type StringSchema } from '@svc/api';
import { cloneJson, isJsonObject, setOwn, type JsonObject } from './merge-patch.js';

export interface SchemaCheckResult {
  errors: FieldError[];
  /** Paths of fields no schema describes, in document order; their contents are not checked. */
  unknownFields: string[];
  /** A copy of the input without the unknown fields (as `pruneUnknownFields`). */
  value: unknown;
}

export interface PruneResult {
  value: unknown;
  /** Paths of the fields removed. */
  pruned: string[];
}

function childPath(parent: string, key: string): string {
  return parent === '' ? key : `${parent}.${key}`;
}

function indexPath(parent: string, i: number): string {
  return `${parent}[${i}]`;
}

/** The JSON type name of a value, as shown in type errors. */
export function jsonTypeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const INT64_LIMIT = 2 ** 63;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/;

/** RFC 3339 as Go's `time.Parse(time.RFC3339, s)` accepts it (what metav1.Time decodes). */
export function isRfc3339DateTime(s: string): boolean {
  const m = RFC3339.exec(s);
  if (!m) return false;
  const [year, month, day, hour, min, sec] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  const offsetOk = m[8] === 'Z' || (Number(m[9]) <= 23 && Number(m[10]) <= 59);
  return (
    month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && min <= 59 && sec <= 59 && offsetOk
  );
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Standard padded base64 (Go's `base64.StdEncoding`, which skips CR and LF), as `[]byte` fields decode. */
export function isBase64(s: string): boolean {
  return BASE64.test(s.replace(/[\r\n]/g, ''));
}

function typeError(path: string, value: unknown, expected: string): FieldError {
  return fieldErrors.typeInvalid(path, jsonTypeOf(value), `must be of type ${expected}`);
}

class Checker {
  readonly errors: FieldError[] = [];
  readonly unknownFields: string[] = [];

  check(value: unknown, schema: Schema, path: string): void {
    if (value === null || value === undefined) return;
    switch (schema.type) {
      case 'any':
        return;
      case 'string':
        return this.string(value, schema, path);
      case 'boolean':
        if (typeof value !== 'boolean') this.errors.push(typeError(path, value, 'boolean'));
        return;
      case 'number':
        if (typeof value !== 'number') this.errors.push(typeError(path, value, 'number'));
        return;
      case 'integer':
        return this.integer(value, schema.format === 'int32' ? 'int32' : 'int64', path);
      case 'int-or-string':
        if (typeof value === 'string') return;
        if (typeof value !== 'number' || !Number.isInteger(value))
          this.errors.push(typeError(path, value, 'int-or-string'));
        return;
      case 'array':
        if (!Array.isArray(value)) {
          this.errors.push(typeError(path, value, 'array'));
          return;
        }
        value.forEach((item: unknown, i) => this.check(item, schema.items, indexPath(path, i)));
        return;
      case 'map':
        if (!isJsonObject(value)) {
          this.errors.push(typeError(path, value, 'object'));
          return;
        }
        for (const [k, v] of Object.entries(value)) this.check(v, schema.values, childPath(path, k));
        return;
      case 'object': {
        if (!isJsonObject(value)) {
          this.errors.push(typeError(path, value, 'object'));
          return;
        }
        for (const [k, v] of Object.entries(value)) {
          const child = Object.hasOwn(schema.properties, k) ? schema.properties[k] : undefined;
          if (child) this.check(v, child, childPath(path, k));
          else if (!schema.preserveUnknownFields) this.unknownFields.push(childPath(path, k));
        }
        for (const name of schema.required ?? []) {
          const v = Object.hasOwn(value, name) ? value[name] : undefined;
          if (v === undefined || v === null) this.errors.push(fieldErrors.required(childPath(path, name)));
        }
        return;
      }
    }
  }

  private string(value: unknown, { enum: allowed, format }: StringSchema, path: string): void {
    if (typeof value !== 'string') {
      this.errors.push(typeError(path, value, 'string'));
    } else if (allowed && !allowed.includes(value)) {
      this.errors.push(fieldErrors.notSupported(path, value, [...allowed]));
    } else if (format === 'date-time' && !isRfc3339DateTime(value)) {
      this.errors.push(fieldErrors.invalid(path, value, 'must be an RFC 3339 date-time (e.g. 2006-01-02T15:04:05Z)'));
    } else if (format === 'byte' && !isBase64(value)) {
      this.errors.push(fieldErrors.invalid(path, value, 'must be base64-encoded'));
    }
  }

  private integer(value: unknown, format: 'int32' | 'int64', path: string): void {
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      this.errors.push(typeError(path, value, 'integer'));
    } else if (
      format === 'int32' ? value < INT32_MIN || value > INT32_MAX : value < -INT64_LIMIT || value >= INT64_LIMIT
    ) {
      this.errors.push(fieldErrors.typeInvalid(path, value, `must be of type ${format}`));
    }
  }
}

/**
 * Checks `value` against `schema`; `path` is where `value` sits (empty for a whole object).
 * The input is not modified.
 */
export function checkSchema(value: unknown, schema: Schema, path = ''): SchemaCheckResult {
  const c = new Checker();
  c.check(value, schema, path);
  return { errors: c.errors, unknownFields: c.unknownFields, value: pruneUnknownFields(value, schema, path).value };
}

/** A copy of `value` without the fields `schema` does not describe. Mistyped values are kept as they are. */
export function pruneUnknownFields(value: unknown, schema: Schema, path = ''): PruneResult {
  const pruned: string[] = [];
  function prune(value: unknown, schema: Schema, path: string): unknown {
    if (schema.type === 'array' && Array.isArray(value)) {
      return value.map((item: unknown, i) => prune(item, schema.items, indexPath(path, i)));
    }
    if (schema.type === 'map' && isJsonObject(value)) {
      const out: JsonObject = {};
      for (const [k, v] of Object.entries(value)) setOwn(out, k, prune(v, schema.values, childPath(path, k)));
      return out;
    }
    if (schema.type === 'object' && isJsonObject(value)) {
      const out: JsonObject = {};
      for (const [k, v] of Object.entries(value)) {
        const child = Object.hasOwn(schema.properties, k) ? schema.properties[k] : undefined;
        if (child) setOwn(out, k, prune(v, child, childPath(path, k)));
        else if (schema.preserveUnknownFields) setOwn(out, k, cloneJson(v));
        else pruned.push(childPath(path, k));
      }
      return out;
    }
    return cloneJson(value);
  }
  return { value: prune(value, schema, path), pruned };
}

/**
 * Go's decoding of a typed list: a `null` item of a list of structs becomes the empty struct
 * (`[]ServicePort{nil}` cannot exist in Go). Built-in kinds' values take that shape before
 * defaulting and validation; custom resources keep `null` (they are unstructured in Kubernetes).
 * Returns the same value when nothing changes.
 */
export function nullListItemsAsEmptyObjects(value: unknown, schema: Schema): unknown {
  if (schema.type === 'array' && Array.isArray(value)) {
    let changed = false;
    const items = value.map((item: unknown) => {
      const next =
        item === null && schema.items.type === 'object' ? {} : nullListItemsAsEmptyObjects(item, schema.items);
      if (next !== item) changed = true;
      return next;
    });
    return changed ? items : value;
  }
  if (!isJsonObject(value)) return value;
  if (schema.type !== 'object' && schema.type !== 'map') return value;
  let out: JsonObject | undefined;
  for (const [k, v] of Object.entries(value)) {
    const child =
      schema.type === 'map' ? schema.values : Object.hasOwn(schema.properties, k) ? schema.properties[k] : undefined;
    if (!child) continue;
    const next = nullListItemsAsEmptyObjects(v, child);
    if (next !== v) setOwn((out ??= { ...value }), k, next);
  }
  return out ?? value;
}
