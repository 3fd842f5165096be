import { builtinCatalog, objectSchema, s, type Schema } from '@svc/api';
import { pathString } from './field-path.js';
import { FieldSet } from './field-set.js';
import { ensureNamedFieldsAreMembers, fieldSetOf, rawFieldSetOf, reconcileWithSchema } from './field-set-of.js';
import { compareValues } from './typed-compare.js';
import { mergeApplied, removeFields } from './typed-merge.js';

const podSchema = (builtinCatalog().lookup('', 'v1', 'pods') as { schema: Schema }).schema;
const item = s.obj({ name: s.str(), value: s.str() });
const schema = objectSchema({
  spec: s.obj({
    n: s.int(),
    struct: s.obj({ a: s.str(), b: s.obj({ c: s.str() }) }),
    labels: s.map(s.str()),
    objMap: s.map(s.obj({ x: s.str() })),
    atomicMap: s.map(s.str(), { mapType: 'atomic' }),
    list: s.keyed(item, ['name']),
    set: s.set(s.str()),
    atomicList: s.atomic(item),
    free: s.any(),
  }),
  status: s.obj({ ready: s.bool() }),
});

const paths = (set: FieldSet): string[] => set.paths().map(pathString);

describe('fieldSetOf', () => {
  test.each<[string, unknown, string[]]>([
    ['a scalar', { spec: { n: 1 } }, ['.spec.n']],
    ['struct fields with content are not members', { spec: { struct: { b: { c: 'x' } } } }, ['.spec.struct.b.c']],
    ['an empty struct is a leaf', { spec: { struct: {} } }, ['.spec.struct']],
    ['a null field is a leaf', { spec: { struct: null } }, ['.spec.struct']],
    ['map keys are members', { spec: { labels: { a: '1' } } }, ['.spec.labels.a']],
    [
      'a map entry holding an object is a member with children',
      { spec: { objMap: { k: { x: '1' } } } },
      ['.spec.objMap.k', '.spec.objMap.k.x'],
    ],
    ['an atomic map is one leaf', { spec: { atomicMap: { a: '1', b: '2' } } }, ['.spec.atomicMap']],
    [
      'map-list items by key',
      { spec: { list: [{ name: 'a', value: '1' }] } },
      ['.spec.list[name="a"]', '.spec.list[name="a"].name', '.spec.list[name="a"].value'],
    ],
    ['set items by value', { spec: { set: ['x', 'y'] } }, ['.spec.set[="x"]', '.spec.set[="y"]']],
    ['an atomic list is one leaf', { spec: { atomicList: [{ name: 'a' }] } }, ['.spec.atomicList']],
    ['an empty granular list owns nothing', { spec: { list: [] } }, []],
    [
      'any: objects are granular maps, lists atomic',
      { spec: { free: { a: { b: 1 }, l: [1, 2] } } },
      ['.spec.free.a', '.spec.free.l', '.spec.free.a.b'],
    ],
    ['unknown fields are deduced', { spec: { mystery: { q: 1 } } }, ['.spec.mystery', '.spec.mystery.q']],
  ])('%s', (_name, value, want) => {
    expect(paths(fieldSetOf(value, schema))).toEqual(want);
  });

  test('identity metadata, apiVersion and kind are never tracked', () => {
    const obj = {
      apiVersion: 'v1',
      kind: 'T',
      metadata: {
        name: 'n',
        namespace: 'ns',
        uid: 'u',
        resourceVersion: '1',
        generation: 2,
        creationTimestamp: 't',
        deletionTimestamp: 't',
        selfLink: 'x',
        managedFields: [],
        labels: { a: 'b' },
      },
    };
    expect(paths(fieldSetOf(obj, schema))).toEqual(['.metadata.labels.a']);
    expect(paths(rawFieldSetOf(obj, schema))).toContain('.metadata.name');
  });

  test('status options', () => {
    const obj = { spec: { n: 1 }, status: { ready: true } };
    expect(paths(fieldSetOf(obj, schema, { ignoreStatus: true }))).toEqual(['.spec.n']);
    expect(paths(fieldSetOf(obj, schema, { onlyStatus: true }))).toEqual(['.status.ready']);
    expect(paths(fieldSetOf(obj, schema))).toEqual(['.spec.n', '.status.ready']);
  });

  test('pod: FieldsV1 as Kubernetes spells it', () => {
    const p = {
      spec: {
        containers: [{ name: 'c', image: 'i', env: [{ name: 'E', value: 'v' }], resources: {} }],
        nodeSelector: { a: 'b' },
      },
    };
    expect(fieldSetOf(p, podSchema).toFieldsV1()).toEqual({
      'f:spec': {
        'f:containers': {
          'k:{"name":"c"}': {
            '.': {},
            'f:env': { 'k:{"name":"E"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
            'f:image': {},
            'f:name': {},
            'f:resources': {},
          },
        },
        'f:nodeSelector': {},
      },
    });
  });
});

describe('compareValues', () => {
  test('added, modified and removed leaves; whole items and entries added or removed', () => {
    const before = { spec: { n: 1, labels: { a: '1', b: '2' }, list: [{ name: 'x', value: '1' }], set: ['p'] } };
    const after = { spec: { n: 2, labels: { a: '1', c: '3' }, list: [{ name: 'y', value: '1' }], set: ['p', 'q'] } };
    const c = compareValues(before, after, schema);
    expect(paths(c.modified)).toEqual(['.spec.n']);
    expect(paths(c.added)).toEqual([
      '.spec.labels.c',
      '.spec.list[name="y"]',
      '.spec.list[name="y"].name',
      '.spec.list[name="y"].value',
      '.spec.set[="q"]',
    ]);
    expect(paths(c.removed)).toEqual([
      '.spec.labels.b',
      '.spec.list[name="x"]',
      '.spec.list[name="x"].name',
      '.spec.list[name="x"].value',
    ]);
  });

  test('an atomic value changes as one leaf', () => {
    const c = compareValues(
      { spec: { atomicList: [{ name: 'a' }] } },
      { spec: { atomicList: [{ name: 'b' }] } },
      schema,
    );
    expect(paths(c.modified)).toEqual(['.spec.atomicList']);
  });

  test('a type change is a modified leaf', () => {
    const c = compareValues({ spec: { struct: { a: 'x' } } }, { spec: { struct: 'oops' } }, schema);
    expect(paths(c.modified)).toEqual(['.spec.struct']);
  });

  test('equal values compare equal, whatever the key order', () => {
    const c = compareValues({ spec: { labels: { a: '1', b: '2' } } }, { spec: { labels: { b: '2', a: '1' } } }, schema);
    expect([c.added, c.modified, c.removed].every((x) => x.isEmpty())).toBe(true);
  });
});

describe('mergeApplied', () => {
  test.each<[string, unknown, unknown, unknown]>([
    [
      'applied leaves win, others kept',
      { spec: { n: 1, labels: { a: '1' } } },
      { spec: { n: 2, labels: { b: '2' } } },
      { spec: { n: 2, labels: { a: '1', b: '2' } } },
    ],
    [
      'null removes',
      { spec: { n: 1, labels: { a: '1' } } },
      { spec: { labels: { a: null } } },
      { spec: { n: 1, labels: {} } },
    ],
    [
      'atomic lists replaced',
      { spec: { atomicList: [{ name: 'a' }] } },
      { spec: { atomicList: [{ name: 'b' }] } },
      { spec: { atomicList: [{ name: 'b' }] } },
    ],
    [
      'map lists merged item by item',
      { spec: { list: [{ name: 'a', value: '1' }] } },
      { spec: { list: [{ name: 'a', value: '2' }, { name: 'b' }] } },
      { spec: { list: [{ name: 'a', value: '2' }, { name: 'b' }] } },
    ],
    [
      'set lists united',
      { spec: { set: ['a', 'b'] } },
      { spec: { set: ['c', 'a'] } },
      { spec: { set: ['c', 'a', 'b'] } },
    ],
    // eslint-disable-next-line max-params -- test.each spreads each table row into the callback's parameters
  ])('%s', (_name, live, applied, want) => {
    expect(mergeApplied(live, applied, schema)).toEqual(want);
  });

  test.each<[string[], string[], string[]]>([
    [
      ['a', 'b', 'c'],
      ['c', 'a'],
      ['b', 'c', 'a'],
    ],
    [
      ['a', 'b'],
      ['b', 'a'],
      ['b', 'a'],
    ],
    [['a', 'b'], ['x'], ['a', 'b', 'x']],
    [
      ['a', 'b'],
      ['x', 'b'],
      ['a', 'x', 'b'],
    ],
    [
      ['a', 'b'],
      ['x', 'a'],
      ['x', 'a', 'b'],
    ],
    [[], ['x', 'y'], ['x', 'y']],
  ])('item order: live %j + applied %j → %j', (live, applied, want) => {
    const out = mergeApplied(
      { spec: { list: live.map((name) => ({ name })) } },
      { spec: { list: applied.map((name) => ({ name })) } },
      schema,
    ) as { spec: { list: { name: string }[] } };
    expect(out.spec.list.map((x) => x.name)).toEqual(want);
  });
});

describe('removeFields', () => {
  test('removes members with their subtrees', () => {
    const v = { spec: { n: 1, labels: { a: '1', b: '2' }, list: [{ name: 'x' }, { name: 'y' }] } };
    const set = FieldSet.fromPaths([
      ['f:spec', 'f:n'],
      ['f:spec', 'f:labels', 'f:a'],
      ['f:spec', 'f:list', 'k:{"name":"x"}'],
    ]);
    expect(removeFields(v, set, schema)).toEqual({ spec: { labels: { b: '2' }, list: [{ name: 'y' }] } });
  });
});

describe('ensureNamedFieldsAreMembers', () => {
  test('named struct fields above a path become members; map keys do not', () => {
    const set = FieldSet.fromPaths([
      ['f:spec', 'f:labels', 'f:a'],
      ['f:spec', 'f:struct', 'f:b', 'f:c'],
    ]);
    expect(paths(ensureNamedFieldsAreMembers(set, schema))).toEqual([
      '.spec',
      '.spec.labels',
      '.spec.struct',
      '.spec.labels.a',
      '.spec.struct.b',
      '.spec.struct.b.c',
    ]);
  });
});

describe('reconcileWithSchema', () => {
  test('children under a now-atomic path collapse into the path', () => {
    const set = FieldSet.fromPaths([
      ['f:spec', 'f:atomicList', 'k:{"name":"a"}'],
      ['f:spec', 'f:atomicList', 'k:{"name":"a"}', 'f:name'],
      ['f:spec', 'f:n'],
    ]);
    expect(paths(reconcileWithSchema(set, schema))).toEqual(['.spec.atomicList', '.spec.n']);
  });

  test('a whole-value member under a now-granular path stays as it is', () => {
    const set = FieldSet.fromPaths([['f:spec', 'f:list']]);
    expect(paths(reconcileWithSchema(set, schema))).toEqual(['.spec.list']);
  });

  test('paths under any are kept', () => {
    const set = FieldSet.fromPaths([['f:spec', 'f:free', 'f:l', 'i:0']]);
    expect(paths(reconcileWithSchema(set, schema))).toEqual(['.spec.free.l[0]']);
  });
});
