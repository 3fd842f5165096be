import { BackOff, goDuration } from './backoff.js';

describe('BackOff', () => {
  it('starts at the initial period, doubles up to the cap, and counts from the event time', () => {
    let now = 1000;
    const b = new BackOff(10, 40, () => now);
    expect(b.isInBackOffSince('k', now)).toBe(false);
    b.next('k', now);
    expect(b.get('k')).toBe(10);
    expect(b.isInBackOffSince('k', now)).toBe(true);
    expect(b.remainingMs('k', now)).toBe(10);
    now += 10;
    expect(b.isInBackOffSince('k', 1000)).toBe(false);
    b.next('k', now);
    b.next('k', now);
    b.next('k', now);
    expect(b.get('k')).toBe(40);
    expect(b.isInBackOffSinceUpdate('k')).toBe(true);
  });

  it('starts afresh after twice the cap without an update, and forgets by prefix', () => {
    let now = 0;
    const b = new BackOff(10, 40, () => now);
    b.next('p/a', 0);
    b.next('p/a', 0);
    expect(b.get('p/a')).toBe(20);
    now = 100;
    b.next('p/a', 100);
    expect(b.get('p/a')).toBe(10);
    b.forget('p/');
    expect(b.get('p/a')).toBe(0);
  });
});

it('goDuration prints durations as Go does', () => {
  expect([500, 1000, 10_000, 80_000, 300_000, 1500].map(goDuration)).toEqual([
    '500ms',
    '1s',
    '10s',
    '1m20s',
    '5m0s',
    '1.5s',
  ]);
});
