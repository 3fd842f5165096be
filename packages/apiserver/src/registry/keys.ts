import type { ResourceType } from '@svc/api';

/** `<prefix>/<group-or-core>/<resource>/` — every object of a type lives below it. */
export function resourcePrefix(storePrefix: string, r: Pick<ResourceType, 'group' | 'plural'>): string {
  return `${storePrefix}/${r.group || 'core'}/${r.plural}/`;
}

/** The prefix for one namespace's objects, or all objects when `namespace` is empty. */
export function collectionPrefix(storePrefix: string, r: ResourceType, namespace: string): string {
  const base = resourcePrefix(storePrefix, r);
  return r.namespaced && namespace ? `${base}${namespace}/` : base;
}

/** One object's key; `namespace` is ignored for a cluster-scoped type. */
export function objectKey(storePrefix: string, r: ResourceType, object: { namespace: string; name: string }): string {
  const base = resourcePrefix(storePrefix, r);
  return r.namespaced ? `${base}${object.namespace}/${object.name}` : `${base}${object.name}`;
}
