import { parseCronSchedule } from './cron-schedule.js';

const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number | undefined): string => (ms === undefined ? 'none' : new Date(ms).toISOString());

describe('parseCronSchedule', () => {
  it('finds the next minute, hour and descriptor activations in UTC', () => {
    expect(iso(parseCronSchedule('* * * * *').next(at('2026-01-01T10:00:30Z')))).toBe('2026-01-01T10:01:00.000Z');
    expect(iso(parseCronSchedule('*/15 * * * *').next(at('2026-01-01T10:15:00Z')))).toBe('2026-01-01T10:30:00.000Z');
    expect(iso(parseCronSchedule('@hourly').next(at('2026-01-01T10:15:00Z')))).toBe('2026-01-01T11:00:00.000Z');
    expect(iso(parseCronSchedule('@yearly').next(at('2026-03-01T00:00:00Z')))).toBe('2027-01-01T00:00:00.000Z');
    expect(iso(parseCronSchedule('0 9 * * mon-fri').next(at('2026-01-02T10:00:00Z')))).toBe('2026-01-05T09:00:00.000Z');
    expect(iso(parseCronSchedule('30 4 1-3/2 feb,MAR *').next(at('2026-02-01T05:00:00Z')))).toBe(
      '2026-02-03T04:30:00.000Z',
    );
    expect(iso(parseCronSchedule('@every 90s').next(at('2026-01-01T00:00:00Z')))).toBe('2026-01-01T00:01:30.000Z');
  });

  it('ORs day of month and day of week when both are restricted, ANDs them otherwise', () => {
    // 2026-01-05 is a Monday.
    expect(iso(parseCronSchedule('0 0 13 * 1').next(at('2026-01-01T00:00:00Z')))).toBe('2026-01-05T00:00:00.000Z');
    expect(iso(parseCronSchedule('0 0 * * 1').next(at('2026-01-01T00:00:00Z')))).toBe('2026-01-05T00:00:00.000Z');
    expect(iso(parseCronSchedule('0 0 31 2 *').next(at('2026-01-01T00:00:00Z')))).toBe('none');
  });

  it('computes activations on the wall clock of a time zone, skipping times a DST gap removes', () => {
    const s = parseCronSchedule('0 9 * * *');
    expect(iso(s.next(at('2026-01-10T00:00:00Z'), 'America/New_York'))).toBe('2026-01-10T14:00:00.000Z');
    expect(iso(s.next(at('2026-07-10T00:00:00Z'), 'America/New_York'))).toBe('2026-07-10T13:00:00.000Z');
    // 02:30 does not exist in New York on 2026-03-08.
    expect(iso(parseCronSchedule('30 2 * * *').next(at('2026-03-08T00:00:00Z'), 'America/New_York'))).toBe(
      '2026-03-09T06:30:00.000Z',
    );
    expect(iso(parseCronSchedule('CRON_TZ=Asia/Tokyo 0 0 * * *').next(at('2026-01-01T00:00:00Z')))).toBe(
      '2026-01-01T15:00:00.000Z',
    );
  });

  it.each([
    ['', 'empty spec string'],
    ['* * * *', 'expected exactly 5 fields, found 4: [* * * *]'],
    ['60 * * * *', 'end of range (60) above maximum (59): 60'],
    ['* * 0 * *', 'beginning of range (0) below minimum (1): 0'],
    ['5-1 * * * *', 'beginning of range (5) beyond end of range (1): 5-1'],
    ['*/0 * * * *', 'step of range should be a positive number: */0'],
    ['x * * * *', 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'],
    ['@fortnightly', 'unrecognized descriptor: @fortnightly'],
    ['TZ=Nowhere/Else * * * * *', 'provided bad location Nowhere/Else: unknown time zone Nowhere/Else'],
  ])('refuses %j: %s', (spec, message) => {
    expect(() => parseCronSchedule(spec)).toThrow(message);
  });
});
