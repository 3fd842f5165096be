import { ruleFieldPath } from './rule-field-path.js';
import type { JSONSchemaProps } from './types.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: { 'a.b': { type: 'string' }, labels: { type: 'object', additionalProperties: { type: 'string' } } },
    },
  },
};

describe('ruleFieldPath (Kubernetes ValidFieldPath)', () => {
  it.each<[string, string]>([
    ['.spec', 'spec'],
    [".spec['a.b']", 'spec.a.b'],
    ['.spec.labels.x', 'spec.labels[x]'],
    [".spec.labels['y z']", 'spec.labels[y z]'],
    ["['spec']", 'spec'],
  ])('%s is %s', (p, expected) => {
    expect(ruleFieldPath(p, schema)).toMatchObject({ path: expected });
  });

  it.each<[string, string]>([
    ['.nope', 'does not refer to a valid field'],
    ['spec', 'expected [ or . but got: spec'],
    ['.spec[spec]', 'expected single quoted string but got spec'],
    ['.', 'unexpected end of JSON path'],
    ['.spec.labels.x.y', 'does not refer to a valid field'],
  ])('%s: %s', (p, error) => {
    expect(ruleFieldPath(p, schema)).toEqual({ error });
  });
});
