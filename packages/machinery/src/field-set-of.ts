/**
 * Field sets of typed values (structured-merge-diff's `ToFieldSet`), the fields server-side
 * apply tracks, and the schema-driven rewrites of stored sets.
 */
import type { Schema } from '@svc/api';
import { fieldElement, listItemElement, type FieldPath, type PathElement } from './field-path.js';
import { FieldSet } from './field-set.js';
import { isJsonObject } from './merge-patch.js';
import { ANY_SCHEMA, childOf, isNamedField, listKind, mergeNode } from './merge-schema.js';

/** Which part of an object a write owns: all of it, all but `status`, or only `status`. */
export interface TrackingOptions {
  /** The main resource of a type with a status subresource: `status` is not tracked. */
  ignoreStatus?: boolean;
  /** The status subresource: only `status` is tracked. */
  onlyStatus?: boolean;
}

/**
 * Every leaf, list item and map entry of `value` (an API object or any value of `schema`):
 * scalars, atomic values, `null` and empty objects are leaves; a struct field with content is
 * not itself a member, but a map entry and a list item are (with `.` in FieldsV1).
 */
export function rawFieldSetOf(value: unknown, schema: Schema): FieldSet {
  const out = new FieldSet();
  function walk(v: unknown, schema: Schema, path: PathElement[]): void {
    const node = mergeNode(schema, v);
    switch (node.kind) {
      case 'scalar':
      case 'atomic':
        out.insert(path);
        return;
      case 'struct':
      case 'map': {
        const obj = v as Record<string, unknown>;
        const keys = Object.keys(obj);
        if (keys.length === 0) out.insert(path);
        for (const k of keys) {
          const cp = [...path, fieldElement(k)];
          const child = obj[k];
          if (child === null) {
            out.insert(cp);
            continue;
          }
          walk(child, childOf(node, k), cp);
          if (!isNamedField(node, k)) out.insert(cp);
        }
        return;
      }
      case 'list-map':
      case 'list-set': {
        const items = v as unknown[];
        items.forEach((item, i) => {
          const cp = [...path, listItemElement(node, item, i)];
          if (node.kind === 'list-map' && isJsonObject(item)) walk(item, node.items, cp);
          out.insert(cp);
        });
      }
    }
  }
  walk(value, schema, []);
  return out;
}

/** Paths no manager ever owns (Kubernetes strips them from every managed set). */
const STRIPPED = FieldSet.fromPaths([
  ['f:apiVersion'],
  ['f:kind'],
  ['f:metadata'],
  ...[
    'name',
    'namespace',
    'creationTimestamp',
    'deletionTimestamp',
    'selfLink',
    'uid',
    'clusterName',
    'generation',
    'managedFields',
    'resourceVersion',
  ].map((f) => ['f:metadata', `f:${f}`]),
]);
const STATUS = FieldSet.fromPaths([['f:status']]);

/** The part of `set` a manager can own under `opts`. */
export function trackedFields(set: FieldSet, opts: TrackingOptions = {}): FieldSet {
  let s = set.difference(STRIPPED);
  if (opts.ignoreStatus) s = s.recursiveDifference(STATUS);
  if (opts.onlyStatus) s = s.recursiveIntersection(STATUS);
  return s;
}

/**
 * The fields of API object `value` that a manager setting it owns: `rawFieldSetOf` without
 * `apiVersion`, `kind`, server-set metadata (name, namespace, uid, resourceVersion, generation,
 * creation/deletion timestamps, managedFields, selfLink) and, per `opts`, `status`.
 */
export function fieldSetOf(value: unknown, schema: Schema, opts: TrackingOptions = {}): FieldSet {
  return trackedFields(rawFieldSetOf(value, schema), opts);
}

/** Schema of the child reached by `pe` from a node of `schema` (without a value at hand). */
function schemaChild(schema: Schema, pe: PathElement): Schema {
  if (pe.startsWith('f:')) {
    const name = pe.slice(2);
    if (schema.type === 'object') return schema.properties[name] ?? ANY_SCHEMA;
    if (schema.type === 'map') return schema.values;
    return ANY_SCHEMA;
  }
  return schema.type === 'array' ? schema.items : ANY_SCHEMA;
}

/**
 * `set` plus every named struct field that is a parent of one of its paths (structured-merge-
 * diff's EnsureNamedFieldsAreMembers): owning `spec.replicas` also claims the field `spec`.
 */
export function ensureNamedFieldsAreMembers(set: FieldSet, schema: Schema): FieldSet {
  const out = new FieldSet();
  function ensureInto(set: FieldSet, schema: Schema, prefix: PathElement[]): void {
    for (const pe of set.unorderedElements()) {
      const path = [...prefix, pe];
      const child = set.child(pe);
      const named = schema.type === 'object' && pe.startsWith('f:') && Object.hasOwn(schema.properties, pe.slice(2));
      if (set.hasMember(pe) || (named && child && !child.isEmpty())) out.insert(path);
      if (child) ensureInto(child, schemaChild(schema, pe), path);
    }
  }
  ensureInto(set, schema, []);
  return out;
}

function isAtomicSchema(s: Schema): boolean {
  if (s.type === 'object') return s.structType === 'atomic';
  if (s.type === 'map') return s.mapType === 'atomic';
  if (s.type === 'array') return listKind(s) === 'atomic';
  return false;
}

/**
 * Rewrites a stored set for the current schema (rule 8): a path whose type is now atomic but
 * that has owned children becomes owned as a whole by that manager. A type that became
 * granular keeps the old whole-value member; ownership of its inner fields is not inferred.
 * `any` subtrees are left alone.
 */
export function reconcileWithSchema(set: FieldSet, schema: Schema): FieldSet {
  const out = new FieldSet();
  function reconcileInto(set: FieldSet, schema: Schema, prefix: PathElement[]): void {
    for (const pe of set.unorderedElements()) {
      const path: FieldPath = [...prefix, pe];
      const cs = schemaChild(schema, pe);
      const child = set.child(pe);
      const hasChildren = child !== undefined && !child.isEmpty();
      if (hasChildren && isAtomicSchema(cs)) {
        out.insert(path);
        continue;
      }
      if (set.hasMember(pe)) out.insert(path);
      if (child && cs.type !== 'any') reconcileInto(child, cs, [...path]);
      else if (child) for (const p of child.paths()) out.insert([...path, ...p]);
    }
  }
  reconcileInto(set, schema, []);
  return out;
}
