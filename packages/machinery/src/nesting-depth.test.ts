import { MAX_NESTING_DEPTH, jsonNestingExceeds, valueNestingDepth } from './nesting-depth.js';

const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('jsonNestingExceeds', () => {
  it('counts arrays and objects, not brackets inside strings', () => {
    expect(jsonNestingExceeds('{"a":[{"b":1}]}', 3)).toBe(false);
    expect(jsonNestingExceeds('{"a":[{"b":1}]}', 2)).toBe(true);
    expect(jsonNestingExceeds(`{"a":"${'['.repeat(1000)}\\"{{{"}`, 1)).toBe(false);
    expect(jsonNestingExceeds('"just a string"', 0)).toBe(false);
  });

  it('allows the limit and refuses one more, without recursion at a million levels', () => {
    expect(jsonNestingExceeds(nested(MAX_NESTING_DEPTH))).toBe(false);
    expect(jsonNestingExceeds(nested(MAX_NESTING_DEPTH + 1))).toBe(true);
    expect(jsonNestingExceeds(nested(1_000_000))).toBe(true);
  });
});

describe('valueNestingDepth', () => {
  it('measures parsed JSON as the text scan does', () => {
    expect(valueNestingDepth('x')).toBe(0);
    expect(valueNestingDepth([])).toBe(1);
    expect(valueNestingDepth({ a: [{ b: 1 }], c: {} })).toBe(3);
    expect(valueNestingDepth(JSON.parse(nested(MAX_NESTING_DEPTH)))).toBe(MAX_NESTING_DEPTH);
  });

  it('stops just past the limit on a value a million levels deep', () => {
    expect(valueNestingDepth(JSON.parse(nested(1_000_000)))).toBe(MAX_NESTING_DEPTH + 1);
  });

  it('measures shared objects once: 64 levels of 2 aliases each is 64 deep, not 2^64 paths', () => {
    let v: unknown[] = ['lol'];
    for (let i = 1; i < 64; i++) v = [v, v];
    expect(valueNestingDepth(v)).toBe(64);
    // Shared objects at different depths: the deepest path counts.
    const shared = [[[]]];
    expect(valueNestingDepth({ a: shared, b: [[shared]] })).toBe(6);
  });

  it('is Infinity for a value that contains itself', () => {
    const a: unknown[] = [1];
    a.push(a);
    expect(valueNestingDepth(a)).toBe(Infinity);
    const o: Record<string, unknown> = { x: { y: {} } };
    (o.x as Record<string, unknown>).back = o;
    expect(valueNestingDepth({ top: o })).toBe(Infinity);
  });
});
