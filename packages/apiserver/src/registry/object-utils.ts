import { isDeepStrictEqual } from 'node:util';

/** Deep copy of a JSON value; objects from storage and caches are never mutated in place. */
export function clone<T>(v: T): T {
  return v === undefined ? v : structuredClone(v);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a, b);
}
