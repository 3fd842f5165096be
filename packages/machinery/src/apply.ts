/**
 * Server-side apply (structured-merge-diff's `Updater.Apply` with Kubernetes' field manager
 * around it). The applied configuration is merged into the live object; fields the same
 * manager applied last time but omits now are removed unless another manager owns them; the
 * manager's Apply entry becomes exactly the applied fields; fields whose value changes and that
 * other managers own are conflicts (409) unless forced, in which case those managers lose them;
 * fields the result no longer has are dropped from every entry.
 */
import { badRequest, type ManagedFieldsEntry, type Schema } from '@svc/api';
import { applyConflictError, type ApplyConflict } from './apply-conflict.js';
import { FieldSet } from './field-set.js';
import { ensureNamedFieldsAreMembers, rawFieldSetOf, trackedFields, type TrackingOptions } from './field-set-of.js';
import { jsonEqual } from './json-compare.js';
import {
  allowedConflictsFromLastApplied,
  defaultClientSideApplyManagers,
  lastAppliedOf,
  setLastApplied,
} from './last-applied.js';
import {
  DEFAULT_MAX_UPDATE_MANAGERS,
  capUpdateManagers,
  encodeManagedFields,
  managerKey,
  normalizeManagedSets,
  setManagedFields,
  tryDecodeManagedFields,
  withoutManagedFields,
  type ManagedSets,
  type ManagerFields,
} from './managed-fields.js';
import { isJsonObject, type JsonObject } from './merge-patch.js';
import { compareValues, type Comparison } from './typed-compare.js';
import { mergeApplied, removeFields } from './typed-merge.js';

/** Manager Kubernetes credits with an object's fields when it is first applied to without managed fields. */
export const BEFORE_FIRST_APPLY_MANAGER = 'before-first-apply';

export interface ApplyOptions extends TrackingOptions {
  /** The current object; `undefined` when the apply creates it. */
  live: unknown;
  /** The apply body: a partial object of the type (apiVersion, kind and name included). */
  applied: unknown;
  manager: string;
  /** The live entries; defaults to `live.metadata.managedFields`. */
  managedFields?: readonly ManagedFieldsEntry[] | undefined;
  schema: Schema;
  force?: boolean;
  /** The version the request is served at; recorded in the entry. */
  apiVersion: string;
  /** Current time (RFC 3339), recorded in entries this write touches. */
  now: string;
  subresource?: string | undefined;
  /** The CLI's last-applied annotation; without it there is no client-side apply migration. */
  lastAppliedAnnotation?: string | undefined;
  /** Managers whose applies migrate from client-side apply; default `defaultClientSideApplyManagers()`. */
  clientSideApplyManagers?: readonly string[] | undefined;
  maxUpdateManagers?: number | undefined;
}

export interface ApplyResult {
  /** The object to persist, `metadata.managedFields` set to `managedFields` (absent when empty). */
  object: JsonObject;
  managedFields: ManagedFieldsEntry[];
  /** Whether anything but managed fields differs from the live object. */
  changed: boolean;
}

type Outcome = { kind: 'ok'; object: unknown; sets: ManagedSets } | { kind: 'conflict'; conflicts: ApplyConflict[] };

/**
 * Applies `applied` for `manager`. Throws a 400 `BadRequest` for a body that is not an object
 * or that sets `metadata.managedFields`, and a 409 `Conflict` (see `applyConflictError`) when
 * the apply would change fields other managers own and `force` is not set. The result is not
 * validated: the caller validates the object as for any write.
 */
