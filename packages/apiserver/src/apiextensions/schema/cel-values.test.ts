import { toCelValue } from './cel-values.js';
import { extKey, type JSONSchemaProps } from './types.js';

describe('toCelValue (Kubernetes UnstructuredToVal)', () => {
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: {
      n: { type: 'integer' },
      d: { type: 'number' },
      t: { type: 'string', format: 'date-time' },
      day: { type: 'string', format: 'date' },
      raw: { type: 'string', format: 'byte' },
      ios: { [extKey('int-or-string')]: true },
      'a-b': { type: 'string' },
      map: { type: 'object', additionalProperties: { type: 'integer' } },
    },
  };

  it('converts by schema and shows only declared fields under escaped names', () => {
    const v = toCelValue(
      {
        n: 2,
        d: 2,
        t: '2024-01-02T03:04:05Z',
        day: '2024-01-02',
        raw: 'aGk=',
        ios: 3,
        'a-b': 'x',
        map: { k: 1 },
        extra: 1,
      },
      schema,
    );
    expect(v).toEqual({
      n: 2n,
      d: 2,
      t: new Date('2024-01-02T03:04:05Z'),
      day: new Date('2024-01-02T00:00:00Z'),
      raw: Uint8Array.from([104, 105]),
      ios: 3n,
      a__dash__b: 'x',
      map: { k: 1n },
    });
  });

  it('adds the resource fields at a root', () => {
    expect(toCelValue({ kind: 'K', metadata: { name: 'n', labels: {} }, n: 1 }, schema, true)).toEqual({
      kind: 'K',
      metadata: { name: 'n' },
      n: 1n,
    });
  });
});
