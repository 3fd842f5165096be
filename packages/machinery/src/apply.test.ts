import {
  builtinCatalog,
  isConflict,
  objectSchema,
  s,
  type ManagedFieldsEntry,
  type Schema,
  type StatusError,
} from '@svc/api';
import { applyPatch, type ApplyOptions } from './apply.js';
import { FieldSet } from './field-set.js';
import { pathString } from './field-path.js';
import { updateManagedFields } from './managed-fields-update.js';
import type { JsonObject } from './merge-patch.js';

const catalog = builtinCatalog();
const cmSchema = (catalog.lookup('', 'v1', 'configmaps') as { schema: Schema }).schema;
const NOW = '2024-05-01T10:00:00Z';
const LATER = '2024-05-01T11:00:00Z';

type Obj = JsonObject & { metadata: JsonObject & { managedFields?: ManagedFieldsEntry[] } };

function cm(data?: Record<string, string>, extra: JsonObject = {}): Obj {
  const o: Obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, ...extra };
  if (data) o.data = data;
  return o;
}

/** `by`: the manager, or the manager with more apply options. */
function apply(live: unknown, applied: unknown, by: string | (Partial<ApplyOptions> & { manager: string })): Obj {
  const more = typeof by === 'string' ? { manager: by } : by;
  return applyPatch({ live, applied, schema: cmSchema, apiVersion: 'v1', now: NOW, ...more }).object as Obj;
}

/** A non-apply write: `updated` is the whole new object. */
function update(live: Obj | undefined, updated: Obj, manager: string): Obj {
  const managedFields = updateManagedFields({ live, updated, manager, schema: cmSchema, apiVersion: 'v1', now: LATER });
  const out = structuredClone(updated);
  if (managedFields.length > 0) out.metadata.managedFields = managedFields;
  else delete out.metadata.managedFields;
  return out;
}

/** `manager/operation` → owned paths. */
function owners(obj: Obj): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of obj.metadata.managedFields ?? []) {
    out[`${e.manager}/${e.operation}`] = FieldSet.fromFieldsV1(e.fieldsV1).paths().map(pathString);
  }
  return out;
}

function conflictOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (e) {
    if (isConflict(e)) return e as StatusError;
    throw e;
  }
  throw new Error('expected a conflict');
}

describe('field ownership state table', () => {
  const ownedByA = apply(undefined, cm({ key: 'a' }), 'A');

  test('create by apply: A owns what it applied', () => {
    expect(ownedByA.data).toEqual({ key: 'a' });
    expect(owners(ownedByA)).toEqual({ 'A/Apply': ['.data.key'] });
    expect(ownedByA.metadata.managedFields).toEqual([
      {
        manager: 'A',
        operation: 'Apply',
        apiVersion: 'v1',
        time: NOW,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:key': {} } },
      },
    ]);
  });

  test('owned by A, apply by B with a different value, no force: conflict, nothing changes', () => {
    const err = conflictOf(() => apply(ownedByA, cm({ key: 'b' }), 'B'));
    expect(err.code).toBe(409);
    expect(err.status.reason).toBe('Conflict');
    expect(err.message).toBe('Apply failed with 1 conflict: conflict with "A": .data.key');
    expect(err.status.details?.causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "A"', field: '.data.key' },
    ]);
    expect(owners(ownedByA)).toEqual({ 'A/Apply': ['.data.key'] });
  });

  test('owned by A, apply by B with force: overwritten, B sole owner', () => {
    const out = apply(ownedByA, cm({ key: 'b' }), { manager: 'B', force: true });
    expect(out.data).toEqual({ key: 'b' });
    expect(owners(out)).toEqual({ 'B/Apply': ['.data.key'] });
  });

  test('owned by A, apply by B with the same value: shared; a later change by either conflicts', () => {
    const shared = apply(ownedByA, cm({ key: 'a' }), 'B');
    expect(owners(shared)).toEqual({ 'A/Apply': ['.data.key'], 'B/Apply': ['.data.key'] });
    expect(conflictOf(() => apply(shared, cm({ key: 'x' }), 'A')).message).toBe(
      'Apply failed with 1 conflict: conflict with "B": .data.key',
    );
    expect(conflictOf(() => apply(shared, cm({ key: 'x' }), 'B')).message).toBe(
      'Apply failed with 1 conflict: conflict with "A": .data.key',
    );
  });

  test('shared, a sharer applies without the field: it gives up ownership, the value stays', () => {
    const shared = apply(ownedByA, cm({ key: 'a' }), 'B');
    const out = apply(shared, cm(), 'A');
    expect(out.data).toEqual({ key: 'a' });
    expect(owners(out)).toEqual({ 'B/Apply': ['.data.key'] });
  });

  test('owned by A only, A applies without the field: removed from the object', () => {
    const two = apply(ownedByA, cm({ key: 'a', other: 'o' }), 'A');
    const out = apply(two, cm({ other: 'o' }), 'A');
    expect(out.data).toEqual({ other: 'o' });
    expect(owners(out)).toEqual({ 'A/Apply': ['.data.other'] });
  });

  test('owned by A, update by B changing the value: ownership moves to B, no conflict', () => {
    const out = update(ownedByA, { ...structuredClone(ownedByA), data: { key: 'b' } }, 'B');
    expect(out.data).toEqual({ key: 'b' });
    expect(owners(out)).toEqual({ 'B/Update': ['.data.key'] });
    const entry = out.metadata.managedFields?.find((e) => e.manager === 'B');
    expect(entry).toMatchObject({ operation: 'Update', apiVersion: 'v1', time: LATER });
  });
});