export function applyPatch(opts: ApplyOptions): ApplyResult {
  const { applied, schema } = opts;
  if (!isJsonObject(applied)) throw badRequest('the apply body must be a JSON object');
  if (
    isJsonObject(applied.metadata) &&
    applied.metadata.managedFields !== undefined &&
    applied.metadata.managedFields !== null
  ) {
    throw badRequest('metadata.managedFields must be nil');
  }
  const live = opts.live === undefined ? undefined : withoutManagedFields(opts.live);
  const config = withoutManagedFields(applied);
  const entries = opts.managedFields ?? managedFieldsOf(opts.live);
  let sets = normalizeManagedSets(tryDecodeManagedFields(entries) ?? new Map(), schema);
  const tracking: TrackingOptions = { ignoreStatus: opts.ignoreStatus, onlyStatus: opts.onlyStatus };

  if (live !== undefined && sets.size === 0) sets = creditExistingFields(live, opts, tracking);

  const attempt = { live, config, sets, tracking };
  let outcome = applyOnce(opts, { ...attempt, force: opts.force === true });
  if (
    outcome.kind === 'conflict' &&
    opts.lastAppliedAnnotation &&
    (opts.clientSideApplyManagers ?? defaultClientSideApplyManagers()).includes(opts.manager)
  ) {
    const allowed = allowedConflictsFromLastApplied({
      live,
      annotation: opts.lastAppliedAnnotation,
      apiVersion: opts.apiVersion,
      schema,
      tracking,
    });
    if (allowed) {
      const remaining = outcome.conflicts.filter((c) => !allowed.has(c.path));
      outcome =
        remaining.length === 0
          ? applyOnce(opts, { ...attempt, force: true })
          : { kind: 'conflict', conflicts: remaining };
    }
  }
  if (outcome.kind === 'conflict') throw applyConflictError(outcome.conflicts);

  const object = (isJsonObject(outcome.object) ? outcome.object : {}) as JsonObject;
  const key = managerKey({
    manager: opts.manager,
    operation: 'Apply',
    apiVersion: opts.apiVersion,
    subresource: opts.subresource,
  });
  const mine = outcome.sets.get(key);
  // Kubernetes stamps the applier's entry only when the object changed; a new entry always gets a time here.
  if (mine && (!jsonEqual(live, object) || !mine.time)) mine.time = opts.now;

  if (
    opts.lastAppliedAnnotation &&
    live !== undefined &&
    lastAppliedOf(live, opts.lastAppliedAnnotation) !== undefined &&
    (opts.clientSideApplyManagers ?? defaultClientSideApplyManagers()).includes(opts.manager)
  ) {
    setLastApplied(object, config, opts.lastAppliedAnnotation);
  }

  const changed = !jsonEqual(live, object);
  const managedFields = encodeManagedFields(
    capUpdateManagers(outcome.sets, opts.maxUpdateManagers ?? DEFAULT_MAX_UPDATE_MANAGERS),
  );
  setManagedFields(object, managedFields);
  return { object, managedFields, changed };
}

function managedFieldsOf(obj: unknown): readonly ManagedFieldsEntry[] | undefined {
  if (!isJsonObject(obj) || !isJsonObject(obj.metadata)) return undefined;
  const mf = obj.metadata.managedFields;
  return Array.isArray(mf) ? (mf as ManagedFieldsEntry[]) : undefined;
}

/** An object without managed fields: its current fields go to `before-first-apply` (Update). */
function creditExistingFields(live: unknown, opts: ApplyOptions, tracking: TrackingOptions): ManagedSets {
  const fields = tracked(compareValues(undefined, live, opts.schema).added, tracking);
  const sets: ManagedSets = new Map();
  if (fields.isEmpty()) return sets;
  const e: ManagerFields = {
    manager: BEFORE_FIRST_APPLY_MANAGER,
    operation: 'Update',
    apiVersion: opts.apiVersion,
    time: opts.now,
    fields,
  };
  if (opts.subresource) e.subresource = opts.subresource;
  sets.set(managerKey(e), e);
  return sets;
}

function tracked(set: FieldSet, tracking: TrackingOptions): FieldSet {
  return trackedFields(set, tracking);
}

function trackedComparison(c: Comparison, tracking: TrackingOptions): Comparison {
  return {
    added: tracked(c.added, tracking),
    modified: tracked(c.modified, tracking),
    removed: tracked(c.removed, tracking),
  };
}

