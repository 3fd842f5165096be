import { namespaceNameLabel, naming, type ApiObject } from '@svc/api';
import type { Strategy } from '../strategy.js';

/** As Kubernetes: every namespace is labelled with its own name (selectors can name it). */
function withNameLabel(obj: ApiObject): void {
  const name = obj.metadata.name;
  if (name) obj.metadata.labels = { ...obj.metadata.labels, [namespaceNameLabel()]: name };
}

interface NamespaceSpec {
  finalizers?: string[];
}

/**
 * Namespaces start Active with the product's finalizer in `spec.finalizers`; deleting one
 * turns it Terminating until the namespace controller has emptied it and removed the
 * finalizer through `/finalize` (Kubernetes' namespace REST).
 */
export const namespaceStrategy: Strategy = {
  prepareForCreate(obj) {
    const spec = (obj.spec ?? {}) as NamespaceSpec;
    const finalizers = spec.finalizers ?? [];
    if (!finalizers.includes(naming().namespaceFinalizer)) finalizers.push(naming().namespaceFinalizer);
    obj.spec = { ...spec, finalizers };
    obj.status = { phase: 'Active' };
    withNameLabel(obj);
  },
  prepareForUpdate(obj, old) {
    obj.spec = structuredClone(old.spec);
    withNameLabel(obj);
  },
  beforeDelete(obj: ApiObject, _options, now) {
    const finalizers = ((obj.spec ?? {}) as NamespaceSpec).finalizers ?? [];
    if (finalizers.length === 0) return undefined;
    if (!obj.metadata.deletionTimestamp) {
      obj.metadata.deletionTimestamp = now;
      obj.metadata.deletionGracePeriodSeconds = 0;
    }
    obj.status = { ...(obj.status as object | undefined), phase: 'Terminating' };
    return obj;
  },
  pendingFinalization(obj) {
    return (((obj.spec ?? {}) as NamespaceSpec).finalizers ?? []).length > 0;
  },
  prepareForFinalize(obj, old) {
    const next = structuredClone(old);
    next.spec = {
      ...(old.spec as object | undefined),
      finalizers: ((obj.spec ?? {}) as NamespaceSpec).finalizers ?? [],
    };
    next.metadata.resourceVersion = obj.metadata.resourceVersion;
    return next;
  },
  returnDeletedObject: true,
};
