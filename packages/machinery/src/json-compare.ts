/**
 * Equality, a total order and a canonical text for decoded JSON values, as structured-merge-diff
 * defines them (numbers < strings < booleans < lists < maps < null; strings by code point, so the
 * order matches Go's byte-wise comparison of UTF-8).
 */
import { isJsonObject } from './merge-patch.js';

/** Deep equality of JSON values; object key order does not matter, list order does. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (isJsonObject(a)) {
    if (!isJsonObject(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    for (const k of ka) {
      if (!Object.hasOwn(b, k) || !jsonEqual(a[k], b[k])) return false;
    }
    return true;
  }
  return false;
}

/** Compares strings by Unicode code point (the order of their UTF-8 bytes). */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.codePointAt(i) ?? 0;
    const cb = b.codePointAt(i) ?? 0;
    if (ca !== cb) return ca < cb ? -1 : 1;
    if (ca > 0xffff) i++;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

function rank(v: unknown): number {
  if (typeof v === 'number') return 0;
  if (typeof v === 'string') return 1;
  if (typeof v === 'boolean') return 2;
  if (Array.isArray(v)) return 3;
  if (isJsonObject(v)) return 4;
  return 5;
}

/** A total order over JSON values: -1, 0 or 1. */
export function compareJson(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const c = compareJson(a[i], b[i]);
      if (c !== 0) return c;
    }
    return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const ka = Object.keys(a).sort(compareStrings);
    const kb = Object.keys(b).sort(compareStrings);
    const n = Math.min(ka.length, kb.length);
    for (let i = 0; i < n; i++) {
      const c = compareStrings(ka[i] as string, kb[i] as string);
      if (c !== 0) return c;
      const d = compareJson(a[ka[i] as string], b[kb[i] as string]);
      if (d !== 0) return d;
    }
    return ka.length < kb.length ? -1 : ka.length > kb.length ? 1 : 0;
  }
  return 0;
}

/** JSON text with object keys sorted by code point: equal values give equal text. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isJsonObject(v)) {
    const keys = Object.keys(v).sort(compareStrings);
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

/** A value as Go's `%v` prints a decoded JSON value (`map[a:1 b:x]`, `[1 2]`, `<nil>`); for messages. */
export function goFormat(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (isJsonObject(v)) {
    const keys = Object.keys(v).sort(compareStrings);
    return `map[${keys.map((k) => `${k}:${goFormat(v[k])}`).join(' ')}]`;
  }
  return String(v);
}
