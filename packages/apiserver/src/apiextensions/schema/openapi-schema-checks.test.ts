import { fieldErrorMessage } from '@svc/api';
import { openApiSchemaErrors, rootSchemaErrors } from './openapi-schema-checks.js';
import { extKey } from './types.js';

describe('openApiSchemaErrors', () => {
  it('forbids defaults inside additionalProperties of resource metadata', () => {
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          [extKey('embedded-resource')]: true,
          properties: {
            metadata: {
              type: 'object',
              properties: { labels: { type: 'object', additionalProperties: { type: 'string', default: 'x' } } },
            },
          },
        },
      },
    };
    expect(openApiSchemaErrors(schema, 's').map(fieldErrorMessage)).toEqual([
      's.properties[spec].properties[metadata].properties[labels].additionalProperties.default: Forbidden: must not be set inside additionalProperties applying to object metadata',
    ]);
  });

  it('forbids embedded resources inside resource meta', () => {
    const schema = {
      type: 'object',
      properties: {
        apiVersion: { type: 'object', [extKey('embedded-resource')]: true, [extKey('preserve-unknown-fields')]: true },
      },
    };
    expect(openApiSchemaErrors(schema, 's').map(fieldErrorMessage)).toEqual([
      `s.properties[apiVersion].${extKey('embedded-resource')}: Forbidden: must not be used inside of resource meta`,
    ]);
  });
});

describe('rootSchemaErrors', () => {
  it('allows only object at the root with the status subresource', () => {
    expect(rootSchemaErrors({ type: 'string' }, 's', true).map(fieldErrorMessage)).toEqual([
      's.type: Invalid value: "string": only "object" is allowed as the type at the root of the schema if the status subresource is enabled',
    ]);
    expect(rootSchemaErrors({ type: 'object', [extKey('preserve-unknown-fields')]: true }, 's', true)).toEqual([]);
  });
});
