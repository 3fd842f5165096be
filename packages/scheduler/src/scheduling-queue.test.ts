import type { Pod } from '@svc/api';
import { SchedulingQueue } from './scheduling-queue.js';

const pod = (name: string, priority?: number): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns' },
  spec: { containers: [], priority },
});

describe('the scheduling queue', () => {
  let now = 1000;
  let q: SchedulingQueue;
  const counts: Array<{ active: number; backoff: number; unschedulable: number }> = [];
  beforeEach(() => {
    now = 1000;
    counts.length = 0;
    q = new SchedulingQueue({ now: () => now, onPending: (c) => counts.push(c) });
  });
  afterEach(() => q.close());

  it('pops the highest priority, then the oldest; a key is queued once', async () => {
    q.add('ns/a', pod('a'));
    now++;
    q.add('ns/b', pod('b', 10));
    now++;
    q.add('ns/c', pod('c'));
    q.add('ns/a', pod('a'));
    expect((await q.pop())?.info.key).toBe('ns/b');
    expect((await q.pop())?.info.key).toBe('ns/a');
    expect(q.counts()).toEqual({ active: 1, backoff: 0, unschedulable: 0 });
  });

  it('many pods: pops by priority, then queue time, then arrival; deleted and in-flight pods are not handed out', async () => {
    const expected: Array<{ key: string; priority: number; t: number; seq: number }> = [];
    for (let i = 0; i < 3000; i++) {
      if (i % 7 === 0) now++;
      const priority = (i * 37) % 5;
      q.add(`ns/p${i}`, pod(`p${i}`, priority));
      expected.push({ key: `ns/p${i}`, priority, t: now, seq: i });
    }
    for (let i = 0; i < 3000; i += 3) q.delete(`ns/p${i}`);
    const left = expected
      .filter((_, i) => i % 3 !== 0)
      .sort((a, b) => b.priority - a.priority || a.t - b.t || a.seq - b.seq)
      .map((e) => e.key);
    expect(q.counts()).toEqual({ active: left.length, backoff: 0, unschedulable: 0 });
    const popped: string[] = [];
    for (let i = 0; i < left.length; i++) popped.push((await q.pop())?.info.key ?? '');
    expect(popped).toEqual(left);
    expect(q.counts()).toEqual({ active: 0, backoff: 0, unschedulable: 0 });
  });

  it('back-off: 1 s doubling per attempt up to 10 s', () => {
    const info = { key: 'k', pod: pod('k'), timestamp: 0, attempts: 0 };
    expect([0, 1, 2, 3, 4, 5, 9].map((attempts) => q.backoffMs({ ...info, attempts }))).toEqual([
      0, 1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
  });

  it('an unschedulable pod waits until a move request, then backs off if its back-off has not expired', async () => {
    q.add('ns/a', pod('a'));
    const first = await q.pop();
    if (!first) throw new Error('no pod');
    q.addUnschedulable(first.info, first.cycle);
    expect(q.counts()).toEqual({ active: 0, backoff: 0, unschedulable: 1 });
    now += 500;
    q.moveAllToActiveOrBackoff();
    expect(q.counts()).toEqual({ active: 0, backoff: 1, unschedulable: 0 });
    q.close();
    q = new SchedulingQueue({ now: () => now });
    q.add('ns/b', pod('b'));
    const second = await q.pop();
    if (!second) throw new Error('no pod');
    q.addUnschedulable(second.info, second.cycle);
    now += 1500;
    q.moveAllToActiveOrBackoff();
    expect(q.counts()).toEqual({ active: 1, backoff: 0, unschedulable: 0 });
  });

  it('a move request during the attempt sends the pod to back-off, not to the unschedulable pods', async () => {
    q.add('ns/a', pod('a'));
    const p = await q.pop();
    if (!p) throw new Error('no pod');
    q.moveAllToActiveOrBackoff();
    q.addUnschedulable(p.info, p.cycle);
    expect(q.counts()).toEqual({ active: 0, backoff: 1, unschedulable: 0 });
  });

  it('a backed-off pod becomes active when its back-off expires (real timers)', async () => {
    const real = new SchedulingQueue({ initialBackoffMs: 50 });
    try {
      real.add('ns/a', pod('a'));
      const p = await real.pop();
      if (!p) throw new Error('no pod');
      const failedAt = Date.now();
      real.addBackoff(p.info);
      const again = await real.pop();
      expect(again?.info.key).toBe('ns/a');
      expect(again?.info.attempts).toBe(2);
      expect(Date.now() - failedAt).toBeGreaterThanOrEqual(45);
    } finally {
      real.close();
    }
  });

  it('a changed spec moves an unschedulable pod; deleted pods leave; close ends pop', async () => {
    q.add('ns/a', pod('a'));
    const p = await q.pop();
    if (!p) throw new Error('no pod');
    q.addUnschedulable(p.info, p.cycle);
    now += 5000;
    q.update('ns/a', pod('a'));
    expect(q.counts().unschedulable).toBe(1);
    q.update('ns/a', { ...pod('a'), spec: { containers: [], nodeSelector: { x: 'y' } } });
    expect(q.counts()).toEqual({ active: 1, backoff: 0, unschedulable: 0 });
    q.delete('ns/a');
    expect(q.has('ns/a')).toBe(false);
    const waiting = q.pop();
    q.close();
    expect(await waiting).toBeUndefined();
    expect(counts.at(-1)).toEqual({ active: 0, backoff: 0, unschedulable: 0 });
  });
});
