import { fieldErrorMessage, useNaming } from '@svc/api';
import { structuralErrors } from './structural.js';
import { extKey, type JSONSchemaProps } from './types.js';

const P = 'openAPIV3Schema';
const X = (name: Parameters<typeof extKey>[0]) => extKey(name);

function errors(schema: JSONSchemaProps, opts: { statusSubresource?: boolean } = {}): string[] {
  return structuralErrors(schema, P, opts).map(fieldErrorMessage);
}

/** A root object whose `spec` is `spec`. */
function withSpec(spec: JSONSchemaProps): JSONSchemaProps {
  return { type: 'object', properties: { spec } };
}

describe('structural schema rules (Kubernetes ValidateStructural)', () => {
  it.each<[string, () => JSONSchemaProps, string[]]>([
    [
      'a field without type',
      () => withSpec({ properties: { a: { type: 'string' } } }),
      [`${P}.properties[spec].type: Required value: must not be empty for specified object fields`],
    ],
    [
      'items without type',
      () => withSpec({ type: 'array', items: {} }),
      [`${P}.properties[spec].items.type: Required value: must not be empty for specified array items`],
    ],
    ['the root without type', () => ({ properties: {} }), [`${P}.type: Required value: must not be empty at the root`]],
    [
      'the root not an object',
      () => ({ type: 'string' }),
      [`${P}.type: Invalid value: "string": must be object at the root`],
    ],
    [
      'an array without items',
      () => withSpec({ type: 'array' }),
      [`${P}.properties[spec].items: Required value: must be specified`],
    ],
    [
      'additionalProperties at the root',
      () => ({ type: 'object', additionalProperties: { type: 'string' } }),
      [`${P}.additionalProperties: Forbidden: must not be used at the root`],
    ],
    [
      'additionalProperties: false at the root',
      () => ({ type: 'object', additionalProperties: false }),
      [`${P}.additionalProperties: Forbidden: must not be used at the root`],
    ],
    [
      'int-or-string with preserve-unknown-fields',
      () => withSpec({ [X('int-or-string')]: true, [X('preserve-unknown-fields')]: true }),
      [
        `${P}.properties[spec].${X('preserve-unknown-fields')}: Invalid value: true: must be false if ${X('int-or-string')} is true`,
      ],
    ],
    [
      'int-or-string with embedded-resource',
      () =>
        withSpec({
          [X('int-or-string')]: true,
          [X('embedded-resource')]: true,
          type: 'object',
          properties: { a: { type: 'string' } },
        }),
      [
        `${P}.properties[spec].${X('embedded-resource')}: Invalid value: true: must be false if ${X('int-or-string')} is true`,
      ],
    ],
    [
      'an embedded resource without type',
      () => withSpec({ [X('embedded-resource')]: true, [X('preserve-unknown-fields')]: true }),
      [`${P}.properties[spec].type: Required value: must be object if ${X('embedded-resource')} is true`],
    ],
    [
      'an embedded resource of type string',
      () => withSpec({ [X('embedded-resource')]: true, [X('preserve-unknown-fields')]: true, type: 'string' }),
      [`${P}.properties[spec].type: Invalid value: "string": must be object if ${X('embedded-resource')} is true`],
    ],
    [
      'an embedded resource without properties or preserve-unknown-fields',
      () => withSpec({ [X('embedded-resource')]: true, type: 'object' }),
      [
        `${P}.properties[spec].properties: Required value: must not be empty if ${X('embedded-resource')} is true without ${X('preserve-unknown-fields')}`,
      ],
    ],
    [
      'an embedded resource with additionalProperties',
      () =>
        withSpec({
          [X('embedded-resource')]: true,
          [X('preserve-unknown-fields')]: true,
          type: 'object',
          additionalProperties: { type: 'string' },
        }),
      [`${P}.properties[spec].additionalProperties: Forbidden: must not be used if ${X('embedded-resource')} is set`],
    ],
    [
      'root metadata restricting labels',
      () => ({
        type: 'object',
        properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } },
      }),
      [
        `${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
      ],
    ],
    [
      'root metadata with a description',
      () => ({ type: 'object', properties: { metadata: { type: 'object', description: 'x' } } }),
      [
        `${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
      ],
    ],
    [
      'root metadata that is not an object',
      () => ({ type: 'object', properties: { metadata: { type: 'string' } } }),
      [`${P}.properties[metadata].type: Invalid value: "string": must be object`],
    ],
    [
      'root kind that is not a string',
      () => ({ type: 'object', properties: { kind: { type: 'integer' } } }),
      [`${P}.properties[kind].type: Invalid value: "integer": must be string`],
    ],
    [
      'type in a value validation',
      () => withSpec({ type: 'string', anyOf: [{ type: 'string' }] }),
      [`${P}.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural`],
    ],
    [
      'generic fields in a value validation',
      () =>
        withSpec({
          type: 'object',
          properties: { a: { type: 'string' } },
          allOf: [
            { default: 'x', description: 'd', title: 't', nullable: true, additionalProperties: { type: 'string' } },
          ],
        }),
      [
        `${P}.properties[spec].allOf[0].additionalProperties: Forbidden: must be undefined to be structural`,
        `${P}.properties[spec].allOf[0].default: Forbidden: must be undefined to be structural`,
        `${P}.properties[spec].allOf[0].description: Forbidden: must be empty to be structural`,
        `${P}.properties[spec].allOf[0].nullable: Forbidden: must be false to be structural`,
        `${P}.properties[spec].allOf[0].title: Forbidden: must be empty to be structural`,
      ],
    ],
    [
      'extensions in a value validation',
      () =>
        withSpec({
          type: 'array',
          items: { type: 'string' },
          oneOf: [{ [X('list-type')]: 'set', [X('validations')]: [{ rule: 'true' }] }],
        }),
      [
        `${P}.properties[spec].oneOf[0].${X('list-type')}: Forbidden: must be undefined to be structural`,
        `${P}.properties[spec].oneOf[0].${X('validations')}: Forbidden: must be empty to be structural`,
        // The CRD schema checks see the nested list-type too.
        `${P}.properties[spec].oneOf[0].type: Required value: must be array if ${X('list-type')} is specified`,
      ],
    ],
    [
      'metadata in a nested context',
      () => ({ type: 'object', properties: { metadata: { type: 'object' } }, not: { properties: { metadata: {} } } }),
      [`${P}.not.properties[metadata]: Forbidden: must not be specified in a nested context`],
    ],
    [
      'a value validation on a property the schema does not have',
      () => ({
        type: 'object',
        properties: { a: { type: 'string' } },
        allOf: [{ properties: { b: { minLength: 1 } } }],
      }),
      [`${P}.properties[b]: Required value: because it is defined in ${P}.allOf[0].properties[b]`],
    ],
    [
      'an invalid pattern',
      () => withSpec({ type: 'string', pattern: '(' }),
      [
        expect.stringMatching(
          /^openAPIV3Schema\.properties\[spec\]\.pattern: Invalid value: "\(": must be a valid regular expression, but isn't: /,
        ) as unknown as string,
      ],
    ],
  ])('%s', (_name, schema, expected) => {
    expect(errors(schema())).toEqual(expected);
  });

  it('accepts the int-or-string patterns', () => {
    const anyOf = [{ type: 'integer' }, { type: 'string' }];
    expect(errors(withSpec({ [X('int-or-string')]: true, anyOf }))).toEqual([]);
    expect(errors(withSpec({ [X('int-or-string')]: true, allOf: [{ anyOf }, { pattern: '^a' }] }))).toEqual([]);
    expect(
      errors(
        withSpec({ [X('int-or-string')]: true, anyOf: [{ type: 'integer', description: 'x' }, { type: 'string' }] }),
      ),
    ).toEqual([
      `${P}.properties[spec].anyOf[0].description: Forbidden: must be empty to be structural`,
      `${P}.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural`,
      `${P}.properties[spec].anyOf[1].type: Forbidden: must be empty to be structural`,
    ]);
  });

  it('accepts root metadata restricting name and generateName', () => {
    const metadata = {
      type: 'object',
      properties: { name: { type: 'string', maxLength: 10 }, generateName: { type: 'string' } },
    };
    expect(errors({ type: 'object', properties: { metadata } })).toEqual([]);
  });

  it('accepts preserve-unknown-fields and int-or-string nodes without a type', () => {
    expect(errors(withSpec({ [X('preserve-unknown-fields')]: true }))).toEqual([]);
    expect(errors(withSpec({ [X('int-or-string')]: true }))).toEqual([]);
  });

  it('sorts the structural errors by message', () => {
    const errs = errors({ type: 'object', properties: { b: {}, a: {} } });
    expect(errs).toEqual([...errs].sort());
    expect(errs).toHaveLength(2);
  });

  it('spells extensions with the naming prefix', () => {
    useNaming('kubernetes');
    try {
      expect(
        errors(withSpec({ [extKey('embedded-resource')]: true, [extKey('preserve-unknown-fields')]: true })),
      ).toEqual([
        `${P}.properties[spec].type: Required value: must be object if x-kubernetes-embedded-resource is true`,
      ]);
    } finally {
      useNaming('svc');
    }
    expect(
      errors(withSpec({ [extKey('embedded-resource')]: true, [extKey('preserve-unknown-fields')]: true })),
    ).toEqual([`${P}.properties[spec].type: Required value: must be object if x-svc-embedded-resource is true`]);
  });
});

