/**
 * The functions a kubectl go-template can call: Go's text/template builtins (and, or, not,
 * len, index, slice, print, printf, println, html, js, urlquery, eq, ne, lt, le, gt, ge) and
 * kubectl's own `exists` and `base64decode`. Errors are thrown as `FuncError` with Go's text.
 */
import { formatValue, GoInt, goType, intValue, isMap, sprint, sprintf, sprintln, type Value } from './fmt.js';

export class FuncError extends Error {}

/** How an argument reaches a function: as Go's reflect.Value (a missing value stays missing), any, or string. */
export type ParamKind = 'value' | 'any' | 'string';

export interface TemplateFunc {
  fixed: ParamKind[];
  variadic?: ParamKind;
  call(args: Value[]): Value;
}

/** Go's isTrue: the zero value of any type is false. */
export function truth(v: Value): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'bigint') return v !== 0n;
  if (v instanceof GoInt) return v.v !== 0n;
  if (typeof v === 'string') return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  return Object.keys(v).length > 0;
}

type Kind = 'bool' | 'int' | 'float' | 'string' | 'invalid';

function basicKind(v: Value): Kind {
  if (typeof v === 'boolean') return 'bool';
  if (intValue(v) !== undefined) return 'int';
  if (typeof v === 'number') return 'float';
  if (typeof v === 'string') return 'string';
  return 'invalid';
}

function eq(args: Value[]): boolean {
  const [a0, ...rest] = args;
  const a = a0 === null ? undefined : a0;
  if (rest.length === 0) throw new FuncError('missing argument for comparison');
  const k1 = basicKind(a);
  for (const r0 of rest) {
    const b = r0 === null ? undefined : r0;
    const k2 = basicKind(b);
    if (k1 !== k2) {
      if (a !== undefined && b !== undefined) throw new FuncError('incompatible types for comparison');
      continue;
    }
    if (k1 !== 'invalid') {
      if ((intValue(a) ?? a) === (intValue(b) ?? b)) return true;
      continue;
    }
    if (a === undefined || b === undefined) {
      if (a === b) return true;
      continue;
    }
    throw new FuncError(`non-comparable type ${formatValue(a)}: ${goType(a)}`);
  }
  return false;
}

function lt(a0: Value, b0: Value): boolean {
  const a = a0 === null ? undefined : a0;
  const b = b0 === null ? undefined : b0;
  const k1 = basicKind(a);
  const k2 = basicKind(b);
  if (k1 === 'invalid' || k2 === 'invalid' || k1 === 'bool' || k2 === 'bool')
    throw new FuncError('invalid type for comparison');
  if (k1 !== k2) throw new FuncError('incompatible types for comparison');
  const x = intValue(a) ?? (a as number | string);
  const y = intValue(b) ?? (b as number | string);
  return x < y;
}

function indexArg(i: Value, cap: number): number {
  if (i === undefined || i === null) throw new FuncError('cannot index slice/array with nil');
  const x = intValue(i);
  if (x === undefined) throw new FuncError(`cannot index slice/array with type ${goType(i)}`);
  if (x < 0n || x > BigInt(cap)) throw new FuncError(`index out of range: ${x}`);
  return Number(x);
}

function index(args: Value[]): Value {
  let item = args[0];
  for (const i of args.slice(1)) {
    if (item === undefined || item === null) throw new FuncError('index of untyped nil');
    if (Array.isArray(item) || typeof item === 'string') {
      const bytes = typeof item === 'string' ? Buffer.from(item, 'utf8') : undefined;
      const len = bytes ? bytes.length : (item as Value[]).length;
      const x = indexArg(i, len);
      if (x === len) throw new FuncError(`index out of range: ${x}`);
      item = bytes ? new GoInt(BigInt(bytes[x] ?? 0), 'uint8') : (item as Value[])[x];
    } else if (isMap(item)) {
      const key = i === undefined || i === null ? '' : i;
      if (typeof key !== 'string') throw new FuncError(`value has type ${goType(key)}; should be string`);
      item = Object.hasOwn(item, key) ? item[key] : null;
    } else throw new FuncError(`can't index item of type ${goType(item)}`);
  }
  return item;
}

function slice(args: Value[]): Value {
  const item = args[0];
  if (item === undefined || item === null) throw new FuncError('slice of untyped nil');
  if (args.length > 4) throw new FuncError(`too many slice indexes: ${args.length - 1}`);
  if (typeof item !== 'string' && !Array.isArray(item)) throw new FuncError(`can't slice item of type ${goType(item)}`);
  const len = typeof item === 'string' ? Buffer.byteLength(item) : item.length;
  const idx = [0, len];
  args.slice(1, 3).forEach((a, k) => {
    idx[k] = indexArg(a, len);
  });
  const [i = 0, j = len] = idx;
  if (i > j) throw new FuncError(`invalid slice index: ${i} > ${j}`);
  if (typeof item === 'string') return Buffer.from(item, 'utf8').subarray(i, j).toString('utf8');
  return item.slice(i, j);
}

/** Go's evalArgs of html/js/urlquery: one string as it is, else fmt.Sprint of them all. */
function textOf(args: Value[]): string {
  if (args.length === 1 && typeof args[0] === 'string') return args[0];
  return sprint(args);
}

