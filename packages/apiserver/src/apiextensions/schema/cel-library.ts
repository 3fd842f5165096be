/**
 * The CEL environment of CRD validation rules on @marcbachmann/cel-js: optional types,
 * homogeneous aggregate literals, and the parts of Kubernetes' CEL libraries cel-js lacks:
 * strings (`charAt`, `replace`, `strings.quote`; cel-js has `indexOf`, `lastIndexOf`,
 * `lowerAscii`, `upperAscii`, `split`, `substring`, `trim`, `join`), lists (`isSorted`, `sum`,
 * `min`, `max`, `indexOf`, `lastIndexOf`), regex (`find`, `findAll`), URLs (`url`, `isURL`,
 * `getScheme`, `getHost`, `getHostname`, `getPort`, `getEscapedPath`, `getQuery`) and sets
 * (`sets.contains`, `sets.equivalent`, `sets.intersects`). Not provided: quantity, IP, CIDR,
 * semver, `format`, authz and two-variable comprehensions.
 *
 * cel-js's `has()` accepts only `ident.field…` chains; Kubernetes (cel-go) accepts any select
 * (`has(self.items[0].path)`). Expressions are therefore compiled with `has(` rewritten to the
 * same-length macro `_hs(`, which tests the presence of the selected field on any operand.
 */
import { Environment } from '@marcbachmann/cel-js';
import { compilePattern } from './regex.js';

export const HAS_MACRO = '_hs';

/** `has(` → `_hs(` outside string literals and comments, not after a `.` (a receiver call). */
export function rewriteHas(expr: string): string {
  let out = '';
  let i = 0;
  while (i < expr.length) {
    const c = expr[i] ?? '';
    if (c === '"' || c === "'") {
      const end = stringEnd(expr, { at: i, raw: false });
      out += expr.slice(i, end);
      i = end;
      continue;
    }
    if (expr.startsWith('//', i)) {
      const nl = expr.indexOf('\n', i);
      const end = nl < 0 ? expr.length : nl;
      out += expr.slice(i, end);
      i = end;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(expr.slice(i))?.[0];
    if (!id) {
      out += c;
      i++;
      continue;
    }
    const next = expr[i + id.length];
    if (/^[rRbB]{1,2}$/.test(id) && (next === '"' || next === "'")) {
      const end = stringEnd(expr, { at: i + id.length, raw: /[rR]/.test(id) });
      out += expr.slice(i, end);
      i = end;
      continue;
    }
    const isHas = id === 'has' && /^\s*\(/.test(expr.slice(i + 3)) && !expr.slice(0, i).trimEnd().endsWith('.');
    out += isHas ? HAS_MACRO : id;
    i += id.length;
  }
  return out;
}

/** The end of the string literal whose opening quote is at `at`. */
function stringEnd(expr: string, o: { at: number; raw: boolean }): number {
  const q = expr[o.at] ?? '"';
  const quote = expr.startsWith(q.repeat(3), o.at) ? q.repeat(3) : q;
  let i = o.at + quote.length;
  while (i < expr.length) {
    if (!o.raw && expr[i] === '\\') {
      i += 2;
      continue;
    }
    if (expr.startsWith(quote, i)) return i + quote.length;
    i++;
  }
  return expr.length;
}

interface MacroNode {
  op: string;
  args: [unknown, string];
}
interface Checker {
  check(node: unknown, ctx: unknown): unknown;
  getType(name: string): unknown;
  createError(code: string, message: string, node: unknown): Error;
}
interface Evaluator {
  run(node: unknown, ctx: unknown): unknown;
  debugType(v: unknown): { fieldLazy(obj: unknown, field: string, node: unknown, ev: Evaluator): unknown };
}
interface Macro {
  args: MacroNode[];
}

function registerHas(env: Environment): void {
  env.registerFunction(`${HAS_MACRO}(ast): bool`, ({ args }: { args: MacroNode[] }) => ({
    args,
    async: false,
    typeCheck(checker: Checker, macro: Macro, ctx: unknown) {
      const node = macro.args[0];
      if (!node || node.op !== '.') {
        throw checker.createError('invalid_macro_argument', 'invalid argument to has() macro', node);
      }
      checker.check(node, ctx);
      return checker.getType('bool');
    },
    evaluate(ev: Evaluator, macro: Macro, ctx: unknown) {
      const node = macro.args[0] as MacroNode;
      const obj = ev.run(node.args[0], ctx);
      return ev.debugType(obj).fieldLazy(obj, node.args[1], node, ev) !== undefined;
    },
  }));
}

/** CEL equality of runtime values (ints and doubles compare numerically). */
export function celEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    return Number(a) === Number(b);
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => celEqual(v, b[i]));
  if (a instanceof Map && b instanceof Map) {
    return a.size === b.size && [...a].every(([k, v]) => b.has(k) && celEqual(v, b.get(k)));
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ka = Object.keys(a);
    const ob = b as Record<string, unknown>;
    return (
      ka.length === Object.keys(b).length &&
      ka.every((k) => Object.hasOwn(b, k) && celEqual((a as Record<string, unknown>)[k], ob[k]))
    );
  }
  return false;
}

