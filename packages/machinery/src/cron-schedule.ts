/**
 * Cron schedules as Kubernetes' CronJobs read them (robfig/cron v3's ParseStandard): five
 * fields (minute, hour, day of month, month, day of week) with `*`, `?`, lists, ranges,
 * steps and month and weekday names; the descriptors `@yearly`, `@annually`, `@monthly`,
 * `@weekly`, `@daily`, `@midnight`, `@hourly` and `@every <duration>`; an optional `TZ=` or
 * `CRON_TZ=` prefix (CronJob validation refuses it). Times are computed in an IANA time zone
 * through `Intl`. Day of month and day of week combine as in cron: when both are restricted
 * (neither starts with `*` or `?`) either may match, otherwise both must.
 */
import { parseDuration } from './durations.js';

interface Bounds {
  min: number;
  max: number;
  names?: Readonly<Record<string, number>>;
}

const MONTH_NAMES: Record<string, number> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};
const DAY_NAMES: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

const FIELDS: readonly Bounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTH_NAMES },
  { min: 0, max: 6, names: DAY_NAMES },
];

const DESCRIPTORS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** One field: the allowed values, and whether it was written as `*` or `?` (robfig's star bit). */
interface Field {
  values: ReadonlySet<number>;
  star: boolean;
}

export interface CronSchedule {
  /** The zone of a `TZ=`/`CRON_TZ=` prefix, if the schedule had one. */
  readonly prefixTimeZone?: string;
  /** The first activation strictly after `afterMs`, in epoch milliseconds, in `timeZone` (UTC by default); undefined if none within five years. */
  next(afterMs: number, timeZone?: string): number | undefined;
}

function parseNumber(text: string, b: Bounds): number {
  const named = b.names?.[text.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^[0-9]+$/.test(text))
    throw new Error(`failed to parse int from ${text}: strconv.Atoi: parsing "${text}": invalid syntax`);
  return Number(text);
}

function parseRange(expr: string, b: Bounds): Field {
  const slash = expr.split('/');
  if (slash.length > 2) throw new Error(`too many slashes: ${expr}`);
  const [rangeText = '', stepText] = slash;
  const dash = rangeText.split('-');
  if (dash.length > 2) throw new Error(`too many hyphens: ${expr}`);
  let start: number;
  let end: number;
  let star = false;
  if (rangeText === '*' || rangeText === '?') {
    start = b.min;
    end = b.max;
    star = true;
  } else {
    start = parseNumber(dash[0] ?? '', b);
    end = dash.length === 2 ? parseNumber(dash[1] ?? '', b) : start;
  }
  let step = 1;
  if (stepText !== undefined) {
    step = parseNumber(stepText, { min: 0, max: 0 });
    // `N/step` means N through the maximum (robfig).
    if (dash.length === 1 && !star) end = b.max;
    if (step > 1) star = false;
  }
  if (start < b.min) throw new Error(`beginning of range (${start}) below minimum (${b.min}): ${expr}`);
  if (end > b.max) throw new Error(`end of range (${end}) above maximum (${b.max}): ${expr}`);
  if (start > end) throw new Error(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new Error(`step of range should be a positive number: ${expr}`);
  const values = new Set<number>();
  for (let v = start; v <= end; v += step) values.add(v);
  return { values, star };
}

function parseField(text: string, b: Bounds): Field {
  const values = new Set<number>();
  let star = false;
  for (const part of text.split(',')) {
    const f = parseRange(part, b);
    for (const v of f.values) values.add(v);
    star ||= f.star;
  }
  return { values, star };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The wall-clock time of `ms` in `timeZone`, as if that wall clock were UTC (epoch ms, seconds dropped). */
export function wallClock(ms: number, timeZone: string): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(ms)))
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return Date.UTC(parts.year ?? 1970, (parts.month ?? 1) - 1, parts.day ?? 1, parts.hour ?? 0, parts.minute ?? 0);
}

/** The instant whose wall clock in `timeZone` reads `wall`, or undefined when that wall time does not exist there (a DST gap). */
function fromWallClock(wall: number, timeZone: string): number | undefined {
  let guess = wall;
  for (let i = 0; i < 3; i++) {
    const offset = wallClock(guess, timeZone) - Math.floor(guess / 60_000) * 60_000;
    const next = wall - offset;
    if (next === guess) break;
    guess = next;
  }
  return wallClock(guess, timeZone) === wall ? guess : undefined;
}

/** True when `timeZone` names a zone this runtime knows (Intl's IANA database). */
export function isKnownTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

const MINUTE = 60_000;
const HORIZON_MS = 5 * 366 * 24 * 3600_000;

function fieldSchedule(fields: readonly Field[], prefixTimeZone: string | undefined): CronSchedule {
  const [minute, hour, dom, month, dow] = fields as [Field, Field, Field, Field, Field];
  const dayMatches = (d: Date): boolean => {
    const domOk = dom.values.has(d.getUTCDate());
    const dowOk = dow.values.has(d.getUTCDay());
    return dom.star || dow.star ? domOk && dowOk : domOk || dowOk;
  };
  return {
    prefixTimeZone,
    next(afterMs, timeZone = prefixTimeZone ?? 'UTC') {
      // Search wall-clock minutes in the zone (as if UTC), then map back to an instant.
      let wall = wallClock(afterMs, timeZone) + MINUTE;
      const end = wall + HORIZON_MS;
      while (wall < end) {
        const d = new Date(wall);
        if (!month.values.has(d.getUTCMonth() + 1)) {
          wall = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
          continue;
        }
        if (!dayMatches(d)) {
          wall = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
          continue;
        }
        if (!hour.values.has(d.getUTCHours())) {
          wall = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours() + 1);
          continue;
        }
        if (!minute.values.has(d.getUTCMinutes())) {
          wall += MINUTE;
          continue;
        }
        const at = fromWallClock(wall, timeZone);
        if (at !== undefined && at > afterMs) return at;
        wall += MINUTE;
      }
      return undefined;
    },
  };
}

/** Parses a CronJob schedule; throws an Error with robfig/cron's message when it is not one. */
export function parseCronSchedule(spec: string): CronSchedule {
  let text = spec.trim();
  if (text === '') throw new Error('empty spec string');
  let prefixTimeZone: string | undefined;
  const tz = /^(?:CRON_)?TZ=(\S*)\s*/.exec(text);
  if (tz) {
    prefixTimeZone = tz[1] ?? '';
    if (!isKnownTimeZone(prefixTimeZone))
      throw new Error(`provided bad location ${prefixTimeZone}: unknown time zone ${prefixTimeZone}`);
    text = text.slice(tz[0].length);
  }
  if (text.startsWith('@every ')) {
    const everyMs = parseDuration(text.slice('@every '.length).trim());
    // robfig rounds the interval down to whole seconds, at least one.
    const step = Math.max(1000, Math.floor(everyMs / 1000) * 1000);
    return { prefixTimeZone, next: (afterMs) => Math.floor(afterMs / 1000) * 1000 + step };
  }
  if (text.startsWith('@')) {
    const fields = DESCRIPTORS[text];
    if (!fields) throw new Error(`unrecognized descriptor: ${text}`);
    text = fields;
  }
  const parts = text.split(/\s+/);
  if (parts.length !== 5) throw new Error(`expected exactly 5 fields, found ${parts.length}: [${parts.join(' ')}]`);
  return fieldSchedule(
    parts.map((p, i) => parseField(p, FIELDS[i] as Bounds)),
    prefixTimeZone,
  );
}
