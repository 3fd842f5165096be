/**
 * Go `time.Duration` text, in milliseconds. `parseDuration` accepts exactly what Go's
 * `time.ParseDuration` accepts; `formatDuration` prints exactly what `Duration.String()` prints.
 * Arithmetic is done in integer nanoseconds, so sub-millisecond values survive as fractions.
 */

const NS_PER_MS = 1_000_000n;
const MAX_NS = (1n << 63n) - 1n;

const UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n, // U+00B5 micro sign
  μs: 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

/** Parses `1h30m`, `1.5s`, `300us`, `-2m`, `0`; throws an Error with Go's message on bad input. */
export function parseDuration(text: string): number {
  return nsToMs(parseDurationNs(text));
}

/** As `parseDuration`, in exact integer nanoseconds. */
export function parseDurationNs(text: string): bigint {
  const invalid = (): Error => new Error(`time: invalid duration ${JSON.stringify(text)}`);
  let s = text;
  let neg = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') throw invalid();
  let total = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || isDigit(s[0]))) throw invalid();
    let i = 0;
    while (isDigit(s[i])) i++;
    const whole = s.slice(0, i);
    let frac = '';
    s = s.slice(i);
    if (s.startsWith('.')) {
      let j = 1;
      while (isDigit(s[j])) j++;
      frac = s.slice(1, j);
      s = s.slice(j);
    }
    if (whole === '' && frac === '') throw invalid();
    let u = 0;
    while (u < s.length && s[u] !== '.' && !isDigit(s[u])) u++;
    if (u === 0) throw new Error(`time: missing unit in duration ${JSON.stringify(text)}`);
    const unitName = s.slice(0, u);
    s = s.slice(u);
    const unit = UNITS[unitName];
    if (unit === undefined) {
      throw new Error(`time: unknown unit ${JSON.stringify(unitName)} in duration ${JSON.stringify(text)}`);
    }
    let v = BigInt(whole || '0') * unit;
    if (frac !== '') v += (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    total += v;
    if (total > MAX_NS + (neg ? 1n : 0n)) throw invalid();
  }
  return neg ? -total : total;
}

function nsToMs(ns: bigint): number {
  if (ns === 0n) return 0;
  return Number(ns / NS_PER_MS) + Number(ns % NS_PER_MS) / 1e6;
}

function msToNs(ms: number): bigint {
  if (!Number.isFinite(ms)) throw new Error(`invalid duration: ${ms} ms`);
  const whole = Math.trunc(ms);
  return BigInt(whole) * NS_PER_MS + BigInt(Math.round((ms - whole) * 1e6));
}

/** `fraction` of v / 10^prec without trailing zeros (`.25`, or '' when zero), and the integer part. */
function splitFraction(v: bigint, prec: number): [string, bigint] {
  const scale = 10n ** BigInt(prec);
  const f = v % scale;
  if (f === 0n) return ['', v / scale];
  const digits = f.toString().padStart(prec, '0').replace(/0+$/, '');
  return [`.${digits}`, v / scale];
}

/** Prints milliseconds as Go's `Duration.String()`: `0s`, `1.5s`, `1m0s`, `1h0m0s`, `100ms`, `300µs`. */
export function formatDuration(ms: number): string {
  return formatDurationNs(msToNs(ms));
}

/** As `formatDuration`, from integer nanoseconds. */
export function formatDurationNs(ns: bigint): string {
  const neg = ns < 0n;
  const u = neg ? -ns : ns;
  let out: string;
  if (u === 0n) return '0s';
  if (u < 1_000_000_000n) {
    let unit: string;
    let prec: number;
    if (u < 1_000n) [unit, prec] = ['ns', 0];
    else if (u < 1_000_000n) [unit, prec] = ['µs', 3];
    else [unit, prec] = ['ms', 6];
    const [frac, int] = splitFraction(u, prec);
    out = `${int}${frac}${unit}`;
  } else {
    const [frac, secs] = splitFraction(u, 9);
    out = `${secs % 60n}${frac}s`;
    const mins = secs / 60n;
    if (mins > 0n) {
      out = `${mins % 60n}m${out}`;
      const hours = mins / 60n;
      if (hours > 0n) out = `${hours}h${out}`;
    }
  }
  return neg ? `-${out}` : out;
}