describe('CRD schema checks (Kubernetes ValidateCustomResourceDefinitionOpenAPISchema)', () => {
  it.each<[string, () => JSONSchemaProps, string[]]>([
    [
      'uniqueItems',
      () => withSpec({ type: 'array', items: { type: 'string' }, uniqueItems: true }),
      [
        `${P}.properties[spec].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
      ],
    ],
    [
      '$ref',
      () => withSpec({ type: 'string', $ref: '#/x' }),
      [`${P}.properties[spec].$ref: Forbidden: $ref is not supported`],
    ],
    [
      'definitions, patternProperties, dependencies, additionalItems and id',
      () =>
        withSpec({
          type: 'object',
          id: 'x',
          additionalItems: false,
          patternProperties: { a: { type: 'string' } },
          dependencies: { a: ['b'] },
          definitions: { d: { type: 'string' } },
        }),
      [
        `${P}.properties[spec].id: Forbidden: id is not supported`,
        `${P}.properties[spec].additionalItems: Forbidden: additionalItems is not supported`,
        `${P}.properties[spec].patternProperties: Forbidden: patternProperties is not supported`,
        `${P}.properties[spec].definitions: Forbidden: definitions is not supported`,
        `${P}.properties[spec].dependencies: Forbidden: dependencies is not supported`,
      ],
    ],
    [
      'items as an array',
      () => withSpec({ type: 'array', items: [{ type: 'string' }] }),
      [`${P}.properties[spec].items: Forbidden: items must be a schema object and not an array`],
    ],
    [
      'type null',
      () => withSpec({ type: 'null' }),
      [
        `${P}.properties[spec].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string"`,
        `${P}.properties[spec].type: Forbidden: type cannot be set to null, use nullable as an alternative`,
      ],
    ],
    [
      'additionalProperties with properties',
      () =>
        withSpec({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } }),
      [
        `${P}.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
      ],
    ],
    [
      'additionalProperties: false with properties',
      () => withSpec({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }),
      [
        `${P}.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
      ],
    ],
    [
      'preserve-unknown-fields: false',
      () => withSpec({ type: 'object', [X('preserve-unknown-fields')]: false }),
      [`${P}.properties[spec].${X('preserve-unknown-fields')}: Invalid value: false: must be true or undefined`],
    ],
    [
      'list-map-keys without list-type',
      () =>
        withSpec({
          type: 'array',
          items: { type: 'object', properties: { k: { type: 'string' } }, required: ['k'] },
          [X('list-map-keys')]: ['k'],
        }),
      [`${P}.properties[spec].${X('list-type')}: Required value: must be map if ${X('list-map-keys')} is non-empty`],
    ],
    [
      'list-map-keys with list-type set',
      () =>
        withSpec({ type: 'array', items: { type: 'string' }, [X('list-type')]: 'set', [X('list-map-keys')]: ['k'] }),
      [
        `${P}.properties[spec].${X('list-type')}: Invalid value: "set": must be map if ${X('list-map-keys')} is non-empty`,
      ],
    ],
    [
      'list-type map without keys',
      () => withSpec({ type: 'array', items: { type: 'object' }, [X('list-type')]: 'map' }),
      [`${P}.properties[spec].${X('list-map-keys')}: Required value: must not be empty if ${X('list-type')} is map`],
    ],
    [
      'list-type map with keys that are not item properties, or not scalars',
      () =>
        withSpec({
          type: 'array',
          [X('list-type')]: 'map',
          [X('list-map-keys')]: ['a', 'b'],
          items: { type: 'object', required: ['b'], properties: { b: { type: 'object' } } },
        }),
      [
        `${P}.properties[spec].${X('list-map-keys')}: Invalid value: ["a","b"]: entries must all be names of item properties`,
        `${P}.properties[spec].items.properties[b].type: Invalid value: "object": must be a scalar type if parent array's ${X('list-type')} is map`,
      ],
    ],
    [
      'list-type map over scalar items',
      () =>
        withSpec({ type: 'array', [X('list-type')]: 'map', [X('list-map-keys')]: ['a'], items: { type: 'string' } }),
      [
        `${P}.properties[spec].items.type: Invalid value: "string": must be object if parent array's ${X('list-type')} is map`,
      ],
    ],
    [
      'list map keys neither required nor defaulted, nullable keys and items',
      () =>
        withSpec({
          type: 'array',
          [X('list-type')]: 'map',
          [X('list-map-keys')]: ['a'],
          items: { type: 'object', nullable: true, properties: { a: { type: 'string', nullable: true } } },
        }),
      [
        `${P}.properties[spec].items.nullable: Forbidden: cannot be nullable when ${X('list-type')} is map`,
        `${P}.properties[spec].items.properties[a].default: Required value: this property is in ${X('list-map-keys')}, so it must have a default or be a required property`,
        `${P}.properties[spec].items.properties[a].nullable: Forbidden: this property is in ${X('list-map-keys')}, so it cannot be nullable`,
      ],
    ],
    [
      'an unknown list-type',
      () => withSpec({ type: 'array', items: { type: 'string' }, [X('list-type')]: 'bag' }),
      [`${P}.properties[spec].${X('list-type')}: Unsupported value: "bag": supported values: "atomic", "set", "map"`],
    ],
    [
      'list-type on an object',
      () => withSpec({ type: 'object', [X('list-type')]: 'atomic' }),
      [`${P}.properties[spec].type: Invalid value: "object": must be array if ${X('list-type')} is specified`],
    ],
    [
      'a set of granular objects',
      () =>
        withSpec({
          type: 'array',
          [X('list-type')]: 'set',
          items: { type: 'object', properties: { a: { type: 'string' } } },
        }),
      [
        `${P}.properties[spec].items.${X('map-type')}: Invalid value: null: must be atomic as item of a list with ${X('list-type')}=set`,
      ],
    ],
    [
      'map-type on a string, and an unknown map-type',
      () =>
        withSpec({
          type: 'object',
          properties: { a: { type: 'string', [X('map-type')]: 'atomic' } },
          [X('map-type')]: 'whole',
        }),
      [
        `${P}.properties[spec].properties[a].type: Invalid value: "string": must be object if ${X('map-type')} is specified`,
        `${P}.properties[spec].${X('map-type')}: Unsupported value: "whole": supported values: "atomic", "granular"`,
      ],
    ],
    [
      'a default in top-level metadata',
      () => ({ type: 'object', properties: { metadata: { type: 'object', default: {} } } }),
      [`${P}.properties[metadata].default: Forbidden: must not be set in top-level metadata`],
    ],
    [
      'nullable at the root',
      () => ({ type: 'object', nullable: true }),
      [`${P}.nullable: Forbidden: nullable cannot be true at the root`],
    ],
    [
      'validation rules: empty rule, multi-line rule without message, bad reason and fieldPath',
      () =>
        withSpec({
          type: 'object',
          properties: { a: { type: 'string' } },
          [X('validations')]: [
            { rule: ' ' },
            { rule: 'self.a ==\n"x"' },
            { rule: 'true', message: 'two\nlines' },
            { rule: 'true', reason: 'FieldValueBad' },
            { rule: 'true', fieldPath: '.b' },
            { rule: 'true', messageExpression: ' ' },
          ],
        }),
      [
        `${P}.properties[spec].${X('validations')}[0].rule: Required value: rule is not specified`,
        `${P}.properties[spec].${X('validations')}[1].message: Required value: message must be specified if rule contains line breaks`,
        `${P}.properties[spec].${X('validations')}[2].message: Invalid value: "two\\nlines": message must not contain line breaks`,
        `${P}.properties[spec].${X('validations')}[3].reason: Unsupported value: "FieldValueBad": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
        `${P}.properties[spec].${X('validations')}[4].fieldPath: Invalid value: ".b": fieldPath must be a valid path`,
        `${P}.properties[spec].${X('validations')}[5].messageExpression: Required value: messageExpression must be non-empty if specified`,
      ],
    ],
  ])('%s', (_name, schema, expected) => {
    expect(errors(schema())).toEqual(expected);
  });

  it('allows additionalProperties: true next to properties, and false below the root', () => {
    expect(
      errors(withSpec({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: true })),
    ).toEqual([]);
    expect(errors(withSpec({ type: 'object', additionalProperties: false }))).toEqual([]);
  });

  it('with the status subresource allows only some fields at the root', () => {
    expect(
      errors({ type: 'object', properties: {}, description: 'd', required: ['spec'] }, { statusSubresource: true }),
    ).toEqual([]);
    const [err] = errors({ type: 'object', properties: {}, minProperties: 1 }, { statusSubresource: true });
    expect(err).toMatch(
      /^openAPIV3Schema: Invalid value: .*: only \[Description Type Format Title .* XValidations\] fields are allowed at the root of the schema if the status subresource is enabled$/,
    );
  });

  it('reports why the schema is not structural only when nothing else is wrong', () => {
    expect(errors(withSpec({ type: 'string', $schema: 'http://x' }))).toEqual([
      `${P}: Invalid value: "": OpenAPIV3Schema 'schema' is not supported`,
    ]);
  });
});

describe('defaults (Kubernetes ValidateDefaults)', () => {
  it('must be pruned', () => {
    const schema = withSpec({ type: 'object', properties: { a: { type: 'string' } }, default: { a: 'x', b: 'y' } });
    expect(errors(schema)).toEqual([
      `${P}.properties[spec].default: Invalid value: {"a":"x","b":"y"}: must not have unknown fields`,
    ]);
  });

  it('must be valid', () => {
    const schema = withSpec({
      type: 'object',
      properties: { replicas: { type: 'integer', minimum: 1, default: 0 }, name: { type: 'string', default: 3 } },
    });
    expect(errors(schema)).toEqual([
      `${P}.properties[spec].properties[replicas].default: Invalid value: 0:  in body should be greater than or equal to 1`,
      `${P}.properties[spec].properties[name].default: Invalid value: "integer":  in body must be of type string: "integer"`,
    ]);
  });

  it('must pass the rules of their node', () => {
    const schema = withSpec({ type: 'string', default: 'b', [X('validations')]: [{ rule: "self == 'a'" }] });
    expect(errors(schema)).toEqual([
      `${P}.properties[spec].default: Invalid value: "string": failed rule: self == 'a'`,
    ]);
  });

  it('of an embedded resource need its apiVersion and kind', () => {
    const schema = withSpec({
      type: 'object',
      [X('embedded-resource')]: true,
      [X('preserve-unknown-fields')]: true,
      default: { kind: 'Pod' },
    });
    expect(errors(schema)).toEqual([`${P}.properties[spec].default.apiVersion: Required value: must not be empty`]);
  });

  it('are checked only when the schema is structural', () => {
    expect(errors(withSpec({ properties: { a: { type: 'integer', default: 'x' } } }))).toEqual([
      `${P}.properties[spec].type: Required value: must not be empty for specified object fields`,
    ]);
  });

  it('in list items and properties pass', () => {
    const schema = withSpec({
      type: 'array',
      items: { type: 'object', properties: { port: { type: 'integer', default: 80 } } },
      default: [{ port: 8080 }],
    });
    expect(errors(schema)).toEqual([]);
  });
});