/** One merge of the applied configuration into the live object; both without managed fields. */
interface ApplyAttempt {
  live: unknown;
  config: unknown;
  /** The live managed field sets, normalized. */
  sets: ManagedSets;
  tracking: TrackingOptions;
  /** Whether conflicts are overridden instead of reported. */
  force: boolean;
}

function applyOnce(opts: ApplyOptions, { live, config, sets, tracking, force }: ApplyAttempt): Outcome {
  const { schema } = opts;
  const merged = mergeApplied(live ?? {}, config, schema);
  const key = managerKey({
    manager: opts.manager,
    operation: 'Apply',
    apiVersion: opts.apiVersion,
    subresource: opts.subresource,
  });
  const last = sets.get(key);
  const next: ManagedSets = new Map();
  for (const [k, e] of sets) next.set(k, { ...e });
  const mine: ManagerFields = {
    manager: opts.manager,
    operation: 'Apply',
    apiVersion: opts.apiVersion,
    fields: tracked(rawFieldSetOf(config, schema), tracking),
  };
  if (last?.time) mine.time = last.time;
  if (opts.subresource) mine.subresource = opts.subresource;
  next.set(key, mine);

  // Nothing to prune when the manager still applies every path it applied last time.
  const omitted = last ? last.fields.difference(mine.fields) : undefined;
  const object =
    omitted && !omitted.isEmpty() ? prune(merged, { last: last?.fields, sets: next, schema, tracking }) : merged;
  const cmp = trackedComparison(compareValues(live, object, schema), tracking);
  const changedOrAdded = cmp.modified.union(cmp.added);

  const conflicts: ApplyConflict[] = [];
  const lost = new Map<string, FieldSet>();
  for (const k of [...next.keys()].sort()) {
    if (k === key) continue;
    const e = next.get(k) as ManagerFields;
    const c = e.fields.intersection(changedOrAdded);
    if (c.isEmpty()) continue;
    lost.set(k, c);
    for (const path of c.paths()) {
      const conflict: ApplyConflict = { manager: e.manager, operation: e.operation, apiVersion: e.apiVersion, path };
      if (e.subresource) conflict.subresource = e.subresource;
      conflicts.push(conflict);
    }
  }
  if (conflicts.length > 0 && !force) return { kind: 'conflict', conflicts };

  for (const [k, e] of next) {
    if (k === key) continue;
    const fields = e.fields.difference(lost.get(k) ?? new FieldSet()).difference(cmp.removed);
    if (fields.isEmpty()) next.delete(k);
    else e.fields = fields;
  }
  if (mine.fields.isEmpty()) next.delete(key);
  return { kind: 'ok', object, sets: next };
}

interface PruneOptions {
  /** What the manager applied last time. */
  last: FieldSet | undefined;
  /** Every manager's fields after this apply. */
  sets: ManagedSets;
  schema: Schema;
  tracking: TrackingOptions;
}

/**
 * Removes from `merged` what the manager applied last time (`last`) and nobody owns now, as
 * structured-merge-diff's prune: named struct fields above an owned path count as owned, and
 * fields no manager can own (identity metadata, untracked status) are never removed.
 */
function prune(merged: unknown, { last, sets, schema, tracking }: PruneOptions): unknown {
  if (!last || last.isEmpty()) return merged;
  const ensure = (s: FieldSet): FieldSet => ensureNamedFieldsAreMembers(s, schema);
  const mergedRaw = rawFieldSetOf(merged, schema);
  let owned = mergedRaw.difference(trackedFields(mergedRaw, tracking));
  for (const e of sets.values()) owned = owned.union(e.fields);
  const lastE = ensure(last);
  const mergedE = ensure(mergedRaw);
  const pruned1 = removeFields(merged, lastE, schema);
  const r1 = mergedE.difference(ensure(rawFieldSetOf(pruned1, schema)).union(ensure(owned)));
  const pruned2 = removeFields(merged, r1, schema);
  const r2 = mergedE.difference(ensure(rawFieldSetOf(pruned2, schema))).intersection(lastE);
  return removeFields(merged, r2, schema);
}
