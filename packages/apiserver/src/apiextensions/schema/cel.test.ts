import { fieldErrorMessage } from '@svc/api';
import { celErrors, evaluateRules } from './cel.js';
import { extKey, type JSONSchemaProps, type ValidationRule } from './types.js';

const V = extKey('validations');
const P = 'openAPIV3Schema';

function rules(...r: (ValidationRule | string)[]): Record<string, unknown> {
  return { [V]: r.map((x) => (typeof x === 'string' ? { rule: x } : x)) };
}

function specSchema(spec: JSONSchemaProps): JSONSchemaProps {
  return { type: 'object', properties: { spec } };
}

const specProps: Record<string, JSONSchemaProps> = {
  replicas: { type: 'integer' },
  max: { type: 'integer' },
  ratio: { type: 'number' },
  name: { type: 'string' },
  'foo-bar': { type: 'string' },
  when: { type: 'string', format: 'date-time' },
  port: { [extKey('int-or-string')]: true },
  labels: { type: 'object', additionalProperties: { type: 'string' } },
  tags: { type: 'array', items: { type: 'string' } },
  items: {
    type: 'array',
    items: {
      type: 'object',
      properties: { name: { type: 'string' }, path: { type: 'object', properties: { type: { type: 'string' } } } },
    },
  },
};

function compile(...r: (ValidationRule | string)[]): string[] {
  return celErrors(specSchema({ type: 'object', properties: specProps, ...rules(...r) }), P).map(fieldErrorMessage);
}

describe('celErrors: rules compiled at CRD validation', () => {
  it('accepts rules over the declared fields', () => {
    expect(
      compile(
        'self.replicas <= self.max',
        'self.ratio > 0.5 && self.replicas > 1',
        'has(self.items) && self.items.all(i, has(i.path) ? i.path.type == "Exact" : true)',
        'has(self.items[0].path)',
        'self.foo__dash__bar.startsWith("x")',
        'self.when < timestamp("2030-01-01T00:00:00Z")',
        'self.port == 80 || self.port == "http"',
        'self.labels.all(k, k.size() < 10) && "a" in self.labels',
        'self.tags.exists_one(t, t == "x") && self.tags.filter(t, t.matches("^a")).size() <= 1',
        'self.name.split("/")[0].size() < 253',
        'self.tags.isSorted() && self.tags.indexOf("a") >= 0 && [1, 2].sum() == 3 && [1, 3].max() == 3',
        'isURL(self.name) && url(self.name).getHostname() == "x" && self.name.charAt(0) == "h"',
        'sets.contains(self.tags, ["a"]) && self.name.replace("a", "b") != "" && self.name.find("[0-9]+") == ""',
        'self == oldSelf',
      ),
    ).toEqual([]);
  });

  it('reports rules that do not compile, as cel-go lays them out', () => {
    expect(compile('self.replicas >')).toEqual([
      `${P}.properties[spec].${V}[0].rule: Invalid value: {"rule":"self.replicas >"}: compilation failed: ERROR: <input>:1:16: Unexpected token: EOF\n | self.replicas >\n | ...............^`,
    ]);
  });

  it('reports fields the schema does not declare', () => {
    const [err] = compile('self.nope == 1');
    expect(err).toMatch(
      /rule: Invalid value: \{"rule":"self.nope == 1"\}: compilation failed: ERROR: <input>:1:\d+: undefined field 'nope'/,
    );
  });

  it('reports undeclared variables and functions', () => {
    const [a, b] = compile('other == 1', 'self.name.frobnicate()');
    expect(a).toContain("undeclared reference to 'other'");
    expect(b).toContain('frobnicate');
  });

  it('requires a bool result', () => {
    expect(compile('self.name')).toEqual([
      `${P}.properties[spec].${V}[0].rule: Invalid value: {"rule":"self.name"}: cel expression must evaluate to a bool`,
    ]);
  });

  it('checks messageExpression', () => {
    expect(
      compile({ rule: 'true', messageExpression: 'self.replicas' }, { rule: 'true', messageExpression: '"x" +' }),
    ).toEqual([
      `${P}.properties[spec].${V}[0].messageExpression: Invalid value: {"rule":"true","messageExpression":"self.replicas"}: messageExpression must evaluate to a string`,
      expect.stringContaining(
        `${P}.properties[spec].${V}[1].messageExpression: Invalid value: {"rule":"true","messageExpression":"\\"x\\" +"}: messageExpression compilation failed: ERROR: <input>:1:`,
      ),
    ]);
  });

  it('forbids optionalOldSelf on a rule without oldSelf', () => {
    expect(compile({ rule: 'true', optionalOldSelf: true })).toEqual([
      `${P}.properties[spec].${V}[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule`,
    ]);
  });

  it('forbids oldSelf below a list that is not a map list', () => {
    const schema = specSchema({
      type: 'object',
      properties: {
        atomic: {
          type: 'array',
          items: { type: 'object', properties: { a: { type: 'string', ...rules('self == oldSelf') } } },
        },
        keyed: {
          type: 'array',
          [extKey('list-type')]: 'map',
          [extKey('list-map-keys')]: ['a'],
          items: {
            type: 'object',
            required: ['a'],
            properties: { a: { type: 'string', ...rules('self == oldSelf') } },
          },
        },
      },
    });
    expect(celErrors(schema, P).map(fieldErrorMessage)).toEqual([
      `${P}.properties[spec].properties[atomic].items.properties[a].${V}[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${P}.properties[spec].properties[atomic]`,
    ]);
  });

  it('gives the root apiVersion, kind and metadata name and generateName only', () => {
    const root = (rule: string): JSONSchemaProps => ({
      type: 'object',
      properties: { spec: { type: 'object' } },
      ...rules(rule),
    });
    expect(
      celErrors(root('self.metadata.name.startsWith("a") && self.kind == "X" && self.apiVersion != ""'), P),
    ).toEqual([]);
    expect(celErrors(root('has(self.metadata.labels)'), P).map(fieldErrorMessage)).toEqual([
      expect.stringContaining("undefined field 'labels'"),
    ]);
  });

  it('cannot compile rules on a node without a type', () => {
    const schema = specSchema({ [extKey('preserve-unknown-fields')]: true, ...rules('true') });
    expect(celErrors(schema, P).map(fieldErrorMessage)).toEqual([
      `${P}.properties[spec].${V}: Invalid value: "": internal error: failed to convert to declType for CEL validation rules`,
    ]);
  });
});

