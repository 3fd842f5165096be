import { tabwrite } from './tabwriter.js';
import { JsonPathTemplate } from './jsonpath.js';
import { toJson, toYaml } from './json-yaml.js';
import { parseOutputFormat } from './output-format.js';

describe('tabwrite (Go text/tabwriter as kubectl sets it up)', () => {
  it('pads every column but the last to its widest cell plus 3, at least 6', () => {
    expect(tabwrite('NAME\tDATA\tAGE\nx\t1\t5s\nlonger-name\t12\t3m\n')).toBe(
      'NAME          DATA   AGE\nx             1      5s\nlonger-name   12     3m\n',
    );
  });

  it('aligns columns only within blocks of lines that have them', () => {
    expect(tabwrite('a\tb\nno tabs here\nccc\td\n')).toBe('a     b\nno tabs here\nccc   d\n');
  });

  it('remembers widths across calls when asked (watch rows line up with the list)', () => {
    const widths: number[] = [];
    expect(tabwrite('NAME\tAGE\nlong-name-here\t1s\n', { remembered: widths })).toBe(
      'NAME             AGE\nlong-name-here   1s\n',
    );
    expect(tabwrite('x\t2s\n', { remembered: widths })).toBe('x                2s\n');
  });
});

describe('JSONPath templates', () => {
  const obj = {
    kind: 'List',
    items: [
      {
        metadata: { name: 'a', labels: { app: 'x' } },
        status: { conditions: [{ type: 'Ready', status: 'True' }] },
        n: 3,
      },
      { metadata: { name: 'b' }, status: { conditions: [{ type: 'Ready', status: 'False' }] }, n: 1.5 },
    ],
  };
  it.each([
    ['{.items[*].metadata.name}', 'a b'],
    ['{.items[0].metadata.labels}', '{"app":"x"}'],
    ['{.items[-1].n}', '1.5'],
    ['{range .items[*]}{.metadata.name}:{.n}{"\\n"}{end}', 'a:3\nb:1.5\n'],
    ['{.items[?(@.status.conditions[0].status=="True")].metadata.name}', 'a'],
    ['{..name}', 'a b'],
    ["{.items[*]['metadata.name']}", ''],
    ['{.items[0:1].metadata.name}', 'a'],
    ['{.missing}', ''],
    ['names: {.items[*].metadata.name}', 'names: a b'],
  ])('%s', (template, out) => {
    expect(new JsonPathTemplate(template).execute(obj)).toBe(out);
  });
});

describe('json and yaml as kubectl prints them', () => {
  it('sorts keys, indents JSON by four and escapes HTML characters as Go does', () => {
    expect(toJson({ b: 1, a: { d: '<x>', c: [] } })).toBe(
      '{\n    "a": {\n        "c": [],\n        "d": "\\u003cx\\u003e"\n    },\n    "b": 1\n}\n',
    );
  });

  it('quotes what YAML 1.1 would read as another type and writes lists unindented', () => {
    expect(toYaml({ t: '2026-01-01T00:00:00Z', yes: 'yes', num: '12', l: ['a'], m: 'a\nb\n', y: 1 })).toBe(
      'l:\n- a\nm: |\n  a\n  b\nnum: "12"\nt: "2026-01-01T00:00:00Z"\n"y": 1\n"yes": "yes"\n',
    );
  });
});

describe('output formats', () => {
  it('reads -o as kubectl does', () => {
    expect(parseOutputFormat('wide')).toEqual({ kind: 'table', wide: true });
    expect(parseOutputFormat('jsonpath={.a}')).toEqual({ kind: 'jsonpath', template: '{.a}' });
    expect(() => parseOutputFormat('xml', { allowed: ['json'] })).toThrow(
      'unable to match a printer suitable for the output format "xml", allowed formats are: json',
    );
  });
});
