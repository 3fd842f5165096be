import { MAX_TIMER_MS, sleep } from './sleep.js';

const DAY = 24 * 3600_000;

afterEach(() => jest.useRealTimers());

it("waits the whole time even beyond what one Node timer can hold (a year-long certificate's rotation)", async () => {
  jest.useFakeTimers();
  let woke = false;
  void sleep(300 * DAY).then(() => {
    woke = true;
  });
  await jest.advanceTimersByTimeAsync(1);
  expect(woke).toBe(false);
  await jest.advanceTimersByTimeAsync(MAX_TIMER_MS + 1);
  expect(woke).toBe(false);
  // One day short of the 300.
  await jest.advanceTimersByTimeAsync(299 * DAY - MAX_TIMER_MS - 2);
  expect(woke).toBe(false);
  await jest.advanceTimersByTimeAsync(DAY);
  expect(woke).toBe(true);
});

it('resolves at once when the signal fires, and for negative or zero waits', async () => {
  jest.useFakeTimers();
  const ac = new AbortController();
  let woke = false;
  void sleep(400 * DAY, ac.signal).then(() => {
    woke = true;
  });
  await jest.advanceTimersByTimeAsync(10);
  ac.abort();
  await jest.advanceTimersByTimeAsync(0);
  expect(woke).toBe(true);
  expect(jest.getTimerCount()).toBe(0);
  jest.useRealTimers();
  await expect(sleep(-5)).resolves.toBeUndefined();
});
