import { fieldErrorMessage } from '@svc/api';
import { goFloat, openApiErrors, openApiUpdateErrors } from './openapi-validation.js';

describe('goFloat (Go %v of a float64)', () => {
  it.each<[number, string]>([
    [1, '1'],
    [0.25, '0.25'],
    [1e21, '1e+21'],
    [0.00001, '1e-05'],
    [-2.5e-7, '-2.5e-07'],
  ])('%s', (v, s) => {
    expect(goFloat(v)).toBe(s);
  });
});

describe('openApiErrors', () => {
  it('lists the enum of an Unsupported value as Kubernetes quotes it', () => {
    expect(openApiErrors({ type: 'integer', enum: [1, 2] }, 3, 'n').map(fieldErrorMessage)).toEqual([
      'n: Unsupported value: 3: supported values: "1", "2"',
    ]);
  });

  it('fails null against an enum even when nullable, as kube-openapi', () => {
    expect(openApiErrors({ type: 'string', nullable: true, enum: ['a'] }, null, 'x').map(fieldErrorMessage)).toEqual([
      'x: Unsupported value: null: supported values: "a"',
    ]);
  });

  it('ratchets a whole unchanged value', () => {
    expect(openApiUpdateErrors({ type: 'string', maxLength: 1 }, { value: 'abc', old: 'abc' }, 'x')).toEqual([]);
    expect(openApiUpdateErrors({ type: 'string', maxLength: 1 }, { value: 'abcd', old: 'abc' }, 'x')).toHaveLength(1);
  });
});
