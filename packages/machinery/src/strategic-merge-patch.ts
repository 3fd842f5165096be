/**
 * Strategic merge patch (`application/strategic-merge-patch+json`), as Kubernetes'
 * apimachinery `strategicpatch` applies it on the server, with merge metadata from the schema:
 *
 * - A map (struct or map schema) merges key by key; `null` deletes a key; an atomic map/struct
 *   (`mapType`/`structType: atomic`) is replaced whole. `{"$patch": "replace"}` in a map
 *   replaces the whole map with the rest of the patch map; `{"$patch": "delete"}` empties it.
 * - A list whose `patchStrategy` contains `merge` merges: object items by `patchMergeKey`
 *   (matching items merge, new items are added, an item `{"<key>": v, "$patch": "delete"}`
 *   deletes by key, an item `{"$patch": "replace"}` makes the patch list replace the list);
 *   scalar items as an ordered set. Without `$setElementOrder`, items keep their relative order
 *   and patch items come before server-only items that do not precede them in the live list
 *   (so a new item comes first), as Kubernetes orders them. Other lists are replaced.
 * - `$setElementOrder/<list>`: the order of the merged list (patch-listed items in that order,
 *   server-only items kept where they were relative to them).
 * - `$deleteFromPrimitiveList/<list>`: scalars removed from a merge list of scalars.
 * - `$retainKeys`: keys of the map to keep (others are dropped before merging); every key the
 *   patch map sets must be listed.
 * - Fields of type `any` (and fields the schema does not know) take the patch as an RFC 7386
 *   JSON merge patch.
 *
 * Invalid directives throw a 400 `BadRequest` with Kubernetes' wording. Inputs are not
 * modified; the result shares nothing with them.
 */
import { badRequest, type ArraySchema, type Schema } from '@svc/api';
import { goFormat, jsonEqual } from './json-compare.js';
import { applyMergePatch, cloneJson, isJsonObject, setOwn, type JsonObject } from './merge-patch.js';
import { ANY_SCHEMA } from './merge-schema.js';

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ELEMENT_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';

export function applyStrategicMergePatch(original: unknown, patch: unknown, schema: Schema): unknown {
  if (!isJsonObject(patch)) throw badRequest('invalid JSON document');
  return mergeMap(isJsonObject(original) ? original : undefined, patch, schema);
}

function childSchema(schema: Schema, key: string): Schema {
  if (schema.type === 'object') return schema.properties[key] ?? ANY_SCHEMA;
  if (schema.type === 'map') return schema.values;
  return ANY_SCHEMA;
}

function goType(v: unknown): string {
  if (isJsonObject(v)) return 'map[string]interface {}';
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'float64';
  if (typeof v === 'boolean') return 'bool';
  return '%!s(<nil>)';
}

function badArgType(expected: unknown, actual: unknown): never {
  throw badRequest(`expected a ${goType(expected)}, but received a ${goType(actual)}`);
}

function noMergeKey(item: JsonObject, key: string): never {
  throw badRequest(`map: ${goFormat(item)} does not contain declared merge key: ${key}`);
}

function badPatchType(directive: unknown, m: JsonObject): never {
  throw badRequest(`unknown patch type: ${goFormat(directive)} in map: ${goFormat(m)}`);
}

