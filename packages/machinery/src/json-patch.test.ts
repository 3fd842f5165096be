import { isStatusError, isBadRequest, isInvalid } from '@svc/api';
import { applyJsonPatch, JsonPatchFailed, JsonPatchTestFailed, parseJsonPatch } from './json-patch.js';
import { cloneJson } from './merge-patch.js';

function failure(doc: unknown, ops: unknown): JsonPatchFailed {
  try {
    applyJsonPatch(doc, ops);
  } catch (e) {
    if (e instanceof JsonPatchFailed) return e;
    throw e;
  }
  throw new Error('expected the patch to fail');
}

describe('applyJsonPatch (RFC 6902 appendix A)', () => {
  test.each<[string, unknown, unknown[], unknown]>([
    ['add object member', { foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux' }], { foo: 'bar', baz: 'qux' }],
    [
      'add array element',
      { foo: ['bar', 'baz'] },
      [{ op: 'add', path: '/foo/1', value: 'qux' }],
      { foo: ['bar', 'qux', 'baz'] },
    ],
    ['remove object member', { baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }], { foo: 'bar' }],
    [
      'remove array element',
      { foo: ['bar', 'qux', 'baz'] },
      [{ op: 'remove', path: '/foo/1' }],
      { foo: ['bar', 'baz'] },
    ],
    [
      'replace',
      { baz: 'qux', foo: 'bar' },
      [{ op: 'replace', path: '/baz', value: 'boo' }],
      { baz: 'boo', foo: 'bar' },
    ],
    [
      'move value',
      { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
      [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
      { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } },
    ],
    [
      'move array element',
      { foo: ['all', 'grass', 'cows', 'eat'] },
      [{ op: 'move', from: '/foo/1', path: '/foo/3' }],
      { foo: ['all', 'cows', 'eat', 'grass'] },
    ],
    [
      'test success',
      { baz: 'qux', foo: ['a', 2, 'c'] },
      [
        { op: 'test', path: '/baz', value: 'qux' },
        { op: 'test', path: '/foo/1', value: 2 },
      ],
      { baz: 'qux', foo: ['a', 2, 'c'] },
    ],
    [
      'add nested object',
      { foo: 'bar' },
      [{ op: 'add', path: '/child', value: { grandchild: {} } }],
      { foo: 'bar', child: { grandchild: {} } },
    ],
    [
      'ignore unrecognized members',
      { foo: 'bar' },
      [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }],
      { foo: 'bar', baz: 'qux' },
    ],
    [
      'add to end with -',
      { foo: ['bar'] },
      [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }],
      { foo: ['bar', ['abc', 'def']] },
    ],
    [
      '~1 and ~0 escapes',
      { '/': 9, '~1': 10 },
      [
        { op: 'test', path: '/~01', value: 10 },
        { op: 'replace', path: '/~1', value: 1 },
      ],
      { '/': 1, '~1': 10 },
    ],
    ['test with null', { a: null }, [{ op: 'test', path: '/a', value: null }], { a: null }],
    ['add replaces an existing member', { a: 1 }, [{ op: 'add', path: '/a', value: 2 }], { a: 2 }],
    ['add at array end index', { a: [1] }, [{ op: 'add', path: '/a/1', value: 2 }], { a: [1, 2] }],
    ['copy', { a: { b: [1] } }, [{ op: 'copy', from: '/a', path: '/c' }], { a: { b: [1] }, c: { b: [1] } }],
    ['replace the root', { a: 1 }, [{ op: 'replace', path: '', value: { b: 2 } }], { b: 2 }],
    ['add the root', { a: 1 }, [{ op: 'add', path: '', value: [1] }], [1]],
    ['move to itself', { a: 1 }, [{ op: 'move', from: '/a', path: '/a' }], { a: 1 }],
    ['empty patch', { a: 1 }, [], { a: 1 }],
    [
      'kubernetes label',
      { metadata: { labels: { 'app.svc.io/name': 'x' } } },
      [{ op: 'replace', path: '/metadata/labels/app.svc.io~1name', value: 'y' }],
      { metadata: { labels: { 'app.svc.io/name': 'y' } } },
    ],
    [
      'sequential ops see earlier results',
      { spec: {} },
      [
        { op: 'add', path: '/spec/containers', value: [] },
        { op: 'add', path: '/spec/containers/-', value: { name: 'c' } },
        { op: 'test', path: '/spec/containers/0/name', value: 'c' },
      ],
      { spec: { containers: [{ name: 'c' }] } },
    ],
    // eslint-disable-next-line max-params -- test.each spreads each table row into the callback's parameters
  ])('%s', (_name, doc, ops, want) => {
    expect(applyJsonPatch(doc, ops)).toEqual(want);
  });

  test('inputs are not mutated and the result shares nothing with them', () => {
    const doc = { a: { b: [1, 2] }, keep: { x: 1 } };
    const value = { deep: [1] };
    const ops = [
      { op: 'add', path: '/a/c', value },
      { op: 'remove', path: '/a/b/0' },
    ];
    const doc0 = cloneJson(doc);
    const ops0 = cloneJson(ops);
    const out = applyJsonPatch(doc, ops) as { a: { c: { deep: number[] } }; keep: object };
    expect(doc).toEqual(doc0);
    expect(ops).toEqual(ops0);
    expect(out.keep).not.toBe(doc.keep);
    expect(out.a.c).not.toBe(value);
    out.a.c.deep.push(2);
    expect(value.deep).toEqual([1]);
  });
});

