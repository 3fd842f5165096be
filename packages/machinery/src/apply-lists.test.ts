import {
  builtinCatalog,
  isConflict,
  objectSchema,
  s,
  type ManagedFieldsEntry,
  type Schema,
  type StatusError,
} from '@svc/api';
import { applyPatch } from './apply.js';
import { pathString } from './field-path.js';
import { FieldSet } from './field-set.js';
import { fieldSetOf } from './field-set-of.js';
import type { JsonObject } from './merge-patch.js';

const podSchema = (builtinCatalog().lookup('', 'v1', 'pods') as { schema: Schema }).schema;
const NOW = '2024-05-01T10:00:00Z';

/** Who applies: the manager, and whether it forces through conflicts. */
interface Applier {
  manager: string;
  force?: boolean;
}
const applier = (by: string | Applier): Applier => (typeof by === 'string' ? { manager: by } : by);

type Obj = JsonObject & { metadata: JsonObject & { managedFields?: ManagedFieldsEntry[] }; spec?: JsonObject };

function owners(obj: Obj): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of obj.metadata.managedFields ?? [])
    out[`${e.manager}/${e.operation}`] = FieldSet.fromFieldsV1(e.fieldsV1).paths().map(pathString);
  return out;
}

function conflictMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (isConflict(e)) return (e as StatusError).message;
    throw e;
  }
  throw new Error('expected a conflict');
}

