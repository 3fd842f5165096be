import { fieldErrors, type ApiObject, type FieldError, type NodeSelectorTerm, type PersistentVolume } from '@svc/api';
import {
  isDns1123Label,
  isDns1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  nameIsDnsSubdomain,
} from '@svc/machinery';
import { deepEqual } from '../object-utils.js';
import { nowRfc3339 } from '../store.js';
import type { Strategy } from '../strategy.js';
import { isQuantity, quantitySign } from './storage-quantity.js';

/** What Go's field errors print for a nil pointer value (`Invalid value: "null"`). */
export const GO_NIL = 'null';

/** The access modes, volume modes and reclaim policies Kubernetes accepts, sorted as its messages list them. */
export const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
export const VOLUME_MODES = ['Block', 'Filesystem'];
const RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'];
const HOST_PATH_TYPES = [
  '',
  'BlockDevice',
  'CharDevice',
  'Directory',
  'DirectoryOrCreate',
  'File',
  'FileOrCreate',
  'Socket',
];

/**
 * The volume types in the order Kubernetes checks them, with the path its "more than 1 volume
 * type" error names (its own spellings: `cephFS`). flexVolume is counted without that check, as there.
 */
const SOURCES: ReadonlyArray<[string, string]> = [
  ['hostPath', 'hostPath'],
  ['gcePersistentDisk', 'gcePersistentDisk'],
  ['awsElasticBlockStore', 'awsElasticBlockStore'],
  ['glusterfs', 'glusterfs'],
  ['flocker', 'flocker'],
  ['nfs', 'nfs'],
  ['rbd', 'rbd'],
  ['quobyte', 'quobyte'],
  ['cephfs', 'cephFS'],
  ['iscsi', 'iscsi'],
  ['cinder', 'cinder'],
  ['fc', 'fc'],
  ['flexVolume', 'flexVolume'],
  ['azureFile', 'azureFile'],
  ['vsphereVolume', 'vsphereVolume'],
  ['photonPersistentDisk', 'photonPersistentDisk'],
  ['portworxVolume', 'portworxVolume'],
  ['azureDisk', 'azureDisk'],
  ['scaleIO', 'scaleIO'],
  ['local', 'local'],
  ['storageos', 'storageos'],
  ['csi', 'csi'],
];

type Spec = NonNullable<PersistentVolume['spec']> & Record<string, unknown>;
const specOf = (o: ApiObject): Spec => (o.spec ?? {}) as Spec;
const invalidEach = (path: string, value: unknown, msgs: string[]): FieldError[] =>
  msgs.map((m) => fieldErrors.invalid(path, value, m));

