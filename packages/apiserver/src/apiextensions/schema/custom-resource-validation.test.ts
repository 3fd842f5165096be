import { fieldErrorMessage } from '@svc/api';
import { validateCustomResource } from './custom-resource-validation.js';
import { extKey, type JSONSchemaProps } from './types.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer', maximum: 5 },
        mode: { type: 'string', enum: ['a'] },
        set: { type: 'array', items: { type: 'string' }, [extKey('list-type')]: 'set' },
      },
      [extKey('validations')]: [{ rule: '!has(self.replicas) || self.replicas > 1' }],
    },
  },
};

const run = (spec: object, old?: object) =>
  validateCustomResource(schema, { value: { spec }, old: old && { spec: old } }).map(fieldErrorMessage);

describe('validateCustomResource', () => {
  it('runs the schema rules, list uniqueness, then CEL', () => {
    expect(run({ replicas: 1, set: ['x', 'x'] })).toEqual([
      'spec.set[1]: Duplicate value: "x"',
      'spec: Invalid value: "object": failed rule: !has(self.replicas) || self.replicas > 1',
    ]);
  });

  it('does not run CEL after a blocking error', () => {
    expect(run({ replicas: 1, mode: 'b' })).toEqual([
      'spec.mode: Unsupported value: "b": supported values: "a"',
      '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
  });

  it('runs CEL after an Invalid error', () => {
    expect(run({ replicas: 9 })).toEqual([
      'spec.replicas: Invalid value: 9: spec.replicas in body should be less than or equal to 5',
    ]);
  });

  it('ratchets on update unless switched off', () => {
    expect(run({ replicas: 9, set: ['x', 'x'] }, { replicas: 9, set: ['x', 'x'] })).toEqual([]);
    const value = { spec: { replicas: 9 } };
    expect(validateCustomResource(schema, { value, old: value, ratcheting: false })).toHaveLength(1);
  });
});
