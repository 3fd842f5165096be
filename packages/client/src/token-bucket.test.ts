import { TokenBucket } from './token-bucket.js';

describe('TokenBucket', () => {
  it('lets a burst through at once, then paces requests at qps', async () => {
    const bucket = new TokenBucket(50, 5);
    // The burst needs no timer: those takes resolve before the event loop's next turn.
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    const afterATurn: boolean[] = [];
    const started = performance.now();
    const waits = await Promise.all(
      Array.from({ length: 10 }, () =>
        bucket.take().then((w) => {
          afterATurn.push(turned);
          return w;
        }),
      ),
    );
    const elapsed = performance.now() - started;
    // The first five never wait for a timer. Whether the sixth does depends on how long the five
    // took on a loaded machine (20 ms refills one token), so only the burst is pinned here.
    expect(afterATurn.slice(0, 5)).toEqual([false, false, false, false, false]);
    // Five more tokens at 50/s take at least ~100 ms, however the refills fall.
    expect(elapsed).toBeGreaterThanOrEqual(90);
    expect(Math.max(...waits)).toBeGreaterThanOrEqual(90);
  });

  it('refills up to burst only', async () => {
    const bucket = new TokenBucket(10, 2);
    await bucket.take();
    await bucket.take();
    await new Promise((r) => setTimeout(r, 300));
    // 300 ms at 10/s would be 3 tokens, but the bucket holds 2: the third take waits for a timer
    // (a stall of 100 ms between the takes would be needed to refill one instead).
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    const afterATurn: boolean[] = [];
    const waits = await Promise.all(
      [0, 1, 2].map(() =>
        bucket.take().then((w) => {
          afterATurn.push(turned);
          return w;
        }),
      ),
    );
    expect(afterATurn).toEqual([false, false, true]);
    expect(waits[2]).toBeGreaterThan(50);
  });

  it('stops waiting when the signal fires', async () => {
    const bucket = new TokenBucket(0.1, 1);
    await bucket.take();
    const ac = new AbortController();
    const p = bucket.take(ac.signal);
    ac.abort();
    await expect(p).resolves.toBeLessThan(1000);
  });
});
