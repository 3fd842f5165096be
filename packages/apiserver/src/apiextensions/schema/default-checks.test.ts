import { fieldErrorMessage } from '@svc/api';
import { defaultErrors } from './default-checks.js';
import { extKey, type JSONSchemaProps } from './types.js';

describe('defaultErrors', () => {
  it('checks a default inside an embedded resource against the resource, and skips additionalProperties', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        pod: {
          type: 'object',
          [extKey('embedded-resource')]: true,
          properties: { spec: { type: 'object', properties: { n: { type: 'integer', default: 'x' } } } },
          default: { apiVersion: 'v1', kind: 'Pod', spec: {}, extra: 1 },
        },
        map: { type: 'object', additionalProperties: { type: 'integer', default: 'not checked' } },
      },
    };
    expect(defaultErrors(schema, 's').map(fieldErrorMessage)).toEqual([
      's.properties[pod].default: Invalid value: {"apiVersion":"v1","kind":"Pod","spec":{},"extra":1}: must not have unknown fields',
      's.properties[pod].properties[spec].properties[n].default: Invalid value: "string":  in body must be of type integer: "string"',
    ]);
  });

  it('evaluates the rules on a default as an update from itself, then as a create', () => {
    const schema = (rule: string): JSONSchemaProps => ({
      type: 'object',
      properties: { a: { type: 'string', default: 'x', [extKey('validations')]: [{ rule, optionalOldSelf: true }] } },
    });
    expect(defaultErrors(schema('oldSelf.hasValue()'), 's').map(fieldErrorMessage)).toEqual([
      's.properties[a].default: Invalid value: "string": failed rule: oldSelf.hasValue()',
    ]);
    expect(defaultErrors(schema('!oldSelf.hasValue() || self == oldSelf.value()'), 's')).toEqual([]);
  });
});
