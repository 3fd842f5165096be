import { fieldErrors, type ApiObject, type CSINode, type CSINodeDriver, type FieldError } from '@svc/api';
import { isQualifiedName } from '@svc/machinery';
import { deepEqual } from '../object-utils.js';
import type { Strategy } from '../strategy.js';
import { validateCsiDriverName } from './persistent-volume.js';

const NODE_ID_MAX = 192;
const NODE_ID_LONGER_MAX = 256;
/** Where Kubernetes 1.32 reports a changed driver entry: the type's name, not `spec.drivers` (changed in 1.33). */
const DRIVER_IMMUTABLE_PATH = 'CSINodeDriver';

const driversOf = (o: ApiObject): CSINodeDriver[] => (o as CSINode).spec?.drivers ?? [];

/** Kubernetes' validateCSINodeDriver: driver name, node ID (required, bounded), allocatable count, unique names and topology keys. */
function validateDriver(d: CSINodeDriver, o: { path: string; names: Set<string>; nodeIdMax: number }): FieldError[] {
  const { path } = o;
  const errs = validateCsiDriverName(d.name ?? '', `${path}.name`);
  const nodeID = d.nodeID ?? '';
  if (nodeID.length === 0) errs.push(fieldErrors.required(`${path}.nodeID`, ''));
  if (nodeID.length > o.nodeIdMax)
    errs.push(fieldErrors.invalid(`${path}.nodeID`, nodeID, `must be ${o.nodeIdMax} characters or less`));
  const count = d.allocatable?.count;
  if (count !== undefined && count < 0)
    errs.push(fieldErrors.invalid(`${path}.allocatable.count`, count, 'must be greater than or equal to 0'));
  if (o.names.has(d.name)) errs.push(fieldErrors.duplicate(`${path}.name`, d.name));
  o.names.add(d.name);
  const keys = new Set<string>();
  for (const key of d.topologyKeys ?? []) {
    if (key.length === 0) errs.push(fieldErrors.required(path, ''));
    if (keys.has(key)) errs.push(fieldErrors.duplicate(path, key));
    keys.add(key);
    for (const m of isQualifiedName(key)) errs.push(fieldErrors.invalid(path, key, m));
  }
  return errs;
}

/** Kubernetes' ValidateCSINode: each driver; node IDs up to 192 characters, 256 when the stored object has a longer one. */
function validateCsiNode(obj: ApiObject, nodeIdMax: number): FieldError[] {
  const names = new Set<string>();
  return driversOf(obj).flatMap((d, i) => validateDriver(d, { path: `spec.drivers[${i}]`, names, nodeIdMax }));
}

/**
 * storage/v1 CSINode (Kubernetes' csiNodeStrategy, 1.32): no defaults, validation with
 * Kubernetes' paths and messages; a driver entry, once listed, may not change (drivers may be
 * added and removed).
 */
export const csiNodeStrategy: Strategy = {
  validate: (obj) => validateCsiNode(obj, NODE_ID_MAX),
  validateUpdate(obj, old) {
    const longer = driversOf(old).some((d) => (d.nodeID ?? '').length > NODE_ID_MAX);
    const errs = validateCsiNode(obj, longer ? NODE_ID_LONGER_MAX : NODE_ID_MAX);
    for (const before of driversOf(old))
      for (const after of driversOf(obj))
        if (before.name === after.name && !deepEqual(before, after))
          errs.push(fieldErrors.invalid(DRIVER_IMMUTABLE_PATH, after, 'field is immutable'));
    return errs;
  },
};
