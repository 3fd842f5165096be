import { builtinCatalog, isBadRequest, objectSchema, s, type Schema, type StatusError } from '@svc/api';
import type { JsonObject } from './merge-patch.js';
import { applyStrategicMergePatch } from './strategic-merge-patch.js';

const podSchema = (builtinCatalog().lookup('', 'v1', 'pods') as { schema: Schema }).schema;

const pod = (spec: JsonObject, metadata: JsonObject = {}): JsonObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', ...metadata },
  spec,
});
const names = (list: unknown): unknown[] => (list as JsonObject[]).map((x) => x.name);
const smp = (orig: unknown, patch: unknown, schema: Schema = podSchema): JsonObject =>
  applyStrategicMergePatch(orig, patch, schema) as JsonObject;
const spec = (o: JsonObject): JsonObject => o.spec as JsonObject;

function badRequest(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (isBadRequest(e)) return (e as StatusError).message;
    throw e;
  }
  throw new Error('expected a BadRequest');
}

const live = pod(
  {
    containers: [
      {
        name: 'a',
        image: 'a:1',
        env: [
          { name: 'X', value: '1' },
          { name: 'Y', value: '2' },
        ],
        ports: [{ containerPort: 80 }],
      },
      { name: 'b', image: 'b:1' },
    ],
    tolerations: [{ key: 't1' }],
    nodeSelector: { zone: 'z1', disk: 'ssd' },
  },
  { labels: { app: 'x', tier: 'web' }, finalizers: ['f1', 'f2'] },
);

describe('maps', () => {
  test('merge key by key; null deletes', () => {
    const out = smp(live, { metadata: { labels: { tier: null, new: 'n' } } });
    expect((out.metadata as JsonObject).labels).toEqual({ app: 'x', new: 'n' });
  });

  test('{"$patch":"replace"} inside a map replaces the whole map', () => {
    const out = smp(live, { metadata: { labels: { $patch: 'replace', only: 'me' } } });
    expect((out.metadata as JsonObject).labels).toEqual({ only: 'me' });
  });

  test('{"$patch":"delete"} empties a map', () => {
    const out = smp(live, { metadata: { labels: { $patch: 'delete' } } });
    expect((out.metadata as JsonObject).labels).toEqual({});
  });

  test('an atomic map (mapType atomic) is replaced', () => {
    expect(spec(smp(live, { spec: { nodeSelector: { zone: 'z2' } } })).nodeSelector).toEqual({ zone: 'z2' });
  });

  test('an atomic struct (structType atomic) is replaced', () => {
    const schema = objectSchema({
      spec: s.obj({
        sel: s.obj({ a: s.str(), b: s.str() }, { structType: 'atomic' }),
        g: s.obj({ a: s.str(), b: s.str() }),
      }),
    });
    const out = smp(
      { spec: { sel: { a: '1', b: '2' }, g: { a: '1', b: '2' } } },
      { spec: { sel: { a: '9' }, g: { a: '9' } } },
      schema,
    );
    expect(out.spec).toEqual({ sel: { a: '9' }, g: { a: '9', b: '2' } });
  });

  test('fields of type any merge as a JSON merge patch (lists replaced, no directives)', () => {
    // A list keyed by name whose items are typed loosely (as a custom resource's may be).
    const loose = objectSchema({ spec: s.obj({ extras: s.keyed(s.any(), ['name']) }) });
    const o = {
      kind: 'X',
      metadata: { name: 'x' },
      spec: { extras: [{ name: 'a', securityContext: { runAsUser: 1, capabilities: { add: ['A'] } } }] },
    };
    const out = smp(
      o,
      {
        spec: {
          extras: [{ name: 'a', securityContext: { runAsUser: null, capabilities: { add: ['B'] }, $patch: 'x' } }],
        },
      },
      loose,
    );
    expect((spec(out).extras as JsonObject[])[0]?.securityContext).toEqual({
      capabilities: { add: ['B'] },
      $patch: 'x',
    });
  });

  test('a new map takes the patch with its directives applied and nulls dropped', () => {
    const out = smp(pod({ containers: [] }), { metadata: { annotations: { a: '1', b: null } } });
    expect((out.metadata as JsonObject).annotations).toEqual({ a: '1' });
  });

  test('a top-level {"$patch":"replace"} replaces the object', () => {
    expect(smp(live, { $patch: 'replace', kind: 'Pod' })).toEqual({ kind: 'Pod' });
  });
});

