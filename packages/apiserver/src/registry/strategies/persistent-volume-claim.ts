import {
  classAnnotationKey,
  fieldErrors,
  group,
  naming,
  type ApiObject,
  type FieldError,
  type PersistentVolumeClaim,
} from '@svc/api';
import {
  isDns1123Label,
  isDns1123Subdomain,
  isQualifiedName,
  nameIsDnsSubdomain,
  validateLabelSelector,
} from '@svc/machinery';
import { deepEqual, clone } from '../object-utils.js';
import type { Strategy } from '../strategy.js';
import { GO_NIL, VOLUME_MODES, validateAccessModes, validatePositiveQuantity } from './persistent-volume.js';
import { compareQuantities, isQuantity } from './storage-quantity.js';

type Spec = NonNullable<PersistentVolumeClaim['spec']>;
type Status = NonNullable<PersistentVolumeClaim['status']>;
const specOf = (o: ApiObject): Spec => (o.spec ?? {}) as Spec;
const statusOf = (o: ApiObject): Status => (o.status ?? {}) as Status;
const invalidEach = (path: string, value: unknown, msgs: string[]): FieldError[] =>
  msgs.map((m) => fieldErrors.invalid(path, value, m));

const betaClassAnnotation = (): string => classAnnotationKey('beta-storage-class');

const RESIZE_STATUSES = [
  'ControllerResizeFailed',
  'ControllerResizeInProgress',
  'NodeResizeFailed',
  'NodeResizeInProgress',
  'NodeResizePending',
];

/** A dataSource or dataSourceRef: name and kind required, PersistentVolumeClaim in the core group, a DNS-subdomain group. */
function validateDataSource(
  ds: { apiGroup?: string; kind?: string; name?: string; namespace?: string },
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  if (!ds.name) errs.push(fieldErrors.required(`${path}.name`, ''));
  if (!ds.kind) errs.push(fieldErrors.required(`${path}.kind`, ''));
  const apiGroup = ds.apiGroup ?? '';
  if (apiGroup === '' && ds.kind !== 'PersistentVolumeClaim')
    errs.push(
      fieldErrors.invalid(path, ds.kind ?? '', "must be 'PersistentVolumeClaim' when referencing the default apiGroup"),
    );
  if (apiGroup !== '') errs.push(...invalidEach(`${path}.apiGroup`, apiGroup, isDns1123Subdomain(apiGroup)));
  if (ds.namespace) errs.push(...invalidEach(`${path}.namespace`, ds.namespace, isDns1123Label(ds.namespace)));
  return errs;
}

/** Kubernetes' ValidatePersistentVolumeClaimSpec (VolumeAttributesClass off, as 1.32 ships). */
export function validatePersistentVolumeClaimSpec(spec: Spec, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const modes = spec.accessModes ?? [];
  if (modes.length === 0) errs.push(fieldErrors.required(`${path}.accessModes`, 'at least 1 access mode is required'));
  if (spec.selector) errs.push(...validateLabelSelector(spec.selector, `${path}.selector`));
  errs.push(...validateAccessModes(modes, `${path}.accessModes`));
  const requests = spec.resources?.requests ?? {};
  const storagePath = `${path}.resources[storage]`;
  if (!('storage' in requests)) errs.push(fieldErrors.required(storagePath, ''));
  else errs.push(...validatePositiveQuantity(requests.storage, storagePath));
  if (spec.storageClassName)
    errs.push(
      ...invalidEach(
        `${path}.storageClassName`,
        spec.storageClassName,
        nameIsDnsSubdomain(spec.storageClassName, false),
      ),
    );
  if (spec.volumeMode !== undefined && !VOLUME_MODES.includes(spec.volumeMode))
    errs.push(fieldErrors.notSupported(`${path}.volumeMode`, spec.volumeMode, VOLUME_MODES));
  if (spec.dataSource) errs.push(...validateDataSource(spec.dataSource, `${path}.dataSource`));
  const ref = spec.dataSourceRef;
  if (ref) errs.push(...validateDataSource(ref, `${path}.dataSourceRef`));
  if (ref?.namespace) {
    if (spec.dataSource)
      errs.push(
        fieldErrors.invalid(
          path,
          `${path}.dataSource`,
          'may not be specified when dataSourceRef.namespace is specified',
        ),
      );
  } else if (spec.dataSource && ref) {
    const d = spec.dataSource;
    if ((d.apiGroup ?? null) !== (ref.apiGroup ?? null) || d.kind !== ref.kind || d.name !== ref.name)
      errs.push(fieldErrors.invalid(path, `${path}.dataSource`, 'must match dataSourceRef'));
  }
  return errs;
}

