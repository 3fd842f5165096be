/**
 * `metadata.managedFields` in and out: entries decoded to field sets keyed by manager identity,
 * encoded back in Kubernetes' order, the cap on Update entries, and the choice of which entries
 * a write starts from. One entry exists per (manager, operation, subresource), and for Update
 * entries also per apiVersion, as Kubernetes keys them.
 */
import type { ManagedFieldsEntry, Schema } from '@svc/api';
import { FieldSet } from './field-set.js';
import { reconcileWithSchema, trackedFields } from './field-set-of.js';
import { compareStrings } from './json-compare.js';
import { cloneJson, isJsonObject, setOwn, type JsonObject } from './merge-patch.js';
import { utf8Length } from './validation.js';

export type ManagedOperation = 'Apply' | 'Update';

/** One decoded entry. */
export interface ManagerFields {
  manager: string;
  operation: ManagedOperation;
  apiVersion: string;
  subresource?: string;
  time?: string;
  fields: FieldSet;
}

/** Decoded entries by `managerKey`. */
export type ManagedSets = Map<string, ManagerFields>;

/** Identity of an entry: Apply entries of one manager share it across apiVersions. */
export function managerKey(e: {
  manager: string;
  operation: ManagedOperation;
  apiVersion: string;
  subresource?: string | undefined;
}): string {
  return JSON.stringify([e.manager, e.operation, e.operation === 'Update' ? e.apiVersion : '', e.subresource ?? '']);
}

/**
 * Decodes entries; throws `Error` for an entry Kubernetes would not decode (operation not
 * Apply/Update, empty apiVersion, fieldsType not FieldsV1, malformed fieldsV1). A later entry
 * with the same identity replaces an earlier one.
 */
export function decodeManagedFields(entries: readonly ManagedFieldsEntry[] | undefined): ManagedSets {
  const out: ManagedSets = new Map();
  (entries ?? []).forEach((e, i) => {
    if (!isJsonObject(e as unknown)) throw new Error(`managed fields entry ${i} is not an object`);
    if (e.operation !== 'Apply' && e.operation !== 'Update') throw new Error('operation must be `Apply` or `Update`');
    if (typeof e.apiVersion !== 'string' || e.apiVersion === '') throw new Error('apiVersion must not be empty');
    if (e.fieldsType === undefined || (e.fieldsType as string) === '')
      throw new Error(`missing fieldsType in managed fields entry ${i}`);
    if (e.fieldsType !== 'FieldsV1')
      throw new Error(`invalid fieldsType ${JSON.stringify(e.fieldsType)} in managed fields entry ${i}`);
    const fields = e.fieldsV1 === undefined || e.fieldsV1 === null ? new FieldSet() : FieldSet.fromFieldsV1(e.fieldsV1);
    const d: ManagerFields = {
      manager: typeof e.manager === 'string' ? e.manager : '',
      operation: e.operation,
      apiVersion: e.apiVersion,
      fields,
    };
    if (typeof e.subresource === 'string' && e.subresource !== '') d.subresource = e.subresource;
    if (typeof e.time === 'string' && e.time !== '') d.time = e.time;
    out.set(managerKey(d), d);
  });
  return out;
}

/** Decodes, or `undefined` when Kubernetes would fail to decode the entries. */
export function tryDecodeManagedFields(entries: unknown): ManagedSets | undefined {
  if (entries === undefined || entries === null) return new Map();
  if (!Array.isArray(entries)) return undefined;
  try {
    return decodeManagedFields(entries as ManagedFieldsEntry[]);
  } catch {
    return undefined;
  }
}

/** Rewrites every set for the current schema (rule 8), drops paths no manager can own and entries left empty. */
export function normalizeManagedSets(sets: ManagedSets, schema: Schema): ManagedSets {
  const out: ManagedSets = new Map();
  for (const [k, e] of sets) {
    const fields = trackedFields(reconcileWithSchema(e.fields, schema));
    if (!fields.isEmpty()) out.set(k, { ...e, fields });
  }
  return out;
}

