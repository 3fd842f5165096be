import { TokenBucket } from './token-bucket.js';

describe('TokenBucket', () => {
  it('lets a burst through at once, then paces requests at qps', async () => {
    const bucket = new TokenBucket(50, 5);
    const started = performance.now();
    const waits = await Promise.all(Array.from({ length: 10 }, () => bucket.take()));
    const elapsed = performance.now() - started;
    expect(waits.slice(0, 5).every((w) => w < 15)).toBe(true);
    // Five more tokens at 50/s take at least ~100 ms.
    expect(elapsed).toBeGreaterThanOrEqual(90);
    expect(Math.max(...waits)).toBeGreaterThanOrEqual(90);
  });

  it('refills up to burst only', async () => {
    const bucket = new TokenBucket(1000, 2);
    await bucket.take();
    await bucket.take();
    await new Promise((r) => setTimeout(r, 20));
    const [a, b, c] = await Promise.all([bucket.take(), bucket.take(), bucket.take()]);
    expect(a).toBeLessThan(5);
    expect(b).toBeLessThan(5);
    expect(c).toBeGreaterThan(0);
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
