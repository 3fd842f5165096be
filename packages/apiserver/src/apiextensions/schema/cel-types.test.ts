import { celBaseEnvironment } from './cel-library.js';
import { CelTypes, escapeName, withTypeAndObjectMeta } from './cel-types.js';
import { extKey, type JSONSchemaProps } from './types.js';

describe('escapeName (Kubernetes CEL escaping)', () => {
  it.each<[string, string | undefined]>([
    ['name', 'name'],
    ['foo-bar', 'foo__dash__bar'],
    ['a.b/c', 'a__dot__b__slash__c'],
    ['a__b', 'a__underscores__b'],
    ['namespace', '__namespace__'],
    ['if', '__if__'],
    ['1abc', undefined],
    ['a b', undefined],
    ['', undefined],
  ])('%s', (name, escaped) => {
    expect(escapeName(name)).toBe(escaped);
  });
});

describe('CelTypes', () => {
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          n: { type: 'integer' },
          d: { type: 'number' },
          b: { type: 'boolean' },
          raw: { type: 'string', format: 'byte' },
          ios: { [extKey('int-or-string')]: true },
          list: { type: 'array', items: { type: 'string' } },
          map: { type: 'object', additionalProperties: { type: 'integer' } },
          free: { [extKey('preserve-unknown-fields')]: true },
        },
      },
    },
  };
  const types = new CelTypes(schema, celBaseEnvironment());
  const spec = schema.properties?.spec as JSONSchemaProps;
  const prop = (k: string) => spec.properties?.[k] as JSONSchemaProps;

  it('declares scalar, list, map and dyn types', () => {
    expect(types.typeOf(prop('n'), false)).toBe('int');
    expect(types.typeOf(prop('d'), false)).toBe('double');
    expect(types.typeOf(prop('b'), false)).toBe('bool');
    expect(types.typeOf(prop('raw'), false)).toBe('bytes');
    expect(types.typeOf(prop('ios'), false)).toBe('dyn');
    expect(types.typeOf(prop('list'), false)).toBe('list<string>');
    expect(types.typeOf(prop('map'), false)).toBe('map<string, int>');
    expect(types.typeOf(prop('free'), false)).toBeUndefined();
  });

  it('type-checks field access against the object types', () => {
    const env = types.envFor(types.typeOf(spec, false) ?? '', false);
    expect(env.check('self.n > 1 && self.list.size() == 1 && self.map["a"] == 1').valid).toBe(true);
    expect(env.check('self.free == 1').valid).toBe(false);
    expect(env.check('self.n').type).toBe('int');
  });

  it('gives a resource root apiVersion, kind and metadata', () => {
    const env = types.envFor(types.typeOf(schema, true) ?? '', true);
    expect(env.check('self.kind == "x" && self.metadata.generateName == "" && oldSelf.hasValue()').valid).toBe(true);
    expect(withTypeAndObjectMeta({ type: 'object' }).properties?.metadata?.properties).toEqual({
      name: { type: 'string' },
      generateName: { type: 'string' },
    });
  });
});