function htmlEscape(s: string): string {
  return s.replace(/[&'<>"\0]/g, (c) =>
    c === '&'
      ? '&amp;'
      : c === "'"
        ? '&#39;'
        : c === '<'
          ? '&lt;'
          : c === '>'
            ? '&gt;'
            : c === '"'
              ? '&#34;'
              : '\uFFFD',
  );
}

function jsEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '\\') out += '\\\\';
    else if (ch === "'") out += "\\'";
    else if (ch === '"') out += '\\"';
    else if (ch === '<') out += '\\u003C';
    else if (ch === '>') out += '\\u003E';
    else if (ch === '&') out += '\\u0026';
    else if (ch === '=') out += '\\u003D';
    else if (c < 0x20) out += `\\u${c.toString(16).toUpperCase().padStart(4, '0')}`;
    else out += ch;
  }
  return out;
}

function queryEscape(s: string): string {
  return encodeURIComponent(s)
    .replace(/%20/g, '+')
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** kubectl's exists: does the chain of keys/indexes lead to a non-nil value. */
function exists(args: Value[]): boolean {
  let v = args[0];
  for (const i of args.slice(1)) {
    if (v === undefined || v === null) return false;
    if (Array.isArray(v) || typeof v === 'string') {
      const x = intValue(i);
      if (x === undefined) return false;
      const len = typeof v === 'string' ? Buffer.byteLength(v) : v.length;
      if (x < 0n || x >= BigInt(len)) return false;
      v = typeof v === 'string' ? new GoInt(BigInt(Buffer.from(v)[Number(x)] ?? 0), 'uint8') : v[Number(x)];
    } else if (isMap(v)) {
      const key = i === undefined || i === null ? '' : i;
      if (typeof key !== 'string') return false;
      v = Object.hasOwn(v, key) ? v[key] : null;
    } else return false;
  }
  return v !== undefined && v !== null;
}

function base64decode(args: Value[]): Value {
  const s = String(args[0]);
  const clean = s.replace(/[\r\n]/g, '');
  const bad = /[^A-Za-z0-9+/=]/.exec(clean);
  const misplacedPad = /=[^=]/.exec(clean);
  const at = bad
    ? bad.index
    : misplacedPad
      ? misplacedPad.index
      : clean.length % 4 !== 0
        ? clean.length - (clean.length % 4)
        : -1;
  if (at >= 0) throw new FuncError(`base64 decode failed: illegal base64 data at input byte ${at}`);
  return Buffer.from(clean, 'base64').toString('utf8');
}

const compare = (f: (a: Value, b: Value) => boolean): TemplateFunc => ({
  fixed: ['value', 'value'],
  call: (a) => f(a[0], a[1]),
});

export const FUNCS: Record<string, TemplateFunc> = {
  // and/or are evaluated lazily by the executor; these are their fallbacks.
  and: { fixed: ['value'], variadic: 'value', call: (a) => a.find((v) => !truth(v)) ?? a[a.length - 1] },
  or: { fixed: ['value'], variadic: 'value', call: (a) => a.find((v) => truth(v)) ?? a[a.length - 1] },
  not: { fixed: ['value'], call: (a) => !truth(a[0]) },
  len: {
    fixed: ['value'],
    call: ([v]) => {
      if (v === undefined) throw new FuncError('reflect: call of reflect.Value.Type on zero Value');
      if (v === null) throw new FuncError('len of nil pointer');
      if (typeof v === 'string') return new GoInt(BigInt(Buffer.byteLength(v)));
      if (Array.isArray(v)) return new GoInt(BigInt(v.length));
      if (isMap(v)) return new GoInt(BigInt(Object.keys(v).length));
      throw new FuncError(`len of type ${goType(v)}`);
    },
  },
  index: {
    fixed: ['value'],
    variadic: 'value',
    call: (a) => {
      if (a[0] === undefined) throw new FuncError('index of untyped nil');
      return index(a);
    },
  },
  slice: { fixed: ['value'], variadic: 'value', call: slice },
  print: { fixed: [], variadic: 'any', call: sprint },
  printf: { fixed: ['string'], variadic: 'any', call: (a) => sprintf(String(a[0]), a.slice(1)) },
  println: { fixed: [], variadic: 'any', call: sprintln },
  html: { fixed: [], variadic: 'any', call: (a) => htmlEscape(textOf(a)) },
  js: { fixed: [], variadic: 'any', call: (a) => jsEscape(textOf(a)) },
  urlquery: { fixed: [], variadic: 'any', call: (a) => queryEscape(textOf(a)) },
  eq: { fixed: ['value'], variadic: 'value', call: eq },
  ne: compare((a, b) => !eq([a, b])),
  lt: compare(lt),
  le: compare((a, b) => lt(a, b) || eq([a, b])),
  gt: compare((a, b) => !(lt(a, b) || eq([a, b]))),
  ge: compare((a, b) => !lt(a, b)),
  exists: { fixed: ['any'], variadic: 'any', call: exists },
  base64decode: { fixed: ['string'], call: base64decode },
};

export const FUNC_NAMES: ReadonlySet<string> = new Set([...Object.keys(FUNCS), 'call']);