/**
 * Kubernetes' ValidatePersistentVolumeClaimUpdate: the spec is immutable but for a volumeName set
 * once, a storage class set where there was none, and `resources.requests.storage` of a bound
 * claim; with RecoverVolumeExpansionFailure (beta, on in 1.32) a request may shrink, but not to
 * or below `status.capacity`.
 */
function validateClaimUpdate(obj: ApiObject, old: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = specOf(obj);
  const oldSpec = specOf(old);
  const next = clone(spec);
  const prev = clone(oldSpec);
  if (!prev.volumeName) {
    if (next.volumeName === undefined) delete prev.volumeName;
    else prev.volumeName = next.volumeName;
  }
  // From no class to a class; from the old beta annotation to the field naming the same class.
  const oldAnnotation = old.metadata.annotations?.[betaClassAnnotation()];
  const newAnnotation = obj.metadata.annotations?.[betaClassAnnotation()];
  const setsClass = next.storageClassName !== undefined && prev.storageClassName === undefined;
  if (
    setsClass &&
    oldAnnotation !== undefined &&
    next.storageClassName === oldAnnotation &&
    (newAnnotation === undefined || newAnnotation === oldAnnotation)
  ) {
    prev.storageClassName = next.storageClassName;
  } else {
    if ((newAnnotation ?? '') !== (oldAnnotation ?? ''))
      errs.push(
        fieldErrors.invalid(`metadata.annotations.${betaClassAnnotation()}`, newAnnotation ?? '', 'field is immutable'),
      );
    if (setsClass && (oldAnnotation === undefined || next.storageClassName === oldAnnotation))
      prev.storageClassName = next.storageClassName;
  }
  if (statusOf(obj).phase === 'Bound' && next.resources?.requests) {
    const oldStorage = oldSpec.resources?.requests?.storage;
    if (oldStorage === undefined) delete next.resources.requests.storage;
    else next.resources.requests.storage = oldStorage;
  }
  if (prev.volumeAttributesClassName === undefined) delete next.volumeAttributesClassName;
  else next.volumeAttributesClassName = prev.volumeAttributesClassName;
  if (!deepEqual(next, prev))
    errs.push(
      fieldErrors.forbidden(
        'spec',
        'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
      ),
    );
  const newSize = spec.resources?.requests?.storage;
  const oldSize = oldSpec.resources?.requests?.storage;
  if (compareQuantities(newSize, oldSize) < 0 && compareQuantities(newSize, statusOf(old).capacity?.storage) <= 0)
    errs.push(fieldErrors.forbidden('spec.resources.requests.storage', 'field can not be less than status.capacity'));
  if ((spec.volumeMode ?? null) !== (oldSpec.volumeMode ?? null))
    errs.push(fieldErrors.invalid('volumeMode', spec.volumeMode ?? GO_NIL, 'field is immutable'));
  return errs;
}