describe('evaluateRules', () => {
  const schema = (...r: (ValidationRule | string)[]) =>
    specSchema({ type: 'object', properties: specProps, ...rules(...r) });
  const run = (s: JSONSchemaProps, value: Record<string, unknown>, old?: Record<string, unknown>) =>
    evaluateRules(s, { value: { spec: value }, old: old && { spec: old } }).map(fieldErrorMessage);

  it('reports a failed rule with its default message, at the node, with the node type as value', () => {
    expect(run(schema('self.replicas <= self.max'), { replicas: 3, max: 2 })).toEqual([
      'spec: Invalid value: "object": failed rule: self.replicas <= self.max',
    ]);
    expect(run(schema('self.replicas <= self.max'), { replicas: 1, max: 2 })).toEqual([]);
  });

  it('uses message, messageExpression, fieldPath and reason', () => {
    const s = schema(
      { rule: 'self.replicas <= self.max', message: 'too many', fieldPath: '.replicas' },
      {
        rule: 'self.replicas <= self.max',
        messageExpression: "'replicas ' + string(self.replicas) + ' over ' + string(self.max)",
      },
      { rule: 'self.replicas <= self.max', message: 'no', reason: 'FieldValueForbidden' },
      { rule: 'self.replicas <= self.max', message: 'need', reason: 'FieldValueRequired', fieldPath: "['foo-bar']" },
      { rule: 'self.replicas <= self.max', reason: 'FieldValueDuplicate' },
      { rule: 'self.replicas <= self.max', message: 'fallback', messageExpression: "''" },
    );
    expect(run(s, { replicas: 3, max: 2 })).toEqual([
      'spec.replicas: Invalid value: "object": too many',
      'spec: Invalid value: "object": replicas 3 over 2',
      'spec: Forbidden: no',
      'spec.foo-bar: Required value: need',
      'spec: Duplicate value: "object"',
      'spec: Invalid value: "object": fallback',
    ]);
  });

  it('sees integers as ints, numbers as doubles, date-times as timestamps, escaped names', () => {
    const s = schema(
      'self.replicas == 3 && self.ratio == 0.5 && self.ratio > 0',
      "self.when > timestamp('2020-01-01T00:00:00Z')",
      'self.foo__dash__bar == "x"',
      'self.port == 8080 || self.port == "http"',
    );
    expect(run(s, { replicas: 3, ratio: 0.5, when: '2024-05-01T00:00:00Z', 'foo-bar': 'x', port: 8080 })).toEqual([]);
    expect(run(s, { replicas: 3, ratio: 0.5, when: '2024-05-01T00:00:00Z', 'foo-bar': 'x', port: 'http' })).toEqual([]);
  });

  it('reports evaluation errors', () => {
    expect(run(schema('self.name == "x"'), {})).toEqual([
      'spec: Invalid value: "object": no such key: name evaluating rule: self.name == "x"',
    ]);
  });

  it('evaluates has() on any selection', () => {
    const s = schema("has(self.items[0].path) ? self.items[0].path.type == 'Exact' : true");
    expect(run(s, { items: [{ name: 'a' }] })).toEqual([]);
    expect(run(s, { items: [{ path: { type: 'Prefix' } }] })).toHaveLength(1);
  });

  it('runs rules of items, map values and fields at their paths', () => {
    const s = specSchema({
      type: 'object',
      properties: {
        labels: { type: 'object', additionalProperties: { type: 'string', ...rules('self.size() < 3') } },
        tags: { type: 'array', items: { type: 'string', ...rules('self != "bad"') } },
      },
    });
    expect(run(s, { labels: { a: 'long', b: 'ok' }, tags: ['x', 'bad'] })).toEqual([
      'spec.labels[a]: Invalid value: "string": failed rule: self.size() < 3',
      'spec.tags[1]: Invalid value: "string": failed rule: self != "bad"',
    ]);
  });

  it('sees the root metadata name', () => {
    const s: JSONSchemaProps = {
      type: 'object',
      properties: { spec: { type: 'object' } },
      ...rules("self.metadata.name.startsWith('a')"),
    };
    expect(evaluateRules(s, { value: { metadata: { name: 'abc', labels: { x: 'y' } }, spec: {} } })).toEqual([]);
    expect(evaluateRules(s, { value: { metadata: { name: 'xyz' }, spec: {} } }).map(fieldErrorMessage)).toEqual([
      '<nil>: Invalid value: "object": failed rule: self.metadata.name.startsWith(\'a\')',
    ]);
  });

  describe('transition rules', () => {
    const s = specSchema({
      type: 'object',
      properties: { replicas: { type: 'integer', ...rules({ rule: 'self >= oldSelf', message: 'may not decrease' }) } },
    });

    it('run only on update', () => {
      expect(run(s, { replicas: 1 })).toEqual([]);
      expect(run(s, { replicas: 1 }, { replicas: 2 })).toEqual([
        'spec.replicas: Invalid value: "integer": may not decrease',
      ]);
      expect(run(s, { replicas: 3 }, { replicas: 2 })).toEqual([]);
      expect(run(s, { replicas: 1 }, {})).toEqual([]);
    });

    it('with optionalOldSelf run on create too', () => {
      const o = specSchema({
        type: 'object',
        properties: {
          replicas: {
            type: 'integer',
            ...rules({ rule: '!oldSelf.hasValue() ? self < 10 : self >= oldSelf.value()', optionalOldSelf: true }),
          },
        },
      });
      expect(run(o, { replicas: 11 })).toHaveLength(1);
      expect(run(o, { replicas: 11 }, { replicas: 12 })).toHaveLength(1);
      expect(run(o, { replicas: 12 }, { replicas: 11 })).toEqual([]);
    });

    it('correlate map-list items by key', () => {
      const m = specSchema({
        type: 'object',
        properties: {
          ports: {
            type: 'array',
            [extKey('list-type')]: 'map',
            [extKey('list-map-keys')]: ['name'],
            items: {
              type: 'object',
              required: ['name'],
              properties: { name: { type: 'string' }, port: { type: 'integer' } },
              ...rules('self.port == oldSelf.port'),
            },
          },
        },
      });
      const old = {
        ports: [
          { name: 'a', port: 1 },
          { name: 'b', port: 2 },
        ],
      };
      expect(
        run(
          m,
          {
            ports: [
              { name: 'b', port: 2 },
              { name: 'a', port: 1 },
              { name: 'c', port: 3 },
            ],
          },
          old,
        ),
      ).toEqual([]);
      expect(run(m, { ports: [{ name: 'b', port: 5 }] }, old)).toEqual([
        'spec.ports[0]: Invalid value: "object": failed rule: self.port == oldSelf.port',
      ]);
    });
  });

  describe('ratcheting', () => {
    const s = schema('self.replicas <= self.max');

    it('skips a failing rule on an unchanged value', () => {
      expect(run(s, { replicas: 3, max: 2 }, { replicas: 3, max: 2 })).toEqual([]);
      expect(run(s, { replicas: 4, max: 2 }, { replicas: 3, max: 2 })).toHaveLength(1);
    });

    it('can be switched off', () => {
      const value = { spec: { replicas: 3, max: 2 } };
      expect(evaluateRules(s, { value, old: value, ratcheting: false })).toHaveLength(1);
    });

    it('applies to nodes below a changed parent', () => {
      const nested = specSchema({
        type: 'object',
        properties: { a: { type: 'string', ...rules('self != "bad"') }, b: { type: 'string' } },
      });
      expect(run(nested, { a: 'bad', b: 'new' }, { a: 'bad', b: 'old' })).toEqual([]);
    });
  });

  it('caches compiled rules per schema node', () => {
    const s = schema('self.replicas <= self.max');
    const started = Date.now();
    for (let i = 0; i < 2000; i++) evaluateRules(s, { value: { spec: { replicas: i % 3, max: 1 } } });
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('optionalOldSelf without the ratcheting gate', () => {
  it('does not run on create', () => {
    const s = specSchema({
      type: 'object',
      properties: { a: { type: 'string', [V]: [{ rule: 'oldSelf.hasValue()', optionalOldSelf: true }] } },
    });
    const value = { spec: { a: 'x' } };
    expect(evaluateRules(s, { value })).toHaveLength(1);
    expect(evaluateRules(s, { value, ratcheting: false })).toEqual([]);
  });
});
