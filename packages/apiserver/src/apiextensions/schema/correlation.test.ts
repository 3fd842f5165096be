import { Correlation } from './correlation.js';
import { extKey, type JSONSchemaProps } from './types.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    keyed: {
      type: 'array',
      [extKey('list-type')]: 'map',
      [extKey('list-map-keys')]: ['name'],
      items: { type: 'object', properties: { name: { type: 'string' }, v: { type: 'integer' } } },
    },
    atomic: { type: 'array', items: { type: 'integer' } },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    free: { type: 'object', [extKey('preserve-unknown-fields')]: true },
  },
};

describe('Correlation (Kubernetes CorrelatedObject)', () => {
  it('correlates fields present in both and described by the schema', () => {
    const c = new Correlation({ labels: { a: 'x' }, atomic: [1] }, { labels: { a: 'y' } }, schema);
    expect(c.key('labels')?.key('a')?.old).toBe('y');
    expect(c.key('atomic')).toBeUndefined();
    expect(c.key('labels')?.key('a')?.unchanged()).toBe(false);
  });

  it('correlates map-list items by key and ignores their order', () => {
    const old = {
      keyed: [
        { name: 'a', v: 1 },
        { name: 'b', v: 2 },
      ],
    };
    const c = new Correlation(
      {
        keyed: [
          { name: 'b', v: 2 },
          { name: 'a', v: 1 },
        ],
      },
      old,
      schema,
    );
    expect(c.key('keyed')?.index(0)?.old).toEqual({ name: 'b', v: 2 });
    expect(c.unchanged()).toBe(true);
    expect(
      new Correlation(
        {
          keyed: [
            { name: 'c', v: 2 },
            { name: 'a', v: 1 },
          ],
        },
        old,
        schema,
      ).unchanged(),
    ).toBe(false);
  });

  it('does not correlate atomic list items but compares them whole', () => {
    const c = new Correlation({ atomic: [1, 2] }, { atomic: [1, 2] }, schema);
    expect(c.key('atomic')?.index(0)).toBeUndefined();
    expect(c.unchanged()).toBe(true);
    expect(new Correlation({ atomic: [2, 1] }, { atomic: [1, 2] }, schema).unchanged()).toBe(false);
  });

  it('never finds fields no schema describes unchanged, as Kubernetes', () => {
    expect(new Correlation({ free: { a: 1 } }, { free: { a: 1 } }, schema).unchanged()).toBe(false);
    expect(new Correlation({ free: {} }, { free: {} }, schema).unchanged()).toBe(true);
  });
});
