import { jsonEqual } from '@svc/machinery';

/** Deep copy of a JSON value; objects from storage and caches are never mutated in place. */
export function clone<T>(v: T): T {
  return v === undefined ? v : structuredClone(v);
}

/**
 * Structural equality of JSON values. Not `util.isDeepStrictEqual`: that also compares
 * prototypes, which differ for objects made in another realm (e.g. a test runner's).
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  return jsonEqual(a, b);
}
