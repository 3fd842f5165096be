import { isBadRequest } from '@svc/api';
import {
  escapeFieldValue,
  exactMetadataName,
  FieldSelector,
  parseFieldSelector,
  unescapeFieldValue,
} from './field-selector.js';

function getter(fields: Record<string, string>) {
  return (f: string): string | undefined => fields[f];
}

describe('parseFieldSelector', () => {
  test.each<[string, Array<[string, string, string]>, string]>([
    ['', [], ''],
    ['a=b', [['a', '=', 'b']], 'a=b'],
    ['a==b', [['a', '==', 'b']], 'a=b'],
    ['a!=b', [['a', '!=', 'b']], 'a!=b'],
    ['a=', [['a', '=', '']], 'a='],
    [
      'metadata.name=x,status.phase!=Running',
      [
        ['metadata.name', '=', 'x'],
        ['status.phase', '!=', 'Running'],
      ],
      'metadata.name=x,status.phase!=Running',
    ],
    [
      'z=1,a=2',
      [
        ['a', '=', '2'],
        ['z', '=', '1'],
      ],
      'a=2,z=1',
    ],
    [
      'a=b,,c=d',
      [
        ['a', '=', 'b'],
        ['c', '=', 'd'],
      ],
      'a=b,c=d',
    ],
    ['a=b\\,c', [['a', '=', 'b,c']], 'a=b\\,c'],
    ['a=b\\=c', [['a', '=', 'b=c']], 'a=b\\=c'],
    ['a=b\\\\', [['a', '=', 'b\\']], 'a=b\\\\'],
    ['a = b', [['a ', '=', ' b']], 'a = b'],
    ['=x', [['', '=', 'x']], '=x'],
  ])('%p', (text, want, canonical) => {
    const sel = parseFieldSelector(text);
    expect(sel.requirements().map((r) => [r.field, r.operator, r.value])).toEqual(want);
    expect(sel.toString()).toBe(canonical);
  });

  test.each<[string, string]>([
    ['a', "invalid selector: 'a'; can't understand 'a'"],
    ['a=b,c', "invalid selector: 'a=b,c'; can't understand 'c'"],
    ['a=b=c', 'invalid field selector: unescaped character in value: ='],
    ['a!==b', 'invalid field selector: unescaped character in value: ='],
    ['a=b\\x', 'invalid field selector: invalid escape sequence: \\x'],
    ['a=b\\', 'invalid field selector: invalid escape sequence: \\'],
  ])('%p is rejected', (text, message) => {
    let err: unknown;
    try {
      parseFieldSelector(text);
    } catch (e) {
      err = e;
    }
    expect(isBadRequest(err)).toBe(true);
    expect((err as Error).message).toBe(message);
  });

  test('a trailing escaped comma stays in its term', () => {
    expect(parseFieldSelector('a=x\\,').requirements()).toEqual([{ field: 'a', operator: '=', value: 'x,' }]);
  });
});

describe('matches', () => {
  test.each<[string, Record<string, string>, boolean]>([
    ['', {}, true],
    ['a=b', { a: 'b' }, true],
    ['a=b', { a: 'c' }, false],
    ['a==b', { a: 'b' }, true],
    ['a!=b', { a: 'c' }, true],
    ['a!=b', { a: 'b' }, false],
    ['a!=b', {}, true],
    ['a=', {}, true],
    ['a=', { a: '' }, true],
    ['a=', { a: 'x' }, false],
    ['a!=', {}, false],
    ['a=1,b=2', { a: '1', b: '2' }, true],
    ['a=1,b=2', { a: '1', b: '3' }, false],
    ['a=x\\,y', { a: 'x,y' }, true],
  ])('%p against %j → %p', (text, fields, want) => {
    expect(parseFieldSelector(text).matches(getter(fields))).toBe(want);
  });
});

describe('exact name', () => {
  test.each<[string, string | undefined]>([
    ['metadata.name=web', 'web'],
    ['metadata.name==web', 'web'],
    ['metadata.namespace=ns,metadata.name=web', 'web'],
    ['metadata.name!=web', undefined],
    ['metadata.namespace=web', undefined],
    ['', undefined],
    ['metadata.name=', ''],
  ])('%p → %p', (text, want) => {
    expect(exactMetadataName(parseFieldSelector(text))).toBe(want);
  });
});

describe('escaping', () => {
  test.each(['', 'plain', 'a,b', 'a=b', 'a\\b', '\\,=', 'ä,ö'])('%p round-trips', (v) => {
    expect(unescapeFieldValue(escapeFieldValue(v))).toBe(v);
    const sel = FieldSelector.fromRequirements([{ field: 'f', operator: '=', value: v }]);
    expect(parseFieldSelector(sel.toString()).requirements()).toEqual([{ field: 'f', operator: '=', value: v }]);
  });
  test('everything', () => {
    expect(FieldSelector.everything().isEmpty()).toBe(true);
    expect(FieldSelector.everything().matches(() => undefined)).toBe(true);
  });
});