describe('operations that do not apply', () => {
  test.each<[string, unknown, unknown[], string]>([
    [
      'remove missing member',
      { a: 1 },
      [{ op: 'remove', path: '/b' }],
      'JSON patch operation 0 (remove) failed: path "/b" does not exist',
    ],
    [
      'replace missing member',
      { a: 1 },
      [
        { op: 'add', path: '/c', value: 1 },
        { op: 'replace', path: '/b/c', value: 1 },
      ],
      'JSON patch operation 1 (replace) failed: path "/b/c" does not exist',
    ],
    [
      'remove array index out of range',
      { a: [1] },
      [{ op: 'remove', path: '/a/1' }],
      'JSON patch operation 0 (remove) failed: path "/a/1" does not exist',
    ],
    [
      'inherited property is not a member',
      {},
      [{ op: 'remove', path: '/toString' }],
      'JSON patch operation 0 (remove) failed: path "/toString" does not exist',
    ],
    [
      'add under missing parent',
      { a: 1 },
      [{ op: 'add', path: '/x/y', value: 1 }],
      'JSON patch operation 0 (add) failed: cannot add at "/x/y": its parent does not exist',
    ],
    [
      'add under a scalar',
      { a: 1 },
      [{ op: 'add', path: '/a/b', value: 1 }],
      'JSON patch operation 0 (add) failed: cannot add at "/a/b": its parent is not an object or array',
    ],
    [
      'add past array end',
      { a: [1] },
      [{ op: 'add', path: '/a/2', value: 1 }],
      'JSON patch operation 0 (add) failed: cannot add at "/a/2": index 2 is out of bounds (length 1)',
    ],
    [
      'add at non-index',
      { a: [1] },
      [{ op: 'add', path: '/a/x', value: 1 }],
      'JSON patch operation 0 (add) failed: cannot add at "/a/x": "x" is not an array index',
    ],
    [
      'add at leading-zero index',
      { a: [1] },
      [{ op: 'add', path: '/a/01', value: 1 }],
      'JSON patch operation 0 (add) failed: cannot add at "/a/01": "01" is not an array index',
    ],
    [
      'move from missing',
      { a: 1 },
      [{ op: 'move', from: '/b', path: '/c' }],
      'JSON patch operation 0 (move) failed: path "/b" does not exist',
    ],
    [
      'move into own child',
      { a: { b: 1 } },
      [{ op: 'move', from: '/a', path: '/a/b/c' }],
      'JSON patch operation 0 (move) failed: cannot move "/a" into its own child "/a/b/c"',
    ],
    [
      'move whose target vanishes with the removal',
      { a: [1, 2] },
      [{ op: 'move', from: '/a/0', path: '/a/2' }],
      'JSON patch operation 0 (move) failed: cannot add at "/a/2": index 2 is out of bounds (length 1)',
    ],
    [
      'copy from missing',
      { a: 1 },
      [{ op: 'copy', from: '/b', path: '/c' }],
      'JSON patch operation 0 (copy) failed: path "/b" does not exist',
    ],
    [
      'remove the root',
      { a: 1 },
      [{ op: 'remove', path: '' }],
      'JSON patch operation 0 (remove) failed: cannot remove the whole document',
    ],
    // eslint-disable-next-line max-params -- test.each spreads each table row into the callback's parameters
  ])('%s', (_name, doc, ops, message) => {
    const err = failure(doc, ops);
    expect(err).not.toBeInstanceOf(JsonPatchTestFailed);
    expect(err.message).toBe(message);
    expect(isInvalid(err)).toBe(true);
    expect(err.code).toBe(422);
    expect(err.status.message).toBe(message);
  });

  test.each<[unknown, unknown[], string]>([
    [
      { a: 1 },
      [{ op: 'test', path: '/a', value: 2 }],
      'JSON patch operation 0 (test) failed: value at "/a" is not equal to the expected value',
    ],
    [
      { a: 1 },
      [{ op: 'test', path: '/a', value: '1' }],
      'JSON patch operation 0 (test) failed: value at "/a" is not equal to the expected value',
    ],
    [
      { a: [1, 2] },
      [{ op: 'test', path: '/a', value: [2, 1] }],
      'JSON patch operation 0 (test) failed: value at "/a" is not equal to the expected value',
    ],
    [
      { a: 1 },
      [{ op: 'test', path: '/b', value: null }],
      'JSON patch operation 0 (test) failed: path "/b" does not exist',
    ],
    [
      { a: 1 },
      [{ op: 'test', path: '', value: { a: 2 } }],
      'JSON patch operation 0 (test) failed: value at "" is not equal to the expected value',
    ],
    [
      { a: 1 },
      [
        { op: 'replace', path: '/a', value: 2 },
        { op: 'test', path: '/a', value: 1 },
      ],
      'JSON patch operation 1 (test) failed: value at "/a" is not equal to the expected value',
    ],
  ])('failing test %#', (doc, ops, message) => {
    const err = failure(doc, ops);
    expect(err).toBeInstanceOf(JsonPatchTestFailed);
    expect(err.name).toBe('JsonPatchTestFailed');
    expect(isInvalid(err)).toBe(true);
    expect(err.message).toBe(message);
    expect(err.opIndex).toBe(ops.length - 1);
  });

  test('a "__proto__" segment is refused, not followed', () => {
    const err = failure(JSON.parse('{"__proto__": {"a": 1}}'), [{ op: 'replace', path: '/__proto__/a', value: 2 }]);
    expect(err.message).toMatch(/^JSON patch operation 0 \(replace\) failed: .*__proto__/);
    expect(({} as Record<string, unknown>).a).toBeUndefined();
  });

  test('a failed patch leaves the input untouched', () => {
    const doc = { a: 1, b: [1] };
    failure(doc, [
      { op: 'add', path: '/b/-', value: 2 },
      { op: 'remove', path: '/zzz' },
    ]);
    expect(doc).toEqual({ a: 1, b: [1] });
  });
});

