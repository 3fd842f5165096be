import { fieldErrorMessage } from '@svc/api';
import { validateUpdate, validateValue } from './validate.js';
import { extKey, type JSONSchemaProps } from './types.js';

const X = extKey;

const spec: JSONSchemaProps = {
  type: 'object',
  required: ['name'],
  properties: {
    replicas: { type: 'integer', minimum: 1, maximum: 10 },
    ratio: { type: 'number', maximum: 1, exclusiveMaximum: true, multipleOf: 0.25 },
    name: { type: 'string', maxLength: 5, minLength: 2, pattern: '^[a-z]+$' },
    mode: { type: 'string', enum: ['a', 'b'] },
    tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 2 },
    labels: { type: 'object', additionalProperties: { type: 'string' }, minProperties: 1, maxProperties: 1 },
    port: { [X('int-or-string')]: true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
    comment: { type: 'string', nullable: true },
    when: { type: 'string', format: 'date-time' },
    count: { type: 'integer', format: 'int32' },
    ip: { type: 'string', anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }] },
    strict: { type: 'object', additionalProperties: false },
    notX: { type: 'string', not: { enum: ['x'] } },
    one: { type: 'string', oneOf: [{ maxLength: 2 }, { pattern: '^a' }] },
    all: { type: 'string', allOf: [{ maxLength: 2 }, { pattern: '^a' }] },
    dup: { type: 'array', items: { type: 'integer' }, uniqueItems: true },
    set: { type: 'array', items: { type: 'string' }, [X('list-type')]: 'set' },
    ports: {
      type: 'array',
      [X('list-type')]: 'map',
      [X('list-map-keys')]: ['name', 'protocol'],
      items: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string' },
          protocol: { type: 'string', default: 'TCP' },
          port: { type: 'integer', maximum: 65535 },
        },
      },
    },
    byName: {
      type: 'array',
      [X('list-type')]: 'map',
      [X('list-map-keys')]: ['name'],
      items: {
        type: 'object',
        required: ['name'],
        properties: { name: { type: 'string' }, port: { type: 'integer', maximum: 65535 } },
      },
    },
    atomic: { type: 'array', items: { type: 'integer', maximum: 5 } },
    template: { type: 'object', [X('embedded-resource')]: true, [X('preserve-unknown-fields')]: true },
  },
};

const schema: JSONSchemaProps = { type: 'object', properties: { spec, kind: { type: 'string', enum: ['Widget'] } } };

function messages(specValue: Record<string, unknown>): string[] {
  return validateValue(schema, { spec: { name: 'ok', ...specValue } }).map(fieldErrorMessage);
}

