import { LabelSelector, type Labels } from './label-selector.js';
import { parseLabelSelector } from './label-selector-parser.js';

describe('matches', () => {
  const cases: Array<[string, Labels, boolean]> = [
    ['', {}, true],
    ['', { a: 'b' }, true],
    ['a=b', { a: 'b' }, true],
    ['a=b', { a: 'c' }, false],
    ['a=b', {}, false],
    ['a==b', { a: 'b', x: 'y' }, true],
    ['a!=b', { a: 'c' }, true],
    ['a!=b', { a: 'b' }, false],
    ['a!=b', {}, true],
    ['a in (x,y)', { a: 'y' }, true],
    ['a in (x,y)', { a: 'z' }, false],
    ['a in (x,y)', {}, false],
    ['a notin (x,y)', { a: 'z' }, true],
    ['a notin (x,y)', { a: 'x' }, false],
    ['a notin (x,y)', {}, true],
    ['a', { a: '' }, true],
    ['a', { b: 'a' }, false],
    ['!a', { b: 'a' }, true],
    ['!a', { a: '' }, false],
    ['a=', { a: '' }, true],
    ['a=', {}, false],
    ['a in ()', { a: '' }, true],
    ['a=b,c=d', { a: 'b', c: 'd' }, true],
    ['a=b,c=d', { a: 'b', c: 'e' }, false],
    ['a>5', { a: '6' }, true],
    ['a>5', { a: '5' }, false],
    ['a>5', { a: 'x' }, false],
    ['a>5', {}, false],
    ['a<5', { a: '4' }, true],
    ['a<5', { a: '-1' }, true],
    ['toString', {}, false],
    ['!toString', {}, true],
  ];
  test.each(cases)('%p against %j → %p', (text, labels, want) => {
    expect(parseLabelSelector(text).matches(labels)).toBe(want);
  });

  test('undefined labels behave as no labels', () => {
    expect(parseLabelSelector('!a').matches(undefined)).toBe(true);
    expect(parseLabelSelector('a').matches(undefined)).toBe(false);
  });

  test('everything and nothing', () => {
    expect(LabelSelector.everything().matches({})).toBe(true);
    expect(LabelSelector.everything().isEmpty()).toBe(true);
    expect(LabelSelector.nothing().matches({})).toBe(false);
    expect(LabelSelector.nothing().isEmpty()).toBe(false);
    expect(LabelSelector.nothing().toString()).toBe('');
  });
});

describe('fromRequirements', () => {
  test('validates like NewRequirement', () => {
    expect(() => LabelSelector.fromRequirements([{ key: 'a', operator: '=', values: ['x', 'y'] }])).toThrow(
      'exact-match compatibility requires one single value',
    );
    expect(
      LabelSelector.fromRequirements([
        { key: 'b', operator: '=', values: ['1'] },
        { key: 'a', operator: 'exists', values: [] },
      ]).toString(),
    ).toBe('a,b=1');
  });
});