function seconds(time: string | undefined): number {
  if (!time) return 0;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

function cmp(a: string, b: string): number {
  return compareStrings(a, b);
}

/** Kubernetes' entry order: operation (Apply first), time (seconds), manager, apiVersion, subresource. */
export function compareManagedFieldsEntries(p: ManagedFieldsEntry, q: ManagedFieldsEntry): number {
  return (
    cmp(p.operation ?? '', q.operation ?? '') ||
    seconds(p.time) - seconds(q.time) ||
    cmp(p.manager ?? '', q.manager ?? '') ||
    cmp(p.apiVersion ?? '', q.apiVersion ?? '') ||
    cmp(p.subresource ?? '', q.subresource ?? '')
  );
}

/** Encodes the non-empty sets as wire entries, sorted. */
export function encodeManagedFields(sets: ManagedSets): ManagedFieldsEntry[] {
  const out: ManagedFieldsEntry[] = [];
  for (const e of sets.values()) {
    if (e.fields.isEmpty()) continue;
    const entry: ManagedFieldsEntry = { manager: e.manager, operation: e.operation, apiVersion: e.apiVersion };
    if (e.time) entry.time = e.time;
    entry.fieldsType = 'FieldsV1';
    entry.fieldsV1 = e.fields.toFieldsV1();
    if (e.subresource) entry.subresource = e.subresource;
    out.push(entry);
  }
  return out.sort(compareManagedFieldsEntries);
}

/** Kubernetes' cap on Update entries before old ones merge into `ancient-changes`. */
export const DEFAULT_MAX_UPDATE_MANAGERS = 10;
export const ANCIENT_CHANGES_MANAGER = 'ancient-changes';

/**
 * Keeps at most `max` Update entries: oldest first, an entry whose apiVersion was already seen
 * among the older ones is merged into that version's `ancient-changes` bucket (the first such
 * entry becomes the bucket), as Kubernetes does. Apply entries are never merged.
 */
export function capUpdateManagers(sets: ManagedSets, max = DEFAULT_MAX_UPDATE_MANAGERS): ManagedSets {
  const out: ManagedSets = new Map(sets);
  const updaters = [...out.entries()].filter(([, e]) => e.operation === 'Update').map(([k]) => k);
  if (updaters.length <= max) return out;
  updaters.sort((a, b) => seconds(out.get(a)?.time) - seconds(out.get(b)?.time) || cmp(a, b));
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (const key of updaters) {
    if (length <= max) break;
    const e = out.get(key);
    if (!e) continue;
    const bucket: ManagerFields = {
      manager: ANCIENT_CHANGES_MANAGER,
      operation: 'Update',
      apiVersion: e.apiVersion,
      fields: new FieldSet(),
    };
    const bucketKey = managerKey(bucket);
    const first = firstOfVersion.get(e.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(e.apiVersion, key);
      continue;
    }
    if (!out.has(bucketKey)) {
      const f = out.get(first);
      out.delete(first);
      if (f) out.set(bucketKey, { ...bucket, fields: f.fields, ...(f.time ? { time: f.time } : {}) });
    }
    const b = out.get(bucketKey) as ManagerFields;
    const merged: ManagerFields = { ...bucket, fields: e.fields.union(b.fields) };
    if (e.time) merged.time = e.time;
    out.set(bucketKey, merged);
    out.delete(key);
    length--;
  }
  return out;
}

/**
 * Whether a requested `metadata.managedFields` asks to clear managed fields: exactly one entry,
 * and that entry empty (`[{}]`; null or empty-string fields count as unset, as in Go). An empty list does not: clients unaware of the field would
 * otherwise strip it.
 */
export function isResetManagedFields(requested: unknown): boolean {
  return (
    Array.isArray(requested) &&
    requested.length === 1 &&
    isJsonObject(requested[0]) &&
    Object.values(requested[0]).every((v) => v === undefined || v === null || v === '')
  );
}

export interface ManagedFieldsBase {
  /** The entries a non-apply write starts from. */
  entries: readonly ManagedFieldsEntry[];
  /** The write asked to clear managed fields (`[{}]`). */
  reset: boolean;
}

/**
 * The managed fields a non-apply write (create, update, non-apply patch) starts from, as
 * Kubernetes chooses them: the live entries for a subresource write; none for a reset
 * (`[{}]`); the requested entries when they decode and are non-empty (a client may edit
 * managedFields directly); otherwise the live entries (an empty list or an undecodable one
 * changes nothing).
 */
export function managedFieldsBase(opts: {
  live?: readonly ManagedFieldsEntry[] | undefined;
  requested?: unknown;
  subresource?: string | undefined;
}): ManagedFieldsBase {
  const live = opts.live ?? [];
  if (opts.subresource) return { entries: live, reset: false };
  if (isResetManagedFields(opts.requested)) return { entries: [], reset: true };
  const decoded = tryDecodeManagedFields(opts.requested);
  if (decoded && decoded.size > 0) return { entries: opts.requested as ManagedFieldsEntry[], reset: false };
  return { entries: live, reset: false };
}

/** Kubernetes' limit on a field manager name, in UTF-8 bytes. */
export const FIELD_MANAGER_MAX_LENGTH = 128;

const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/**
 * The field manager Kubernetes infers from a User-Agent when a write names none: the text
 * before the first `/`, without unprintable characters, cut to 128 UTF-8 bytes on a
 * character boundary (`kubectl/v1.32.4 (linux/amd64) ...` → `kubectl`).
 */
export function managerFromUserAgent(userAgent: string): string {
  const head = userAgent.split('/')[0] ?? '';
  let out = '';
  let bytes = 0;
  for (const ch of head) {
    if (!printable.test(ch)) continue;
    const n = utf8Length(ch);
    if (bytes + n > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
    bytes += n;
  }
  return out;
}

/** `obj` without `metadata.managedFields`; shares everything else with `obj` (read it, do not mutate it). */
export function withoutManagedFields(obj: unknown): unknown {
  if (!isJsonObject(obj) || !isJsonObject(obj.metadata) || !Object.hasOwn(obj.metadata, 'managedFields')) return obj;
  const metadata: JsonObject = {};
  for (const [k, v] of Object.entries(obj.metadata)) if (k !== 'managedFields') setOwn(metadata, k, v);
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) setOwn(out, k, k === 'metadata' ? metadata : v);
  return out;
}

/** Sets (or, when empty, removes) `metadata.managedFields` on `object`. */
export function setManagedFields(object: JsonObject, entries: readonly ManagedFieldsEntry[]): void {
  if (!isJsonObject(object.metadata)) {
    if (entries.length === 0) return;
    object.metadata = {};
  }
  const meta = object.metadata as JsonObject;
  if (entries.length === 0) delete meta.managedFields;
  else meta.managedFields = cloneJson([...entries]);
}
