import { isApiObject, type ApiObject } from '@svc/api';
import { StorageError } from './interface.js';

/**
 * How every store keeps an object: its JSON without `metadata.resourceVersion`, which is the
 * key's modification revision in the store and is put back on read.
 */
export interface StoredValue {
  json: string;
  rev: number;
}

export function encodeStored(obj: ApiObject): string {
  const { resourceVersion: _omit, ...metadata } = obj.metadata ?? {};
  return JSON.stringify({ ...obj, metadata });
}

/** The object stored under `key` at revision `rev`; an `InvalidObject` error when it is not one. */
export function decodeStored(key: string, json: string, rev: number): ApiObject {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    throw new StorageError('InvalidObject', key, { message: `${key}: stored value is not JSON: ${messageOf(err)}` });
  }
  if (!isApiObject(value))
    throw new StorageError('InvalidObject', key, { message: `${key}: stored value is not an API object` });
  value.metadata.resourceVersion = String(rev);
  return value;
}

/** A cached copy as the stored value it was read from; undefined when it carries no usable revision. */
export function storedFromCached(obj: ApiObject): StoredValue | undefined {
  const rev = Number(obj.metadata?.resourceVersion);
  if (!Number.isSafeInteger(rev) || rev <= 0) return undefined;
  return { json: encodeStored(obj), rev };
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
