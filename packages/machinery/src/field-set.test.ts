import {
  compareElements,
  elementString,
  fieldElement,
  indexElement,
  keyElement,
  parseElement,
  pathString,
  valueElement,
} from './field-path.js';
import { FieldSet } from './field-set.js';

const f = fieldElement;

describe('path elements', () => {
  test.each<[string, string]>([
    [fieldElement('image'), 'f:image'],
    [keyElement({ name: 'c' }), 'k:{"name":"c"}'],
    [keyElement({ protocol: 'TCP', containerPort: 80 }), 'k:{"containerPort":80,"protocol":"TCP"}'],
    [valueElement('a'), 'v:"a"'],
    [valueElement(3), 'v:3'],
    [indexElement(2), 'i:2'],
  ])('%s', (pe, want) => {
    expect(pe).toBe(want);
  });

  test.each<[string, string]>([
    ['f:data', '.data'],
    ['f:.dockerconfigjson', '..dockerconfigjson'],
    ['k:{"name":"c"}', '[name="c"]'],
    ['k:{"containerPort":80,"protocol":"TCP"}', '[containerPort=80,protocol="TCP"]'],
    ['v:"x"', '[="x"]'],
    ['v:1', '[=1]'],
    ['i:0', '[0]'],
  ])('%s prints as %s', (pe, want) => {
    expect(elementString(pe)).toBe(want);
  });

  test('paths print as in conflict messages', () => {
    expect(pathString(['f:spec', 'f:containers', 'k:{"name":"c"}', 'f:image'])).toBe(
      '.spec.containers[name="c"].image',
    );
    expect(pathString(['f:metadata', 'f:labels', 'f:app.kubernetes.io/name'])).toBe(
      '.metadata.labels.app.kubernetes.io/name',
    );
  });

  test.each(['x:1', 'k:[1]', 'k:{bad', 'i:-1', 'i:01', 'v:{'])('rejects %s', (pe) => {
    expect(() => parseElement(pe)).toThrow(/invalid path element/);
  });

  test('order: fields < keys < values < indexes; numbers numerically; by code point', () => {
    const els = ['i:1', 'v:"b"', 'k:{"port":10000}', 'f:b', 'v:2', 'k:{"port":9000}', 'f:a', 'i:0', 'v:"a"'];
    expect([...els].sort(compareElements)).toEqual([
      'f:a',
      'f:b',
      'k:{"port":9000}',
      'k:{"port":10000}',
      'v:2',
      'v:"a"',
      'v:"b"',
      'i:0',
      'i:1',
    ]);
  });
});

describe('FieldSet', () => {
  const a = FieldSet.fromPaths([[f('a')], [f('b'), f('c')], [f('b'), f('d')]]);
  const b = FieldSet.fromPaths([[f('b'), f('c')], [f('e')]]);

  test('membership and size', () => {
    expect(a.has([f('a')])).toBe(true);
    expect(a.has([f('b')])).toBe(false);
    expect(a.has([f('b'), f('c')])).toBe(true);
    expect(a.size()).toBe(3);
    expect(new FieldSet().isEmpty()).toBe(true);
  });

  test.each<[string, (x: FieldSet, y: FieldSet) => FieldSet, string[][]]>([
    ['union', (x, y) => x.union(y), [['f:a'], ['f:e'], ['f:b', 'f:c'], ['f:b', 'f:d']]],
    ['intersection', (x, y) => x.intersection(y), [['f:b', 'f:c']]],
    ['difference', (x, y) => x.difference(y), [['f:a'], ['f:b', 'f:d']]],
  ])('%s', (_name, op, want) => {
    expect(op(a, b).paths()).toEqual(want);
  });

  test('difference keeps children of a removed member; recursiveDifference removes them', () => {
    const s = FieldSet.fromPaths([[f('x')], [f('x'), f('y')]]);
    const minus = FieldSet.fromPaths([[f('x')]]);
    expect(s.difference(minus).paths()).toEqual([['f:x', 'f:y']]);
    expect(s.recursiveDifference(minus).paths()).toEqual([]);
    expect(s.recursiveIntersection(minus).paths()).toEqual([['f:x'], ['f:x', 'f:y']]);
  });

  test('operations do not share state with their inputs', () => {
    const u = a.union(b);
    u.insert([f('b'), f('z')]);
    expect(a.has([f('b'), f('z')])).toBe(false);
    expect(b.has([f('b'), f('z')])).toBe(false);
  });

  test('paths: members before children at each level', () => {
    const s = FieldSet.fromPaths([
      [f('status'), f('acceptedNames'), f('kind')],
      [f('status'), f('conditions')],
    ]);
    expect(s.paths().map(pathString)).toEqual(['.status.conditions', '.status.acceptedNames.kind']);
  });

  test('equals ignores insertion order', () => {
    expect(FieldSet.fromPaths([[f('a')], [f('b')]]).equals(FieldSet.fromPaths([[f('b')], [f('a')]]))).toBe(true);
    expect(a.equals(b)).toBe(false);
  });
});

describe('FieldsV1', () => {
  const json = {
    'f:metadata': { 'f:labels': { 'f:app': {} } },
    'f:spec': {
      'f:containers': {
        'k:{"name":"c"}': {
          '.': {},
          'f:image': {},
          'f:name': {},
          'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
        },
      },
      'f:finalizers': { 'v:"a"': {} },
    },
  };

  test('round-trips', () => {
    const s = FieldSet.fromFieldsV1(json);
    expect(s.has(['f:spec', 'f:containers', 'k:{"name":"c"}'])).toBe(true);
    expect(s.has(['f:spec', 'f:containers'])).toBe(false);
    expect(s.toFieldsV1()).toEqual(json);
    expect(JSON.stringify(FieldSet.fromFieldsV1(s.toFieldsV1()).toFieldsV1())).toBe(JSON.stringify(s.toFieldsV1()));
  });

  test('keys come out in Kubernetes order with "." first', () => {
    const s = FieldSet.fromPaths([
      ['f:spec', 'f:z'],
      ['f:spec', 'k:{"name":"b"}'],
      ['f:spec', 'k:{"name":"a"}'],
      ['f:spec', 'f:a'],
      ['f:spec', 'k:{"name":"a"}', 'f:x'],
    ]);
    const out = s.toFieldsV1();
    expect(JSON.stringify(out)).toBe(
      '{"f:spec":{"f:a":{},"f:z":{},"k:{\\"name\\":\\"a\\"}":{".":{},"f:x":{}},"k:{\\"name\\":\\"b\\"}":{}}}',
    );
  });

  test('canonicalises key elements it reads', () => {
    const s = FieldSet.fromFieldsV1({ 'k:{"protocol":"TCP", "containerPort":80}': {} });
    expect(s.has(['k:{"containerPort":80,"protocol":"TCP"}'])).toBe(true);
  });

  test.each<[string, unknown]>([
    ['not an object', []],
    ['leaf not an object', { 'f:a': 1 }],
    ['dot at the top', { '.': {} }],
    ['dot with content', { 'f:a': { '.': { 'f:b': {} } } }],
    ['unknown prefix', { 'x:a': {} }],
  ])('rejects %s', (_name, v) => {
    expect(() => FieldSet.fromFieldsV1(v)).toThrow();
  });
});