describe('apply rules', () => {
  test('rule 2: managedFields in the body is rejected', () => {
    const body = cm({ k: 'v' });
    body.metadata.managedFields = [];
    expect(() => apply(undefined, body, 'A')).toThrow('metadata.managedFields must be nil');
    try {
      apply(undefined, body, 'A');
    } catch (e) {
      expect((e as StatusError).code).toBe(400);
    }
  });

  test('rule 2: a body that is not an object is rejected', () => {
    expect(() => apply(undefined, [], 'A')).toThrow(/must be a JSON object/);
  });

  test('rule 3: update never conflicts', () => {
    const a = apply(undefined, cm({ k: 'a' }), 'A');
    expect(() => update(a, { ...structuredClone(a), data: { k: 'z' } }, 'B')).not.toThrow();
  });

  test('rule 3: conflicts from several managers are reported together, managers sorted', () => {
    let o = apply(undefined, cm({ x: '1', y: '1' }), 'm2');
    o = update(o, { ...structuredClone(o), data: { x: '1', y: '1', z: '1' } }, 'm1');
    const err = conflictOf(() => apply(o, cm({ x: '2', y: '2', z: '2' }), 'm3'));
    expect(err.message).toBe(
      'Apply failed with 3 conflicts: conflicts with "m1" using v1:\n- .data.z\nconflicts with "m2":\n- .data.x\n- .data.y',
    );
    expect(err.status.details?.causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "m1" using v1', field: '.data.z' },
      { reason: 'FieldManagerConflict', message: 'conflict with "m2"', field: '.data.x' },
      { reason: 'FieldManagerConflict', message: 'conflict with "m2"', field: '.data.y' },
    ]);
  });

  test('rule 3: an Update manager on a subresource is named with it', () => {
    const live = cm({ k: 'a' });
    live.metadata.managedFields = [
      {
        manager: 'ctl',
        operation: 'Update',
        apiVersion: 'v1',
        subresource: 'status',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:k': {} } },
      },
    ];
    expect(conflictOf(() => apply(live, cm({ k: 'b' }), 'A')).message).toBe(
      'Apply failed with 1 conflict: conflict with "ctl" with subresource "status" using v1: .data.k',
    );
  });

  test('rule 4: force takes fields only where they conflict; the rest stays shared', () => {
    const a = apply(undefined, cm({ x: '1', y: '1' }), 'A');
    const out = apply(a, cm({ x: '2', y: '1' }), { manager: 'B', force: true });
    expect(owners(out)).toEqual({ 'A/Apply': ['.data.y'], 'B/Apply': ['.data.x', '.data.y'] });
  });

  test('rule 6: the request value wins, fields of others are kept', () => {
    const a = apply(undefined, cm({ x: '1' }), 'A');
    const out = apply(a, cm({ y: '2' }), 'B');
    expect(out.data).toEqual({ x: '1', y: '2' });
  });

  test('rule 6: a field previously applied and now omitted stays when another manager owns it', () => {
    const a = apply(undefined, cm({ x: '1' }), 'A');
    const b = update(a, { ...structuredClone(a), data: { x: '1', y: '1' } }, 'B');
    // A applied x before; B (Update) owns y only; A omits x: x removed.
    const out = apply(b, cm(), 'A');
    expect(out.data).toEqual({ y: '1' });
    expect(owners(out)).toEqual({ 'B/Update': ['.data.y'] });
  });

  test('rule 9: an apply never removes fields it did not apply before', () => {
    const a = update(undefined, cm({ x: '1' }), 'ctl');
    const out = apply(a, cm({ y: '2' }), 'A');
    expect(out.data).toEqual({ x: '1', y: '2' });
  });

  test('rule 10: a manager left owning nothing disappears', () => {
    const a = apply(undefined, cm({ x: '1' }), 'controller');
    const handover = apply(a, cm({ x: '1' }), 'handover');
    expect(Object.keys(owners(handover)).sort()).toEqual(['controller/Apply', 'handover/Apply']);
    const after = apply(handover, cm(), 'handover');
    expect(Object.keys(owners(after))).toEqual(['controller/Apply']);
    expect(after.data).toEqual({ x: '1' });
  });

  test('rule 10: handover conflicts with the target controller when values differ', () => {
    const a = apply(undefined, cm({ x: '1' }), 'controller');
    expect(conflictOf(() => apply(a, cm({ x: '2' }), 'handover')).message).toContain('conflict with "controller"');
  });

  test('apply to an object without managed fields credits its fields to before-first-apply', () => {
    const live = cm({ x: '1', y: '1' });
    const err = conflictOf(() => apply(live, cm({ x: '2' }), 'A'));
    expect(err.message).toBe('Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.x');
    const out = apply(live, cm({ x: '1' }), 'A');
    expect(owners(out)).toEqual({
      'A/Apply': ['.data.x'],
      'before-first-apply/Update': ['.data', '.data.x', '.data.y'],
    });
  });

  test('a no-op apply keeps the entry time; a changing apply stamps it', () => {
    const a = apply(undefined, cm({ x: '1' }), 'A');
    const same = apply(a, cm({ x: '1' }), { manager: 'A', now: LATER });
    expect(same.metadata.managedFields?.[0]?.time).toBe(NOW);
    const changed = apply(a, cm({ x: '2' }), { manager: 'A', now: LATER });
    expect(changed.metadata.managedFields?.[0]?.time).toBe(LATER);
  });

  test('an applied empty map claims the map itself', () => {
    const out = apply(undefined, cm({}), 'A');
    expect(out.data).toEqual({});
    expect(owners(out)).toEqual({ 'A/Apply': ['.data'] });
  });

  test('an applied null removes the field and the applier owns it', () => {
    const a = update(undefined, cm({ x: '1', y: '1' }), 'ctl');
    const out = apply(a, { ...cm(), data: { x: null } }, 'A');
    expect(out.data).toEqual({ y: '1' });
    expect(owners(out)).toEqual({ 'A/Apply': ['.data.x'], 'ctl/Update': ['.data', '.data.y'] });
  });

  test('Apply entries come before Update entries; Update entries are per apiVersion', () => {
    const a = update(undefined, cm({ x: '1' }), 'ctl');
    const b = apply(a, cm({ y: '1' }), 'A');
    expect(b.metadata.managedFields?.map((e) => `${e.manager}/${e.operation}`)).toEqual(['A/Apply', 'ctl/Update']);
  });

  test('inputs are not modified', () => {
    const live = apply(undefined, cm({ x: '1' }), 'A');
    const body = cm({ y: '1' });
    const l0 = structuredClone(live);
    const b0 = structuredClone(body);
    apply(live, body, 'B');
    expect(live).toEqual(l0);
    expect(body).toEqual(b0);
  });
});

