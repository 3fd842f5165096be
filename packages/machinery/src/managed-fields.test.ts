import { builtinCatalog, type ManagedFieldsEntry, type Schema } from '@svc/api';
import { applyPatch } from './apply.js';
import { pathString } from './field-path.js';
import { FieldSet } from './field-set.js';
import {
  capUpdateManagers,
  compareManagedFieldsEntries,
  decodeManagedFields,
  encodeManagedFields,
  isResetManagedFields,
  managedFieldsBase,
  managerFromUserAgent,
  managerKey,
  type ManagedSets,
} from './managed-fields.js';
import { updateManagedFields } from './managed-fields-update.js';
import type { JsonObject } from './merge-patch.js';

const catalog = builtinCatalog();
const cmSchema = (catalog.lookup('', 'v1', 'configmaps') as { schema: Schema }).schema;
const podSchema = (catalog.lookup('', 'v1', 'pods') as { schema: Schema }).schema;
const T1 = '2024-05-01T10:00:00Z';
const T2 = '2024-05-01T11:00:00Z';

type Obj = JsonObject & { metadata: JsonObject & { managedFields?: ManagedFieldsEntry[] } };

const cm = (data: Record<string, string>, more: JsonObject = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'd', uid: 'u', resourceVersion: '5', ...more },
  data,
});

/** Who writes: the manager, the time of the write (default `T2`), the subresource written to. */
interface Writer {
  manager: string;
  now?: string;
  subresource?: string;
}

/** `by`: the manager's name, or a `Writer`. */
function write(live: Obj | undefined, updated: Obj, by: string | Writer): Obj {
  const { now = T2, ...more }: Writer = typeof by === 'string' ? { manager: by } : by;
  const mf = updateManagedFields({ live, updated, schema: cmSchema, apiVersion: 'v1', now, ...more });
  const out = structuredClone(updated);
  if (mf.length) out.metadata.managedFields = mf;
  else delete out.metadata.managedFields;
  return out;
}

function owners(obj: Obj): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of obj.metadata.managedFields ?? [])
    out[`${e.manager}/${e.operation}`] = FieldSet.fromFieldsV1(e.fieldsV1).paths().map(pathString);
  return out;
}

describe('updateManagedFields', () => {
  test('create: the creator owns every field it set, not identity metadata', () => {
    const out = write(undefined, cm({ a: '1' }, { labels: { app: 'x' } }), { manager: 'creator', now: T1 });
    expect(out.metadata.managedFields).toEqual([
      {
        manager: 'creator',
        operation: 'Update',
        apiVersion: 'v1',
        time: T1,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } },
      },
    ]);
  });

  test('an update that changes nothing keeps entries and times', () => {
    const a = write(undefined, cm({ a: '1' }), { manager: 'creator', now: T1 });
    const out = write(a, structuredClone(a), { manager: 'other', now: T2 });
    expect(out.metadata.managedFields).toEqual(a.metadata.managedFields);
  });

  test('changed fields move to the writer and merge into its existing Update entry', () => {
    let o = write(undefined, cm({ a: '1', b: '1' }), { manager: 'creator', now: T1 });
    o = write(o, { ...structuredClone(o), data: { a: '2', b: '1' } }, { manager: 'editor', now: T1 });
    o = write(o, { ...structuredClone(o), data: { a: '2', b: '2' } }, { manager: 'editor', now: T2 });
    expect(owners(o)).toEqual({ 'creator/Update': ['.data'], 'editor/Update': ['.data.a', '.data.b'] });
    expect(o.metadata.managedFields?.find((e) => e.manager === 'editor')?.time).toBe(T2);
  });

  test('removed fields leave every entry; empty entries disappear', () => {
    let o = write(undefined, cm({ a: '1' }), { manager: 'creator', now: T1 });
    o = write(o, { ...structuredClone(o), data: { a: '1', b: '1' } }, 'editor');
    o = write(o, { ...structuredClone(o), data: { a: '1' } }, 'third');
    expect(owners(o)).toEqual({ 'creator/Update': ['.data', '.data.a'] });
  });

  test('the same manager with another apiVersion gets its own Update entry', () => {
    const o = write(undefined, cm({ a: '1' }), { manager: 'm', now: T1 });
    const mf = updateManagedFields({
      live: o,
      updated: { ...structuredClone(o), data: { a: '2' } },
      manager: 'm',
      schema: cmSchema,
      apiVersion: 'v2',
      now: T2,
    });
    expect(mf.map((e) => `${e.manager}/${e.apiVersion}`)).toEqual(['m/v1', 'm/v2']);
  });

  test('a subresource write is recorded with its subresource and ignores requested managedFields', () => {
    const o = write(undefined, cm({ a: '1' }), { manager: 'm', now: T1 });
    const upd = { ...structuredClone(o), data: { a: '2' } };
    upd.metadata.managedFields = [{}];
    const out = write(o, upd, { manager: 'ctl', now: T2, subresource: 'status' });
    expect(out.metadata.managedFields?.map((e) => [e.manager, e.subresource])).toEqual([
      ['m', undefined],
      ['ctl', 'status'],
    ]);
  });

  test('updated by an apply, then an update: apply entries keep what was not changed', () => {
    const applied = applyPatch({
      live: undefined,
      applied: cm({ a: '1', b: '1' }),
      manager: 'A',
      schema: cmSchema,
      apiVersion: 'v1',
      now: T1,
    }).object as Obj;
    const out = write(applied, { ...structuredClone(applied), data: { a: 'x', b: '1' } }, 'B');
    expect(owners(out)).toEqual({ 'A/Apply': ['.data.b'], 'B/Update': ['.data.a'] });
  });
});

