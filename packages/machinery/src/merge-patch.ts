/**
 * RFC 7386 JSON merge patch. The result shares no structure with either input, and neither
 * input is modified.
 */

export type JsonObject = { [key: string]: unknown };

export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Sets an own property, even one named `__proto__` (as JSON.parse produces it). */
export function setOwn(obj: JsonObject, key: string, value: unknown): void {
  // Only `__proto__` needs defineProperty; plain assignment is much faster for every other key.
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/** A deep copy of a JSON value (objects, arrays, scalars). */
export function cloneJson<T>(v: T): T {
  if (Array.isArray(v)) return v.map((x: unknown) => cloneJson(x)) as T;
  if (isJsonObject(v)) {
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) setOwn(out, k, cloneJson(x));
    return out as T;
  }
  return v;
}

/**
 * Applies `patch` to `target`: an object patch merges key by key (`null` deletes the key,
 * a nested object merges recursively, anything else replaces); a non-object patch — arrays
 * included — replaces the whole target.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return cloneJson(patch);
  const out: JsonObject = isJsonObject(target) ? cloneJson(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else setOwn(out, k, applyMergePatch(Object.hasOwn(out, k) ? out[k] : undefined, v));
  }
  return out;
}
