/**
 * Defaulting of custom resources as Kubernetes does it on create, update and read from storage
 * (apiextensions-apiserver schema/defaulting): first a `null` is dropped where the schema is not
 * nullable and has no default; then every missing property with a default gets a copy of it, and
 * so does a `null` where the schema is not nullable, recursively, in list items and in
 * additionalProperties values too (defaults of defaults included).
 */
import { cloneJson, isJsonObject } from '@svc/machinery';
import { additionalPropertiesOf, itemsOf, type JSONSchemaProps } from './types.js';

function hasDefault(s: JSONSchemaProps): boolean {
  return s.default !== undefined && s.default !== null;
}

function isNonNullableNull(x: unknown, s: JSONSchemaProps | undefined): s is JSONSchemaProps {
  return x === null && s !== undefined && !s.nullable;
}

/** The schema of field `k`: its property, else the additionalProperties schema. */
function fieldSchema(s: JSONSchemaProps | undefined, k: string): JSONSchemaProps | undefined {
  if (!s) return undefined;
  return s.properties?.[k] ?? additionalPropertiesOf(s);
}

/** Drops `null` values whose schema is neither nullable nor defaulted (in place). */
export function pruneNonNullableNulls(x: unknown, s: JSONSchemaProps | undefined): void {
  if (Array.isArray(x)) {
    const items = s && itemsOf(s);
    for (const v of x) pruneNonNullableNulls(v, items);
    return;
  }
  if (!isJsonObject(x)) return;
  for (const [k, v] of Object.entries(x)) {
    const sub = fieldSchema(s, k);
    if (isNonNullableNull(v, sub) && !hasDefault(sub)) delete x[k];
    else pruneNonNullableNulls(v, sub);
  }
}

/** Sets defaults in place (Kubernetes' structural defaulting.Default). */
export function setDefaults(x: unknown, s: JSONSchemaProps | undefined): void {
  if (!s) return;
  if (Array.isArray(x)) {
    const items = itemsOf(s);
    x.forEach((v: unknown, i) => {
      if (isNonNullableNull(v, items)) x[i] = cloneJson(items.default ?? null);
      setDefaults(x[i], items);
    });
    return;
  }
  if (!isJsonObject(x)) return;
  for (const [k, prop] of Object.entries(s.properties ?? {})) {
    if (!hasDefault(prop)) continue;
    if (!Object.hasOwn(x, k) || isNonNullableNull(x[k], prop)) x[k] = cloneJson(prop.default);
  }
  for (const k of Object.keys(x)) {
    const prop = s.properties?.[k];
    if (prop) {
      setDefaults(x[k], prop);
    } else if (s.additionalProperties !== undefined) {
      const ap = additionalPropertiesOf(s);
      if (isNonNullableNull(x[k], ap)) x[k] = cloneJson(ap.default ?? null);
      setDefaults(x[k], ap);
    }
  }
}

/**
 * Prunes non-nullable nulls, then applies the schema's defaults to `value`, in place; returns
 * `value`. The schema is the version's `openAPIV3Schema` (defaults are never set in root
 * `apiVersion`, `kind` or `metadata`).
 */
export function applyDefaults<T>(schema: JSONSchemaProps, value: T): T {
  pruneNonNullableNulls(value, schema);
  setDefaults(value, schema);
  return value;
}
