import { RateLimitedTimedQueue, TryTokenBucket } from './rate-limited-timed-queue.js';

function fakeClock(): { now(): number; t: number } {
  const c = { t: 1000, now: () => c.t };
  return c;
}

/** One `try`; each callback takes 1 ms of `clock`. */
async function drain(
  q: RateLimitedTimedQueue,
  clock: { t: number },
  answer: (v: string) => boolean = () => true,
): Promise<string[]> {
  const out: string[] = [];
  await q.try(async (v) => {
    clock.t += 1;
    out.push(v);
    return answer(v) ? { done: true } : { done: false, retryAfterMs: 500 };
  });
  return out;
}

describe('TryTokenBucket', () => {
  it('starts with burst tokens, refills at qps and never waits; qps 0 never accepts', () => {
    const c = fakeClock();
    const b = new TryTokenBucket(2, 1, () => c.now());
    expect(b.tryAccept()).toBe(true);
    expect(b.tryAccept()).toBe(false);
    c.t += 499;
    expect(b.tryAccept()).toBe(false);
    c.t += 1;
    expect(b.tryAccept()).toBe(true);
    expect(new TryTokenBucket(0, 1, () => c.now()).tryAccept()).toBe(false);
  });
});

describe('RateLimitedTimedQueue', () => {
  it('hands values out in order, one per token', async () => {
    const c = fakeClock();
    const q = new RateLimitedTimedQueue(1, c);
    for (const v of ['a', 'b', 'c']) expect(q.add(v, v)).toBe(true);
    expect(await drain(q, c)).toEqual(['a']);
    expect(await drain(q, c)).toEqual([]);
    c.t += 1000;
    expect(await drain(q, c)).toEqual(['b']);
    c.t += 2000;
    expect(await drain(q, c)).toEqual(['c']);
  });

  it('keeps a done value as a member until it is removed', async () => {
    const c = fakeClock();
    const q = new RateLimitedTimedQueue(100, c);
    q.add('a', 'a');
    expect(await drain(q, c)).toEqual(['a']);
    expect(q.add('a', 'a')).toBe(false);
    expect(q.remove('a')).toBe(true);
    expect(q.add('a', 'a')).toBe(true);
    expect(q.remove('x')).toBe(false);
  });

  it('retries a failed value after its wait, behind values already due', async () => {
    const c = fakeClock();
    const q = new RateLimitedTimedQueue(1000, c);
    q.add('a', 'a');
    q.add('b', 'b');
    expect(await drain(q, c, (v) => v !== 'a')).toEqual(['a', 'b']);
    c.t += 100;
    expect(await drain(q, c)).toEqual([]);
    c.t += 500;
    expect(await drain(q, c)).toEqual(['a']);
  });

  it('hands nothing out at rate 0; a new rate after an exhausted limiter starts empty', async () => {
    const c = fakeClock();
    const q = new RateLimitedTimedQueue(1, c);
    q.add('a', 'a');
    q.add('b', 'b');
    expect(await drain(q, c)).toEqual(['a']);
    q.swapLimiter(0);
    c.t += 10_000;
    expect(await drain(q, c)).toEqual([]);
    q.swapLimiter(2);
    expect(await drain(q, c)).toEqual([]);
    c.t += 500;
    expect(await drain(q, c)).toEqual(['b']);
  });

  it('does not put back a value removed while it was being tried', async () => {
    const c = fakeClock();
    const q = new RateLimitedTimedQueue(1000, c);
    q.add('a', 'a');
    await q.try(async (v) => {
      q.remove(v);
      return { done: false, retryAfterMs: 0 };
    });
    c.t += 1000;
    expect(await drain(q, c)).toEqual([]);
    expect(q.add('a', 'a')).toBe(true);
  });
});
