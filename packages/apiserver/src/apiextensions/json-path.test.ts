import { dottedPath, jsonPathValues, parseJsonPath } from './json-path.js';

const obj = {
  spec: { replicas: 3, 'a.b': 'dotted' },
  status: {
    conditions: [
      { type: 'Ready', status: 'True', n: 1 },
      { type: 'Accepted', status: 'Unknown', n: 2 },
    ],
  },
  items: [{ name: 'x' }, { name: 'y' }],
};

const values = (path: string): unknown[] | undefined => {
  const steps = parseJsonPath(path);
  return steps && jsonPathValues(obj, steps);
};

describe('printer column JSONPath', () => {
  it.each([
    ['.spec.replicas', [3]],
    [".spec['a.b']", ['dotted']],
    ['.spec.a\\.b', ['dotted']],
    ['.status.conditions[1].type', ['Accepted']],
    ['.status.conditions[-1].n', [2]],
    ['.items[*].name', ['x', 'y']],
    ['.status.conditions[?(@.type=="Accepted")].status', ['Unknown']],
    [".status.conditions[?(@.type!='Ready')].type", ['Accepted']],
    ['.status.conditions[?(@.n>1)].type', ['Accepted']],
    ['.status.conditions[?(@.n)].n', [1, 2]],
    ['.spec.missing', []],
  ])('%s', (path, want) => {
    expect(values(path)).toEqual(want);
  });

  it.each(['spec.replicas', '.spec[', '.status.conditions[?(@.type=)]', '.a..b', '.x[abc]'])('refuses %s', (path) => {
    expect(parseJsonPath(path)).toBeUndefined();
  });

  it('names simple field paths in dotted form only', () => {
    expect(dottedPath(parseJsonPath('.spec.color') ?? [])).toBe('spec.color');
    expect(dottedPath(parseJsonPath('.spec.list[0]') ?? [])).toBeUndefined();
  });
});