describe('validateValue: value rules with kube-openapi messages', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    [
      'valid',
      { replicas: 3, ratio: 0.5, mode: 'a', tags: ['x'], port: 80, comment: null, when: '2024-01-02T03:04:05Z' },
      [],
    ],
    [
      'a string for an integer',
      { replicas: 'x' },
      ['spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"'],
    ],
    [
      'a fraction for an integer',
      { replicas: 1.5 },
      ['spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number"'],
    ],
    [
      'below the minimum',
      { replicas: 0 },
      ['spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1'],
    ],
    [
      'above the maximum',
      { replicas: 11 },
      ['spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10'],
    ],
    [
      'an exclusive maximum',
      { ratio: 1.25 },
      ['spec.ratio: Invalid value: 1.25: spec.ratio in body should be less than 1'],
    ],
    [
      // kube-openapi checks an integer against int64(multipleOf): 0.25 becomes 0.
      'an integer against a fractional multipleOf',
      { ratio: 1 },
      [
        'spec.ratio: Invalid value: 0: factor MultipleOf declared for spec.ratio must be positive: 0',
        'spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1',
      ],
    ],
    [
      'not a multiple',
      { ratio: 0.3 },
      ['spec.ratio: Invalid value: 0.3: spec.ratio in body should be a multiple of 0.25'],
    ],
    [
      'too long (only the first string error)',
      { name: 'ABCDEFG' },
      ['spec.name: Too long: may not be more than 5 bytes'],
    ],
    ['too short', { name: 'a' }, ['spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long']],
    ['a pattern', { name: 'AB' }, ['spec.name: Invalid value: "AB": spec.name in body should match \'^[a-z]+$\'']],
    ['an enum', { mode: 'c' }, ['spec.mode: Unsupported value: "c": supported values: "a", "b"']],
    ['too few items', { tags: [] }, ['spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items']],
    [
      'an item of the wrong type',
      { tags: [1] },
      ['spec.tags[0]: Invalid value: "integer": spec.tags[0] in body must be of type string: "integer"'],
    ],
    [
      'a map value of the wrong type',
      { labels: { a: true } },
      ['spec.labels.a: Invalid value: "boolean": spec.labels.a in body must be of type string: "boolean"'],
    ],
    [
      'too few properties',
      { labels: {} },
      ['spec.labels: Invalid value: 0: spec.labels in body should have at least 1 properties'],
    ],
    [
      'int-or-string',
      { port: true },
      [
        'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
        '<nil>: Invalid value: "": "spec.port" must validate at least one schema (anyOf)',
        'spec.port: Invalid value: "boolean": spec.port in body must be of type integer: "boolean"',
      ],
    ],
    [
      'null where not nullable',
      { name: null },
      ['spec.name: Invalid value: "null": spec.name in body must be of type string: "null"'],
    ],
    [
      'a date-time',
      { when: 'yesterday' },
      ['spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"'],
    ],
    ['int32 is not checked (Kubernetes strips the format)', { count: 2 ** 40 }, []],
    [
      'anyOf of formats',
      { ip: 'x' },
      [
        '<nil>: Invalid value: "": "spec.ip" must validate at least one schema (anyOf)',
        'spec.ip: Invalid value: "x": spec.ip in body must be of type ipv4: "x"',
      ],
    ],
    [
      'additionalProperties: false',
      { strict: { b: 1 } },
      ['spec.strict: Invalid value: "b": spec.strict.b in body is a forbidden property'],
    ],
    ['not', { notX: 'x' }, ['<nil>: Invalid value: "": "spec.notX" must not validate the schema (not)']],
    [
      'oneOf matching two',
      { one: 'ab' },
      [
        '<nil>: Invalid value: "": "spec.one" must validate one and only one schema (oneOf). Found 2 valid alternatives',
      ],
    ],
    [
      'allOf',
      { all: 'bcd' },
      [
        'spec.all: Too long: may not be more than 2 bytes',
        'spec.all: Invalid value: "bcd": spec.all in body should match \'^a\'',
        '<nil>: Invalid value: "": "spec.all" must validate all the schemas (allOf). None validated',
      ],
    ],
    [
      'uniqueItems',
      { dup: [1, 2, 1] },
      ['spec.dup: Invalid value: "": spec.dup in body shouldn\'t contain duplicates'],
    ],
    ['a set', { set: ['a', 'b', 'a', 'a'] }, ['spec.set[2]: Duplicate value: "a"']],
    [
      'a map list with two keys',
      {
        ports: [
          { name: 'a', protocol: 'TCP' },
          { name: 'a', protocol: 'UDP' },
          { name: 'a', protocol: 'TCP' },
        ],
      },
      ['spec.ports[2]: Duplicate value: {"name":"a","protocol":"TCP"}'],
    ],
    [
      'a map list item that is not an object',
      { byName: ['x'] },
      [
        'spec.byName[0]: Invalid value: "string": spec.byName[0] in body must be of type object: "string"',
        'spec.byName[0]: Invalid value: "x": must be an object for an array of list-type map',
      ],
    ],
    [
      'an embedded resource',
      { template: { kind: 'my_kind', metadata: { name: 'a/b', labels: { 'a b': 'x' } } } },
      [
        'spec.template.apiVersion: Required value: must not be empty',
        expect.stringMatching(
          /^spec\.template\.kind: Invalid value: "my_kind": may have mixed case, but should otherwise match: a DNS-1035 label/,
        ) as unknown as string,
        'spec.template.metadata.name: Invalid value: "a/b": may not contain \'/\'',
        expect.stringMatching(
          /^spec\.template\.metadata\.labels: Invalid value: "a b": name part must consist of alphanumeric/,
        ) as unknown as string,
      ],
    ],
    [
      'an embedded resource with metadata of the wrong type',
      { template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 3 } } },
      [
        'spec.template.metadata: Invalid value: {"name":3}: json: cannot unmarshal number into Go struct field ObjectMeta.name of type string',
      ],
    ],
  ])('%s', (_name, value, expected) => {
    expect(messages(value)).toEqual(expected);
  });

  it('a missing required field', () => {
    expect(validateValue(schema, { spec: {} }).map(fieldErrorMessage)).toEqual(['spec.name: Required value']);
  });

  it('reports Too many with the count', () => {
    const errs = validateValue(schema, { spec: { name: 'ok', tags: ['a', 'b', 'c'], labels: { a: 'x', b: 'y' } } });
    expect(errs).toEqual([
      { path: 'spec.tags', type: 'FieldValueTooMany', value: 3, detail: 'must have at most 2 items' },
      { path: 'spec.labels', type: 'FieldValueTooMany', value: 2, detail: 'must have at most 1 items' },
    ]);
  });

  it('prefixes paths with the path of the value, and names fields relative to it', () => {
    expect(validateValue(spec, { name: 'ok', replicas: 0 }, 'spec').map(fieldErrorMessage)).toEqual([
      'spec.replicas: Invalid value: 0: replicas in body should be greater than or equal to 1',
    ]);
  });

  it('errors at the root of a value are at its path', () => {
    expect(validateValue({ type: 'object' }, 'x', '').map(fieldErrorMessage)).toEqual([
      '<nil>: Invalid value: "string":  in body must be of type object: "string"',
    ]);
  });
});

