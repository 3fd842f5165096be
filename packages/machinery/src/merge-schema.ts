/**
 * How server-side apply reads a schema node (structured-merge-diff's element relationships):
 * scalars are leaves; atomic lists, maps and structs are leaves owned as a whole; granular
 * structs and maps hold one field per key; `listType=map` lists (or, without a listType,
 * `patchStrategy=merge` with a `patchMergeKey`) hold items keyed by their key fields;
 * `listType=set` lists (or merge lists without a merge key) hold scalar items keyed by value;
 * any other list is atomic. `any` is deduced from the value: objects are granular maps of `any`,
 * lists are atomic, the rest scalars.
 */
import type { ArraySchema, ObjectSchema, Schema } from '@svc/api';
import { isJsonObject } from './merge-patch.js';

export const ANY_SCHEMA: Schema = { type: 'any' };

export type MergeNode =
  | { kind: 'scalar' }
  | { kind: 'atomic' }
  | { kind: 'struct'; schema: ObjectSchema }
  | { kind: 'map'; values: Schema }
  | { kind: 'list-map'; items: Schema; keys: readonly string[] }
  | { kind: 'list-set'; items: Schema };

/** The list relationship of an array schema, with Kubernetes' fallback to patch markers. */
export function listKind(a: ArraySchema): 'atomic' | 'set' | 'map' {
  if (a.listType) return a.listType;
  if (a.patchStrategy?.split(',').includes('merge')) return a.patchMergeKey ? 'map' : 'set';
  return 'atomic';
}

/** Key fields of a map list: `listMapKeys`, else `patchMergeKey`. */
export function listKeys(a: ArraySchema): readonly string[] {
  if (a.listMapKeys && a.listMapKeys.length > 0) return a.listMapKeys;
  return a.patchMergeKey ? [a.patchMergeKey] : [];
}

/**
 * The node for `schema` holding `value` (`undefined` when absent). A value of the wrong JSON
 * type for a container schema is a leaf, so it is compared and replaced as a whole.
 */
export function mergeNode(schema: Schema | undefined, value: unknown): MergeNode {
  const s = schema ?? ANY_SCHEMA;
  switch (s.type) {
    case 'object':
      if (s.structType === 'atomic') return { kind: 'atomic' };
      return value === undefined || isJsonObject(value) ? { kind: 'struct', schema: s } : { kind: 'atomic' };
    case 'map':
      if (s.mapType === 'atomic') return { kind: 'atomic' };
      return value === undefined || isJsonObject(value) ? { kind: 'map', values: s.values } : { kind: 'atomic' };
    case 'array': {
      const k = listKind(s);
      if (k === 'atomic' || !(value === undefined || Array.isArray(value))) return { kind: 'atomic' };
      if (k === 'set') return { kind: 'list-set', items: s.items };
      return { kind: 'list-map', items: s.items, keys: listKeys(s) };
    }
    case 'any':
      if (isJsonObject(value)) return { kind: 'map', values: ANY_SCHEMA };
      return Array.isArray(value) ? { kind: 'atomic' } : { kind: 'scalar' };
    default:
      return { kind: 'scalar' };
  }
}

/** The node kind two values share, or `atomic` when they disagree (a type change is a leaf). */
export function sharedNode(schema: Schema | undefined, a: unknown, b: unknown): MergeNode {
  const na = mergeNode(schema, a);
  const nb = mergeNode(schema, b);
  if (a === undefined) return nb;
  if (b === undefined) return na;
  return na.kind === nb.kind ? nb : { kind: 'atomic' };
}

/** Schema of field `key` of a struct; fields the schema does not know are `any`. */
export function structField(s: ObjectSchema, key: string): Schema {
  return s.properties[key] ?? ANY_SCHEMA;
}

/** Whether `name` is a property the struct declares (a named field, not a map key). */
export function isNamedField(node: MergeNode, name: string): boolean {
  return node.kind === 'struct' && Object.hasOwn(node.schema.properties, name);
}

/** Schema of a child of `node` reached by a field key (struct property or map key). */
export function childOf(node: MergeNode, key: string): Schema {
  if (node.kind === 'struct') return structField(node.schema, key);
  if (node.kind === 'map') return node.values;
  return ANY_SCHEMA;
}
