import { naming, useNaming } from '@svc/api';
import { ext, extKey, itemsOf, listMapKeysOf, rulesOf, type JSONSchemaProps } from './types.js';

describe('schema extensions under the naming prefix', () => {
  afterEach(() => useNaming('svc'));

  it('reads the key of the current naming', () => {
    const s: JSONSchemaProps = { type: 'array', 'x-svc-list-type': 'map', 'x-kubernetes-list-type': 'set' };
    expect(extKey('list-type')).toBe(`${naming().schemaExtensionPrefix}list-type`);
    expect(ext(s, 'list-type')).toBe('map');
    useNaming('kubernetes');
    expect(extKey('list-type')).toBe('x-kubernetes-list-type');
    expect(ext(s, 'list-type')).toBe('set');
  });

  it('treats null as unset and gives empty lists for absent keys and rules', () => {
    const s: JSONSchemaProps = { [extKey('map-type')]: null };
    expect(ext(s, 'map-type')).toBeUndefined();
    expect(listMapKeysOf(s)).toEqual([]);
    expect(rulesOf(s)).toEqual([]);
    expect(rulesOf({ [extKey('validations')]: [{ rule: 'true' }] })).toEqual([{ rule: 'true' }]);
  });

  it('gives items only when they are one schema', () => {
    expect(itemsOf({ items: { type: 'string' } })).toEqual({ type: 'string' });
    expect(itemsOf({ items: [{ type: 'string' }] })).toBeUndefined();
  });
});