/** Merges patch map `patch` into `original` (absent → empty) under `schema`. */
function mergeMap(original: JsonObject | undefined, patch: JsonObject, schema: Schema): JsonObject {
  if (Object.hasOwn(patch, DIRECTIVE)) {
    const d = patch[DIRECTIVE];
    if (d === 'replace') {
      const rest: JsonObject = {};
      for (const [k, v] of Object.entries(patch)) if (k !== DIRECTIVE) setOwn(rest, k, v);
      return mergeMap(undefined, rest, schema);
    }
    if (d === 'delete') return {};
    badPatchType(d, patch);
  }
  const out: JsonObject = original ? cloneJson(original) : {};
  if (Object.hasOwn(patch, RETAIN_KEYS)) retainKeys(out, patch);

  const ordered = new Set<string>();
  for (const k of Object.keys(patch)) {
    if (!k.startsWith(SET_ELEMENT_ORDER)) continue;
    const field = k.slice(SET_ELEMENT_ORDER.length);
    if (field === '') throw badRequest('invalid patch format of setElementOrder list');
    if (setElementOrder(out, patch, { field, order: patch[k], schema: childSchema(schema, field) })) ordered.add(field);
  }

  const deletions: [string, unknown][] = [];
  for (const [k, pv] of Object.entries(patch)) {
    if (k === RETAIN_KEYS || k.startsWith(SET_ELEMENT_ORDER) || ordered.has(k)) continue;
    if (k.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      deletions.push([k, pv]);
      continue;
    }
    if (pv === null) {
      delete out[k];
      continue;
    }
    setOwn(out, k, mergeValue(Object.hasOwn(out, k) ? out[k] : undefined, pv, childSchema(schema, k)));
  }
  for (const [k, pv] of deletions) {
    const field = k.slice(DELETE_FROM_PRIMITIVE_LIST.length);
    if (field === '' || !Array.isArray(pv)) throw badRequest('invalid patch format of primitive list');
    if (!Object.hasOwn(out, field)) continue;
    const cur = out[field];
    if (!Array.isArray(cur)) badArgType([], cur);
    setOwn(
      out,
      field,
      cur.filter((x) => !pv.some((d) => jsonEqual(d, x))),
    );
  }
  return out;
}

/** `$retainKeys`: drops keys of `out` not listed, after checking the patch sets only listed keys. */
function retainKeys(out: JsonObject, patch: JsonObject): void {
  const keys = patch[RETAIN_KEYS];
  if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string'))
    throw badRequest('invalid patch format of retainKeys');
  const keep = new Set(keys as string[]);
  for (const [k, v] of Object.entries(patch)) {
    if (
      k === RETAIN_KEYS ||
      k === DIRECTIVE ||
      v === null ||
      k.startsWith(DELETE_FROM_PRIMITIVE_LIST) ||
      k.startsWith(SET_ELEMENT_ORDER)
    )
      continue;
    if (!keep.has(k)) throw badRequest('invalid patch format of retainKeys');
  }
  for (const k of Object.keys(out)) if (!keep.has(k)) delete out[k];
}

function isMergeList(schema: Schema): schema is ArraySchema {
  return schema.type === 'array' && (schema.patchStrategy?.split(',').includes('merge') ?? false);
}

function isAtomicMap(schema: Schema): boolean {
  return (
    (schema.type === 'object' && schema.structType === 'atomic') ||
    (schema.type === 'map' && schema.mapType === 'atomic')
  );
}

function mergeValue(orig: unknown, pv: unknown, schema: Schema): unknown {
  if (schema.type === 'any') return applyMergePatch(orig, pv);
  if (isJsonObject(pv)) {
    if (schema.type !== 'object' && schema.type !== 'map') return cloneJson(pv);
    return mergeMap(!isAtomicMap(schema) && isJsonObject(orig) ? orig : undefined, pv, schema);
  }
  if (Array.isArray(pv)) {
    if (isMergeList(schema)) return mergeList(Array.isArray(orig) ? orig : undefined, pv, schema);
    return cloneJson(pv);
  }
  return pv;
}

type ElementKind = 'map' | 'scalar' | 'none';

function elementKind(...lists: unknown[][]): ElementKind {
  let kind: string | undefined;
  for (const list of lists) {
    for (const v of list) {
      if (Array.isArray(v)) throw badRequest('lists of lists are not supported');
      const k = isJsonObject(v) ? 'map' : v === null ? 'null' : typeof v;
      if (kind === undefined) kind = k;
      else if (kind !== k)
        throw badRequest(`list element types are not identical: ${lists.map((l) => goFormat(l)).join(' ')}`);
    }
  }
  return kind === undefined ? 'none' : kind === 'map' ? 'map' : 'scalar';
}

