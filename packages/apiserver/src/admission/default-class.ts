import { group, type ApiObject } from '@svc/api';
import type { AdmissionContext } from './plugins.js';

/**
 * The class the default-class plugins pick among those marked default: the newest by
 * creationTimestamp, then the first by name (Kubernetes 1.32's GetDefaultClass and the
 * DefaultIngressClass plugin's choice); undefined when none is.
 */
export function newestDefaultClass(
  classes: readonly ApiObject[],
  isDefault: (c: ApiObject) => boolean,
): ApiObject | undefined {
  const time = (c: ApiObject): number => Date.parse(c.metadata.creationTimestamp ?? '') || 0;
  return classes
    .filter(isDefault)
    .sort((a, b) => time(b) - time(a) || ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1))[0];
}

type ClassResource = 'storageclasses' | 'ingressclasses';

/** Where the classes are served: storage/v1 StorageClasses, networking/v1 IngressClasses. */
function classesOf(resource: ClassResource): { group: string; version: string; resource: string } {
  return { group: group(resource === 'storageclasses' ? 'storage' : 'networking'), version: 'v1', resource };
}

/** Every class of a kind, from the watch cache (a lister's view); none when the type is not served. */
export function classLister(c: AdmissionContext, resource: ClassResource): () => Promise<ApiObject[]> {
  return async () => {
    const r = classesOf(resource);
    const type = c.catalog.lookup(r.group, r.version, r.resource);
    if (!type) return [];
    return (await c.storeFor(type).list('', { resourceVersion: '0' })).items;
  };
}

/** One class by name, from the cache first; undefined when it does not exist. */
export function classGetter(
  c: AdmissionContext,
  resource: ClassResource,
): (name: string) => Promise<ApiObject | undefined> {
  return (name) => c.read(classesOf(resource), { namespace: '', name });
}
