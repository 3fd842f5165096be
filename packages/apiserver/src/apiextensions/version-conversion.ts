import { groupVersion, type ApiObject, type ResourceType } from '@svc/api';
import { resourcePrefix } from '../registry/keys.js';
import { ConvertingStorage } from '../storage/converting-storage.js';
import type { Storage } from '../storage/interface.js';
import { applyDefaults, type JSONSchemaProps } from './schema/index.js';

/**
 * The storage of one served version of a custom resource: every version shares one key
 * prefix (and so one watch cache); objects are written in the storage version and read in
 * the served one, with the schema's defaults applied on read as Kubernetes does. Conversion
 * `None` only rewrites `apiVersion`.
 */
export function customResourceStorage(storage: Storage, o: { storePrefix: string; resource: ResourceType }): Storage {
  const r = o.resource;
  const custom = r.custom;
  if (!custom) return storage;
  const prefix = resourcePrefix(o.storePrefix, r);
  const served = groupVersion(r);
  const stored = groupVersion({ group: r.group, version: custom.storageVersion });
  const schema = custom.openApiSchema as JSONSchemaProps | undefined;
  const defaults = schema !== undefined && hasDefaults(schema);
  return new ConvertingStorage(storage, {
    servedPrefix: prefix,
    storedPrefix: prefix,
    toStored: (obj) => withApiVersion(obj, stored),
    fromStored: (obj) => {
      const out = withApiVersion(obj, served);
      if (!defaults || !schema) return out;
      const copy = out === obj ? structuredClone(obj) : out;
      applyDefaults(schema, copy);
      return copy;
    },
  });
}

function withApiVersion(obj: ApiObject, apiVersion: string): ApiObject {
  return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
}

/** Whether any node of the schema declares a default. */
export function hasDefaults(schema: unknown): boolean {
  if (schema === null || typeof schema !== 'object') return false;
  if (Array.isArray(schema)) return schema.some(hasDefaults);
  const o = schema as Record<string, unknown>;
  if ('default' in o) return true;
  return Object.entries(o).some(([k, v]) => k !== 'enum' && k !== 'example' && hasDefaults(v));
}
