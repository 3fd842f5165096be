/**
 * The merge of server-side apply (structured-merge-diff's `Merge`): the applied value wins
 * wherever both sides set a leaf; granular structs and maps merge key by key; map and set
 * lists merge item by item; atomic values are replaced whole. An applied `null` removes the
 * field from the result. Neither input is modified and the result shares nothing with them.
 */
import type { Schema } from '@svc/api';
import { fieldElement, listItemElement, type PathElement } from './field-path.js';
import type { FieldSet } from './field-set.js';
import { cloneJson, isJsonObject, setOwn, type JsonObject } from './merge-patch.js';
import { childOf, sharedNode, type MergeNode } from './merge-schema.js';
import { indexItems } from './typed-compare.js';

export function mergeApplied(live: unknown, applied: unknown, schema: Schema): unknown {
  if (applied === undefined) return cloneJson(live);
  const node = sharedNode(schema, live, applied);
  switch (node.kind) {
    case 'struct':
    case 'map':
      return mergeFields(node, isJsonObject(live) ? live : {}, applied as JsonObject);
    case 'list-map':
    case 'list-set':
      return mergeItems(node, Array.isArray(live) ? live : [], applied as unknown[]);
    default:
      return cloneJson(applied);
  }
}

function mergeFields(node: MergeNode, live: JsonObject, applied: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(live)) {
    if (!Object.hasOwn(applied, k)) setOwn(out, k, cloneJson(v));
    else if (applied[k] !== null) setOwn(out, k, mergeApplied(v, applied[k], childOf(node, k)));
  }
  for (const [k, v] of Object.entries(applied)) {
    if (Object.hasOwn(live, k) || v === null) continue;
    setOwn(out, k, mergeApplied(undefined, v, childOf(node, k)));
  }
  return out;
}

/**
 * Items keep the live order, except that items the applied list also holds follow the applied
 * order, and applied-only items take their applied position (structured-merge-diff's order).
 */
function mergeItems(node: MergeNode, live: unknown[], applied: unknown[]): unknown[] {
  const itemSchema: Schema = node.kind === 'list-map' || node.kind === 'list-set' ? node.items : { type: 'any' };
  const lhs = [...indexItems(node, live)];
  const rhs = [...indexItems(node, applied)];
  const lIndex = new Map(lhs);
  const rIndex = new Map(rhs);
  const shared = rhs.map(([pe]) => pe).filter((pe) => lIndex.has(pe));
  const out: unknown[] = [];
  const mergeOne = (pe: PathElement, r: unknown): unknown =>
    node.kind === 'list-set' ? cloneJson(r) : mergeApplied(lIndex.get(pe), r, itemSchema);
  let li = 0;
  let ri = 0;
  let si = 0;
  while (li < lhs.length || ri < rhs.length) {
    const l = lhs[li];
    const r = rhs[ri];
    if (l && r) {
      if (l[0] === r[0]) {
        out.push(mergeOne(r[0], r[1]));
        li++;
        ri++;
        si++;
        continue;
      }
      if (rIndex.has(l[0]) && si < shared.length && shared[si] !== l[0]) {
        li++;
        continue;
      }
    }
    if (l && !rIndex.has(l[0])) {
      out.push(cloneJson(l[1]));
      li++;
      continue;
    }
    if (r) {
      out.push(mergeOne(r[0], r[1]));
      if (shared[si] === r[0]) si++;
      ri++;
      continue;
    }
    li++;
  }
  return out;
}

/**
 * `value` without the members of `set`: a member field, map entry or list item is removed with
 * everything below it; paths into atomic values are ignored.
 */
export function removeFields(value: unknown, set: FieldSet, schema: Schema): unknown {
  if (set.isEmpty()) return cloneJson(value);
  const node = sharedNode(schema, value, value);
  if ((node.kind === 'struct' || node.kind === 'map') && isJsonObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      const pe = fieldElement(k);
      if (set.hasMember(pe)) continue;
      const sub = set.child(pe);
      setOwn(out, k, sub ? removeFields(v, sub, childOf(node, k)) : cloneJson(v));
    }
    return out;
  }
  if ((node.kind === 'list-map' || node.kind === 'list-set') && Array.isArray(value)) {
    const out: unknown[] = [];
    value.forEach((item, i) => {
      const pe = listItemElement(node, item, i);
      if (set.hasMember(pe)) return;
      const sub = set.child(pe);
      out.push(sub ? removeFields(item, sub, node.items) : cloneJson(item));
    });
    return out;
  }
  return cloneJson(value);
}
