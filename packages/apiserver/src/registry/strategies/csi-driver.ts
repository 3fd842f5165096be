import { fieldErrors, type ApiObject, type CSIDriver, type CSIDriverSpec, type FieldError } from '@svc/api';
import { deepEqual } from '../object-utils.js';
import type { Strategy } from '../strategy.js';

const FS_GROUP_POLICIES = ['File', 'None', 'ReadWriteOnceWithFSType'];
const LIFECYCLE_MODES = ['Persistent', 'Ephemeral'];
const MIN_TOKEN_SECONDS = 10 * 60;
const MAX_TOKEN_SECONDS = 2 ** 32;
/** Kubernetes' path for attachRequired in its messages (its own spelling). */
const ATTACH_REQUIRED_PATH = 'spec.attachedRequired';

const specOf = (o: ApiObject): CSIDriverSpec => ((o as CSIDriver).spec ??= {});

/**
 * Kubernetes' SetDefaults_CSIDriver (storage/v1): attachRequired true; podInfoOnMount,
 * storageCapacity, requiresRepublish and seLinuxMount false (SELinuxMountReadWriteOncePod is on in
 * 1.32); fsGroupPolicy ReadWriteOnceWithFSType; volumeLifecycleModes [Persistent] when empty.
 */
function setDefaults(obj: ApiObject): void {
  const s = specOf(obj);
  s.attachRequired ??= true;
  s.podInfoOnMount ??= false;
  s.storageCapacity ??= false;
  s.fsGroupPolicy ??= 'ReadWriteOnceWithFSType';
  if ((s.volumeLifecycleModes ?? []).length === 0) s.volumeLifecycleModes = ['Persistent'];
  s.requiresRepublish ??= false;
  s.seLinuxMount ??= false;
}

/** Kubernetes' validateTokenRequests: distinct audiences, expirations between 10 minutes and 2^32 seconds. */
function validateTokenRequests(requests: CSIDriverSpec['tokenRequests']): FieldError[] {
  const errs: FieldError[] = [];
  const audiences = new Set<string>();
  (requests ?? []).forEach((r, i) => {
    const path = `spec.tokenRequests[${i}]`;
    const audience = r.audience ?? '';
    if (audiences.has(audience)) {
      errs.push(fieldErrors.duplicate(`${path}.audience`, audience));
      return;
    }
    audiences.add(audience);
    const seconds = r.expirationSeconds;
    if (seconds === undefined) return;
    if (seconds < MIN_TOKEN_SECONDS)
      errs.push(
        fieldErrors.invalid(`${path}.expirationSeconds`, seconds, 'may not specify a duration less than 10 minutes'),
      );
    if (seconds > MAX_TOKEN_SECONDS)
      errs.push(
        fieldErrors.invalid(
          `${path}.expirationSeconds`,
          seconds,
          'may not specify a duration larger than 2^32 seconds',
        ),
      );
  });
  return errs;
}

/** Kubernetes' validateCSIDriverSpec (1.32): the defaulted booleans present, the enums, the token requests. */
function validateSpec(obj: ApiObject): FieldError[] {
  const s = specOf(obj);
  const errs: FieldError[] = [];
  if (s.attachRequired === undefined) errs.push(fieldErrors.required(ATTACH_REQUIRED_PATH, ''));
  if (s.podInfoOnMount === undefined) errs.push(fieldErrors.required('spec.podInfoOnMount', ''));
  if (s.storageCapacity === undefined) errs.push(fieldErrors.required('spec.storageCapacity', ''));
  if (s.fsGroupPolicy !== undefined && !FS_GROUP_POLICIES.includes(s.fsGroupPolicy))
    errs.push(fieldErrors.notSupported('spec.fsGroupPolicy', s.fsGroupPolicy, FS_GROUP_POLICIES));
  errs.push(...validateTokenRequests(s.tokenRequests));
  for (const mode of s.volumeLifecycleModes ?? [])
    if (!LIFECYCLE_MODES.includes(mode))
      errs.push(fieldErrors.notSupported('spec.volumeLifecycleModes', mode, LIFECYCLE_MODES));
  if (s.seLinuxMount === undefined) errs.push(fieldErrors.required('spec.seLinuxMount', ''));
  return errs;
}

/** How Go's `%#v` prints a []VolumeLifecycleMode (the value of Kubernetes' immutability message). */
function goModes(modes: readonly string[] | undefined): string {
  return modes === undefined
    ? '[]storage.VolumeLifecycleMode(nil)'
    : `[]storage.VolumeLifecycleMode{${modes.map((m) => JSON.stringify(m)).join(', ')}}`;
}

/**
 * storage/v1 CSIDriver (Kubernetes' csiDriverStrategy, 1.32): v1 defaults on every write,
 * generation 1 on create and +1 on spec changes (the store, `hasSpec`), validation with
 * Kubernetes' paths and messages; attachRequired and volumeLifecycleModes immutable
 * (podInfoOnMount, fsGroupPolicy and storageCapacity became mutable in 1.29 and 1.23).
 */
export const csiDriverStrategy: Strategy = {
  prepareForCreate: setDefaults,
  prepareForUpdate: (obj) => setDefaults(obj),
  validate: validateSpec,
  validateUpdate(obj, old) {
    const s = specOf(obj);
    const prev = (old as CSIDriver).spec ?? {};
    const errs = validateSpec(obj);
    if (s.attachRequired !== prev.attachRequired)
      errs.push(fieldErrors.invalid(ATTACH_REQUIRED_PATH, s.attachRequired ?? null, 'field is immutable'));
    if (!deepEqual(s.volumeLifecycleModes, prev.volumeLifecycleModes))
      errs.push({
        path: 'spec.volumeLifecycleModes',
        type: 'FieldValueInvalid',
        detail: `${goModes(s.volumeLifecycleModes)}: field is immutable`,
      });
    return errs;
  },
};
