import { applyMergePatch, cloneJson } from './merge-patch.js';

describe('applyMergePatch (RFC 7386 appendix A)', () => {
  test.each<[unknown, unknown, unknown]>([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('%j + %j = %j', (target, patch, want) => {
    expect(applyMergePatch(target, patch)).toEqual(want);
  });

  test('absent target', () => {
    expect(applyMergePatch(undefined, { a: { b: null, c: 1 } })).toEqual({ a: { c: 1 } });
  });

  test('a Kubernetes-shaped patch', () => {
    const pod = {
      metadata: { name: 'p', labels: { a: '1', b: '2' } },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    };
    const patched = applyMergePatch(pod, {
      metadata: { labels: { a: null, c: '3' } },
      spec: { containers: [{ name: 'c', image: 'y' }] },
    });
    expect(patched).toEqual({
      metadata: { name: 'p', labels: { b: '2', c: '3' } },
      spec: { containers: [{ name: 'c', image: 'y' }] },
    });
  });

  test('inputs are not mutated and the result shares nothing with them', () => {
    const target = { a: { b: [1, { c: 2 }] }, keep: { x: 1 } };
    const patch = { a: { d: { e: [3] } }, n: { m: 1 } };
    const t0 = cloneJson(target);
    const p0 = cloneJson(patch);
    const out = applyMergePatch(target, patch) as { a: { b: unknown[]; d: { e: number[] } }; keep: object; n: object };
    expect(target).toEqual(t0);
    expect(patch).toEqual(p0);
    expect(out.keep).not.toBe(target.keep);
    expect(out.a.b).not.toBe(target.a.b);
    expect(out.a.d).not.toBe(patch.a.d);
    expect(out.n).not.toBe(patch.n);
    out.a.d.e.push(4);
    expect(patch.a.d.e).toEqual([3]);
  });

  test('a replacing array patch is copied', () => {
    const patch = [{ a: 1 }];
    const out = applyMergePatch({}, patch) as unknown[];
    expect(out).toEqual(patch);
    expect(out).not.toBe(patch);
    expect(out[0]).not.toBe(patch[0]);
  });

  test('a "__proto__" key is data, not a prototype', () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as unknown;
    const out = applyMergePatch(JSON.parse('{"__proto__": {"x": 1}}'), patch) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__', 'a']);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"x":1,"polluted":true},"a":1}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
