import { structuralConversionError } from './structural-conversion.js';
import { extKey, type JSONSchemaProps } from './types.js';

describe('structuralConversionError (Kubernetes NewStructural)', () => {
  it.each<[string, JSONSchemaProps, string | undefined]>([
    ['a plain schema', { type: 'object', properties: { a: { type: 'string' } } }, undefined],
    ['$ref', { properties: { a: { $ref: '#/x' } } }, "OpenAPIV3Schema '$ref' is not supported"],
    ['$schema', { $schema: 'x' }, "OpenAPIV3Schema 'schema' is not supported"],
    ['items as an array', { allOf: [{ items: [{}] }] }, "OpenAPIV3Schema 'items' must be a schema, but is an array"],
    ['an empty definitions map', { definitions: {} }, undefined],
  ])('%s', (_name, schema, expected) => {
    expect(structuralConversionError(schema)).toBe(expected);
  });

  it('rejects preserve-unknown-fields: false', () => {
    expect(structuralConversionError({ [extKey('preserve-unknown-fields')]: false })).toBe(
      `internal error: '${extKey('preserve-unknown-fields')}' must be true or undefined`,
    );
  });
});
