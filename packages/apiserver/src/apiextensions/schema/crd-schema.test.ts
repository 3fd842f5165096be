import { fieldErrorMessage } from '@svc/api';
import { crdSchemaErrors } from './crd-schema.js';
import { extKey, type JSONSchemaProps } from './types.js';

const P = 'openAPIV3Schema';
const X = extKey;

function withSpec(spec: JSONSchemaProps): JSONSchemaProps {
  return { type: 'object', properties: { spec } };
}

describe('crdSchemaErrors', () => {
  it('compiles the rules only of a structural schema', () => {
    const bad = withSpec({ type: 'string', [X('validations')]: [{ rule: 'self >' }] });
    expect(crdSchemaErrors(bad, P).map(fieldErrorMessage)).toEqual([
      expect.stringContaining(
        `${P}.properties[spec].${X('validations')}[0].rule: Invalid value: {"rule":"self >"}: compilation failed: ERROR: <input>:1:7:`,
      ),
    ]);
    const notStructural = { type: 'object', properties: { spec: { [X('validations')]: [{ rule: 'self >' }] } } };
    expect(crdSchemaErrors(notStructural, P).map(fieldErrorMessage)).toEqual([
      `${P}.properties[spec].type: Required value: must not be empty for specified object fields`,
    ]);
  });

  it('skips the rules of a node with a schema error below it', () => {
    const schema = withSpec({
      type: 'object',
      properties: { a: { type: 'array', items: { type: 'string' }, uniqueItems: true } },
      [X('validations')]: [{ rule: 'self >' }],
    });
    expect(crdSchemaErrors(schema, P).map(fieldErrorMessage)).toEqual([
      `${P}.properties[spec].properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
    ]);
  });
});