/** Access modes: supported values, and ReadWriteOncePod alone (Kubernetes' checks for volumes and claims). */
export function validateAccessModes(modes: readonly string[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  let rwop = false;
  let other = false;
  for (const m of modes) {
    if (!ACCESS_MODES.includes(m)) errs.push(fieldErrors.notSupported(path, m, ACCESS_MODES));
    if (m === 'ReadWriteOncePod') rwop = true;
    else if (ACCESS_MODES.includes(m)) other = true;
  }
  if (rwop && other) errs.push(fieldErrors.forbidden(path, 'may not use ReadWriteOncePod with other access modes'));
  return errs;
}

/** A quantity that must be valid and greater than zero (Kubernetes' ValidatePositiveQuantityValue). */
export function validatePositiveQuantity(q: unknown, path: string): FieldError[] {
  if (!isQuantity(q))
    return [
      fieldErrors.invalid(path, q, "must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ];
  return quantitySign(q) <= 0 ? [fieldErrors.invalid(path, String(q), 'must be greater than zero')] : [];
}

/** Kubernetes' ValidateNodeSelectorRequirement (label keys, operators, values). */
function validateNodeSelectorRequirement(r: NodeSelectorTerm['matchExpressions'], path: string): FieldError[] {
  const errs: FieldError[] = [];
  (r ?? []).forEach((req, i) => {
    const p = `${path}[${i}]`;
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0)
          errs.push(fieldErrors.required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0)
          errs.push(
            fieldErrors.forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
          );
        break;
      case 'Gt':
      case 'Lt':
        if (values.length !== 1)
          errs.push(
            fieldErrors.required(`${p}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"),
          );
        break;
      default:
        errs.push(fieldErrors.invalid(`${p}.operator`, req.operator, 'not a valid selector operator'));
    }
    errs.push(...invalidEach(`${p}.key`, req.key, isQualifiedName(req.key)));
    values.forEach((v, j) => errs.push(...invalidEach(`${p}.values[${j}]`, v, isValidLabelValue(v))));
  });
  return errs;
}

/** Kubernetes' ValidateNodeFieldSelectorRequirement: only `metadata.name`, In/NotIn one node name. */
function validateNodeFieldSelectorRequirement(r: NodeSelectorTerm['matchFields'], path: string): FieldError[] {
  const errs: FieldError[] = [];
  (r ?? []).forEach((req, i) => {
    const p = `${path}[${i}]`;
    const values = req.values ?? [];
    if (req.operator === 'In' || req.operator === 'NotIn') {
      if (values.length !== 1)
        errs.push(
          fieldErrors.required(
            `${p}.values`,
            "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
          ),
        );
    } else {
      errs.push(fieldErrors.invalid(`${p}.operator`, req.operator, 'not a valid selector operator'));
    }
    if (req.key !== 'metadata.name')
      errs.push(fieldErrors.invalid(`${p}.key`, req.key, 'not a valid field selector key'));
    else values.forEach((v, j) => errs.push(...invalidEach(`${p}.values[${j}]`, v, nameIsDnsSubdomain(v, false))));
  });
  return errs;
}

/** Kubernetes' ValidateNodeSelector: at least one term, each requirement valid. */
export function validateNodeSelector(terms: readonly NodeSelectorTerm[] | undefined, path: string): FieldError[] {
  const termsPath = `${path}.nodeSelectorTerms`;
  if (!terms || terms.length === 0)
    return [fieldErrors.required(termsPath, 'must have at least one node selector term')];
  return terms.flatMap((t, i) => [
    ...validateNodeSelectorRequirement(t.matchExpressions, `${termsPath}[${i}].matchExpressions`),
    ...validateNodeFieldSelectorRequirement(t.matchFields, `${termsPath}[${i}].matchFields`),
  ]);
}

/** `..` as a path element (Kubernetes' validatePathNoBacksteps). */
function validatePathNoBacksteps(p: string, path: string): FieldError[] {
  return p.split('/').includes('..') ? [fieldErrors.invalid(path, p, "must not contain '..'")] : [];
}

/** A Secret reference of a CSI volume: name a DNS subdomain, namespace a DNS label, both required. */
function validateSecretReference(ref: { name?: string; namespace?: string }, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!ref.name) errs.push(fieldErrors.required(`${path}.name`, ''));
  else errs.push(...invalidEach(`${path}.name`, ref.name, isDns1123Subdomain(ref.name)));
  if (!ref.namespace) errs.push(fieldErrors.required(`${path}.namespace`, ''));
  else errs.push(...invalidEach(`${path}.namespace`, ref.namespace, isDns1123Label(ref.namespace)));
  return errs;
}

/** Kubernetes' ValidateCSIDriverName: required, at most 63 bytes, a DNS subdomain (case-insensitive). */
export function validateCsiDriverName(driver: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (driver.length === 0) errs.push(fieldErrors.required(path, ''));
  if (driver.length > 63) errs.push({ path, type: 'FieldValueTooLong', detail: 'may not be more than 63 bytes' });
  errs.push(...invalidEach(path, driver, isDns1123Subdomain(driver.toLowerCase())));
  return errs;
}

const SECRET_REFS = [
  'controllerPublishSecretRef',
  'controllerExpandSecretRef',
  'nodePublishSecretRef',
  'nodeExpandSecretRef',
] as const;

/** The checks Kubernetes makes on the volume types we name; the others are checked by the schema only. */
function validateSource(name: string, src: Record<string, unknown>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const str = (k: string): string => (typeof src[k] === 'string' ? (src[k] as string) : '');
  switch (name) {
    case 'hostPath': {
      const p = str('path');
      if (!p) return [fieldErrors.required(`${path}.path`, '')];
      errs.push(...validatePathNoBacksteps(p, `${path}.path`));
      const type = src.type;
      if (typeof type === 'string' && !HOST_PATH_TYPES.includes(type))
        errs.push(fieldErrors.notSupported(`${path}.type`, type, HOST_PATH_TYPES));
      return errs;
    }
    case 'local': {
      const p = str('path');
      if (!p) return [fieldErrors.required(`${path}.path`, '')];
      return validatePathNoBacksteps(p, `${path}.path`);
    }
    case 'nfs': {
      if (!str('server')) errs.push(fieldErrors.required(`${path}.server`, ''));
      if (!str('path')) errs.push(fieldErrors.required(`${path}.path`, ''));
      if (!str('path').startsWith('/'))
        errs.push(fieldErrors.invalid(`${path}.path`, str('path'), 'must be an absolute path'));
      return errs;
    }
    case 'csi': {
      errs.push(...validateCsiDriverName(str('driver'), `${path}.driver`));
      if (!str('volumeHandle')) errs.push(fieldErrors.required(`${path}.volumeHandle`, ''));
      for (const ref of SECRET_REFS) {
        const r = src[ref];
        if (r && typeof r === 'object') errs.push(...validateSecretReference(r as { name?: string }, `${path}.${ref}`));
      }
      return errs;
    }
    default:
      return errs;
  }
}

/** Where a PersistentVolumeSpec sits: a volume's `spec` (the default) or a VolumeAttachment's inline one. */
export interface PersistentVolumeSpecContext {
  /** The field path of the spec; `spec` unless said. */
  path?: string;
  /** An inline spec (VolumeAttachment's `source.inlineVolumeSpec`): no claimRef or capacity, csi required. */
  inline?: boolean;
}

/** Kubernetes' ValidatePersistentVolumeSpec, for a PersistentVolume or (inline) a VolumeAttachment's source. */
export function validatePersistentVolumeSpec(spec: Spec, where: PersistentVolumeSpecContext = {}): FieldError[] {
  const p = where.path ?? 'spec';
  const errs: FieldError[] = [];
  if (where.inline) {
    if (spec.claimRef)
      errs.push(fieldErrors.forbidden(`${p}.claimRef`, 'may not be specified in the context of inline volumes'));
    if (Object.keys(spec.capacity ?? {}).length > 0)
      errs.push(fieldErrors.forbidden(`${p}.capacity`, 'may not be specified in the context of inline volumes'));
    if (!spec.csi) errs.push(fieldErrors.required(`${p}.csi`, 'has to be specified in the context of inline volumes'));
  }
  const modes = spec.accessModes ?? [];
  if (modes.length === 0) errs.push(fieldErrors.required(`${p}.accessModes`, ''));
  errs.push(...validateAccessModes(modes, `${p}.accessModes`));
  if (!where.inline) {
    const capacity = spec.capacity ?? {};
    const resources = Object.keys(capacity);
    if (resources.length === 0) errs.push(fieldErrors.required(`${p}.capacity`, ''));
    if (!('storage' in capacity) || resources.length > 1)
      errs.push(fieldErrors.notSupported(`${p}.capacity`, capacity, ['storage']));
    for (const [r, q] of Object.entries(capacity)) errs.push(...validatePositiveQuantity(q, `${p}.capacity[${r}]`));
  }
  const policy = spec.persistentVolumeReclaimPolicy;
  if (policy && !RECLAIM_POLICIES.includes(policy))
    errs.push(fieldErrors.notSupported(`${p}.persistentVolumeReclaimPolicy`, policy, RECLAIM_POLICIES));
  let nodeAffinitySpecified = false;
  if (spec.nodeAffinity) {
    nodeAffinitySpecified = true;
    const required = spec.nodeAffinity.required;
    if (required) errs.push(...validateNodeSelector(required.nodeSelectorTerms, `${p}.nodeAffinity.required`));
    else errs.push(fieldErrors.required(`${p}.nodeAffinity.required`, 'must specify required node constraints'));
  }
  let volumes = 0;
  for (const [name, forbiddenPath] of SOURCES) {
    const src = spec[name];
    if (src === undefined || src === null) continue;
    if (volumes > 0 && name !== 'flexVolume') {
      errs.push(fieldErrors.forbidden(`${p}.${forbiddenPath}`, 'may not specify more than 1 volume type'));
      continue;
    }
    volumes++;
    errs.push(...validateSource(name, src as Record<string, unknown>, `${p}.${name}`));
    if (name === 'local' && !nodeAffinitySpecified)
      errs.push(fieldErrors.required(`${p}.nodeAffinity`, 'Local volume requires node affinity'));
  }
  if (volumes === 0) errs.push(fieldErrors.required(p, 'must specify a volume type'));
  const hostPath = spec.hostPath?.path;
  if (hostPath !== undefined && cleanPath(hostPath) === '/' && policy === 'Recycle')
    errs.push(
      fieldErrors.forbidden(`${p}.persistentVolumeReclaimPolicy`, "may not be 'recycle' for a hostPath mount of '/'"),
    );
  if (spec.storageClassName)
    errs.push(
      ...invalidEach(`${p}.storageClassName`, spec.storageClassName, nameIsDnsSubdomain(spec.storageClassName, false)),
    );
  if (spec.volumeMode !== undefined && !VOLUME_MODES.includes(spec.volumeMode))
    errs.push(fieldErrors.notSupported(`${p}.volumeMode`, spec.volumeMode, VOLUME_MODES));
  return errs;
}

/** Go's path.Clean for the one question asked of it here: is this the root. */
function cleanPath(p: string): string {
  const parts: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') parts.pop();
    else parts.push(seg);
  }
  return p.startsWith('/') ? `/${parts.join('/')}` : parts.join('/') || '.';
}

/** The volume type fields of a spec (its PersistentVolumeSource). */
function sourceOf(spec: Spec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name] of SOURCES) if (spec[name] !== undefined) out[name] = spec[name];
  return out;
}

/** v1 defaults: reclaim policy Retain, volume mode Filesystem, hostPath type ''. */
function setDefaults(spec: Spec): void {
  spec.persistentVolumeReclaimPolicy ??= 'Retain';
  spec.volumeMode ??= 'Filesystem';
  if (spec.hostPath) spec.hostPath.type ??= '';
}

/**
 * VolumeAttributesClass is beta and off in Kubernetes 1.32: `volumeAttributesClassName` is
 * dropped unless the stored object already has one (Kubernetes' DropDisabledSpecFields).
 */
function dropDisabledFields(spec: Spec, old?: Spec): void {
  if (old?.volumeAttributesClassName === undefined) delete spec.volumeAttributesClassName;
}

function validateUpdate(obj: ApiObject, old: ApiObject): FieldError[] {
  const spec = specOf(obj);
  const oldSpec = specOf(old);
  const errs = validatePersistentVolumeSpec(spec);
  const source = sourceOf(spec);
  const oldSource = sourceOf(oldSpec);
  // A CSI volume without a controllerExpandSecretRef may gain one.
  const oldCsi = oldSource.csi as Record<string, unknown> | undefined;
  const newCsi = source.csi as Record<string, unknown> | undefined;
  if (
    oldCsi &&
    newCsi &&
    oldCsi.controllerExpandSecretRef === undefined &&
    newCsi.controllerExpandSecretRef !== undefined
  ) {
    const { controllerExpandSecretRef: _added, ...rest } = newCsi;
    source.csi = rest;
  }
  if (!deepEqual(source, oldSource))
    errs.push(
      fieldErrors.forbidden('spec.persistentvolumesource', 'spec.persistentvolumesource is immutable after creation'),
    );
  if ((spec.volumeMode ?? null) !== (oldSpec.volumeMode ?? null))
    errs.push(fieldErrors.invalid('volumeMode', spec.volumeMode ?? GO_NIL, 'field is immutable'));
  if (oldSpec.nodeAffinity && !deepEqual(spec.nodeAffinity, oldSpec.nodeAffinity))
    errs.push(fieldErrors.invalid('nodeAffinity', spec.nodeAffinity ?? GO_NIL, 'field is immutable'));
  return errs;
}

/**
 * core/v1 PersistentVolume, as Kubernetes 1.32: v1 defaults; status reset on create to Pending
 * with its transition time (PersistentVolumeLastPhaseTransitionTime is GA); status kept on spec
 * writes and spec on status writes; the volume source, volume mode and a set node affinity are
 * immutable; validation with Kubernetes' paths and messages.
 */
export const persistentVolumeStrategy: Strategy = {
  prepareForCreate(obj) {
    const spec = (obj.spec ??= {}) as Spec;
    setDefaults(spec);
    dropDisabledFields(spec);
    obj.status = { phase: 'Pending', lastPhaseTransitionTime: nowRfc3339() };
  },
  prepareForUpdate(obj, old) {
    const spec = (obj.spec ??= {}) as Spec;
    setDefaults(spec);
    dropDisabledFields(spec, specOf(old));
  },
  prepareForStatusUpdate(obj, old) {
    const status = (obj.status ??= {}) as NonNullable<PersistentVolume['status']>;
    const oldStatus = (old.status ?? {}) as NonNullable<PersistentVolume['status']>;
    status.phase ??= 'Pending';
    if (oldStatus.phase === status.phase && status.lastPhaseTransitionTime === undefined) {
      if (oldStatus.lastPhaseTransitionTime !== undefined)
        status.lastPhaseTransitionTime = oldStatus.lastPhaseTransitionTime;
    } else if (
      oldStatus.phase !== status.phase &&
      (status.lastPhaseTransitionTime === undefined ||
        status.lastPhaseTransitionTime === oldStatus.lastPhaseTransitionTime)
    ) {
      status.lastPhaseTransitionTime = nowRfc3339();
    }
  },
  validate: (obj) => validatePersistentVolumeSpec(specOf(obj)),
  validateUpdate(obj, old, ctx) {
    if (ctx.subresource === 'status') return [];
    return validateUpdate(obj, old);
  },
  allowUnconditionalUpdate: true,
};