describe('pods: containers, ports and env are keyed lists', () => {
  const pod = (spec: JsonObject): Obj => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default' },
    spec,
  });
  const apply = (live: unknown, applied: unknown, by: string | Applier): Obj =>
    applyPatch({ live, applied, ...applier(by), schema: podSchema, apiVersion: 'v1', now: NOW, ignoreStatus: true })
      .object as Obj;

  const c = {
    name: 'c',
    image: 'img:1',
    ports: [{ containerPort: 80, protocol: 'TCP' }],
    env: [
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
    ],
  };
  const created = apply(undefined, pod({ containers: [c] }), 'A');

  test('FieldsV1 of the applied pod uses k: keys, sorted key fields and "." for items', () => {
    expect(created.metadata.managedFields?.[0]?.fieldsV1).toEqual({
      'f:spec': {
        'f:containers': {
          'k:{"name":"c"}': {
            '.': {},
            'f:env': {
              'k:{"name":"A"}': { '.': {}, 'f:name': {}, 'f:value': {} },
              'k:{"name":"B"}': { '.': {}, 'f:name': {}, 'f:value': {} },
            },
            'f:image': {},
            'f:name': {},
            'f:ports': {
              'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} },
            },
          },
        },
      },
    });
  });

  test('another manager adds a container: items merge by name, each owned by its applier', () => {
    const out = apply(created, pod({ containers: [{ name: 'side', image: 'side:1' }] }), 'B');
    expect((out.spec?.containers as JsonObject[]).map((x) => x.name)).toEqual(['c', 'side']);
    expect(owners(out)['B/Apply']).toEqual([
      '.spec.containers[name="side"]',
      '.spec.containers[name="side"].image',
      '.spec.containers[name="side"].name',
    ]);
  });

  test("changing a field inside another manager's item conflicts on that field only", () => {
    expect(conflictMessage(() => apply(created, pod({ containers: [{ name: 'c', image: 'img:2' }] }), 'B'))).toBe(
      'Apply failed with 1 conflict: conflict with "A": .spec.containers[name="c"].image',
    );
  });

  test('a conflict on a port names the composite key', () => {
    const named = apply(
      undefined,
      pod({ containers: [{ name: 'c', ports: [{ containerPort: 80, protocol: 'TCP', name: 'http' }] }] }),
      'A',
    );
    const msg = conflictMessage(() =>
      apply(
        named,
        pod({ containers: [{ name: 'c', ports: [{ containerPort: 80, protocol: 'TCP', name: 'web' }] }] }),
        'B',
      ),
    );
    expect(msg).toBe(
      'Apply failed with 1 conflict: conflict with "A": .spec.containers[name="c"].ports[containerPort=80,protocol="TCP"].name',
    );
    // Adding a field nobody owns inside the item is no conflict.
    expect(() =>
      apply(
        named,
        pod({ containers: [{ name: 'c', ports: [{ containerPort: 80, protocol: 'TCP', hostPort: 8080 }] }] }),
        'B',
      ),
    ).not.toThrow();
  });

  test('the applier drops an env var it applied before: removed; the other stays', () => {
    const out = apply(created, pod({ containers: [{ ...c, env: [{ name: 'B', value: '2' }] }] }), 'A');
    const env = ((out.spec?.containers as JsonObject[])[0] as JsonObject).env;
    expect(env).toEqual([{ name: 'B', value: '2' }]);
  });

  test("the applier drops a container it applied; another manager's container stays", () => {
    const both = apply(created, pod({ containers: [{ name: 'side', image: 'side:1' }] }), 'B');
    const out = apply(both, pod({ containers: [{ name: 'side', image: 'side:1' }] }), 'A');
    expect((out.spec?.containers as JsonObject[]).map((x) => x.name)).toEqual(['side']);
    expect(Object.keys(owners(out)).sort()).toEqual(['A/Apply', 'B/Apply']);
  });

  test('the applied order wins for the items it lists', () => {
    const both = apply(created, pod({ containers: [c, { name: 'd', image: 'd' }] }), 'A');
    const out = apply(both, pod({ containers: [{ name: 'd', image: 'd' }, c] }), 'A');
    expect((out.spec?.containers as JsonObject[]).map((x) => x.name)).toEqual(['d', 'c']);
  });

  test('tolerations are atomic: owned whole, any change by another manager conflicts', () => {
    const t1 = { key: 'a', operator: 'Exists' };
    const a = apply(created, pod({ containers: [c], tolerations: [t1] }), 'A');
    expect(owners(a)['A/Apply']).toContain('.spec.tolerations');
    expect(conflictMessage(() => apply(a, pod({ tolerations: [t1, { key: 'b', operator: 'Exists' }] }), 'B'))).toBe(
      'Apply failed with 1 conflict: conflict with "A": .spec.tolerations',
    );
    const forced = apply(a, pod({ tolerations: [{ key: 'b', operator: 'Exists' }] }), { manager: 'B', force: true });
    expect(forced.spec?.tolerations).toEqual([{ key: 'b', operator: 'Exists' }]);
    expect(owners(forced)['A/Apply']).not.toContain('.spec.tolerations');
    expect(owners(forced)['B/Apply']).toEqual(['.spec.tolerations']);
  });

  test('nodeSelector is an atomic map: the whole map is one field', () => {
    const a = apply(created, pod({ containers: [c], nodeSelector: { zone: 'a' } }), 'A');
    expect(conflictMessage(() => apply(a, pod({ nodeSelector: { disk: 'ssd' } }), 'B'))).toBe(
      'Apply failed with 1 conflict: conflict with "A": .spec.nodeSelector',
    );
    const shared = apply(a, pod({ nodeSelector: { zone: 'a' } }), 'B');
    expect(owners(shared)['B/Apply']).toEqual(['.spec.nodeSelector']);
  });
});

