/**
 * TypeMeta and ObjectMeta of embedded resources (`embedded-resource: true`), as Kubernetes'
 * schema/objectmeta Validate: `apiVersion` and `kind` are required strings (kind a DNS-1035
 * label in any case), metadata decodes as ObjectMeta and passes ObjectMeta validation with
 * path-segment names. The resource root is not checked here (the store validates it).
 * Checked of ObjectMeta: name, generateName, namespace, labels, annotations, finalizers,
 * generation; not checked: ownerReferences and managedFields.
 */
import { fieldErrors, type FieldError } from '@svc/api';
import {
  isDns1035Label,
  isJsonObject,
  validateAnnotations,
  validateDnsLabel,
  validateGenerateName,
  validateLabels,
  validatePathSegmentName,
  validateQualifiedName,
  nameIsPathSegment,
  type JsonObject,
} from '@svc/machinery';
import { additionalPropertiesOf, isEmbeddedResource, itemsOf, type JSONSchemaProps } from './types.js';
import { child, index, key } from './paths.js';

const STANDARD_FINALIZERS = ['kubernetes', 'orphan', 'foregroundDeletion'];

/** Errors of every embedded resource in `value` (at `path`), `value` included when its schema is one. */
export function validateEmbeddedResources(schema: JSONSchemaProps, value: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  walk(value, schema, { path, errs });
  return errs;
}

interface Walk {
  path: string;
  errs: FieldError[];
}

function walk(x: unknown, s: JSONSchemaProps | undefined, w: Walk): void {
  if (!s) return;
  if (Array.isArray(x)) {
    const items = itemsOf(s);
    x.forEach((v: unknown, i) => walk(v, items, { ...w, path: index(w.path, i) }));
    return;
  }
  if (!isJsonObject(x)) return;
  if (isEmbeddedResource(s)) w.errs.push(...embeddedResourceErrors(x, w.path));
  for (const [k, v] of Object.entries(x)) {
    const prop = s.properties?.[k];
    if (prop) walk(v, prop, { ...w, path: child(w.path, k) });
    else if (s.additionalProperties !== undefined) {
      walk(v, additionalPropertiesOf(s), { ...w, path: key(w.path, k) });
    }
  }
}

/** The checks of one embedded resource object at `path`. */
export function embeddedResourceErrors(x: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!Object.hasOwn(x, 'apiVersion')) errs.push(fieldErrors.required(child(path, 'apiVersion'), 'must not be empty'));
  if (!Object.hasOwn(x, 'kind')) errs.push(fieldErrors.required(child(path, 'kind'), 'must not be empty'));
  for (const [k, v] of Object.entries(x)) {
    const p = child(path, k);
    if (k === 'apiVersion') errs.push(...apiVersionErrors(v, p));
    else if (k === 'kind') errs.push(...kindErrors(v, p));
    else if (k === 'metadata') errs.push(...objectMetaErrors(v, p));
  }
  return errs;
}

function apiVersionErrors(v: unknown, p: string): FieldError[] {
  if (typeof v !== 'string') return [fieldErrors.invalid(p, v, 'must be a string')];
  if (v === '') return [fieldErrors.invalid(p, v, 'must not be empty')];
  if (v !== '/' && v.split('/').length > 2) {
    return [fieldErrors.invalid(p, v, `unexpected GroupVersion string: ${v}`)];
  }
  return [];
}

function kindErrors(v: unknown, p: string): FieldError[] {
  if (typeof v !== 'string') return [fieldErrors.invalid(p, v, 'must be a string')];
  if (v === '') return [fieldErrors.invalid(p, v, 'must not be empty')];
  const msgs = isDns1035Label(v.toLowerCase());
  if (msgs.length === 0) return [];
  return [fieldErrors.invalid(p, v, `may have mixed case, but should otherwise match: ${msgs.join(',')}`)];
}

type GoType = 'string' | 'int64' | 'map[string]string' | '[]string';

const META_FIELDS: Record<string, GoType> = {
  name: 'string',
  generateName: 'string',
  namespace: 'string',
  generation: 'int64',
  labels: 'map[string]string',
  annotations: 'map[string]string',
  finalizers: '[]string',
};

function jsonKind(v: unknown): string {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'number';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'string' ? 'string' : 'object';
}

/** Go's encoding/json message when a metadata field does not decode, or undefined. */
function decodeError(field: string, v: unknown, t: GoType): string | undefined {
  if (v === null) return undefined;
  const bad = (got: unknown, type: string) =>
    `json: cannot unmarshal ${jsonKind(got)} into Go struct field ObjectMeta.${field} of type ${type}`;
  switch (t) {
    case 'string':
      return typeof v === 'string' ? undefined : bad(v, t);
    case 'int64':
      return typeof v === 'number' && Number.isInteger(v) ? undefined : bad(v, t);
    case 'map[string]string': {
      if (!isJsonObject(v)) return bad(v, t);
      const wrong = Object.values(v).find((e) => e !== null && typeof e !== 'string');
      return wrong === undefined ? undefined : bad(wrong, 'string');
    }
    case '[]string': {
      if (!Array.isArray(v)) return bad(v, t);
      const wrong = v.find((e: unknown) => e !== null && typeof e !== 'string');
      return wrong === undefined ? undefined : bad(wrong, 'string');
    }
  }
}

function objectMetaErrors(v: unknown, p: string): FieldError[] {
  if (v === null) return [];
  if (!isJsonObject(v)) {
    return [fieldErrors.invalid(p, v, `json: cannot unmarshal ${jsonKind(v)} into Go value of type v1.ObjectMeta`)];
  }
  for (const [f, t] of Object.entries(META_FIELDS)) {
    const err = Object.hasOwn(v, f) ? decodeError(f, v[f], t) : undefined;
    if (err) return [fieldErrors.invalid(p, v, err)];
  }
  const str = (f: string) => (typeof v[f] === 'string' ? (v[f] as string) : '');
  const errs: FieldError[] = [];
  errs.push(...validateGenerateName(str('generateName'), child(p, 'generateName'), nameIsPathSegment));
  // Kubernetes validates an embedded object without a name as if it were named.
  errs.push(...validatePathSegmentName(str('name') || 'fakename', child(p, 'name')));
  if (str('namespace') !== '') errs.push(...validateDnsLabel(str('namespace'), child(p, 'namespace')));
  const generation = v.generation;
  if (typeof generation === 'number' && generation < 0) {
    errs.push(fieldErrors.invalid(child(p, 'generation'), generation, 'must be greater than or equal to 0'));
  }
  if (isJsonObject(v.labels)) errs.push(...validateLabels(v.labels as Record<string, string>, child(p, 'labels')));
  if (isJsonObject(v.annotations)) {
    errs.push(...validateAnnotations(v.annotations as Record<string, string>, child(p, 'annotations')));
  }
  if (Array.isArray(v.finalizers)) errs.push(...finalizerErrors(v.finalizers as string[], child(p, 'finalizers')));
  return errs;
}

function finalizerErrors(finalizers: string[], p: string): FieldError[] {
  const errs: FieldError[] = [];
  finalizers.forEach((f, i) => {
    const fp = index(p, i);
    const own = validateQualifiedName(f, fp);
    errs.push(...own);
    if (own.length === 0 && !f.includes('/') && !STANDARD_FINALIZERS.includes(f)) {
      errs.push(fieldErrors.forbidden(fp, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  });
  return errs;
}
