import { fieldErrorMessage } from '@svc/api';
import { validateListSetsAndMaps } from './list-type.js';
import { extKey, type JSONSchemaProps } from './types.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    set: { type: 'array', [extKey('list-type')]: 'set', items: { type: 'object' } },
    byName: {
      type: 'array',
      [extKey('list-type')]: 'map',
      [extKey('list-map-keys')]: ['name'],
      items: { type: 'object', properties: { name: { type: 'string' } } },
    },
    nested: {
      type: 'object',
      additionalProperties: { type: 'array', [extKey('list-type')]: 'set', items: { type: 'integer' } },
    },
  },
};

const errs = (v: unknown) => validateListSetsAndMaps(schema, v, '').map(fieldErrorMessage);

describe('list-type uniqueness (Kubernetes listtype)', () => {
  it('reports the second occurrence of each repeated set item, compounds compared as JSON', () => {
    expect(errs({ set: [{ a: 1, b: 2 }, { b: 2, a: 1 }, { a: 1, b: 2 }, { a: 2 }] })).toEqual([
      'set[1]: Duplicate value: {"b":2,"a":1}',
    ]);
  });

  it('reports repeated map keys, with {} for items without the key', () => {
    expect(errs({ byName: [{ name: 'a' }, { name: 'a', x: 1 }, {}, null] })).toEqual([
      'byName[1]: Duplicate value: {"name":"a"}',
      'byName[3]: Duplicate value: {}',
    ]);
  });

  it('finds lists inside maps, at Kubernetes key paths', () => {
    expect(errs({ nested: { k: [1, 1] } })).toEqual(['nested[k][1]: Duplicate value: 1']);
  });
});