describe('merge markers', () => {
  const item = s.obj({ name: s.str(), value: s.str() });
  const schema = objectSchema({
    spec: s.obj({
      setList: s.set(s.str()),
      mapList: s.keyed(item, ['name']),
      mergeList: s.arr(item, { patchStrategy: 'merge', patchMergeKey: 'name' }),
      plainList: s.arr(s.str()),
      atomicMap: s.map(s.str(), { mapType: 'atomic' }),
      granularMap: s.map(s.str()),
      atomicStruct: s.obj({ a: s.str(), b: s.str() }, { structType: 'atomic' }),
      struct: s.obj({ a: s.str(), b: s.str() }),
      defaulted: s.keyed(s.obj({ port: s.int(), protocol: s.str({ default: 'TCP' }) }), ['port', 'protocol']),
    }),
  });
  const obj = (spec: JsonObject): Obj => ({ apiVersion: 'x/v1', kind: 'T', metadata: { name: 't' }, spec });
  const apply = (live: unknown, spec: JsonObject, by: string | Applier): Obj =>
    applyPatch({ live, applied: obj(spec), ...applier(by), schema, apiVersion: 'x/v1', now: NOW }).object as Obj;

  test.each<[string, JsonObject, JsonObject, JsonObject, string[], string[]]>([
    [
      'listType=set: union, items by value',
      { setList: ['a'] },
      { setList: ['b'] },
      { setList: ['a', 'b'] },
      ['.spec.setList[="a"]'],
      ['.spec.setList[="b"]'],
    ],
    [
      'listType=map: items by key',
      { mapList: [{ name: 'x', value: '1' }] },
      { mapList: [{ name: 'y', value: '2' }] },
      {
        mapList: [
          { name: 'x', value: '1' },
          { name: 'y', value: '2' },
        ],
      },
      ['.spec.mapList[name="x"]', '.spec.mapList[name="x"].name', '.spec.mapList[name="x"].value'],
      ['.spec.mapList[name="y"]', '.spec.mapList[name="y"].name', '.spec.mapList[name="y"].value'],
    ],
    [
      'patchStrategy=merge without listType reads as a map list',
      { mergeList: [{ name: 'x' }] },
      { mergeList: [{ name: 'y' }] },
      { mergeList: [{ name: 'x' }, { name: 'y' }] },
      ['.spec.mergeList[name="x"]', '.spec.mergeList[name="x"].name'],
      ['.spec.mergeList[name="y"]', '.spec.mergeList[name="y"].name'],
    ],
    [
      'mapType=granular: keys merge',
      { granularMap: { a: '1' } },
      { granularMap: { b: '2' } },
      { granularMap: { a: '1', b: '2' } },
      ['.spec.granularMap.a'],
      ['.spec.granularMap.b'],
    ],
    [
      'structType=granular: fields merge',
      { struct: { a: '1' } },
      { struct: { b: '2' } },
      { struct: { a: '1', b: '2' } },
      ['.spec.struct.a'],
      ['.spec.struct.b'],
    ],
    // eslint-disable-next-line max-params -- test.each spreads each table row into the callback's parameters
  ])('%s', (_name, first, second, merged, ownedByA, ownedByB) => {
    const a = apply(undefined, first, 'A');
    const out = apply(a, second, 'B');
    expect(out.spec).toEqual(merged);
    expect(owners(out)).toEqual({ 'A/Apply': ownedByA, 'B/Apply': ownedByB });
  });

  test.each<[string, JsonObject, JsonObject, string]>([
    [
      'a list without listType or merge strategy is atomic',
      { plainList: ['a'] },
      { plainList: ['b'] },
      '.spec.plainList',
    ],
    ['mapType=atomic', { atomicMap: { a: '1' } }, { atomicMap: { b: '2' } }, '.spec.atomicMap'],
    ['structType=atomic', { atomicStruct: { a: '1' } }, { atomicStruct: { b: '2' } }, '.spec.atomicStruct'],
    // eslint-disable-next-line max-params -- test.each spreads each table row into the callback's parameters
  ])('%s: replaced whole, conflicts whole', (_name, first, second, path) => {
    const a = apply(undefined, first, 'A');
    expect(conflictMessage(() => apply(a, second, 'B'))).toBe(
      `Apply failed with 1 conflict: conflict with "A": ${path}`,
    );
    const forced = apply(a, second, { manager: 'B', force: true });
    expect(forced.spec).toEqual(second);
    expect(owners(forced)).toEqual({ 'B/Apply': [path] });
  });

  test('a set item dropped by its applier is removed', () => {
    const a = apply(undefined, { setList: ['a', 'b'] }, 'A');
    expect(apply(a, { setList: ['b'] }, 'A').spec).toEqual({ setList: ['b'] });
  });

  test('a missing key field takes its schema default, so an item matches its defaulted live form', () => {
    const live = apply(undefined, { defaulted: [{ port: 80, protocol: 'TCP' }] }, 'A');
    const out = apply(live, { defaulted: [{ port: 80 }] }, 'B');
    expect(out.spec?.defaulted).toEqual([{ port: 80, protocol: 'TCP' }]);
    expect(owners(out)['B/Apply']).toEqual([
      '.spec.defaulted[port=80,protocol="TCP"]',
      '.spec.defaulted[port=80,protocol="TCP"].port',
    ]);
  });

  test('a map-list item without key fields is addressed by index', () => {
    expect(
      fieldSetOf({ spec: { mapList: [{ value: 'v' }] } }, schema)
        .paths()
        .map(pathString),
    ).toEqual(['.spec.mapList[0]', '.spec.mapList[0].value']);
  });
});

