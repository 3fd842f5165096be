/**
 * Uniqueness of `list-type: set` items and `list-type: map` keys (Kubernetes'
 * schema/listtype): the second occurrence of each repeated value is a `Duplicate value` (a map
 * list reports the key fields, `{}` for an item without them); a map list item that is not an
 * object is `must be an object for an array of list-type map`.
 */
import { fieldErrors, type FieldError } from '@svc/api';
import { canonicalJson, isJsonObject, type JsonObject } from '@svc/machinery';
import { additionalPropertiesOf, ext, itemsOf, listMapKeysOf, type JSONSchemaProps } from './types.js';
import { child, index, key } from './paths.js';

export function validateListSetsAndMaps(schema: JSONSchemaProps, value: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  walkObject(value, schema, { path, errs });
  return errs;
}

interface Walk {
  path: string;
  errs: FieldError[];
}

function walkObject(x: unknown, s: JSONSchemaProps, w: Walk): void {
  if (!isJsonObject(x)) return;
  const ap = additionalPropertiesOf(s);
  if (ap) for (const [k, v] of Object.entries(x)) walkValue(v, ap, { ...w, path: key(w.path, k) });
  if (s.properties) {
    for (const [k, v] of Object.entries(x)) {
      const sub = s.properties[k];
      if (sub) walkValue(v, sub, { ...w, path: child(w.path, k) });
    }
  }
}

function walkValue(x: unknown, s: JSONSchemaProps, w: Walk): void {
  if (Array.isArray(x)) walkArray(x, s, w);
  else walkObject(x, s, w);
}

function walkArray(x: unknown[], s: JSONSchemaProps, w: Walk): void {
  const lt = ext(s, 'list-type');
  if (lt === 'set') {
    for (const i of repeated(x)) w.errs.push(fieldErrors.duplicate(index(w.path, i), x[i]));
  } else if (lt === 'map') {
    w.errs.push(...listMapErrors(x, s, w.path));
  }
  const items = itemsOf(s);
  if (items) x.forEach((v: unknown, i) => walkValue(v, items, { ...w, path: index(w.path, i) }));
}

/** Indices of the second occurrence of each value that occurs more than once. */
function repeated(values: unknown[]): number[] {
  const seen = new Map<string, number>();
  const out: number[] = [];
  values.forEach((v, i) => {
    const k = v === undefined ? '\u0000unspecified' : canonicalJson(v);
    const n = seen.get(k) ?? 0;
    if (n === 1) out.push(i);
    seen.set(k, n + 1);
  });
  return out;
}

function listMapErrors(x: unknown[], s: JSONSchemaProps, path: string): FieldError[] {
  const bad = x.findIndex((v) => v !== null && !isJsonObject(v));
  if (bad >= 0)
    return [fieldErrors.invalid(index(path, bad), x[bad], 'must be an object for an array of list-type map')];
  if (x.length <= 1) return [];
  const keyFields = listMapKeysOf(s);
  const keys = x.map((v) => {
    const k: JsonObject = {};
    if (isJsonObject(v)) for (const f of keyFields) if (Object.hasOwn(v, f)) k[f] = v[f];
    return k;
  });
  return repeated(keys).map((i) => fieldErrors.duplicate(index(path, i), keys[i]));
}