describe('rule 11: clearing managedFields', () => {
  const base = write(undefined, cm({ a: '1' }), { manager: 'creator', now: T1 });

  test('a list with one empty entry strips managedFields', () => {
    const upd = structuredClone(base);
    upd.metadata.managedFields = [{}];
    expect(write(base, upd, 'resetter').metadata.managedFields).toBeUndefined();
  });

  test('an empty list does not reset', () => {
    const upd = structuredClone(base);
    upd.metadata.managedFields = [];
    expect(write(base, upd, 'someone').metadata.managedFields).toEqual(base.metadata.managedFields);
  });

  test('combined with other changes the reset happens first, so the requester owns the changed fields', () => {
    const upd = { ...structuredClone(base), data: { a: '1', b: '2' } };
    upd.metadata.managedFields = [{}];
    expect(owners(write(base, upd, 'resetter'))).toEqual({ 'resetter/Update': ['.data.b'] });
  });

  test('requested entries that decode replace the live ones (a client may edit managedFields)', () => {
    const upd = structuredClone(base);
    upd.metadata.managedFields = [
      {
        manager: 'mine',
        operation: 'Apply',
        apiVersion: 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:a': {} } },
      },
    ];
    expect(owners(write(base, upd, 'x'))).toEqual({ 'mine/Apply': ['.data.a'] });
  });

  test('requested entries that do not decode are ignored', () => {
    const upd = structuredClone(base);
    upd.metadata.managedFields = [
      { manager: 'bad', operation: 'Delete' as 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {} },
    ];
    expect(write(base, upd, 'x').metadata.managedFields).toEqual(base.metadata.managedFields);
  });

  test.each<[string, unknown, boolean]>([
    ['[{}]', [{}], true],
    ['[{manager: ""}]', [{ manager: '' }], true],
    ['[]', [], false],
    ['[{}, {}]', [{}, {}], false],
    ['[{manager: "x"}]', [{ manager: 'x' }], false],
    ['undefined', undefined, false],
    ['null', null, false],
  ])('isResetManagedFields(%s) = %s', (_n, v, want) => {
    expect(isResetManagedFields(v)).toBe(want);
  });

  test('managedFieldsBase', () => {
    const live = base.metadata.managedFields ?? [];
    expect(managedFieldsBase({ live, requested: [{}] })).toEqual({ entries: [], reset: true });
    expect(managedFieldsBase({ live, requested: [] })).toEqual({ entries: live, reset: false });
    expect(managedFieldsBase({ live, requested: [{}], subresource: 'status' })).toEqual({
      entries: live,
      reset: false,
    });
  });
});

describe('decode and encode', () => {
  const entry = (over: Partial<ManagedFieldsEntry>): ManagedFieldsEntry => ({
    manager: 'm',
    operation: 'Update',
    apiVersion: 'v1',
    time: T1,
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:a': {} },
    ...over,
  });

  test.each<[string, Partial<ManagedFieldsEntry>, string]>([
    ['operation', { operation: 'Patch' as 'Apply' }, 'operation must be `Apply` or `Update`'],
    ['apiVersion', { apiVersion: '' }, 'apiVersion must not be empty'],
    ['fieldsType missing', { fieldsType: undefined }, 'missing fieldsType in managed fields entry 0'],
    ['fieldsType', { fieldsType: 'FieldsV2' as 'FieldsV1' }, 'invalid fieldsType "FieldsV2" in managed fields entry 0'],
    ['fieldsV1', { fieldsV1: { 'q:x': {} } }, 'invalid path element'],
  ])('rejects a bad %s', (_n, over, msg) => {
    expect(() => decodeManagedFields([entry(over)])).toThrow(msg);
  });

  test('Kubernetes order: Apply first, then by time, manager, apiVersion, subresource', () => {
    const list = [
      entry({ manager: 'b', time: T1 }),
      entry({ manager: 'a', time: T2 }),
      entry({ manager: 'z', operation: 'Apply', time: T2 }),
      entry({ manager: 'a', time: T1, apiVersion: 'v2' }),
      entry({ manager: 'a', time: T1 }),
      entry({ manager: 'a', time: T1, subresource: 'status' }),
    ];
    expect(
      [...list]
        .sort(compareManagedFieldsEntries)
        .map((e) => `${e.operation}:${e.manager}:${e.apiVersion}:${e.subresource ?? ''}:${e.time}`),
    ).toEqual([
      `Apply:z:v1::${T2}`,
      `Update:a:v1::${T1}`,
      `Update:a:v1:status:${T1}`,
      `Update:a:v2::${T1}`,
      `Update:b:v1::${T1}`,
      `Update:a:v1::${T2}`,
    ]);
  });

  test('round-trip drops empty entries', () => {
    const sets = decodeManagedFields([entry({}), entry({ manager: 'n', fieldsV1: {} })]);
    expect(encodeManagedFields(sets)).toEqual([entry({})]);
  });

  test('Apply entries share identity across apiVersions, Update entries do not', () => {
    expect(managerKey({ manager: 'm', operation: 'Apply', apiVersion: 'v1' })).toBe(
      managerKey({ manager: 'm', operation: 'Apply', apiVersion: 'v2' }),
    );
    expect(managerKey({ manager: 'm', operation: 'Update', apiVersion: 'v1' })).not.toBe(
      managerKey({ manager: 'm', operation: 'Update', apiVersion: 'v2' }),
    );
  });
});

