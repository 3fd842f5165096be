import { checkSchema } from '@svc/machinery';
import { objectMeta, type ArraySchema, type MapSchema, type ObjectSchema } from '@svc/api';
import { toDslSchema } from './convert.js';
import { extKey, type JSONSchemaProps } from './types.js';

const X = extKey;

const crd: JSONSchemaProps = {
  type: 'object',
  description: 'A widget',
  properties: {
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer', default: 1, description: 'how many' },
        ratio: { type: 'number' },
        on: { type: 'boolean' },
        port: { [X('int-or-string')]: true },
        tags: { type: 'array', items: { type: 'string' } },
        set: { type: 'array', items: { type: 'string' }, [X('list-type')]: 'set' },
        ports: {
          type: 'array',
          [X('list-type')]: 'map',
          [X('list-map-keys')]: ['name', 'protocol'],
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, protocol: { type: 'string', default: 'TCP' } },
          },
        },
        labels: { type: 'object', additionalProperties: { type: 'string' }, [X('map-type')]: 'atomic' },
        selector: { type: 'object', [X('map-type')]: 'atomic', properties: { app: { type: 'string' } } },
        free: { [X('preserve-unknown-fields')]: true },
        open: {
          type: 'object',
          [X('preserve-unknown-fields')]: true,
          properties: { known: { type: 'object', properties: { a: { type: 'string' } } } },
        },
        openList: {
          type: 'array',
          [X('preserve-unknown-fields')]: true,
          items: { type: 'object', properties: { a: { type: 'string' } } },
        },
        closed: { type: 'object' },
        template: { type: 'object', [X('embedded-resource')]: true, [X('preserve-unknown-fields')]: true },
        pod: {
          type: 'object',
          [X('embedded-resource')]: true,
          properties: { spec: { type: 'object', properties: { x: { type: 'string' } } } },
        },
      },
    },
  },
};

describe('toDslSchema', () => {
  const dsl = toDslSchema(crd);
  const spec = dsl.properties.spec as ObjectSchema;
  const prop = (k: string) => spec.properties[k];

  it('has apiVersion, kind and the built-in metadata schema at the root', () => {
    expect(dsl.properties.apiVersion).toEqual({ type: 'string' });
    expect(dsl.properties.kind).toEqual({ type: 'string' });
    expect(dsl.properties.metadata).toMatchObject({ type: 'object', properties: objectMeta.properties });
    expect(dsl.description).toBe('A widget');
  });

  it('maps scalar types, int-or-string, descriptions and defaults', () => {
    expect(prop('replicas')).toEqual({ type: 'integer', default: 1, description: 'how many' });
    expect(prop('ratio')).toEqual({ type: 'number' });
    expect(prop('on')).toEqual({ type: 'boolean' });
    expect(prop('port')).toEqual({ type: 'int-or-string' });
  });

  it('makes lists atomic unless list-type says set or map', () => {
    expect((prop('tags') as ArraySchema).listType).toBe('atomic');
    expect((prop('set') as ArraySchema).listType).toBe('set');
    expect(prop('ports')).toMatchObject({ type: 'array', listType: 'map', listMapKeys: ['name', 'protocol'] });
  });

  it('makes additionalProperties a map and keeps map-type', () => {
    expect(prop('labels')).toEqual({ type: 'map', values: { type: 'string' }, mapType: 'atomic' } satisfies MapSchema);
    expect(prop('selector')).toMatchObject({ type: 'object', structType: 'atomic' });
  });

  it('keeps unknown fields where preserve-unknown-fields says so, and in embedded resources', () => {
    expect(prop('free')).toEqual({ type: 'any' });
    expect(prop('open')).toMatchObject({ type: 'object', preserveUnknownFields: true });
    expect(((prop('openList') as ArraySchema).items as ObjectSchema).preserveUnknownFields).toBe(true);
    expect(prop('template')).toMatchObject({ type: 'object', preserveUnknownFields: true });
    expect(Object.keys((prop('pod') as ObjectSchema).properties)).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
  });

  it('lets checkSchema prune like Kubernetes', () => {
    const value = {
      apiVersion: 'x/v1',
      kind: 'Widget',
      metadata: { name: 'w', labels: { a: 'b' } },
      unknown: 1,
      spec: {
        replicas: 2,
        extra: true,
        free: { anything: [1] },
        open: { stays: 1, known: { a: 'x', gone: 1 } },
        openList: [{ a: 'x', stays: 1 }],
        closed: { gone: 1 },
        template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { any: 1 } },
        pod: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { x: 'y', gone: 1 }, gone: 1 },
      },
    };
    const r = checkSchema(value, dsl);
    expect(r.errors).toEqual([]);
    expect(r.unknownFields).toEqual([
      'unknown',
      'spec.extra',
      'spec.open.known.gone',
      'spec.closed.gone',
      'spec.pod.spec.gone',
      'spec.pod.gone',
    ]);
    expect(r.value).toEqual({
      apiVersion: 'x/v1',
      kind: 'Widget',
      metadata: { name: 'w', labels: { a: 'b' } },
      spec: {
        replicas: 2,
        free: { anything: [1] },
        open: { stays: 1, known: { a: 'x' } },
        openList: [{ a: 'x', stays: 1 }],
        closed: {},
        template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { any: 1 } },
        pod: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { x: 'y' } },
      },
    });
  });

  it('keeps every root field of a schema that preserves unknown fields', () => {
    const open = toDslSchema({ type: 'object', [X('preserve-unknown-fields')]: true });
    expect(checkSchema({ kind: 'X', anything: { a: 1 } }, open).unknownFields).toEqual([]);
  });
});
