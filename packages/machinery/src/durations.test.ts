import { formatDuration, formatDurationNs, parseDuration, parseDurationNs } from './durations.js';

describe('parseDuration', () => {
  test.each<[string, number]>([
    ['0', 0],
    ['-0', 0],
    ['+0', 0],
    ['0s', 0],
    ['5s', 5000],
    ['+5s', 5000],
    ['-5s', -5000],
    ['1m0s', 60_000],
    ['1h0m0s', 3_600_000],
    ['100ms', 100],
    ['1.5h', 5_400_000],
    ['1.5s', 1500],
    ['.5s', 500],
    ['5.s', 5000],
    ['300us', 0.3],
    ['300µs', 0.3],
    ['300μs', 0.3],
    ['1500ns', 0.0015],
    ['2h45m', 9_900_000],
    ['1h1m1s1ms', 3_661_001],
    ['8760h0m0s', 31_536_000_000],
    ['0.1s', 100],
    ['1.000000001s', 1000.000001],
    ['3m3m', 360_000],
  ])('%s → %p ms', (text, ms) => {
    expect(parseDuration(text)).toBeCloseTo(ms, 9);
  });

  test('exact nanoseconds', () => {
    expect(parseDurationNs('1.000000001s')).toBe(1_000_000_001n);
    expect(parseDurationNs('2562047h47m16.854775807s')).toBe((1n << 63n) - 1n);
    expect(parseDurationNs('-2562047h47m16.854775808s')).toBe(-(1n << 63n));
  });

  test.each<[string, string]>([
    ['', 'time: invalid duration ""'],
    ['-', 'time: invalid duration "-"'],
    ['s', 'time: invalid duration "s"'],
    ['.s', 'time: invalid duration ".s"'],
    ['1', 'time: missing unit in duration "1"'],
    ['1.5', 'time: missing unit in duration "1.5"'],
    ['1d', 'time: unknown unit "d" in duration "1d"'],
    ['5 s', 'time: unknown unit " s" in duration "5 s"'],
    ['1h-5m', 'time: unknown unit "h-" in duration "1h-5m"'],
    ['abc', 'time: invalid duration "abc"'],
    ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
    ['3000000h', 'time: invalid duration "3000000h"'],
  ])('%p is rejected', (text, message) => {
    expect(() => parseDuration(text)).toThrow(message);
  });
});

describe('formatDuration', () => {
  test.each<[number, string]>([
    [0, '0s'],
    [5000, '5s'],
    [60_000, '1m0s'],
    [3_600_000, '1h0m0s'],
    [100, '100ms'],
    [1500, '1.5s'],
    [1, '1ms'],
    [1.5, '1.5ms'],
    [0.3, '300µs'],
    [0.0015, '1.5µs'],
    [0.000001, '1ns'],
    [61_000, '1m1s'],
    [90_500, '1m30.5s'],
    [3_661_001, '1h1m1.001s'],
    [31_536_000_000, '8760h0m0s'],
    [-5000, '-5s'],
    [-1.5, '-1.5ms'],
    [86_400_000, '24h0m0s'],
  ])('%p ms → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  test('extremes in nanoseconds', () => {
    expect(formatDurationNs((1n << 63n) - 1n)).toBe('2562047h47m16.854775807s');
    expect(formatDurationNs(-(1n << 63n))).toBe('-2562047h47m16.854775808s');
  });

  test('round-trips what it prints', () => {
    for (const ms of [0, 1, 250, 1000, 59_999, 3_600_001, 123_456_789]) {
      expect(parseDuration(formatDuration(ms))).toBe(ms);
    }
  });

  test('rejects non-finite input', () => {
    expect(() => formatDuration(Number.NaN)).toThrow('invalid duration');
  });
});
