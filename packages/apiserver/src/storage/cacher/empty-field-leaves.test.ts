import { EMPTY_FIELD_LEAF, shareEmptyFieldLeaves } from './empty-field-leaves.js';

/** The value at `path` under `o` (undefined where a step is missing). */
const at = (o: unknown, ...path: Array<string | number>): unknown =>
  path.reduce<unknown>((v, k) => (v as Record<string | number, unknown> | undefined)?.[k], o);

const decoded = (): unknown =>
  JSON.parse(
    JSON.stringify({
      metadata: {
        name: 'p',
        labels: {},
        managedFields: [
          {
            manager: 'm',
            operation: 'Update',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:nodeName': {} } },
          },
          { manager: 'broken', operation: 'Update', fieldsV1: 'not an object' },
          { manager: 'none', operation: 'Update' },
        ],
      },
      spec: { securityContext: {} },
    }),
  ) as unknown;

describe('shareEmptyFieldLeaves', () => {
  it('makes every empty managedFields leaf one frozen object and changes nothing else', () => {
    const o = decoded();
    const before = JSON.stringify(o);
    shareEmptyFieldLeaves(o);
    expect(JSON.stringify(o)).toBe(before);
    const f = at(o, 'metadata', 'managedFields', 0, 'fieldsV1');
    expect(at(f, 'f:metadata', 'f:labels', '.')).toBe(EMPTY_FIELD_LEAF);
    expect(at(f, 'f:metadata', 'f:labels', 'f:app')).toBe(EMPTY_FIELD_LEAF);
    expect(at(f, 'f:spec', 'f:nodeName')).toBe(EMPTY_FIELD_LEAF);
    // Only field sets: other empty objects stay the object's own.
    expect(at(o, 'metadata', 'labels')).not.toBe(EMPTY_FIELD_LEAF);
    expect(at(o, 'spec', 'securityContext')).not.toBe(EMPTY_FIELD_LEAF);
    expect(at(o, 'metadata', 'managedFields', 1, 'fieldsV1')).toBe('not an object');
  });

  it('shares across objects, and a write to a shared leaf throws instead of changing every object', () => {
    const a = decoded();
    const b = decoded();
    shareEmptyFieldLeaves(a);
    shareEmptyFieldLeaves(b);
    const leaf = (o: unknown): unknown => at(o, 'metadata', 'managedFields', 0, 'fieldsV1', 'f:spec', 'f:nodeName');
    expect(leaf(b)).toBe(leaf(a));
    expect(() => {
      (leaf(a) as Record<string, unknown>).x = 1;
    }).toThrow(TypeError);
    expect(Object.keys(EMPTY_FIELD_LEAF)).toEqual([]);
  });

  it('leaves a decoded "__proto__" key alone and objects without managedFields as they are', () => {
    const o = JSON.parse('{"metadata":{"managedFields":[{"fieldsV1":{"__proto__":{},"f:a":{}}}]}}') as unknown;
    shareEmptyFieldLeaves(o);
    const f = at(o, 'metadata', 'managedFields', 0, 'fieldsV1') as object;
    expect(Object.getPrototypeOf(f)).toBe(Object.prototype);
    expect(Object.hasOwn(f, '__proto__')).toBe(true);
    expect(at(f, 'f:a')).toBe(EMPTY_FIELD_LEAF);
    for (const v of [null, 1, 'x', {}, { metadata: null }, { metadata: { managedFields: 'x' } }])
      expect(() => shareEmptyFieldLeaves(v)).not.toThrow();
  });
});
