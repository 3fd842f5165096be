import { SubtreeInterner } from './subtree-interner.js';
import { shareUnchanged } from './share-unchanged.js';

type Obj = Record<string, unknown>;
const at = (o: unknown, ...path: Array<string | number>): unknown =>
  path.reduce<unknown>((v, k) => (v as Record<string | number, unknown> | undefined)?.[k], o);

const pod = (name: string, ip: string): Obj =>
  JSON.parse(
    JSON.stringify({
      metadata: {
        name,
        uid: `uid-${name}`,
        labels: { app: 'a' },
        ownerReferences: [{ kind: 'ReplicaSet', uid: 'rs' }],
      },
      spec: {
        nodeName: 'n1',
        containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'], resources: {} }],
        tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
      },
      status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: 'True' }] },
    }),
  ) as Obj;

describe('SubtreeInterner', () => {
  let interner: SubtreeInterner;
  beforeEach(() => {
    interner = new SubtreeInterner({ maxTextLength: 256, generationMs: 1000 });
  });
  afterEach(() => interner.stop());

  it('shares equal small parts across objects and changes no JSON', () => {
    const a = pod('a', '10.0.0.1');
    const b = pod('b', '10.0.0.2');
    const before = [JSON.stringify(a), JSON.stringify(b)];
    interner.internParts(a);
    interner.internParts(b);
    expect([JSON.stringify(a), JSON.stringify(b)]).toEqual(before);
    for (const path of [
      ['metadata', 'labels'],
      ['metadata', 'ownerReferences'],
      ['spec', 'containers'],
      ['spec', 'tolerations', 0],
      ['status', 'conditions'],
    ])
      expect(at(b, ...path)).toBe(at(a, ...path));
    // What differs stays each object's own.
    expect(at(b, 'status', 'podIPs')).not.toBe(at(a, 'status', 'podIPs'));
    expect(at(b, 'status')).not.toBe(at(a, 'status'));
  });

  it('never freezes an object itself or its metadata, and freezes what it shares', () => {
    const a = pod('a', '10.0.0.1');
    interner.internParts(a);
    expect(Object.isFrozen(a)).toBe(false);
    expect(Object.isFrozen(a.metadata)).toBe(false);
    expect(Object.isFrozen(at(a, 'metadata', 'labels'))).toBe(true);
    expect(() => {
      (at(a, 'metadata', 'labels') as Obj).app = 'b';
    }).toThrow(TypeError);
    expect(() => {
      (at(a, 'spec', 'containers') as unknown[]).push({});
    }).toThrow(TypeError);
  });

  it('does not share parts longer than maxTextLength, but shares the small parts inside them', () => {
    const small = new SubtreeInterner({ maxTextLength: 40 });
    try {
      const a = pod('a', '10.0.0.1');
      const b = pod('b', '10.0.0.1');
      small.internParts(a);
      small.internParts(b);
      expect(at(b, 'spec', 'containers')).not.toBe(at(a, 'spec', 'containers'));
      expect(Object.isFrozen(at(a, 'spec', 'containers'))).toBe(false);
      expect(at(b, 'spec', 'containers', 0, 'command')).toBe(at(a, 'spec', 'containers', 0, 'command'));
    } finally {
      small.stop();
    }
  });

  it('forgets parts unused for two generations; an object holding one keeps it', () => {
    jest.useFakeTimers();
    try {
      const i = new SubtreeInterner({ generationMs: 1000 });
      const a = pod('a', '10.0.0.1');
      i.internParts(a);
      jest.advanceTimersByTime(1000);
      const b = pod('b', '10.0.0.2');
      i.internParts(b); // looked up in the previous generation: kept
      expect(at(b, 'metadata', 'labels')).toBe(at(a, 'metadata', 'labels'));
      jest.advanceTimersByTime(2000);
      expect(i.size).toBe(0);
      const c = pod('c', '10.0.0.3');
      i.internParts(c);
      expect(at(c, 'metadata', 'labels')).not.toBe(at(a, 'metadata', 'labels'));
      expect(at(c, 'metadata', 'labels')).toEqual(at(a, 'metadata', 'labels'));
      expect(at(a, 'metadata', 'labels')).toEqual({ app: 'a' });
      i.stop();
    } finally {
      jest.useRealTimers();
    }
  });

  it('takes a part interned before (shared with the previous version) as it is', () => {
    const a = pod('a', '10.0.0.1');
    interner.internParts(a);
    const next = pod('a', '10.0.0.1');
    next.spec = a.spec; // as shareUnchanged leaves a new version
    interner.internParts(next);
    expect(next.spec).toBe(a.spec);
    expect(at(next, 'status', 'conditions')).toBe(at(a, 'status', 'conditions'));
  });

  it('leaves a decoded "__proto__" key alone', () => {
    const o = JSON.parse('{"spec":{"__proto__":{"x":1},"a":{"b":1}},"status":{"a":{"b":1}}}') as Obj;
    interner.internParts(o);
    expect(Object.getPrototypeOf(o.spec)).toBe(Object.prototype);
    expect(Object.hasOwn(o.spec as object, '__proto__')).toBe(true);
    expect(at(o, 'status', 'a')).toBe(at(o, 'spec', 'a'));
    for (const v of [null, 1, 'x', [1, 2], { metadata: null }]) expect(() => interner.internParts(v)).not.toThrow();
  });

  it('lets shareUnchanged compare interned parts without writing to them', () => {
    const prev = pod('a', '10.0.0.1');
    interner.internParts(prev);
    const other = new SubtreeInterner();
    try {
      const next = pod('a', '10.0.0.1');
      other.internParts(next); // equal parts, other frozen copies
      const shared = shareUnchanged(prev, next);
      expect(shared).toBe(prev);
    } finally {
      other.stop();
    }
  });
});
