import { pruneUnknownFields } from './prune.js';
import { extKey, type JSONSchemaProps } from './types.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        a: { type: 'string' },
        free: {
          type: 'object',
          [extKey('preserve-unknown-fields')]: true,
          properties: { inner: { type: 'object', properties: {} } },
        },
        list: {
          type: 'array',
          [extKey('preserve-unknown-fields')]: true,
          items: { type: 'object', properties: { k: { type: 'string' } } },
        },
        anyMap: { type: 'object', additionalProperties: true },
        emb: { type: 'object', [extKey('embedded-resource')]: true, properties: { spec: { type: 'object' } } },
      },
    },
  },
};

describe('pruneUnknownFields (Kubernetes pruning)', () => {
  it('drops unknown fields and keeps what the schema or preserve-unknown-fields allows', () => {
    const v = {
      apiVersion: 'a/v1',
      kind: 'K',
      metadata: { name: 'x' },
      extra: 1,
      spec: {
        a: 'x',
        b: 'gone',
        free: { kept: 1, inner: { gone: 1 } },
        list: [{ k: 'x', kept: 1 }],
        anyMap: { key: 'v', obj: { nested: 1 } },
        emb: { apiVersion: 'v1', kind: 'Pod', metadata: { any: 1 }, spec: { gone: 1 }, gone: 1 },
      },
    };
    const pruned = pruneUnknownFields(v, schema, true);
    expect(pruned).toEqual([
      'extra',
      'spec.anyMap.obj.nested',
      'spec.b',
      'spec.emb.gone',
      'spec.emb.spec.gone',
      'spec.free.inner.gone',
    ]);
    expect(v).toEqual({
      apiVersion: 'a/v1',
      kind: 'K',
      metadata: { name: 'x' },
      spec: {
        a: 'x',
        free: { kept: 1, inner: {} },
        list: [{ k: 'x', kept: 1 }],
        anyMap: { key: 'v', obj: {} },
        emb: { apiVersion: 'v1', kind: 'Pod', metadata: { any: 1 }, spec: {} },
      },
    });
  });

  it('drops apiVersion, kind and metadata below the root unless the node is a resource', () => {
    const v = { kind: 'x', a: 'y' };
    pruneUnknownFields(v, { type: 'object', properties: { a: { type: 'string' } } }, false);
    expect(v).toEqual({ a: 'y' });
  });
});
