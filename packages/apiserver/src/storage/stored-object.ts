import { isApiObject, type ApiObject } from '@svc/api';
import { jsonEqual } from '@svc/machinery';
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

/**
 * `obj` as of `rev`: a shallow copy with that resourceVersion, sharing everything else (for a
 * deleted object, whose last version is reported at the delete's revision).
 */
export function atRevision(obj: ApiObject, rev: number): ApiObject {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rev) } };
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

/** A compare-and-swap against a revision: the new revision, or the value that won instead. */
export type CasResult<C extends StoredValue> = { rev: number; current?: undefined } | { rev?: undefined; current: C };

/**
 * The optimistic loop of every store's guaranteedUpdate: apply `tryUpdate` to the current
 * value (the cached copy first), write it with `cas` at that value's revision, and on a
 * conflict go again from the value that won. A no-op computed from a cached copy is confirmed
 * against a fresh read; `mustWrite` forces the write of an unchanged value read from the
 * store (etcd: one not under the current encryption key).
 */
export async function casUpdate<C extends StoredValue>(o: {
  key: string;
  cached?: ApiObject;
  tryUpdate: (current: ApiObject) => ApiObject | Promise<ApiObject>;
  read: () => Promise<C>;
  cas: (json: string, rev: number) => Promise<CasResult<C>>;
  mustWrite?: (read: C) => boolean;
}): Promise<ApiObject> {
  let cur: StoredValue | undefined = o.cached ? storedFromCached(o.cached) : undefined;
  let read: C | undefined;
  if (!cur) cur = read = await o.read();
  for (;;) {
    const updated = await o.tryUpdate(decodeStored(o.key, cur.json, cur.rev));
    const json = encodeStored(updated);
    const forced = read !== undefined && o.mustWrite?.(read) === true;
    if (!forced && (json === cur.json || jsonEqual(JSON.parse(json), JSON.parse(cur.json)))) {
      if (read) return decodeStored(o.key, cur.json, cur.rev);
      cur = read = await o.read();
      continue;
    }
    const written = await o.cas(json, cur.rev);
    if (written.rev !== undefined) return decodeStored(o.key, json, written.rev);
    cur = read = written.current;
  }
}

/**
 * The optimistic loop of every store's delete: `check` runs against the state about to be
 * deleted (when it throws on a cached copy, it is retried once against a fresh read), then
 * `cas` deletes at that state's revision; on a conflict it goes again from the value that won.
 */
export async function casDelete<C extends StoredValue>(o: {
  key: string;
  cached?: ApiObject;
  check?: (obj: ApiObject) => void;
  read: () => Promise<C>;
  cas: (rev: number) => Promise<CasResult<C>>;
}): Promise<ApiObject> {
  let cur: StoredValue | undefined = o.cached ? storedFromCached(o.cached) : undefined;
  let fromCache = cur !== undefined;
  if (!cur) cur = await o.read();
  for (;;) {
    const obj = decodeStored(o.key, cur.json, cur.rev);
    if (o.check) {
      try {
        o.check(obj);
      } catch (err) {
        if (!fromCache) throw err;
        cur = await o.read();
        fromCache = false;
        continue;
      }
    }
    const written = await o.cas(cur.rev);
    if (written.rev !== undefined) return obj;
    cur = written.current;
    fromCache = false;
  }
}
