/**
 * The time a controller acts on. Controllers whose work is due at times (schedules, TTLs)
 * take one so a test can move time instead of waiting for it.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Calls `fn` whenever the time moves other than by its own passing (a test's clock set forward). */
  onJump?(fn: () => void): void;
}

export const REAL_CLOCK: Clock = { now: () => Date.now() };