function less(a: unknown, b: unknown): boolean {
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b) < 0;
  return (a as number) < (b as number);
}

function registerStrings(env: Environment): void {
  env.registerFunction('string.charAt(int): string', (s: string, i: bigint) => {
    const chars = [...s];
    if (i < 0n || i > BigInt(chars.length)) throw new Error(`index out of range: ${i}`);
    return chars[Number(i)] ?? '';
  });
  const replace = (...[s, from, to, n]: [string, string, string, bigint]) => {
    if (n < 0n) return s.split(from).join(to);
    let out = s;
    let at = 0;
    for (let k = 0n; k < n; k++) {
      const j = out.indexOf(from, at);
      if (j < 0) break;
      out = out.slice(0, j) + to + out.slice(j + from.length);
      at = j + to.length + (from === '' ? 1 : 0);
    }
    return out;
  };
  env.registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) =>
    replace(s, a, b, -1n),
  );
  env.registerFunction('string.replace(string, string, int): string', (...args: [string, string, string, bigint]) =>
    replace(...args),
  );
  class StringsLib {}
  env.registerType('StringsLib', { ctor: StringsLib, fields: {} });
  env.registerConstant('strings', 'StringsLib', new StringsLib());
  const escapes: Record<string, string> = {
    '\x07': '\\a',
    '\b': '\\b',
    '\f': '\\f',
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
    '\v': '\\v',
    '\\': '\\\\',
    '"': '\\"',
  };
  env.registerFunction(
    'StringsLib.quote(string): string',
    (_ns: unknown, s: string) => `"${[...s].map((c) => escapes[c] ?? c).join('')}"`,
  );
}

function registerLists(env: Environment): void {
  env.registerFunction('list<A>.isSorted(): bool', (l: unknown[]) => l.every((v, i) => i === 0 || !less(v, l[i - 1])));
  env.registerFunction('list<A>.sum(): A', (l: unknown[]) =>
    l.length === 0 || typeof l[0] === 'bigint'
      ? l.reduce<bigint>((a, b) => a + (b as bigint), 0n)
      : l.reduce<number>((a, b) => a + (b as number), 0),
  );
  const pick = (name: string, better: (a: unknown, b: unknown) => boolean) => (l: unknown[]) => {
    if (l.length === 0) throw new Error(`${name}(list) called on empty list`);
    return l.reduce((a, b) => (better(b, a) ? b : a));
  };
  env.registerFunction('list<A>.min(): A', pick('min', less));
  env.registerFunction(
    'list<A>.max(): A',
    pick('max', (a, b) => less(b, a)),
  );
  env.registerFunction('list<A>.indexOf(A): int', (l: unknown[], v: unknown) =>
    BigInt(l.findIndex((x) => celEqual(x, v))),
  );
  env.registerFunction('list<A>.lastIndexOf(A): int', (l: unknown[], v: unknown) =>
    BigInt(l.findLastIndex((x) => celEqual(x, v))),
  );
}

function regexOf(re: string): RegExp {
  const compiled = compilePattern(re);
  if (compiled instanceof Error) throw compiled;
  return compiled;
}

function registerRegex(env: Environment): void {
  env.registerFunction('string.find(string): string', (s: string, re: string) => regexOf(re).exec(s)?.[0] ?? '');
  const findAll = (s: string, re: string, n: bigint) => {
    const r = regexOf(re);
    const all = [...s.matchAll(new RegExp(r.source, `${r.flags}g`))].map((m) => m[0]);
    return n < 0n ? all : all.slice(0, Number(n));
  };
  env.registerFunction('string.findAll(string): list<string>', (s: string, re: string) => findAll(s, re, -1n));
  env.registerFunction('string.findAll(string, int): list<string>', (s: string, re: string, n: bigint) =>
    findAll(s, re, n),
  );
}