describe('status subresource tracking', () => {
  const schema = objectSchema({ spec: s.obj({ replicas: s.int() }), status: s.obj({ ready: s.int() }) });
  const obj = (spec: JsonObject, status?: JsonObject): Obj => {
    const o: Obj = { apiVersion: 'x/v1', kind: 'Thing', metadata: { name: 't' }, spec };
    if (status) o.status = status;
    return o;
  };

  test('the main resource manager does not own status; the status manager owns only status', () => {
    const main = applyPatch({
      live: undefined,
      applied: obj({ replicas: 1 }, { ready: 0 }),
      manager: 'A',
      schema,
      apiVersion: 'x/v1',
      now: NOW,
      ignoreStatus: true,
    }).object as Obj;
    expect(owners(main)).toEqual({ 'A/Apply': ['.spec.replicas'] });
    const st = applyPatch({
      live: main,
      applied: obj({ replicas: 5 }, { ready: 1 }),
      manager: 'ctl',
      schema,
      apiVersion: 'x/v1',
      now: NOW,
      onlyStatus: true,
      subresource: 'status',
    }).object as Obj;
    expect(owners(st)).toEqual({ 'A/Apply': ['.spec.replicas'], 'ctl/Apply': ['.status.ready'] });
    expect(st.metadata.managedFields?.find((e) => e.manager === 'ctl')?.subresource).toBe('status');
  });
});

