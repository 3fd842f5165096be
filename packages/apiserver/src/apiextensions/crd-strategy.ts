import type { ApiObject, FieldError } from '@svc/api';
import type { Strategy } from '../registry/strategy.js';
import { cleanupFinalizer, storageVersionOf, type Crd } from './crd.js';
import { validateCrd, validateCrdUpdate } from './crd-validation.js';
import { withDefaults } from './naming.js';

/**
 * CustomResourceDefinition's strategy, as Kubernetes': v1 defaults (names.singular,
 * names.listKind, conversion None, a webhook service's port 443); on create status is reset
 * to the storage version in `storedVersions`; a new storage version is added to it on
 * update; validation of the whole definition; the first delete adds the
 * `customresourcecleanup` finalizer and marks the CRD deleted, so its custom resources go
 * first.
 */
export const crdStrategy: Strategy = {
  allowUnconditionalUpdate: false,
  prepareForCreate(obj) {
    const crd = applyCrdDefaults(obj);
    crd.status = { storedVersions: [storageVersionOf(crd)].filter((v) => v !== '') };
  },
  prepareForUpdate(obj) {
    const crd = applyCrdDefaults(obj);
    const storage = storageVersionOf(crd);
    const status = (crd.status ??= {});
    const stored = (status.storedVersions ??= []);
    if (storage && !stored.includes(storage)) stored.push(storage);
  },
  validate(obj): FieldError[] {
    return validateCrd(obj as Crd);
  },
  validateUpdate(obj, old, ctx): FieldError[] {
    return ctx.subresource === 'status' ? [] : validateCrdUpdate(obj as Crd, old as Crd);
  },
  beforeDelete(obj, _options, now) {
    const m = obj.metadata;
    if (m.deletionTimestamp) return undefined;
    m.finalizers = [...(m.finalizers ?? []).filter((f) => f !== cleanupFinalizer()), cleanupFinalizer()];
    m.deletionTimestamp = now;
    m.deletionGracePeriodSeconds = 0;
    return obj;
  },
};

/** Kubernetes' v1 defaulting of a CRD (SetDefaults_CustomResourceDefinition*). */
export function applyCrdDefaults(obj: ApiObject): Crd {
  const crd = obj as Crd;
  const spec = crd.spec as Partial<Crd['spec']> | undefined;
  if (!spec) return crd;
  if (spec.names?.kind) spec.names = withDefaults(spec.names);
  spec.conversion ??= { strategy: 'None' };
  const service = spec.conversion.webhook?.clientConfig?.service;
  if (service && service.port === undefined) service.port = 443;
  return crd;
}