describe('capUpdateManagers', () => {
  function sets(n: number): ManagedSets {
    const out: ManagedSets = new Map();
    for (let i = 0; i < n; i++) {
      const e = {
        manager: `m${String(i).padStart(2, '0')}`,
        operation: 'Update' as const,
        apiVersion: 'v1',
        time: `2024-05-01T10:${String(i).padStart(2, '0')}:00Z`,
        fields: FieldSet.fromPaths([[`f:f${i}`]]),
      };
      out.set(managerKey(e), e);
    }
    const a = {
      manager: 'applier',
      operation: 'Apply' as const,
      apiVersion: 'v1',
      time: T1,
      fields: FieldSet.fromPaths([['f:x']]),
    };
    out.set(managerKey(a), a);
    return out;
  }

  test('at most 10 Update entries: the oldest merge into ancient-changes', () => {
    const out = encodeManagedFields(capUpdateManagers(sets(12)));
    const updates = out.filter((e) => e.operation === 'Update');
    expect(updates).toHaveLength(10);
    const bucket = updates.find((e) => e.manager === 'ancient-changes');
    expect(FieldSet.fromFieldsV1(bucket?.fieldsV1).paths()).toEqual([['f:f0'], ['f:f1'], ['f:f2']]);
    expect(bucket?.time).toBe('2024-05-01T10:02:00Z');
    expect(out.filter((e) => e.operation === 'Apply')).toHaveLength(1);
  });

  test('10 or fewer are untouched', () => {
    expect(capUpdateManagers(sets(10)).size).toBe(11);
  });

  test('the write paths cap too', () => {
    let o = write(undefined, cm({ k0: '0' }), { manager: 'w0', now: '2024-05-01T10:00:00Z' });
    for (let i = 1; i <= 11; i++) {
      const data = { ...(o.data as Record<string, string>), [`k${i}`]: `${i}` };
      o = write(
        o,
        { ...structuredClone(o), data },
        { manager: `w${i}`, now: `2024-05-01T10:${String(i).padStart(2, '0')}:00Z` },
      );
    }
    expect(o.metadata.managedFields).toHaveLength(10);
    expect(o.metadata.managedFields?.some((e) => e.manager === 'ancient-changes')).toBe(true);
  });
});

describe('managerFromUserAgent', () => {
  test.each<[string, string]>([
    ['kubectl/v1.32.4 (linux/amd64) kubernetes/abc123', 'kubectl'],
    ['kubectl-client-side-apply', 'kubectl-client-side-apply'],
    ['', ''],
    ['svcctl', 'svcctl'],
    ['tab\there/x', 'tabhere'],
    ['x'.repeat(200), 'x'.repeat(128)],
    ['é'.repeat(100), 'é'.repeat(64)],
  ])('%j → %j', (ua, want) => {
    expect(managerFromUserAgent(ua)).toBe(want);
  });
});

describe('pod writes', () => {
  test('a kubelet-style status update owns only what it changed', () => {
    const pod: Obj = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', uid: 'u' },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    };
    const created = updateManagedFields({
      live: undefined,
      updated: pod,
      manager: 'kubectl-create',
      schema: podSchema,
      apiVersion: 'v1',
      now: T1,
      ignoreStatus: true,
    });
    const live = { ...structuredClone(pod), metadata: { ...pod.metadata, managedFields: created } };
    const next = {
      ...structuredClone(live),
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    };
    const mf = updateManagedFields({
      live,
      updated: next,
      manager: 'svclet',
      schema: podSchema,
      apiVersion: 'v1',
      now: T2,
      onlyStatus: true,
      subresource: 'status',
    });
    const svclet = mf.find((e) => e.manager === 'svclet');
    expect(svclet?.subresource).toBe('status');
    expect(svclet?.fieldsV1).toEqual({
      'f:status': {
        '.': {},
        'f:conditions': { '.': {}, 'k:{"type":"Ready"}': { '.': {}, 'f:status': {}, 'f:type': {} } },
        'f:phase': {},
      },
    });
    expect(mf.find((e) => e.manager === 'kubectl-create')?.fieldsV1).toEqual(created[0]?.fieldsV1);
  });
});
