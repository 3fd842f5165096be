/**
 * The field-level difference between two values of a schema (structured-merge-diff's
 * `Compare`). Leaves (scalars, atomic values, and containers empty on both sides) are added,
 * removed or modified; a list item, map entry or struct field that appears or disappears as a
 * whole is also added or removed itself. No path is in more than one of the three sets.
 */
import type { Schema } from '@svc/api';
import { fieldElement, listItemElement, type PathElement } from './field-path.js';
import { FieldSet } from './field-set.js';
import { jsonEqual } from './json-compare.js';
import { isJsonObject } from './merge-patch.js';
import { childOf, sharedNode, type MergeNode } from './merge-schema.js';

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/** Compares `lhs` (before; `undefined` when absent) with `rhs` (after). */
export function compareValues(lhs: unknown, rhs: unknown, schema: Schema): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };

  function compareAt(sides: Sides, schema: Schema, path: PathElement[]): void {
    const [l, r] = sides;
    const node = sharedNode(schema, l, r);
    const containerLeaf = node.kind !== 'scalar' && node.kind !== 'atomic' && isEmpty(l) && isEmpty(r);
    if (node.kind === 'scalar' || node.kind === 'atomic' || containerLeaf) {
      if (path.length === 0) return;
      if (l === undefined) c.added.insert(path);
      else if (r === undefined) c.removed.insert(path);
      else if (!jsonEqual(l, r)) c.modified.insert(path);
      return;
    }
    if (node.kind === 'struct' || node.kind === 'map') compareFields(node, sides, path);
    else compareItems(node, sides, path);
    if (path.length === 0) return;
    if (l === undefined) c.added.insert(path);
    else if (r === undefined) c.removed.insert(path);
  }

  function compareFields(node: MergeNode, [l, r]: Sides, path: PathElement[]): void {
    const lo = isJsonObject(l) ? l : {};
    const ro = isJsonObject(r) ? r : {};
    const keys = new Set([...Object.keys(lo), ...Object.keys(ro)]);
    for (const k of keys) {
      const lv = Object.hasOwn(lo, k) ? lo[k] : undefined;
      const rv = Object.hasOwn(ro, k) ? ro[k] : undefined;
      if (lv === undefined && rv === undefined) continue;
      compareAt([lv, rv], childOf(node, k), [...path, fieldElement(k)]);
    }
  }

  function compareItems(node: MergeNode, [l, r]: Sides, path: PathElement[]): void {
    const li = indexItems(node, l);
    const ri = indexItems(node, r);
    const items = node.kind === 'list-map' || node.kind === 'list-set' ? node.items : undefined;
    for (const pe of new Set([...li.keys(), ...ri.keys()])) {
      compareAt([li.get(pe), ri.get(pe)], items ?? { type: 'any' }, [...path, pe]);
    }
  }

  if (lhs !== undefined || rhs !== undefined) compareAt([lhs, rhs], schema, []);
  return c;
}

/** The value before and the value after, either `undefined` when absent. */
type Sides = readonly [before: unknown, after: unknown];

function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isJsonObject(v) && Object.keys(v).length === 0;
}

/** Items of a granular list by element; a repeated element keeps its first occurrence. */
export function indexItems(node: MergeNode, list: unknown): Map<PathElement, unknown> {
  const out = new Map<PathElement, unknown>();
  if (!Array.isArray(list) || (node.kind !== 'list-map' && node.kind !== 'list-set')) return out;
  list.forEach((item, i) => {
    const pe = listItemElement(node, item, i);
    if (!out.has(pe)) out.set(pe, item);
  });
  return out;
}
