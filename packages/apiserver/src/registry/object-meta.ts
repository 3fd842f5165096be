import type { ApiObject, FieldError, ResourceType } from '@svc/api';
import { fieldErrors, group } from '@svc/api';
import {
  validateAnnotations,
  validateDnsLabel,
  validateDnsSubdomain,
  validateLabels,
  validatePathSegmentName,
  validateQualifiedName,
  validateDns1035Label,
} from '@svc/machinery';

/** Finalizers Kubernetes accepts without a domain prefix. */
/** Finalizer names that need no domain: Kubernetes' three, and the CRD cleanup finalizer the server adds itself. */
export function standardFinalizers(): string[] {
  return ['kubernetes', 'orphan', 'foregroundDeletion', `customresourcecleanup.${group('apiextensions')}`];
}

export function validateName(r: ResourceType, name: string, path: string): FieldError[] {
  switch (r.nameRule) {
    case 'dns-label':
      return r.kind === 'Service' ? validateDns1035Label(name, path) : validateDnsLabel(name, path);
    case 'path-segment':
      return validatePathSegmentName(name, path);
    default:
      return validateDnsSubdomain(name, path);
  }
}

/** ObjectMeta rules every type shares (Kubernetes' ValidateObjectMeta). */
export function validateObjectMeta(r: ResourceType, obj: ApiObject): FieldError[] {
  const m = obj.metadata;
  const errs: FieldError[] = [];
  if (!m.name) {
    if (!m.generateName) errs.push(fieldErrors.required('metadata.name', 'name or generateName is required'));
  } else {
    errs.push(...validateName(r, m.name, 'metadata.name'));
  }
  if (r.namespaced) {
    if (!m.namespace) errs.push(fieldErrors.required('metadata.namespace', ''));
    else errs.push(...validateDnsLabel(m.namespace, 'metadata.namespace'));
  } else if (m.namespace) {
    errs.push(fieldErrors.forbidden('metadata.namespace', 'not allowed on this type'));
  }
  if (m.labels) errs.push(...validateLabels(m.labels, 'metadata.labels'));
  if (m.annotations) errs.push(...validateAnnotations(m.annotations, 'metadata.annotations'));
  (m.finalizers ?? []).forEach((f, i) => {
    const path = `metadata.finalizers[${i}]`;
    const errsF = validateQualifiedName(f, path);
    errs.push(...errsF);
    if (errsF.length === 0 && !f.includes('/') && !standardFinalizers().includes(f)) {
      errs.push(fieldErrors.forbidden(path, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  });
  (m.ownerReferences ?? []).forEach((o, i) => {
    const path = `metadata.ownerReferences[${i}]`;
    if (!o.apiVersion)
      errs.push(fieldErrors.invalid(`${path}.apiVersion`, o.apiVersion ?? '', 'version must not be empty'));
    if (!o.kind) errs.push(fieldErrors.invalid(`${path}.kind`, o.kind ?? '', 'kind must not be empty'));
    if (!o.name) errs.push(fieldErrors.invalid(`${path}.name`, o.name ?? '', 'name must not be empty'));
    if (!o.uid) errs.push(fieldErrors.invalid(`${path}.uid`, o.uid ?? '', 'uid must not be empty'));
  });
  if (m.generation !== undefined && m.generation < 0)
    errs.push(fieldErrors.invalid('metadata.generation', m.generation, 'must be greater than or equal to 0'));
  return errs;
}

const IMMUTABLE: Array<'name' | 'namespace' | 'uid' | 'creationTimestamp'> = [
  'name',
  'namespace',
  'uid',
  'creationTimestamp',
];

export function validateObjectMetaUpdate(r: ResourceType, obj: ApiObject, old: ApiObject): FieldError[] {
  const errs = validateObjectMeta(r, obj);
  for (const f of IMMUTABLE) {
    if ((obj.metadata[f] ?? '') !== (old.metadata[f] ?? ''))
      errs.push(fieldErrors.invalid(`metadata.${f}`, obj.metadata[f] ?? '', 'field is immutable'));
  }
  if (old.metadata.deletionTimestamp && obj.metadata.deletionTimestamp !== old.metadata.deletionTimestamp) {
    errs.push(
      fieldErrors.invalid(
        'metadata.deletionTimestamp',
        obj.metadata.deletionTimestamp ?? null,
        'field is immutable; may only be changed via deletion',
      ),
    );
  }
  const oldFinalizers = old.metadata.finalizers ?? [];
  if (old.metadata.deletionTimestamp) {
    const added = (obj.metadata.finalizers ?? []).filter((f) => !oldFinalizers.includes(f));
    if (added.length > 0)
      errs.push(
        fieldErrors.forbidden(
          'metadata.finalizers',
          `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
        ),
      );
  }
  return errs;
}
