// Tests read objects straight from etcd to check what a request did (or did not) write.
import type { Etcd3 } from 'etcd3';
import type { Json } from '@svc/testing';

/** An object as stored in etcd: the parsed value and its mod revision. */
export interface StoredObject {
  value: Json;
  modRevision: string;
}

/** The etcd key of a namespaced core object under a server's `--store-prefix`. */
export function coreKey(storePrefix: string, resource: string, object: { namespace: string; name: string }): string {
  return `${storePrefix}/core/${resource}/${object.namespace}/${object.name}`;
}

/** The object stored under `key`, or undefined when there is none. */
export async function readStored(etcd: Etcd3, key: string): Promise<StoredObject | undefined> {
  const kv = (await etcd.get(key).exec()).kvs[0];
  return kv ? { value: JSON.parse(kv.value.toString('utf8')) as Json, modRevision: kv.mod_revision } : undefined;
}
