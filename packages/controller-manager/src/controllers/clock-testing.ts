// A test's clock for the controllers that take one (cronjob, ttl-after-finished, the legacy
// token cleaner): the wall clock moved forward by the test, never back.
import type { Clock } from './clock.js';

/** Wall-clock time moved forward by the test; every move wakes the controllers listening. */
export class TestClock implements Clock {
  private offsetMs = 0;
  private readonly listeners: Array<() => void> = [];

  now(): number {
    return Date.now() + this.offsetMs;
  }

  onJump(fn: () => void): void {
    this.listeners.push(fn);
  }

  /** Moves the clock to `offsetMs` ahead of the wall clock (never back); answers the clock's time then. */
  ahead(offsetMs: number): number {
    this.offsetMs = Math.max(this.offsetMs, offsetMs);
    const at = this.now();
    for (const fn of this.listeners) fn();
    return at;
  }

  /** Moves the clock to the epoch time `ms` (never back). */
  set(ms: number): void {
    this.ahead(ms - Date.now());
  }
}
