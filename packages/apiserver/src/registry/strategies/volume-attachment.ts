import {
  fieldErrors,
  type ApiObject,
  type FieldError,
  type VolumeAttachment,
  type VolumeAttachmentSpec,
  type VolumeAttachmentStatus,
  type VolumeError,
} from '@svc/api';
import { isDns1123Subdomain, utf8Length } from '@svc/machinery';
import { deepEqual } from '../object-utils.js';
import type { Strategy } from '../strategy.js';
import { validateCsiDriverName, validatePersistentVolumeSpec } from './persistent-volume.js';

const MAX_METADATA_BYTES = 256 * 1024;
const MAX_ERROR_MESSAGE = 1024;
const EXACTLY_ONE = 'must specify exactly one of inlineVolumeSpec and persistentVolumeName';

const va = (o: ApiObject): VolumeAttachment => o as VolumeAttachment;
const invalidEach = (path: string, value: unknown, msgs: string[]): FieldError[] =>
  msgs.map((m) => fieldErrors.invalid(path, value, m));
const tooLong = (path: string, max: number): FieldError => ({
  path,
  type: 'FieldValueTooLong',
  detail: `may not be more than ${max} bytes`,
});

/** Kubernetes' validateVolumeAttachmentSource: exactly one of the two, a persistentVolumeName not empty, an inline spec valid. */
function validateSource(source: VolumeAttachmentSpec['source'] | undefined): FieldError[] {
  const path = 'spec.source';
  const pv = source?.persistentVolumeName;
  const inline = source?.inlineVolumeSpec;
  if (inline === undefined && pv === undefined) return [fieldErrors.required(path, EXACTLY_ONE)];
  if (inline !== undefined && pv !== undefined) return [fieldErrors.forbidden(path, EXACTLY_ONE)];
  if (pv !== undefined)
    return pv.length === 0
      ? [fieldErrors.required(`${path}.persistentVolumeName`, 'must specify non empty persistentVolumeName')]
      : [];
  return validatePersistentVolumeSpec(inline as Parameters<typeof validatePersistentVolumeSpec>[0], {
    path: `${path}.inlineVolumeSpec`,
    inline: true,
  });
}

function validateVolumeError(e: VolumeError | undefined, path: string): FieldError[] {
  // Kubernetes names the metadata limit (256 KiB) in this message, not the 1024 it checks.
  return e && (e.message ?? '').length > MAX_ERROR_MESSAGE ? [tooLong(`${path}.message`, MAX_METADATA_BYTES)] : [];
}

/** Kubernetes' validateVolumeAttachmentStatus: metadata up to 256 KiB, error messages up to 1024 bytes. */
function validateStatus(st: VolumeAttachmentStatus | undefined): FieldError[] {
  const errs: FieldError[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(st?.attachmentMetadata ?? {})) size += utf8Length(k) + utf8Length(v);
  if (size > MAX_METADATA_BYTES) errs.push(tooLong('status.attachmentMetadata', MAX_METADATA_BYTES));
  errs.push(...validateVolumeError(st?.attachError, 'status.attachError'));
  errs.push(...validateVolumeError(st?.detachError, 'status.detachError'));
  return errs;
}

/** Kubernetes' ValidateVolumeAttachment: attacher, source and node name, the status. */
function validate(obj: ApiObject): FieldError[] {
  const spec = va(obj).spec;
  const nodeName = spec?.nodeName ?? '';
  const errs: FieldError[] = [];
  if ((spec?.attacher ?? '').length === 0) errs.push(fieldErrors.required('spec.attacher', ''));
  errs.push(...validateSource(spec?.source));
  errs.push(...invalidEach('spec.nodeName', nodeName, isDns1123Subdomain(nodeName)));
  errs.push(...validateStatus(va(obj).status));
  return errs;
}

/**
 * Kubernetes' ValidateVolumeAttachmentV1, run on create only: the attacher a CSI driver name (its
 * Required error already given), the volume name a valid object name.
 */
function validateV1(obj: ApiObject, errs: FieldError[]): FieldError[] {
  const spec = va(obj).spec;
  for (const e of validateCsiDriverName(spec?.attacher ?? '', 'spec.attacher'))
    if (!errs.some((x) => x.path === e.path && x.type === e.type)) errs.push(e);
  const pv = spec?.source?.persistentVolumeName;
  if (pv !== undefined) errs.push(...invalidEach('spec.source.persistentVolumeName', pv, isDns1123Subdomain(pv)));
  return errs;
}

/** The generated v1 defaulter's part for an inline volume: a hostPath's type is ''. */
function setDefaults(obj: ApiObject): void {
  const hostPath = va(obj).spec?.source?.inlineVolumeSpec?.hostPath;
  if (hostPath) hostPath.type ??= '';
}

/**
 * storage/v1 VolumeAttachment (Kubernetes' volumeAttachmentStrategy, 1.32): status cleared on
 * create (`attached: false`, as Go writes the empty status) and kept on spec writes (the store),
 * spec kept on status writes; the spec is immutable; validation with Kubernetes' paths and messages.
 */
export const volumeAttachmentStrategy: Strategy = {
  prepareForCreate(obj) {
    setDefaults(obj);
    obj.status = { attached: false };
  },
  prepareForUpdate: (obj) => setDefaults(obj),
  validate: (obj) => validateV1(obj, validate(obj)),
  validateUpdate(obj, old) {
    const errs = validate(obj);
    if (!deepEqual(va(obj).spec, va(old).spec))
      errs.push(fieldErrors.invalid('spec', va(obj).spec ?? null, 'field is immutable'));
    return errs;
  },
};
