import { DroppedRequests } from './dropped-requests.js';

describe('DroppedRequests (the Retry-After of a rejected request)', () => {
  function tracker(): { drops: DroppedRequests; at: (s: number) => void } {
    let now = 0;
    return { drops: new DroppedRequests(() => now), at: (s) => (now = s * 1000) };
  }
  const dropMany = (d: DroppedRequests, level: string, n: number): void => {
    for (let i = 0; i < n; i++) d.record(level);
  };

  it('suggests 1 s for a level that never dropped, and at first', () => {
    const { drops, at } = tracker();
    expect(drops.retryAfter('workload-low')).toBe(1);
    at(1000);
    dropMany(drops, 'workload-low', 100);
    expect(drops.retryAfter('workload-low')).toBe(1);
  });

  it('doubles while a level keeps dropping at least three requests per second, up to 32 s', () => {
    const { drops, at } = tracker();
    const seen: number[] = [];
    for (let s = 1000; s < 1100; s++) {
      at(s);
      dropMany(drops, 'workload-low', 10);
      seen.push(drops.retryAfter('workload-low'));
    }
    // Doubling waits for retryAfter seconds of history each time: 1, 2, 4, 8, 16, 32.
    expect([...new Set(seen)]).toEqual([1, 2, 4, 8, 16, 32]);
    expect(seen.at(-1)).toBe(32);
  });

  it('keeps each level apart', () => {
    const { drops, at } = tracker();
    for (let s = 1000; s < 1010; s++) {
      at(s);
      dropMany(drops, 'workload-low', 10);
    }
    expect(drops.retryAfter('workload-low')).toBeGreaterThan(1);
    expect(drops.retryAfter('global-default')).toBe(1);
  });

  it('comes down one second at a time once the level drops few requests', () => {
    const { drops, at } = tracker();
    let s = 1000;
    for (; drops.retryAfter('l') < 8; s++) {
      at(s);
      dropMany(drops, 'l', 50);
    }
    const peak = drops.retryAfter('l');
    // Quiet for a while, then one drop now and then: each new second with a drop lowers it by one.
    s += 100;
    const after: number[] = [];
    for (let i = 0; i < peak + 2; i++, s += 2) {
      at(s);
      drops.record('l');
      after.push(drops.retryAfter('l'));
    }
    expect(after.slice(0, peak - 1)).toEqual(Array.from({ length: peak - 1 }, (_, i) => peak - 1 - i));
    expect(after.at(-1)).toBe(1);
  });
});
