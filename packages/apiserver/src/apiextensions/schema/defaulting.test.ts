import { applyDefaults } from './defaulting.js';
import type { JSONSchemaProps } from './types.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      default: {},
      properties: {
        replicas: { type: 'integer', default: 1 },
        mode: { type: 'string', default: 'Auto' },
        note: { type: 'string', nullable: true, default: 'n' },
        plain: { type: 'string' },
        ports: {
          type: 'array',
          items: {
            type: 'object',
            properties: { protocol: { type: 'string', default: 'TCP' }, port: { type: 'integer' } },
          },
        },
        limits: {
          type: 'object',
          additionalProperties: { type: 'object', properties: { max: { type: 'integer', default: 10 } } },
        },
        names: { type: 'array', items: { type: 'string', default: 'x' } },
        loose: { type: 'array', items: { type: 'string' } },
      },
    },
  },
};

describe('applyDefaults (Kubernetes structural defaulting)', () => {
  it('defaults missing properties, recursively into the default itself', () => {
    expect(applyDefaults(schema, {})).toEqual({ spec: { replicas: 1, mode: 'Auto', note: 'n' } });
  });

  it('keeps values that are set', () => {
    expect(applyDefaults(schema, { spec: { replicas: 3, mode: 'Manual', note: 'z' } })).toEqual({
      spec: { replicas: 3, mode: 'Manual', note: 'z' },
    });
  });

  it('defaults inside list items and additionalProperties values', () => {
    const out = applyDefaults(schema, {
      spec: { ports: [{ port: 80 }, { port: 53, protocol: 'UDP' }], limits: { cpu: {} } },
    });
    expect(out).toEqual({
      spec: {
        replicas: 1,
        mode: 'Auto',
        note: 'n',
        ports: [
          { port: 80, protocol: 'TCP' },
          { port: 53, protocol: 'UDP' },
        ],
        limits: { cpu: { max: 10 } },
      },
    });
  });

  it('defaults nulls that are not nullable, keeps nullable ones, drops the rest', () => {
    const out = applyDefaults(schema, {
      spec: { replicas: null, note: null, plain: null, names: [null, 'a'], loose: [null] },
    });
    expect(out).toEqual({ spec: { replicas: 1, mode: 'Auto', note: null, names: ['x', 'a'], loose: [null] } });
  });

  it('changes the value in place and copies the defaults', () => {
    const obj: Record<string, unknown> = {};
    expect(applyDefaults(schema, obj)).toBe(obj);
    (obj.spec as Record<string, unknown>).replicas = 5;
    expect(applyDefaults(schema, {})).toEqual({ spec: { replicas: 1, mode: 'Auto', note: 'n' } });
  });

  it('leaves values of the wrong type alone', () => {
    expect(applyDefaults(schema, { spec: 'x' })).toEqual({ spec: 'x' });
    expect(applyDefaults(schema, { spec: { ports: 'x' } })).toEqual({
      spec: { replicas: 1, mode: 'Auto', note: 'n', ports: 'x' },
    });
  });
});
