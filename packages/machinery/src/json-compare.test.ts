import { canonicalJson, compareJson, compareStrings, goFormat, jsonEqual } from './json-compare.js';

describe('jsonEqual', () => {
  test.each<[unknown, unknown, boolean]>([
    [{ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }, true],
    [[1, 2], [2, 1], false],
    [{ a: 1 }, { a: 1, b: undefined }, false],
    [null, null, true],
    [null, {}, false],
    ['1', 1, false],
  ])('%j vs %j', (a, b, want) => {
    expect(jsonEqual(a, b)).toBe(want);
  });
});

describe('compareJson', () => {
  test('numbers < strings < booleans < lists < maps < null', () => {
    const vals = [null, { a: 1 }, [1], true, 'x', 2, 1, false, 'a'];
    expect([...vals].sort(compareJson)).toEqual([1, 2, 'a', 'x', false, true, [1], { a: 1 }, null]);
  });

  test('strings by code point, like Go', () => {
    expect(compareStrings('Z', 'a')).toBe(-1);
    expect(compareStrings('\u{1F600}', '\uFFFF')).toBe(1);
    expect(compareStrings('ab', 'a')).toBe(1);
  });
});

test('canonicalJson sorts keys', () => {
  expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] })).toBe('{"a":[{"c":2,"d":1}],"b":1}');
});

test('goFormat prints like Go %v', () => {
  expect(goFormat({ name: 'a', $patch: 'delete', n: [1, 2] })).toBe('map[$patch:delete n:[1 2] name:a]');
  expect(goFormat(null)).toBe('<nil>');
});
