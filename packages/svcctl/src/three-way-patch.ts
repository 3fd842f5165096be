/**
 * The patch client-side apply sends (kubectl's CreateThreeWayMergePatch): the changes from
 * the live object to the new configuration (additions and changes only) merged with the
 * deletions from the last applied configuration to the new one. With a schema it is a
 * strategic merge patch (lists with a merge key diff item by item, with `$patch: delete`,
 * `$setElementOrder/` and `$deleteFromPrimitiveList/` directives); without one (custom
 * resources) a JSON merge patch. Pure; inputs are not modified.
 */
import type { ArraySchema, Schema } from '@svc/api/schema';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

interface DiffOptions {
  ignoreDeletions: boolean;
  ignoreChangesAndAdditions: boolean;
}

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

function child(schema: Schema | undefined, key: string): Schema | undefined {
  if (!schema) return undefined;
  if (schema.type === 'object')
    return schema.properties[key] ?? (schema.preserveUnknownFields ? { type: 'any' } : undefined);
  if (schema.type === 'map') return schema.values;
  return undefined;
}

function atomic(schema: Schema | undefined): boolean {
  return (
    (schema?.type === 'object' && schema.structType === 'atomic') ||
    (schema?.type === 'map' && schema.mapType === 'atomic')
  );
}

/** The merge key of a list that merges (patchStrategy merge), `''` for a merging list of scalars, undefined otherwise. */
function mergeKeyOf(schema: Schema | undefined): string | undefined {
  if (schema?.type !== 'array') return undefined;
  const a: ArraySchema = schema;
  if (!a.patchStrategy?.split(',').includes('merge')) return undefined;
  return a.patchMergeKey ?? '';
}

function diffMaps(original: JsonObject, modified: JsonObject, o: { schema?: Schema; opts: DiffOptions }): JsonObject {
  const patch: JsonObject = {};
  for (const [key, mv] of Object.entries(modified)) {
    if (!Object.hasOwn(original, key)) {
      if (!o.opts.ignoreChangesAndAdditions) patch[key] = mv;
      continue;
    }
    const ov = original[key];
    const s = child(o.schema, key);
    if (isObject(ov) && isObject(mv) && !atomic(s)) {
      const sub = diffMaps(ov, mv, { schema: s, opts: o.opts });
      if (Object.keys(sub).length > 0) patch[key] = sub;
      continue;
    }
    const mergeKey = mergeKeyOf(s);
    if (Array.isArray(ov) && Array.isArray(mv) && mergeKey !== undefined && o.schema) {
      diffList({ key, original: ov, modified: mv, patch, mergeKey, schema: s as ArraySchema, opts: o.opts });
      continue;
    }
    if (!o.opts.ignoreChangesAndAdditions && !jsonEqual(ov, mv)) patch[key] = mv;
  }
  if (!o.opts.ignoreDeletions) {
    for (const key of Object.keys(original)) if (!Object.hasOwn(modified, key)) patch[key] = null;
  }
  return patch;
}

