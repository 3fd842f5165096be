import { forEachInParallel } from './in-parallel.js';

describe('forEachInParallel', () => {
  it('runs every item with at most `workers` in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const seen: number[] = [];
    await forEachInParallel([1, 2, 3, 4, 5, 6, 7], {
      workers: 3,
      each: async (n) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setImmediate(r));
        seen.push(n);
        inFlight--;
      },
    });
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
  });

  it('rejects with the first failure once the started calls settled, and starts no more', async () => {
    const started: number[] = [];
    let settled = 0;
    const run = forEachInParallel([1, 2, 3, 4, 5], {
      workers: 2,
      each: async (n) => {
        started.push(n);
        await new Promise((r) => setImmediate(r));
        settled++;
        if (n === 1) throw new Error('one failed');
      },
    });
    await expect(run).rejects.toThrow('one failed');
    expect(started).toEqual([1, 2]);
    expect(settled).toBe(2);
  });

  it('does nothing for no items', async () => {
    await expect(forEachInParallel([], { workers: 4, each: () => Promise.reject(new Error('never')) })).resolves.toBe(
      undefined,
    );
  });
});