function keyOf(item: unknown, mergeKey: string): unknown {
  return isJsonObject(item) && Object.hasOwn(item, mergeKey) ? item[mergeKey] : undefined;
}

/** Position of `item` in `list`, matching maps by merge key and scalars by value; -1 if absent. */
function indexIn(list: readonly unknown[], item: unknown, mergeKey: string | undefined): number {
  if (mergeKey === undefined) return list.findIndex((x) => jsonEqual(x, item));
  const k = keyOf(item, mergeKey);
  if (k === undefined) return -1;
  return list.findIndex((x) => jsonEqual(keyOf(x, mergeKey), k));
}

/** A list the original lacks: its items, without directive items and with directives inside items applied. */
function newList(patch: unknown[], schema: ArraySchema): unknown[] {
  return patch
    .filter((v) => !(isJsonObject(v) && Object.hasOwn(v, DIRECTIVE)))
    .map((v) => (isJsonObject(v) ? mergeMap(undefined, v, schema.items) : cloneJson(v)));
}

/** Merges a patch list into a merge-strategy list. */
function mergeList(orig: unknown[] | undefined, patch: unknown[], schema: ArraySchema): unknown[] {
  if (orig === undefined) return newList(patch, schema);
  let original = orig;
  if (original.length === 0 && patch.length === 0) return [];
  const kind = elementKind(original, patch);
  if (kind !== 'map') {
    const merged: unknown[] = [];
    for (const v of [...original, ...patch]) if (!merged.some((x) => jsonEqual(x, v))) merged.push(cloneJson(v));
    return orderByPatch(merged, { order: patch, serverOrder: original, mergeKey: undefined });
  }
  const mergeKey = schema.patchMergeKey;
  if (!mergeKey) throw badRequest('cannot merge lists without merge key for type map');
  const itemSchema = schema.items;

  const plain: JsonObject[] = [];
  let replace = false;
  for (const v of patch) {
    const item = v as JsonObject;
    if (!Object.hasOwn(item, DIRECTIVE)) {
      plain.push(item);
      continue;
    }
    const d = item[DIRECTIVE];
    if (d === 'delete') {
      if (!Object.hasOwn(item, mergeKey)) noMergeKey(item, mergeKey);
      original = original.filter((x) => !jsonEqual(keyOf(x, mergeKey), item[mergeKey]));
    } else if (d === 'replace') {
      replace = true;
    } else if (d === 'merge') {
      throw badRequest('merging lists cannot yet be specified in the patch');
    } else {
      badPatchType(d, item);
    }
  }
  if (replace) return plain.map((item) => mergeMap(undefined, item, itemSchema));

  const merged = original.map((x) => cloneJson(x));
  for (const item of plain) {
    if (!Object.hasOwn(item, mergeKey)) noMergeKey(item, mergeKey);
    const i = indexIn(merged, item, mergeKey);
    const prev = merged[i];
    if (i >= 0)
      merged[i] = mergeMap(isJsonObject(prev) && !isAtomicMap(itemSchema) ? prev : undefined, item, itemSchema);
    else merged.push(mergeMap(undefined, item, itemSchema));
  }
  return orderByPatch(merged, { order: plain, serverOrder: original, mergeKey });
}

interface ListOrder {
  /** The patch's list (or its `$setElementOrder`). */
  order: readonly unknown[];
  /** The original list. */
  serverOrder: readonly unknown[];
  /** Items are compared by this key; absent: by value. */
  mergeKey: string | undefined;
}

/**
 * Kubernetes' order for a merged list: items listed in `order` sorted by it, server-only items
 * in their `serverOrder`, then interleaved so a server-only item goes first only when it came
 * before the next listed item in `serverOrder`.
 */