/** Kubernetes' ValidatePersistentVolumeClaimStatusUpdate. */
function validateStatusUpdate(obj: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  if ((specOf(obj).accessModes ?? []).length === 0) errs.push(fieldErrors.required('Spec.accessModes', ''));
  const status = statusOf(obj);
  for (const [r, q] of Object.entries(status.capacity ?? {}))
    if (!isQuantity(q) || compareQuantities(q, 0) < 0)
      errs.push(fieldErrors.invalid(`status.capacity[${r}]`, q, 'must be a valid resource quantity'));
  for (const [r, v] of Object.entries(status.allocatedResourceStatuses ?? {})) {
    const path = 'status.allocatedResourceStatus';
    const keyErrs = validateResourceKey(r, path);
    errs.push(...keyErrs);
    if (!RESIZE_STATUSES.includes(v)) errs.push(fieldErrors.notSupported(path, r, RESIZE_STATUSES));
  }
  for (const [r, q] of Object.entries(status.allocatedResources ?? {})) {
    const keyErrs = validateResourceKey(r, 'status.allocatedResources');
    if (keyErrs.length > 0) errs.push(...keyErrs);
    else if (!isQuantity(q) || compareQuantities(q, 0) < 0)
      errs.push(fieldErrors.invalid(`status.allocatedResources[${r}]`, q, 'must be a valid resource quantity'));
  }
  return errs;
}

/** Resource names of a claim's status: qualified names; native ones (no domain, or the naming's) only `storage`. */
function validateResourceKey(key: string, path: string): FieldError[] {
  const errs = invalidEach(path, key, isQualifiedName(key));
  if (errs.length > 0) return errs;
  const native = !key.includes('/') || key.includes(`${naming().labelPrefix}/`);
  if (native && key !== 'storage') return [fieldErrors.notSupported(path, key, ['storage'])];
  return [];
}

/**
 * The data source of a claim is kept only when it is another claim or a VolumeSnapshot; then
 * dataSource and dataSourceRef mirror each other (Kubernetes' EnforceDataSourceBackwardsCompatibility
 * and NormalizeDataSources, AnyVolumeDataSource being GA).
 */
function normalizeDataSources(spec: Spec, old?: Spec): void {
  const inUse = old?.dataSource !== undefined || old?.dataSourceRef !== undefined;
  const d = spec.dataSource;
  if (!inUse && d) {
    const apiGroup = d.apiGroup ?? '';
    const claim = d.kind === 'PersistentVolumeClaim' && apiGroup === '';
    const snapshot = d.kind === 'VolumeSnapshot' && apiGroup === group('snapshot.storage');
    if (!claim && !snapshot) delete spec.dataSource;
  }
  if (spec.dataSource && !spec.dataSourceRef) {
    const { apiGroup, kind, name } = spec.dataSource;
    spec.dataSourceRef = { kind, name, ...(apiGroup !== undefined ? { apiGroup } : {}) };
  } else if (spec.dataSourceRef && !spec.dataSource && !spec.dataSourceRef.namespace) {
    const { apiGroup, kind, name } = spec.dataSourceRef;
    spec.dataSource = { kind, name, ...(apiGroup !== undefined ? { apiGroup } : {}) };
  }
}

function prepare(obj: ApiObject, old?: ApiObject): void {
  const spec = (obj.spec ??= {}) as Spec;
  spec.volumeMode ??= 'Filesystem';
  // VolumeAttributesClass is beta and off in 1.32: the field is dropped unless already in use.
  if (old === undefined || specOf(old).volumeAttributesClassName === undefined) delete spec.volumeAttributesClassName;
  normalizeDataSources(spec, old ? specOf(old) : undefined);
}

/**
 * core/v1 PersistentVolumeClaim, as Kubernetes 1.32: volumeMode defaults to Filesystem, status
 * starts Pending and is kept on spec writes (spec on status writes), data sources normalized,
 * validation and the update rules of ValidatePersistentVolumeClaimUpdate with Kubernetes' messages.
 */
export const persistentVolumeClaimStrategy: Strategy = {
  prepareForCreate(obj) {
    prepare(obj);
    obj.status = { phase: 'Pending' };
  },
  prepareForUpdate(obj, old) {
    prepare(obj, old);
  },
  prepareForStatusUpdate(obj) {
    ((obj.status ??= {}) as Status).phase ??= 'Pending';
  },
  validate: (obj) => validatePersistentVolumeClaimSpec(specOf(obj), 'spec'),
  validateUpdate(obj, old, ctx) {
    if (ctx.subresource === 'status') return validateStatusUpdate(obj);
    return [...validatePersistentVolumeClaimSpec(specOf(obj), 'spec'), ...validateClaimUpdate(obj, old)];
  },
  allowUnconditionalUpdate: true,
};