describe('validateUpdate: ratcheting (CRDValidationRatcheting)', () => {
  const obj = (s: Record<string, unknown>) => ({ kind: 'Widget', spec: { name: 'ok', ...s } });

  it('an unchanged invalid field does not fail the update', () => {
    const old = obj({ replicas: 0, tags: [1] });
    expect(validateUpdate(schema, { value: obj({ replicas: 0, tags: [1], mode: 'a' }), old })).toEqual([]);
  });

  it('a changed invalid field fails it', () => {
    const old = obj({ replicas: 0 });
    expect(validateUpdate(schema, { value: obj({ replicas: 11 }), old }).map(fieldErrorMessage)).toEqual([
      'spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10',
    ]);
  });

  it('correlates map-list items by their keys, in any order', () => {
    const old = obj({
      byName: [
        { name: 'a', port: 70000 },
        { name: 'b', port: 1 },
      ],
    });
    const value = obj({
      byName: [
        { name: 'b', port: 2 },
        { name: 'a', port: 70000 },
      ],
    });
    expect(validateUpdate(schema, { value, old })).toEqual([]);
  });

  it('does not correlate the items of an atomic list', () => {
    const old = obj({ atomic: [9] });
    expect(validateUpdate(schema, { value: obj({ atomic: [9] }), old })).toEqual([]);
    expect(validateUpdate(schema, { value: obj({ atomic: [9, 1] }), old }).map(fieldErrorMessage)).toEqual([
      'spec.atomic[0]: Invalid value: 9: spec.atomic[0] in body should be less than or equal to 5',
    ]);
  });

  it('never ratchets kind and apiVersion at the root', () => {
    const old = { kind: 'Gadget', spec: { name: 'ok' } };
    expect(
      validateUpdate(schema, { value: { kind: 'Gadget', spec: { name: 'ok', mode: 'a' } }, old }).map(
        fieldErrorMessage,
      ),
    ).toEqual(['kind: Unsupported value: "Gadget": supported values: "Widget"']);
    // A wholly unchanged object ratchets at the root, kind included.
    expect(validateUpdate(schema, { value: { ...old }, old })).toEqual([]);
  });

  it('enforces list uniqueness only when the old object had none', () => {
    const dupes = obj({ set: ['a', 'a'] });
    expect(validateUpdate(schema, { value: obj({ set: ['a', 'a', 'b'] }), old: dupes })).toEqual([]);
    expect(validateUpdate(schema, { value: dupes, old: obj({}) }).map(fieldErrorMessage)).toEqual([
      'spec.set[1]: Duplicate value: "a"',
    ]);
  });
});
