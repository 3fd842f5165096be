/**
 * Go's fmt for the values a template sees (kubectl hands it JSON decoded by encoding/json:
 * maps, slices, strings, float64 numbers, booleans, nil; template constants add ints, kept
 * here as bigint): `%v` printing and `printf`'s common verbs, flags, width and precision.
 */
import { goQuote } from './lex.js';

/** An int of the template itself (constants, `len`, range indexes), as opposed to the data's int64. */
export class GoInt {
  constructor(
    readonly v: bigint,
    readonly type: 'int' | 'uint8' = 'int',
  ) {}
}

/**
 * A template value: decoded JSON (integers as bigint, Go's int64; other numbers float64),
 * GoInt, and `undefined` for Go's invalid (missing) value.
 */
export type Value = null | undefined | boolean | number | bigint | string | GoInt | Value[] | { [k: string]: Value };

export function isMap(v: Value): v is { [k: string]: Value } {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof GoInt);
}

/** The integer of an int value (int64 data or a template int). */
export function intValue(v: Value): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (v instanceof GoInt) return v.v;
  return undefined;
}

/** The Go type name of a value, as error messages spell it. */
export function goType(v: Value): string {
  if (v === undefined || v === null) return '<nil>';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint') return 'int64';
  if (v instanceof GoInt) return v.type;
  if (typeof v === 'number') return 'float64';
  if (typeof v === 'string') return 'string';
  if (Array.isArray(v)) return '[]interface {}';
  return 'map[string]interface {}';
}

/** strconv.FormatFloat(f, fmt, prec, 64) for 'e', 'f' and 'g' (prec -1: shortest). */
export function formatFloat(f: number, o: { verb: 'e' | 'f' | 'g'; prec: number }): string {
  if (Number.isNaN(f)) return 'NaN';
  if (!Number.isFinite(f)) return f > 0 ? '+Inf' : '-Inf';
  const neg = f < 0 || Object.is(f, -0);
  const a = Math.abs(f);
  const sign = neg ? '-' : '';
  // Shortest digits and decimal exponent.
  let digits: string;
  let exp: number; // position of the decimal point relative to the digits (Go's dp)
  if (o.prec < 0 || o.verb === 'g') {
    const e = o.prec < 0 ? a.toExponential() : a.toExponential(Math.max(0, (o.prec === 0 ? 1 : o.prec) - 1));
    const [m = '0', x = '0'] = e.split('e');
    digits = m.replace('.', '');
    exp = Number(x) + 1;
    if (a === 0) {
      digits = '0';
      exp = 1;
    }
  } else {
    digits = '';
    exp = 0;
  }
  const expText = (x: number): string => `e${x < 0 ? '-' : '+'}${String(Math.abs(x)).padStart(2, '0')}`;
  if (o.verb === 'e') {
    if (o.prec < 0) {
      return `${sign}${digits[0] ?? '0'}${digits.length > 1 ? `.${digits.slice(1)}` : ''}${expText(exp - 1)}`;
    }
    const [m = '', x = '0'] = a.toExponential(o.prec).split('e');
    return `${sign}${m}${expText(Number(x))}`;
  }
  if (o.verb === 'f') {
    if (o.prec < 0) {
      if (exp <= 0) return `${sign}0.${'0'.repeat(-exp)}${digits}`;
      if (exp >= digits.length) return `${sign}${digits}${'0'.repeat(exp - digits.length)}`;
      return `${sign}${digits.slice(0, exp)}.${digits.slice(exp)}`;
    }
    return `${sign}${a.toFixed(o.prec)}`;
  }
  // 'g': %e when the exponent is < -4 or >= the precision (6 for the shortest form).
  if (o.prec >= 0) digits = digits.replace(/0+$/, '') || '0';
  let eprec = o.prec < 0 ? 6 : o.prec === 0 ? 1 : o.prec;
  if (o.prec >= 0 && eprec > digits.length && digits.length >= exp) eprec = digits.length;
  const x = exp - 1;
  if (x < -4 || x >= eprec) {
    return `${sign}${digits[0] ?? '0'}${digits.length > 1 ? `.${digits.slice(1)}` : ''}${expText(x)}`;
  }
  if (exp <= 0) return `${sign}0.${'0'.repeat(-exp)}${digits}`;
  if (exp >= digits.length) return `${sign}${digits}${'0'.repeat(exp - digits.length)}`;
  return `${sign}${digits.slice(0, exp)}.${digits.slice(exp)}`;
}

/** `%v` of a value inside fmt (nil is `<nil>`; maps sorted by key as Go prints them). */
export function formatValue(v: Value, plus = false): string {
  if (v === undefined || v === null) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (v instanceof GoInt) return String(v.v);
  if (typeof v === 'number') return formatFloat(v, { verb: 'g', prec: -1 });
  if (Array.isArray(v)) return `[${v.map((x) => formatValue(x, plus)).join(' ')}]`;
  const keys = Object.keys(v).sort();
  return `map[${keys.map((k) => `${k}:${formatValue(v[k], plus)}`).join(' ')}]`;
}

interface Spec {
  minus: boolean;
  plus: boolean;
  zero: boolean;
  space: boolean;
  sharp: boolean;
  width?: number;
  prec?: number;
}

function pad(s: string, spec: Spec, numeric: boolean): string {
  if (spec.width === undefined || s.length >= spec.width) return s;
  if (spec.minus) return s + ' '.repeat(spec.width - s.length);
  if (spec.zero && numeric) {
    const sign = /^[+-]/.test(s) ? (s[0] ?? '') : '';
    return sign + '0'.repeat(spec.width - s.length) + s.slice(sign.length);
  }
  return ' '.repeat(spec.width - s.length) + s;
}

