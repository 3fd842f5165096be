import { shareUnchanged } from './share-unchanged.js';

const pod = (phase: string, ready: string): Record<string, unknown> =>
  JSON.parse(
    JSON.stringify({
      metadata: { name: 'p', resourceVersion: phase === 'Pending' ? '7' : '9', labels: { app: 'a' } },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i', env: [{ name: 'A', value: '1' }] }] },
      status: {
        phase,
        conditions: [
          { type: 'PodScheduled', status: 'True' },
          { type: 'Ready', status: ready },
        ],
      },
    }),
  ) as Record<string, unknown>;

type Pod = {
  metadata: { labels: unknown };
  spec: unknown;
  status: { conditions: unknown[] };
};

describe('shareUnchanged', () => {
  it('gives the previous value itself when nothing changed', () => {
    const prev = pod('Running', 'True');
    expect(shareUnchanged(prev, pod('Running', 'True'))).toBe(prev);
  });

  it('keeps what changed and shares the rest, at every depth', () => {
    const prev = pod('Pending', 'False') as unknown as Pod;
    const next = pod('Running', 'True');
    const expected = structuredClone(next);
    const got = shareUnchanged(prev, next) as unknown as Pod;
    expect(got).toEqual(expected);
    expect(got).not.toBe(prev);
    expect(got.spec).toBe(prev.spec);
    expect(got.metadata.labels).toBe(prev.metadata.labels);
    expect(got.status).not.toBe(prev.status);
    expect(got.status.conditions[0]).toBe(prev.status.conditions[0]);
    expect(got.status.conditions[1]).not.toBe(prev.status.conditions[1]);
    // The previous value is left as it was.
    expect(prev).toEqual(pod('Pending', 'False'));
  });

  it.each<[string, unknown, unknown]>([
    ['a key added', { a: 1 }, { a: 1, b: 2 }],
    ['a key removed', { a: 1, b: 2 }, { a: 1 }],
    ['a null key where there was none', { a: 1 }, { a: 1, b: null }],
    ['an array grown', { xs: [1, 2] }, { xs: [1, 2, 3] }],
    ['an array shrunk', { xs: [1, 2, 3] }, { xs: [1, 2] }],
    ['an object turned array', { x: { 0: 'a' } }, { x: ['a'] }],
    ['an array turned object', { x: ['a'] }, { x: { 0: 'a' } }],
    ['a scalar turned object', { x: 1 }, { x: { y: 1 } }],
    ['null against an object', { x: { y: 1 } }, { x: null }],
  ])('tells changes apart: %s', (_what, prev, next) => {
    const expected = structuredClone(next);
    const got = shareUnchanged(prev, next);
    expect(got).toEqual(expected);
    expect(got).not.toBe(prev);
  });

  it('never sets a prototype from a decoded "__proto__" key', () => {
    const prev = JSON.parse('{"a":{"b":1},"__proto__":{"polluted":true}}') as Record<string, unknown>;
    const next = JSON.parse('{"a":{"b":1},"__proto__":{"polluted":true}}') as Record<string, unknown>;
    const got = shareUnchanged(prev, next) as Record<string, unknown>;
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
    expect(got.a).toBe(prev.a);
    expect(Object.hasOwn(got, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
