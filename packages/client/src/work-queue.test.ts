import { waitFor } from '@svc/testing';
import { ExponentialFailureRateLimiter, WorkQueue } from './work-queue.js';

describe('WorkQueue', () => {
  afterEach(() => jest.useRealTimers());

  it('hands keys out in FIFO order and ignores duplicates while queued', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.length).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
    expect(q.length).toBe(0);
  });

  it('never hands the same key to two workers; a re-add while processing is dirty and comes back after done', async () => {
    const q = new WorkQueue<string>();
    q.add('k');
    const first = await q.get();
    q.add('k');
    expect(q.length).toBe(0);
    let second: string | undefined;
    const waiting = q.get().then((k) => {
      second = k;
    });
    await Promise.resolve();
    expect(second).toBeUndefined();
    q.done(first as string);
    await waiting;
    expect(second).toBe('k');
    q.done('k');
    expect(q.length).toBe(0);
  });

  it('with concurrent workers, never processes one key twice at once, and processes every add', async () => {
    const q = new WorkQueue<string>();
    const active = new Set<string>();
    let overlap = false;
    let processed = 0;
    const worker = async (): Promise<void> => {
      for (;;) {
        const k = await q.get();
        if (k === undefined) return;
        if (active.has(k)) overlap = true;
        active.add(k);
        await new Promise((r) => setImmediate(r));
        active.delete(k);
        processed++;
        q.done(k);
      }
    };
    const workers = [worker(), worker(), worker(), worker()];
    for (let i = 0; i < 200; i++) {
      q.add(`k${i % 3}`);
      if (i % 7 === 0) await new Promise((r) => setImmediate(r));
    }
    await waitFor('queue empty', () => q.length === 0 && processed > 0);
    q.shutDown();
    await Promise.all(workers);
    await q.drained();
    expect(overlap).toBe(false);
    expect(processed).toBeGreaterThanOrEqual(3);
  });

  it('rate limiter grows 5 ms × 2^n per key up to 1000 s, and forget resets it', () => {
    const r = new ExponentialFailureRateLimiter<string>();
    expect([r.when('a'), r.when('a'), r.when('a'), r.when('a')]).toEqual([5, 10, 20, 40]);
    expect(r.when('b')).toBe(5);
    expect(r.numRequeues('a')).toBe(4);
    for (let i = 0; i < 40; i++) r.when('a');
    expect(r.when('a')).toBe(1_000_000);
    r.forget('a');
    expect(r.numRequeues('a')).toBe(0);
    expect(r.when('a')).toBe(5);
  });

  it('addRateLimited and addAfter add only once the delay passed (fake time); forget resets the back-off', async () => {
    jest.useFakeTimers();
    const q = new WorkQueue<string>();
    q.addRateLimited('x');
    q.addRateLimited('x');
    expect(q.numRequeues('x')).toBe(2);
    jest.advanceTimersByTime(4);
    expect(q.length).toBe(0);
    jest.advanceTimersByTime(1);
    expect(q.length).toBe(1);
    jest.advanceTimersByTime(5);
    expect(q.length).toBe(1); // the second delay (10 ms) re-adds a key already queued
    q.forget('x');
    expect(q.numRequeues('x')).toBe(0);
    q.addAfter('y', 1000);
    jest.advanceTimersByTime(999);
    expect(q.length).toBe(1);
    jest.advanceTimersByTime(1);
    expect(q.length).toBe(2);
    q.addAfter('z', 0);
    expect(q.length).toBe(3);
  });

  it('addAfter keeps one wait per key, the earliest asked for (client-go delaying queue): a batch period syncs once', async () => {
    jest.useFakeTimers();
    const q = new WorkQueue<string>();
    q.addAfter('k', 100);
    q.addAfter('k', 50);
    q.addAfter('k', 200);
    jest.advanceTimersByTime(49);
    expect(q.length).toBe(0);
    jest.advanceTimersByTime(1);
    expect(q.length).toBe(1);
    const k = await q.get();
    q.done(k ?? '');
    jest.advanceTimersByTime(500);
    expect(q.length).toBe(0);
    q.addAfter('k', 10);
    jest.advanceTimersByTime(10);
    expect(q.length).toBe(1);
  });

  it('shutDown drops new and delayed adds, lets workers drain what is queued, then get returns undefined', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    q.add('b');
    q.addAfter('late', 10);
    const inFlight = await q.get();
    q.shutDown();
    q.add('c');
    expect(q.isShuttingDown).toBe(true);
    let drained = false;
    const d = q.drained().then(() => {
      drained = true;
    });
    expect(await q.get()).toBe('b');
    q.done('b');
    expect(await q.get()).toBeUndefined();
    await Promise.resolve();
    expect(drained).toBe(false);
    q.done(inFlight as string);
    await d;
    expect(drained).toBe(true);
    expect(q.length).toBe(0);
  });

  it('shutDown wakes idle workers', async () => {
    const q = new WorkQueue<string>();
    const w = q.get();
    q.shutDown();
    expect(await w).toBeUndefined();
  });
});
