/**
 * A CRD's `openAPIV3Schema` as a schema of our DSL, so field checking, pruning, server-side
 * apply and the catalog treat a custom resource like a built-in type. The result carries the
 * structure Kubernetes prunes by and the merge markers: properties (an object), additionalProperties
 * (a map), items (a list, `atomic` unless `list-type` says `set` or `map` with its keys),
 * `map-type` (granular unless `atomic`), `preserve-unknown-fields` (inherited by list items, as
 * Kubernetes' pruning does), int-or-string, descriptions and defaults. Value rules (formats,
 * enums, required, bounds, patterns) stay with validate.ts. The root and every embedded resource
 * get `apiVersion`, `kind` and the full ObjectMeta schema of built-in types.
 */
import { objectMeta, objectSchema, s, type MapType, type ObjectSchema, type Schema } from '@svc/api';
import {
  additionalPropertiesOf,
  ext,
  isEmbeddedResource,
  isIntOrString,
  itemsOf,
  listMapKeysOf,
  preservesUnknownFields,
  type JSONSchemaProps,
} from './types.js';

const META_FIELDS = ['apiVersion', 'kind', 'metadata'];

interface Common {
  description?: string;
  default?: unknown;
}

function common(x: JSONSchemaProps): Common {
  const out: Common = {};
  if (x.description !== undefined) out.description = x.description;
  if (x.default !== undefined && x.default !== null) out.default = x.default;
  return out;
}

function mapTypeOf(x: JSONSchemaProps): MapType | undefined {
  const t = ext(x, 'map-type');
  return t === 'atomic' || t === 'granular' ? t : undefined;
}

function withoutMeta(props: Record<string, Schema>): Record<string, Schema> {
  return Object.fromEntries(Object.entries(props).filter(([k]) => !META_FIELDS.includes(k)));
}

function convertProperties(x: JSONSchemaProps): Record<string, Schema> {
  return Object.fromEntries(Object.entries(x.properties ?? {}).map(([k, v]) => [k, convert(v, false)]));
}

function convertObject(x: JSONSchemaProps, preserve: boolean): Schema {
  const structType = mapTypeOf(x);
  const opts = { ...common(x), ...(structType ? { structType } : {}) };
  if (isEmbeddedResource(x)) {
    const props = { apiVersion: s.str(), kind: s.str(), metadata: objectMeta, ...withoutMeta(convertProperties(x)) };
    return s.obj(props, { ...opts, ...(preserve ? { preserveUnknownFields: true } : {}) });
  }
  const ap = additionalPropertiesOf(x);
  if (x.properties) {
    // Kubernetes keeps the keys `additionalProperties: true` allows next to properties.
    const keep = preserve || x.additionalProperties === true;
    return s.obj(convertProperties(x), { ...opts, ...(keep ? { preserveUnknownFields: true } : {}) });
  }
  const mapOpts = { ...common(x), ...(structType ? { mapType: structType } : {}) };
  if (ap) return s.map(convert(ap, false), mapOpts);
  if (x.additionalProperties !== undefined) return s.map(s.any(), mapOpts);
  return s.obj({}, { ...opts, ...(preserve ? { preserveUnknownFields: true } : {}) });
}

function convertArray(x: JSONSchemaProps, preserve: boolean): Schema {
  const items = itemsOf(x);
  const lt = ext(x, 'list-type');
  const item = items ? convert(items, preserve) : s.any();
  if (lt === 'map') return s.arr(item, { ...common(x), listType: 'map', listMapKeys: listMapKeysOf(x) });
  return s.arr(item, { ...common(x), listType: lt === 'set' ? 'set' : 'atomic' });
}

/** One node; `inherited` is a `preserve-unknown-fields` of an enclosing list. */
function convert(x: JSONSchemaProps, inherited: boolean): Schema {
  const preserve = inherited || preservesUnknownFields(x);
  if (isIntOrString(x)) return s.intOrString(common(x));
  if (isEmbeddedResource(x)) return convertObject(x, preserve);
  switch (x.type) {
    case 'object':
      return convertObject(x, preserve);
    case 'array':
      return convertArray(x, preserve);
    case 'string':
      return s.str(common(x));
    case 'integer':
      return s.int(common(x));
    case 'number':
      return s.num(common(x));
    case 'boolean':
      return s.bool(common(x));
    default:
      return s.any(common(x));
  }
}

/** The DSL schema of a custom resource whose version schema is `schema` (the root). */
export function toDslSchema(schema: JSONSchemaProps): ObjectSchema {
  const root = convertObject({ ...schema, type: 'object' }, preservesUnknownFields(schema));
  const props = root.type === 'object' ? withoutMeta(root.properties) : {};
  const top = objectSchema(props);
  return {
    ...top,
    ...common(schema),
    ...(root.type === 'object' && root.preserveUnknownFields ? { preserveUnknownFields: true } : {}),
    ...(root.type === 'object' && root.structType ? { structType: root.structType } : {}),
  };
}