function bad(verb: string, v: Value, spec: Spec): string {
  if (v === null || v === undefined) return `%!${verb}(<nil>)`;
  return `%!${verb}(${goType(v)}=${formatOne('v', v, spec)})`;
}

function signed(s: string, spec: Spec): string {
  if (s.startsWith('-')) return s;
  if (spec.plus) return `+${s}`;
  if (spec.space) return ` ${s}`;
  return s;
}

function formatOne(verb: string, v: Value, spec: Spec): string {
  const iv = intValue(v);
  switch (verb) {
    case 'v':
      if (typeof v === 'number') return pad(signed(formatFloat(v, { verb: 'g', prec: -1 }), spec), spec, true);
      if (iv !== undefined) return pad(signed(String(iv), spec), spec, true);
      return pad(formatValue(v), spec, false);
    case 's':
      if (typeof v === 'string') return pad(spec.prec !== undefined ? v.slice(0, spec.prec) : v, spec, false);
      if (v === null || v === undefined || typeof v === 'number' || iv !== undefined || typeof v === 'boolean')
        return bad(verb, v, spec);
      return pad(formatValue(v), spec, false);
    case 'q':
      if (typeof v === 'string') return pad(goQuote(v), spec, false);
      if (iv !== undefined) return pad(`'${String.fromCodePoint(Number(iv))}'`, spec, false);
      return bad(verb, v, spec);
    case 'd':
      if (iv !== undefined) return pad(signed(String(iv), spec), spec, true);
      return bad(verb, v, spec);
    case 'x':
    case 'X': {
      let s: string;
      if (iv !== undefined) s = (iv < 0n ? '-' : '') + (iv < 0n ? -iv : iv).toString(16);
      else if (typeof v === 'string') s = Buffer.from(v, 'utf8').toString('hex');
      else return bad(verb, v, spec);
      if (verb === 'X') s = s.toUpperCase();
      return pad(s, spec, true);
    }
    case 'o':
      if (iv !== undefined) return pad(iv.toString(8), spec, true);
      return bad(verb, v, spec);
    case 'b':
      if (iv !== undefined) return pad(iv.toString(2), spec, true);
      return bad(verb, v, spec);
    case 'c':
      if (iv !== undefined) return pad(String.fromCodePoint(Number(iv)), spec, false);
      return bad(verb, v, spec);
    case 't':
      if (typeof v === 'boolean') return pad(String(v), spec, false);
      return bad(verb, v, spec);
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G': {
      if (typeof v !== 'number') return bad(verb, v, spec);
      const lower = verb.toLowerCase() as 'e' | 'f' | 'g';
      const prec = spec.prec ?? (lower === 'g' ? -1 : 6);
      let s = signed(formatFloat(v, { verb: lower, prec }), spec);
      if (verb === 'E' || verb === 'G') s = s.toUpperCase();
      return pad(s, spec, true);
    }
    default:
      return `%!${verb}(${goType(v)}=${formatValue(v)})`;
  }
}

/** Go's fmt.Sprintf for the verbs templates use; mismatches print as Go's `%!verb(type=value)`. */
export function sprintf(format: string, args: Value[]): string {
  let out = '';
  let argi = 0;
  for (let i = 0; i < format.length; i++) {
    const c = format[i];
    if (c !== '%') {
      out += c;
      continue;
    }
    const spec: Spec = { minus: false, plus: false, zero: false, space: false, sharp: false };
    i++;
    for (; i < format.length; i++) {
      const f = format[i];
      if (f === '-') spec.minus = true;
      else if (f === '+') spec.plus = true;
      else if (f === '0') spec.zero = true;
      else if (f === ' ') spec.space = true;
      else if (f === '#') spec.sharp = true;
      else break;
    }
    const num = (): number | undefined => {
      const m = /^\d+/.exec(format.slice(i));
      if (!m) return undefined;
      i += m[0].length;
      return Number(m[0]);
    };
    if (format[i] === '*') {
      i++;
      const w = args[argi++];
      const wv = intValue(w);
      spec.width = wv === undefined ? undefined : Number(wv);
    } else spec.width = num();
    if (format[i] === '.') {
      i++;
      if (format[i] === '*') {
        i++;
        const p = args[argi++];
        const pv = intValue(p);
        spec.prec = pv === undefined ? 0 : Number(pv);
      } else spec.prec = num() ?? 0;
    }
    const verb = format[i];
    if (verb === undefined) {
      out += '%!(NOVERB)';
      break;
    }
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (argi >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    out += formatOne(verb, args[argi++], spec);
  }
  if (argi < args.length) {
    out += `%!(EXTRA ${args
      .slice(argi)
      .map((a) => (a === null || a === undefined ? '<nil>' : `${goType(a)}=${formatValue(a)}`))
      .join(', ')})`;
  }
  return out;
}

/** Go's fmt.Sprint: spaces between operands when neither side is a string. */
export function sprint(args: Value[]): string {
  let out = '';
  args.forEach((a, k) => {
    const prev = args[k - 1];
    if (k > 0 && typeof a !== 'string' && typeof prev !== 'string') out += ' ';
    out += formatValue(a);
  });
  return out;
}

/** Go's fmt.Sprintln: spaces between all operands, and a newline. */
export function sprintln(args: Value[]): string {
  return `${args.map((a) => formatValue(a)).join(' ')}\n`;
}