describe('merge lists of objects', () => {
  test('items merge by patchMergeKey; untouched items stay in place', () => {
    const out = smp(live, { spec: { containers: [{ name: 'b', image: 'b:2' }] } });
    expect(spec(out).containers).toEqual([
      {
        name: 'a',
        image: 'a:1',
        env: [
          { name: 'X', value: '1' },
          { name: 'Y', value: '2' },
        ],
        ports: [{ containerPort: 80 }],
      },
      { name: 'b', image: 'b:2' },
    ]);
  });

  test('a new item is added, before server-only items (Kubernetes order without $setElementOrder)', () => {
    const out = smp(live, { spec: { containers: [{ name: 'c', image: 'c:1' }] } });
    expect(names(spec(out).containers)).toEqual(['c', 'a', 'b']);
  });

  test('patch items keep patch order and server items keep theirs', () => {
    const out = smp(live, { spec: { containers: [{ name: 'b', image: 'b:2' }, { name: 'n' }] } });
    expect(names(spec(out).containers)).toEqual(['a', 'b', 'n']);
  });

  test('nested merge lists: env by name inside a container', () => {
    const out = smp(live, { spec: { containers: [{ name: 'a', env: [{ name: 'Y', value: '3' }] }] } });
    expect((spec(out).containers as JsonObject[])[0]?.env).toEqual([
      { name: 'X', value: '1' },
      { name: 'Y', value: '3' },
    ]);
  });

  test('ports merge by containerPort', () => {
    const out = smp(live, {
      spec: { containers: [{ name: 'a', ports: [{ containerPort: 80, name: 'http' }, { containerPort: 443 }] }] },
    });
    expect((spec(out).containers as JsonObject[])[0]?.ports).toEqual([
      { containerPort: 80, name: 'http' },
      { containerPort: 443 },
    ]);
  });

  test('$patch: delete removes the item with that key', () => {
    const out = smp(live, { spec: { containers: [{ name: 'a', $patch: 'delete' }] } });
    expect(names(spec(out).containers)).toEqual(['b']);
  });

  test('$patch: replace as a list item replaces the whole list with the other patch items', () => {
    const out = smp(live, { spec: { containers: [{ name: 'z', image: 'z' }, { $patch: 'replace' }] } });
    expect(spec(out).containers).toEqual([{ name: 'z', image: 'z' }]);
  });

  test('an item carrying $patch: replace is a directive, not an item (Kubernetes): the list is replaced by the other items', () => {
    const out = smp(live, { spec: { containers: [{ name: 'a', image: 'new', $patch: 'replace' }, { name: 'k' }] } });
    expect(spec(out).containers).toEqual([{ name: 'k' }]);
  });

  test('null inside an item deletes that field', () => {
    const out = smp(live, { spec: { containers: [{ name: 'a', env: null }] } });
    expect((spec(out).containers as JsonObject[])[0]).toEqual({
      name: 'a',
      image: 'a:1',
      ports: [{ containerPort: 80 }],
    });
  });

  test('lists without merge strategy are replaced (atomic tolerations)', () => {
    expect(spec(smp(live, { spec: { tolerations: [{ key: 't2' }] } })).tolerations).toEqual([{ key: 't2' }]);
  });

  test('a list missing from the original takes the patch items without directive items', () => {
    const out = smp(pod({ containers: [{ name: 'a' }] }), {
      spec: { containers: [{ name: 'a', env: [{ name: 'E' }, { name: 'G', $patch: 'delete' }] }] },
    });
    expect((spec(out).containers as JsonObject[])[0]?.env).toEqual([{ name: 'E' }]);
  });

  test('an atomic struct item (ownerReferences) is replaced, not merged', () => {
    const o = pod({}, { ownerReferences: [{ uid: 'u1', kind: 'RS', name: 'r', apiVersion: 'v1', controller: true }] });
    const out = smp(o, { metadata: { ownerReferences: [{ uid: 'u1', kind: 'RS', name: 'r2', apiVersion: 'v1' }] } });
    expect((out.metadata as JsonObject).ownerReferences).toEqual([
      { uid: 'u1', kind: 'RS', name: 'r2', apiVersion: 'v1' },
    ]);
  });

  test('volumes with $retainKeys keep only the listed keys of the item', () => {
    const o = pod({ containers: [], volumes: [{ name: 'v', emptyDir: {} }] });
    const out = smp(o, {
      spec: { volumes: [{ name: 'v', $retainKeys: ['name', 'configMap'], configMap: { name: 'cm' } }] },
    });
    expect(spec(out).volumes).toEqual([{ name: 'v', configMap: { name: 'cm' } }]);
  });
});

describe('merge lists of scalars', () => {
  test('values are added once, new ones first', () => {
    const out = smp(live, { metadata: { finalizers: ['f3', 'f1'] } });
    expect((out.metadata as JsonObject).finalizers).toEqual(['f3', 'f1', 'f2']);
  });

  test('$deleteFromPrimitiveList removes values', () => {
    const out = smp(live, { metadata: { '$deleteFromPrimitiveList/finalizers': ['f1', 'nope'] } });
    expect((out.metadata as JsonObject).finalizers).toEqual(['f2']);
  });

  test('$deleteFromPrimitiveList on a missing list does nothing', () => {
    const out = smp(pod({}), { metadata: { '$deleteFromPrimitiveList/finalizers': ['f1'] } });
    expect(out.metadata).toEqual({ name: 'p' });
  });
});