describe('client-side apply migration (rule 12)', () => {
  const ANNOTATION = 'kubectl.example/last-applied-configuration';
  function csaApplied(data: Record<string, string>): Obj {
    const config = cm(data);
    const obj = cm(data, {});
    obj.metadata.annotations = { [ANNOTATION]: JSON.stringify(config) };
    return obj;
  }

  test('kubectl apply twice (client side) then server side: no conflict, ownership moves', () => {
    const first = update(undefined, csaApplied({ k: 'v1' }), 'kubectl-client-side-apply');
    const second = update(
      first,
      {
        ...csaApplied({ k: 'v2' }),
        metadata: { ...csaApplied({ k: 'v2' }).metadata, managedFields: first.metadata.managedFields },
      },
      'kubectl-client-side-apply',
    );
    expect(second.data).toEqual({ k: 'v2' });
    const ssa = applyPatch({
      live: second,
      applied: cm({ k: 'v3' }),
      manager: 'kubectl',
      schema: cmSchema,
      apiVersion: 'v1',
      now: NOW,
      lastAppliedAnnotation: ANNOTATION,
    }).object as Obj;
    expect(ssa.data).toEqual({ k: 'v3' });
    expect(owners(ssa)['kubectl/Apply']).toEqual(['.data.k']);
    expect(owners(ssa)['kubectl-client-side-apply/Update']).not.toContain('.data.k');
    // The annotation now records the server-side applied configuration.
    expect(JSON.parse(String((ssa.metadata.annotations as JsonObject)[ANNOTATION]))).toEqual(cm({ k: 'v3' }));
  });

  test('without the migration the same apply conflicts', () => {
    const first = update(undefined, csaApplied({ k: 'v1' }), 'kubectl-client-side-apply');
    expect(
      conflictOf(() =>
        applyPatch({
          live: first,
          applied: cm({ k: 'v3' }),
          manager: 'kubectl',
          schema: cmSchema,
          apiVersion: 'v1',
          now: NOW,
        }),
      ).message,
    ).toBe('Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.k');
  });

  test('another manager name does not migrate', () => {
    const first = update(undefined, csaApplied({ k: 'v1' }), 'kubectl-client-side-apply');
    expect(() =>
      applyPatch({
        live: first,
        applied: cm({ k: 'v3' }),
        manager: 'other',
        schema: cmSchema,
        apiVersion: 'v1',
        now: NOW,
        lastAppliedAnnotation: ANNOTATION,
      }),
    ).toThrow(/conflict/);
  });

  test('fields changed since the last client-side apply still conflict', () => {
    const first = update(undefined, csaApplied({ k: 'v1', e: 'x' }), 'kubectl-client-side-apply');
    const edited = update(first, { ...structuredClone(first), data: { k: 'v1', e: 'edited' } }, 'kubectl-edit');
    const err = conflictOf(() =>
      applyPatch({
        live: edited,
        applied: cm({ k: 'v3', e: 'mine' }),
        manager: 'kubectl',
        schema: cmSchema,
        apiVersion: 'v1',
        now: NOW,
        lastAppliedAnnotation: ANNOTATION,
      }),
    );
    expect(err.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .data.e');
  });
});