describe('rule 8: changing a type between atomic and granular', () => {
  const item = s.obj({ name: s.str(), value: s.str() });
  const granular = objectSchema({ spec: s.obj({ list: s.keyed(item, ['name']), m: s.map(s.str()) }) });
  const atomic = objectSchema({ spec: s.obj({ list: s.atomic(item), m: s.map(s.str(), { mapType: 'atomic' }) }) });
  const obj = (spec: JsonObject): Obj => ({ apiVersion: 'x/v1', kind: 'T', metadata: { name: 't' }, spec });
  const applyUnder =
    (schema: Schema) =>
    (live: unknown, spec: JsonObject, manager: string): Obj =>
      applyPatch({ live, applied: obj(spec), manager, schema, apiVersion: 'x/v1', now: NOW }).object as Obj;
  const applyGranular = applyUnder(granular);
  const applyAtomic = applyUnder(atomic);

  test('granular → atomic: whoever owned an element owns the whole value; changes conflict', () => {
    let o = applyGranular(undefined, { list: [{ name: 'a', value: '1' }], m: { k: 'v' } }, 'A');
    o = applyGranular(o, { list: [{ name: 'b', value: '2' }] }, 'B');
    const msg = conflictMessage(() => applyAtomic(o, { list: [{ name: 'c' }] }, 'C'));
    expect(msg).toBe(
      'Apply failed with 2 conflicts: conflicts with "A":\n- .spec.list\nconflicts with "B":\n- .spec.list',
    );
    expect(conflictMessage(() => applyAtomic(o, { m: { k: 'x' } }, 'C'))).toBe(
      'Apply failed with 1 conflict: conflict with "A": .spec.m',
    );
    // A re-applying under the new schema owns the whole list.
    const again = applyAtomic(
      o,
      {
        list: [
          { name: 'a', value: '1' },
          { name: 'b', value: '2' },
        ],
        m: { k: 'v' },
      },
      'A',
    );
    expect(owners(again)['A/Apply']).toEqual(['.spec.list', '.spec.m']);
  });

  test('atomic → granular: inner ownership is not inferred, so no conflict arises', () => {
    const o = applyAtomic(undefined, { list: [{ name: 'a', value: '1' }] }, 'A');
    expect(owners(o)).toEqual({ 'A/Apply': ['.spec.list'] });
    const out = applyGranular(o, { list: [{ name: 'a', value: '2' }] }, 'B');
    expect(out.spec?.list).toEqual([{ name: 'a', value: '2' }]);
    expect(owners(out)).toEqual({
      'A/Apply': ['.spec.list'],
      'B/Apply': ['.spec.list[name="a"]', '.spec.list[name="a"].name', '.spec.list[name="a"].value'],
    });
  });
});