/** A parsed URL as Go's url.ParseRequestURI reads it: an absolute URI or an absolute path. */
export class CelURL {
  readonly scheme: string;
  readonly host: string;
  readonly path: string;
  readonly query: string;

  constructor(parts: { scheme: string; host: string; path: string; query: string }) {
    this.scheme = parts.scheme;
    this.host = parts.host;
    this.path = parts.path;
    this.query = parts.query;
  }

  static parse(s: string): CelURL | undefined {
    // eslint-disable-next-line no-control-regex -- Go rejects control characters and spaces
    if (s === '' || /[\s\x00-\x1f\x7f]/.test(s)) return undefined;
    const q = s.indexOf('?');
    const base = q < 0 ? s : s.slice(0, q);
    const query = q < 0 ? '' : s.slice(q + 1);
    if (base.startsWith('/')) return new CelURL({ scheme: '', host: '', path: base, query });
    const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):(.*)$/.exec(base);
    if (!m) return undefined;
    const rest = m[2] ?? '';
    if (!rest.startsWith('//')) return new CelURL({ scheme: m[1] ?? '', host: '', path: rest, query });
    const slash = rest.indexOf('/', 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    const host = authority.slice(authority.lastIndexOf('@') + 1);
    return new CelURL({ scheme: m[1] ?? '', host, path: slash < 0 ? '' : rest.slice(slash), query });
  }

  hostname(): string {
    const bracket = /^\[([^\]]*)\]/.exec(this.host);
    if (bracket) return bracket[1] ?? '';
    const colon = this.host.lastIndexOf(':');
    return colon < 0 ? this.host : this.host.slice(0, colon);
  }

  port(): string {
    const m = /:([0-9]*)$/.exec(this.host.replace(/^\[[^\]]*\]/, ''));
    return m ? (m[1] ?? '') : '';
  }
}

function registerUrls(env: Environment): void {
  env.registerType('net.URL', { ctor: CelURL, fields: {} });
  env.registerFunction('url(string): net.URL', (s: string) => {
    const u = CelURL.parse(s);
    if (!u) throw new Error(`URL parse error during conversion from string: ${s}`);
    return u;
  });
  env.registerFunction('isURL(string): bool', (s: string) => CelURL.parse(s) !== undefined);
  env.registerFunction('net.URL.getScheme(): string', (u: CelURL) => u.scheme);
  env.registerFunction('net.URL.getHost(): string', (u: CelURL) => u.host);
  env.registerFunction('net.URL.getHostname(): string', (u: CelURL) => u.hostname());
  env.registerFunction('net.URL.getPort(): string', (u: CelURL) => u.port());
  env.registerFunction('net.URL.getEscapedPath(): string', (u: CelURL) => u.path);
  env.registerFunction('net.URL.getQuery(): map<string, list<string>>', (u: CelURL) => {
    const out = new Map<string, string[]>();
    for (const [k, v] of new URLSearchParams(u.query)) out.set(k, [...(out.get(k) ?? []), v]);
    return out;
  });
}

function registerSets(env: Environment): void {
  class SetsLib {}
  env.registerType('SetsLib', { ctor: SetsLib, fields: {} });
  env.registerConstant('sets', 'SetsLib', new SetsLib());
  const has = (l: unknown[], v: unknown) => l.some((x) => celEqual(x, v));
  env.registerFunction('SetsLib.contains(list<A>, list<A>): bool', (_n: unknown, a: unknown[], b: unknown[]) =>
    b.every((v) => has(a, v)),
  );
  env.registerFunction(
    'SetsLib.equivalent(list<A>, list<A>): bool',
    (_n: unknown, a: unknown[], b: unknown[]) => b.every((v) => has(a, v)) && a.every((v) => has(b, v)),
  );
  env.registerFunction('SetsLib.intersects(list<A>, list<A>): bool', (_n: unknown, a: unknown[], b: unknown[]) =>
    b.some((v) => has(a, v)),
  );
}

/** A new environment with the library; clone it to add types and variables. */
export function celBaseEnvironment(): Environment {
  const env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: true });
  registerHas(env);
  registerStrings(env);
  registerLists(env);
  registerRegex(env);
  registerUrls(env);
  registerSets(env);
  return env;
}