function diffList(o: {
  key: string;
  original: Json[];
  modified: Json[];
  patch: JsonObject;
  mergeKey: string;
  schema: ArraySchema;
  opts: DiffOptions;
}): void {
  const { opts, mergeKey } = o;
  const maps = o.original.concat(o.modified).some(isObject);
  if (!maps || mergeKey === '') {
    const additions = o.modified.filter((m) => !o.original.some((x) => jsonEqual(x, m)));
    const deletions = o.original.filter((x) => !o.modified.some((m) => jsonEqual(x, m)));
    if (!opts.ignoreChangesAndAdditions && additions.length > 0) o.patch[o.key] = additions;
    if (!opts.ignoreDeletions && deletions.length > 0) o.patch[`$deleteFromPrimitiveList/${o.key}`] = deletions;
    if (
      (!opts.ignoreDeletions && deletions.length > 0) ||
      (!opts.ignoreChangesAndAdditions && !jsonEqual(o.original, o.modified))
    ) {
      o.patch[`$setElementOrder/${o.key}`] = o.modified;
    }
    return;
  }
  const keyOf = (v: Json): Json | undefined => (isObject(v) ? v[mergeKey] : undefined);
  const items: Json[] = [];
  for (const m of o.modified) {
    if (!isObject(m)) continue;
    const orig = o.original.find((x) => isObject(x) && jsonEqual(keyOf(x), keyOf(m)));
    if (!isObject(orig)) {
      if (!opts.ignoreChangesAndAdditions) items.push(m);
      continue;
    }
    const sub = diffMaps(orig, m, { schema: o.schema.items, opts });
    if (Object.keys(sub).length > 0) items.push({ ...sub, [mergeKey]: keyOf(m) ?? null });
  }
  if (!opts.ignoreDeletions) {
    for (const x of o.original) {
      if (!isObject(x)) continue;
      if (!o.modified.some((m) => jsonEqual(keyOf(m), keyOf(x))))
        items.push({ [mergeKey]: keyOf(x) ?? null, $patch: 'delete' });
    }
  }
  const orderSame =
    o.original.length === o.modified.length &&
    o.original.every((x, i) => jsonEqual(keyOf(x), keyOf(o.modified[i] ?? null)));
  if (items.length > 0) o.patch[o.key] = items;
  if (
    (!opts.ignoreChangesAndAdditions && (items.length > 0 || !orderSame)) ||
    (!opts.ignoreDeletions && items.length > 0)
  ) {
    o.patch[`$setElementOrder/${o.key}`] = o.modified.filter(isObject).map((m) => ({ [mergeKey]: keyOf(m) ?? null }));
  }
}

/** Merges two patches made by `diffMaps` (deletions, then additions and changes). */
function mergePatches(a: JsonObject, b: JsonObject, schema?: Schema): JsonObject {
  const out: JsonObject = { ...a };
  for (const [k, bv] of Object.entries(b)) {
    const av = out[k];
    if (isObject(av) && isObject(bv)) out[k] = mergePatches(av, bv, child(schema, k));
    else if (Array.isArray(av) && Array.isArray(bv)) {
      const mergeKey = mergeKeyOf(child(schema, k));
      if (mergeKey) {
        const keyOf = (v: Json): Json | undefined => (isObject(v) ? v[mergeKey] : undefined);
        const items = child(schema, k);
        const itemSchema = items?.type === 'array' ? items.items : undefined;
        out[k] = [
          ...av.filter((x) => !bv.some((y) => jsonEqual(keyOf(x), keyOf(y)))),
          ...bv.map((y) => {
            const x = av.find((a) => jsonEqual(keyOf(a), keyOf(y)));
            return isObject(x) && isObject(y) ? mergePatches(x, y, itemSchema) : y;
          }),
        ];
      } else out[k] = k.startsWith('$') ? bv : [...av, ...bv.filter((y) => !av.some((x) => jsonEqual(x, y)))];
    } else out[k] = bv;
  }
  return out;
}

/**
 * The patch that takes `current` to `modified`, deleting what `original` (the last applied
 * configuration) had and `modified` no longer has. `schema`: strategic merge; else JSON merge.
 */
export function threeWayMergePatch(o: {
  original: JsonObject | undefined;
  modified: JsonObject;
  current: JsonObject;
  schema?: Schema;
}): JsonObject {
  const delta = diffMaps(o.current, o.modified, {
    schema: o.schema,
    opts: { ignoreDeletions: true, ignoreChangesAndAdditions: false },
  });
  const deletions = o.original
    ? diffMaps(o.original, o.modified, {
        schema: o.schema,
        opts: { ignoreDeletions: false, ignoreChangesAndAdditions: true },
      })
    : {};
  return mergePatches(deletions, delta, o.schema);
}

/** A two-way patch from `original` to `modified` (`edit`, `label`...): every change and deletion. */
export function twoWayMergePatch(o: { original: JsonObject; modified: JsonObject; schema?: Schema }): JsonObject {
  return diffMaps(o.original, o.modified, {
    schema: o.schema,
    opts: { ignoreDeletions: false, ignoreChangesAndAdditions: false },
  });
}