describe('undecodable patches are BadRequest, inapplicable operations Invalid (as Kubernetes)', () => {
  test.each<[unknown, string]>([
    [{ op: 'add' }, 'invalid JSON patch: expected an array of operations, got object'],
    [null, 'invalid JSON patch: expected an array of operations, got null'],
    ['x', 'invalid JSON patch: expected an array of operations, got string'],
    [[1], 'invalid JSON patch: operation 0 is not an object'],
  ])('400 %j', (ops, message) => {
    let err: unknown;
    try {
      applyJsonPatch({ a: 1 }, ops);
    } catch (e) {
      err = e;
    }
    expect(isBadRequest(err)).toBe(true);
    expect((err as Error).message).toBe(message);
  });

  test.each<[unknown, string]>([
    [[{ path: '/a' }], 'invalid JSON patch: operation 0 has no "op"'],
    [
      [
        { op: 'add', path: '/a', value: 1 },
        { op: 'merge', path: '/a' },
      ],
      'invalid JSON patch: operation 1 has unknown op "merge" (expected one of add, remove, replace, move, copy, test)',
    ],
    [
      [{ op: 7, path: '/a' }],
      'invalid JSON patch: operation 0 has unknown op 7 (expected one of add, remove, replace, move, copy, test)',
    ],
    [[{ op: 'remove' }], 'invalid JSON patch: operation 0 (remove) has no "path"'],
    [[{ op: 'remove', path: 3 }], 'invalid JSON patch: operation 0 (remove): "path" must be a string'],
    [[{ op: 'remove', path: 'a' }], 'invalid JSON patch: operation 0 (remove): path "a" is not a JSON pointer'],
    [[{ op: 'remove', path: '/a~2' }], 'invalid JSON patch: operation 0 (remove): path "/a~2" is not a JSON pointer'],
    [[{ op: 'remove', path: '/a~' }], 'invalid JSON patch: operation 0 (remove): path "/a~" is not a JSON pointer'],
    [[{ op: 'add', path: '/a' }], 'invalid JSON patch: operation 0 (add) has no "value"'],
    [[{ op: 'replace', path: '/a' }], 'invalid JSON patch: operation 0 (replace) has no "value"'],
    [[{ op: 'test', path: '/a' }], 'invalid JSON patch: operation 0 (test) has no "value"'],
    [[{ op: 'move', path: '/a' }], 'invalid JSON patch: operation 0 (move) has no "from"'],
    [[{ op: 'copy', path: '/a', from: 'b' }], 'invalid JSON patch: operation 0 (copy): from "b" is not a JSON pointer'],
  ])('422 %j', (ops, message) => {
    let err: unknown;
    try {
      applyJsonPatch({ a: 1 }, ops);
    } catch (e) {
      err = e;
    }
    expect(isStatusError(err) && err.code).toBe(422);
    expect((err as Error).message).toBe(message);
  });

  test('parseJsonPatch normalizes operations', () => {
    expect(
      parseJsonPatch([
        { op: 'add', path: '/a', value: null, extra: 1 },
        { op: 'move', from: '/a', path: '/b' },
      ]),
    ).toEqual([
      { op: 'add', path: '/a', value: null },
      { op: 'move', from: '/a', path: '/b' },
    ]);
  });
});