function orderByPatch(merged: unknown[], { order, serverOrder, mergeKey }: ListOrder): unknown[] {
  const listed: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const v of merged) (indexIn(order, v, mergeKey) >= 0 ? listed : serverOnly).push(v);
  listed.sort((a, b) => indexIn(order, a, mergeKey) - indexIn(order, b, mergeKey));
  serverOnly.sort((a, b) => {
    const ia = indexIn(serverOrder, a, mergeKey);
    const ib = indexIn(serverOrder, b, mergeKey);
    return ia >= 0 && ib >= 0 ? ia - ib : 0;
  });
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < listed.length) {
    if (i >= serverOnly.length) out.push(listed[j++]);
    else if (j >= listed.length) out.push(serverOnly[i++]);
    else {
      const li = indexIn(serverOrder, serverOnly[i], mergeKey);
      const ri = indexIn(serverOrder, listed[j], mergeKey);
      if (li >= 0 && ri >= 0 && li < ri) out.push(serverOnly[i++]);
      else out.push(listed[j++]);
    }
  }
  return out;
}

/** A `$setElementOrder/<field>` directive: its field, its order list, and the field's schema. */
interface ElementOrderDirective {
  field: string;
  order: unknown;
  schema: Schema;
}

/**
 * `$setElementOrder/<field>`: merges the field's patch list (if any) into `out` and orders the
 * result. Returns whether the field's patch list was consumed.
 */
function setElementOrder(out: JsonObject, patch: JsonObject, { field, order, schema }: ElementOrderDirective): boolean {
  if (!Array.isArray(order)) throw badRequest('invalid patch format of setElementOrder list');
  const hasOrig = Object.hasOwn(out, field);
  const hasPatch = Object.hasOwn(patch, field) && patch[field] !== null;
  const origList = hasOrig ? out[field] : undefined;
  const patchList = hasPatch ? patch[field] : undefined;
  if (hasOrig && !Array.isArray(origList)) badArgType([], origList);
  if (hasPatch && !Array.isArray(patchList)) badArgType([], patchList);
  const mergeKey = schema.type === 'array' ? schema.patchMergeKey : undefined;
  const original = (origList as unknown[] | undefined) ?? [];
  const patchItems = (patchList as unknown[] | undefined) ?? [];
  const kind = elementKind(original, patchItems, order);
  const keyed = kind === 'map' ? mergeKey : undefined;
  if (kind === 'map') {
    if (!keyed) throw badRequest('cannot merge lists without merge key for type map');
    for (const v of order)
      if (!isJsonObject(v) || !Object.hasOwn(v, keyed)) noMergeKey(isJsonObject(v) ? v : {}, keyed);
  }
  validateOrder(patchItems, order, keyed);
  if (!hasOrig && !hasPatch) return false;
  const merged = hasPatch ? mergeValue(hasOrig ? original : undefined, patchItems, schema) : cloneJson(original);
  if (Array.isArray(merged))
    setOwn(out, field, orderByPatch(merged, { order, serverOrder: original, mergeKey: keyed }));
  return hasPatch;
}

/** The patch list's items (deletions and directives aside) must appear in `order` in the same relative order. */
function validateOrder(patchList: readonly unknown[], order: readonly unknown[], mergeKey: string | undefined): void {
  const items = patchList.filter((v) => !(isJsonObject(v) && Object.hasOwn(v, DIRECTIVE)));
  let p = 0;
  for (let o = 0; o < order.length && p < items.length; o++) {
    const same =
      mergeKey === undefined
        ? jsonEqual(items[p], order[o])
        : jsonEqual(keyOf(items[p], mergeKey), keyOf(order[o], mergeKey));
    if (same) p++;
  }
  if (p < items.length) {
    throw badRequest(
      `The order in patch list:\n${goFormat(patchList)}\n doesn't match ${SET_ELEMENT_ORDER.slice(0, -1)} list:\n${goFormat(order)}\n`,
    );
  }
}
