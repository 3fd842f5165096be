/**
 * Managed fields after a non-apply write (create, update/PUT, JSON/merge/strategic patch), as
 * Kubernetes' field manager records them: every field whose value the write adds or changes
 * moves to the writer's Update entry (never a conflict), fields the write removes leave every
 * entry, and entries left empty disappear.
 */
import type { ManagedFieldsEntry, Schema } from '@svc/api';
import { trackedFields, type TrackingOptions } from './field-set-of.js';
import {
  DEFAULT_MAX_UPDATE_MANAGERS,
  capUpdateManagers,
  encodeManagedFields,
  managedFieldsBase,
  managerKey,
  normalizeManagedSets,
  tryDecodeManagedFields,
  withoutManagedFields,
  type ManagerFields,
} from './managed-fields.js';
import { isJsonObject } from './merge-patch.js';
import { compareValues } from './typed-compare.js';

export interface UpdateManagedFieldsOptions extends TrackingOptions {
  /** The object before the write; `undefined` for a create. */
  live: unknown;
  /** The object the write will persist (its `metadata.managedFields` as the request left it). */
  updated: unknown;
  manager: string;
  /** The live entries; defaults to `live.metadata.managedFields`. */
  managedFields?: readonly ManagedFieldsEntry[] | undefined;
  schema: Schema;
  apiVersion: string;
  /** Current time (RFC 3339), recorded in the writer's entry when it takes fields. */
  now: string;
  subresource?: string | undefined;
  maxUpdateManagers?: number | undefined;
}

function managedFieldsOf(obj: unknown): unknown {
  return isJsonObject(obj) && isJsonObject(obj.metadata) ? obj.metadata.managedFields : undefined;
}

/**
 * The entries to store with `updated`. They start from `managedFieldsBase` (live entries, the
 * request's own entries, or none after a `[{}]` reset, which happens before this write's
 * changes are recorded), so a reset combined with other changes leaves the writer owning them.
 */
export function updateManagedFields(opts: UpdateManagedFieldsOptions): ManagedFieldsEntry[] {
  const liveEntries = opts.managedFields ?? (managedFieldsOf(opts.live) as ManagedFieldsEntry[] | undefined);
  const base = managedFieldsBase({
    live: liveEntries,
    requested: managedFieldsOf(opts.updated),
    subresource: opts.subresource,
  });
  const sets = normalizeManagedSets(tryDecodeManagedFields(base.entries) ?? new Map(), opts.schema);
  const tracking: TrackingOptions = { ignoreStatus: opts.ignoreStatus, onlyStatus: opts.onlyStatus };

  const before = opts.live === undefined ? undefined : withoutManagedFields(opts.live);
  const after = withoutManagedFields(opts.updated);
  const cmp = compareValues(before, after, opts.schema);
  const taken = trackedFields(cmp.modified.union(cmp.added), tracking);
  const removed = trackedFields(cmp.removed, tracking);

  for (const [k, e] of sets) {
    const fields = e.fields.difference(taken).difference(removed);
    if (fields.isEmpty()) sets.delete(k);
    else sets.set(k, { ...e, fields });
  }
  if (!taken.isEmpty()) {
    const mine: ManagerFields = {
      manager: opts.manager,
      operation: 'Update',
      apiVersion: opts.apiVersion,
      time: opts.now,
      fields: taken,
    };
    if (opts.subresource) mine.subresource = opts.subresource;
    const key = managerKey(mine);
    const prev = sets.get(key);
    if (prev) mine.fields = prev.fields.union(taken);
    sets.set(key, mine);
  }
  return encodeManagedFields(capUpdateManagers(sets, opts.maxUpdateManagers ?? DEFAULT_MAX_UPDATE_MANAGERS));
}