describe('$setElementOrder', () => {
  test('orders a keyed list (reorder only)', () => {
    const out = smp(live, { spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }] } });
    expect(names(spec(out).containers)).toEqual(['b', 'a']);
  });

  test('orders merged items; a new item goes where the order puts it', () => {
    const out = smp(live, {
      spec: {
        '$setElementOrder/containers': [{ name: 'a' }, { name: 'c' }, { name: 'b' }],
        containers: [{ name: 'c', image: 'c' }],
      },
    });
    expect(names(spec(out).containers)).toEqual(['a', 'c', 'b']);
  });

  test('a server-only item goes before an ordered item it preceded in the live list', () => {
    const o = pod({ containers: [{ name: 'a' }, { name: 's' }, { name: 'b' }] });
    expect(
      names(spec(smp(o, { spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }] } })).containers),
    ).toEqual(['s', 'b', 'a']);
    expect(
      names(spec(smp(o, { spec: { '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }] } })).containers),
    ).toEqual(['a', 's', 'b']);
  });

  test('orders a primitive list', () => {
    const out = smp(live, { metadata: { '$setElementOrder/finalizers': ['f2', 'f3', 'f1'], finalizers: ['f3'] } });
    expect((out.metadata as JsonObject).finalizers).toEqual(['f2', 'f3', 'f1']);
  });

  test('with a deletion in the same patch', () => {
    const out = smp(live, {
      spec: { '$setElementOrder/containers': [{ name: 'b' }], containers: [{ name: 'a', $patch: 'delete' }] },
    });
    expect(names(spec(out).containers)).toEqual(['b']);
  });
});

describe('bad directives', () => {
  test.each<[string, unknown, string]>([
    [
      'unknown $patch in a map',
      { metadata: { labels: { $patch: 'frobnicate' } } },
      'unknown patch type: frobnicate in map: map[$patch:frobnicate]',
    ],
    [
      'unknown $patch in a list item',
      { spec: { containers: [{ name: 'a', $patch: 'x' }] } },
      'unknown patch type: x in map: map[$patch:x name:a]',
    ],
    [
      '$patch: merge in a list',
      { spec: { containers: [{ $patch: 'merge' }] } },
      'merging lists cannot yet be specified in the patch',
    ],
    [
      '$patch: delete without the merge key',
      { spec: { containers: [{ $patch: 'delete' }] } },
      'map: map[$patch:delete] does not contain declared merge key: name',
    ],
    [
      'an item without the merge key',
      { spec: { containers: [{ image: 'x' }] } },
      'map: map[image:x] does not contain declared merge key: name',
    ],
    [
      '$deleteFromPrimitiveList not a list',
      { metadata: { '$deleteFromPrimitiveList/finalizers': 'f1' } },
      'invalid patch format of primitive list',
    ],
    [
      '$deleteFromPrimitiveList without a field',
      { metadata: { '$deleteFromPrimitiveList/': ['f1'] } },
      'invalid patch format of primitive list',
    ],
    [
      '$setElementOrder not a list',
      { spec: { '$setElementOrder/containers': { name: 'a' } } },
      'invalid patch format of setElementOrder list',
    ],
    [
      '$setElementOrder item without the merge key',
      { spec: { '$setElementOrder/containers': [{ image: 'a' }] } },
      'does not contain declared merge key: name',
    ],
    [
      '$setElementOrder disagreeing with the patch order',
      {
        spec: {
          '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }],
          containers: [{ name: 'b' }, { name: 'a' }],
        },
      },
      "doesn't match $setElementOrder list",
    ],
    [
      '$retainKeys not a list',
      { spec: { volumes: [{ name: 'v', $retainKeys: 'name' }] } },
      'invalid patch format of retainKeys',
    ],
    [
      '$retainKeys missing a key the patch sets',
      { spec: { volumes: [{ name: 'v', $retainKeys: ['name'], configMap: {} }] } },
      'invalid patch format of retainKeys',
    ],
    ['a list of lists', { metadata: { finalizers: [['x']] } }, 'lists of lists are not supported'],
    ['mixed element types', { metadata: { finalizers: [1] } }, 'list element types are not identical'],
    ['a patch that is not an object', [], 'invalid JSON document'],
  ])('%s', (_name, patch, msg) => {
    const o = pod({ containers: [{ name: 'a' }, { name: 'b' }], volumes: [{ name: 'v' }] }, { finalizers: ['f'] });
    expect(badRequest(() => smp(o, patch))).toContain(msg);
  });
});

test('inputs are not modified and the result shares nothing with them', () => {
  const orig = structuredClone(live);
  const patch = {
    spec: { containers: [{ name: 'a', env: [{ name: 'Z', value: 'z' }] }] },
    metadata: { labels: { x: 'y' } },
  };
  const p0 = structuredClone(patch);
  const out = smp(orig, patch);
  expect(orig).toEqual(live);
  expect(patch).toEqual(p0);
  ((spec(out).containers as JsonObject[])[1] as JsonObject).image = 'changed';
  expect((spec(orig).containers as JsonObject[])[1]?.image).toBe('b:1');
});
