import { isBadRequest } from '@svc/api';
import { labelSelectorFromObject, validateLabelSelector } from './label-selector-object.js';

const QNAME_NAME_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('labelSelectorFromObject', () => {
  test('missing selects nothing, empty selects everything', () => {
    expect(labelSelectorFromObject(undefined).matches({ a: 'b' })).toBe(false);
    expect(labelSelectorFromObject(null).matches({ a: 'b' })).toBe(false);
    expect(labelSelectorFromObject({}).matches({ a: 'b' })).toBe(true);
    expect(labelSelectorFromObject({ matchLabels: {}, matchExpressions: [] }).isEmpty()).toBe(true);
  });

  test('matchLabels and matchExpressions combine', () => {
    const sel = labelSelectorFromObject({
      matchLabels: { tier: 'web', app: 'x' },
      matchExpressions: [
        { key: 'env', operator: 'In', values: ['prod', 'dev'] },
        { key: 'canary', operator: 'DoesNotExist' },
        { key: 'zone', operator: 'Exists' },
        { key: 'old', operator: 'NotIn', values: ['true'] },
      ],
    });
    expect(sel.toString()).toBe('app=x,!canary,env in (dev,prod),old notin (true),tier=web,zone');
    expect(sel.matches({ tier: 'web', app: 'x', env: 'dev', zone: 'a' })).toBe(true);
    expect(sel.matches({ tier: 'web', app: 'x', env: 'dev', zone: 'a', canary: '1' })).toBe(false);
    expect(sel.matches({ tier: 'web', app: 'x', env: 'qa', zone: 'a' })).toBe(false);
    expect(sel.matches({ tier: 'web', app: 'x', env: 'dev', zone: 'a', old: 'true' })).toBe(false);
  });

  test.each<[Parameters<typeof labelSelectorFromObject>[0], string]>([
    [
      { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] },
      '"Gt" is not a valid label selector operator',
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'in', values: ['1'] }] },
      '"in" is not a valid label selector operator',
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] },
      "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
      'values: Invalid value: ["x"]: values set must be empty for exists and does not exist',
    ],
    [{ matchLabels: { 'a b': 'x' } }, `key: Invalid value: "a b": ${QNAME_NAME_MSG}`],
    [{ matchLabels: { a: 'x y' } }, `values[0][a]: Invalid value: "x y": ${LABEL_VALUE_MSG}`],
  ])('%j is rejected', (obj, message) => {
    expect(() => labelSelectorFromObject(obj)).toThrow(message);
    try {
      labelSelectorFromObject(obj);
    } catch (e) {
      expect(isBadRequest(e)).toBe(true);
    }
  });
});

describe('validateLabelSelector', () => {
  test('valid selector', () => {
    expect(
      validateLabelSelector(
        { matchLabels: { a: 'b' }, matchExpressions: [{ key: 'c', operator: 'In', values: ['d'] }] },
        'spec.selector',
      ),
    ).toEqual([]);
    expect(validateLabelSelector(undefined, 'spec.selector')).toEqual([]);
  });

  test('each rule', () => {
    const errs = validateLabelSelector(
      {
        matchLabels: { 'bad key': 'v' },
        matchExpressions: [
          { key: 'a', operator: 'In' },
          { key: 'b', operator: 'Exists', values: ['x'] },
          { key: 'c', operator: 'Gt', values: ['1'] },
          { key: 'd', operator: 'NotIn', values: ['bad value'] },
        ],
      },
      'spec.selector',
    );
    expect(errs.map((e) => [e.path, e.type])).toEqual([
      ['spec.selector.matchLabels', 'FieldValueInvalid'],
      ['spec.selector.matchExpressions[0].values', 'FieldValueRequired'],
      ['spec.selector.matchExpressions[1].values', 'FieldValueForbidden'],
      ['spec.selector.matchExpressions[2].operator', 'FieldValueInvalid'],
      ['spec.selector.matchExpressions[3].values[0]', 'FieldValueInvalid'],
    ]);
    expect(errs[1]!.detail).toBe("must be specified when `operator` is 'In' or 'NotIn'");
    expect(errs[2]!.detail).toBe("may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
    expect(errs[3]!.detail).toBe('not a valid selector operator');
  });
});
