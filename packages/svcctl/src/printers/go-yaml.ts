/**
 * YAML as kubectl writes it (sigs.k8s.io/yaml over go-yaml v2): block style, two-space
 * indent, sequences not indented under their key, map keys sorted, and go-yaml's choice of
 * scalar style — plain where the text reads back as the same string, double quotes where it
 * would read back as another type (YAML 1.1: `yes`, `on`, `~`, `0x1F`, timestamps...),
 * single quotes where plain is not allowed by the syntax, double quotes with escapes for
 * non-printable text, literal blocks for multi-line text; plain and single-quoted scalars
 * fold at spaces once a line passes 80 columns, as libyaml's emitter does.
 */

const BEST_WIDTH = 80;

const NULLS = new Set(['', '~', 'null', 'Null', 'NULL']);
const BOOLS = new Set([
  'y',
  'Y',
  'yes',
  'Yes',
  'YES',
  'n',
  'N',
  'no',
  'No',
  'NO',
  'true',
  'True',
  'TRUE',
  'false',
  'False',
  'FALSE',
  'on',
  'On',
  'ON',
  'off',
  'Off',
  'OFF',
]);
const SPECIAL_FLOATS = new Set([
  '.inf',
  '.Inf',
  '.INF',
  '+.inf',
  '+.Inf',
  '+.INF',
  '-.inf',
  '-.Inf',
  '-.INF',
  '.nan',
  '.NaN',
  '.NAN',
]);
const INT = /^[-+]?(0[xX][0-9a-fA-F](_?[0-9a-fA-F])*|0[oO][0-7](_?[0-7])*|0[bB][01](_?[01])*|0[0-7]*|[1-9][0-9]*)$/;
const FLOAT = /^[-+]?((\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|inf(inity)?|nan)$/i;
const BASE60 = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;
const TIMESTAMP =
  /^\d{4}-\d{1,2}-\d{1,2}(?:(?:[Tt]|\s+)\d{1,2}:\d{1,2}:\d{1,2}(?:\.\d*)?(?:\s*(?:Z|[-+]\d{1,2}(?::?\d{2})?))?)?$/;

/** Would go-yaml read this plain text back as something other than a string. */
function resolvesToOther(s: string): boolean {
  if (NULLS.has(s) || BOOLS.has(s) || SPECIAL_FLOATS.has(s) || s === '<<') return true;
  const c = s[0] ?? '';
  if ('+-.0123456789'.includes(c)) {
    if (INT.test(s) || FLOAT.test(s) || BASE60.test(s)) return true;
    if (/^[-+]?\d/.test(s) && /^[-+]?\d[\d_]*$/.test(s)) return true;
  }
  return TIMESTAMP.test(s);
}

function isPrintable(ch: string): boolean {
  const c = ch.codePointAt(0) ?? 0;
  return (
    c === 0x0a ||
    (c >= 0x20 && c <= 0x7e) ||
    c === 0x85 ||
    (c >= 0xa0 && c <= 0xd7ff) ||
    (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff) ||
    (c >= 0x10000 && c <= 0x10ffff)
  );
}

interface Analysis {
  plain: boolean;
  single: boolean;
  block: boolean;
}

/** libyaml's yaml_emitter_analyze_scalar, for block context. */
function analyze(s: string): Analysis {
  if (s === '') return { plain: false, single: true, block: false };
  if (s.startsWith('---') || s.startsWith('...')) return { plain: false, single: true, block: true };
  let blockIndicators = false;
  let special = false;
  let lineBreaks = false;
  let spaceBreak = false;
  let breakSpace = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let prevSpace = false;
  let prevBreak = false;
  const chars = [...s];
  const isSpace = (c: string | undefined): boolean => c === ' ';
  const isBreak = (c: string | undefined): boolean =>
    c === '\n' || c === '\r' || c === '\u0085' || c === '\u2028' || c === '\u2029';
  const blankOrEnd = (c: string | undefined): boolean => c === undefined || c === ' ' || c === '\t' || isBreak(c);
  let precededByWhitespace = true;
  chars.forEach((c, i) => {
    const next = chars[i + 1];
    const first = i === 0;
    const last = i === chars.length - 1;
    if (first) {
      if ('#,[]{}&*!|>\'"%@`'.includes(c)) blockIndicators = true;
      if ((c === '?' || c === ':') && blankOrEnd(next)) blockIndicators = true;
      if (c === '-' && blankOrEnd(next)) blockIndicators = true;
    } else {
      if (c === ':' && blankOrEnd(next)) blockIndicators = true;
      if (c === '#' && precededByWhitespace) blockIndicators = true;
    }
    if (!isPrintable(c) || (c !== '\n' && c.codePointAt(0) === 0xfeff)) special = true;
    if (isBreak(c)) lineBreaks = true;
    if (isSpace(c)) {
      if (first) leadingSpace = true;
      if (last) trailingSpace = true;
      if (prevBreak) breakSpace = true;
      prevSpace = true;
      prevBreak = false;
    } else if (isBreak(c)) {
      if (first) leadingBreak = true;
      if (last) trailingBreak = true;
      if (prevSpace) spaceBreak = true;
      prevSpace = false;
      prevBreak = true;
    } else {
      prevSpace = false;
      prevBreak = false;
    }
    precededByWhitespace = blankOrEnd(c);
  });
  const a: Analysis = { plain: true, single: true, block: true };
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) a.plain = false;
  if (trailingSpace) a.block = false;
  if (breakSpace) {
    a.plain = false;
    a.single = false;
  }
  if (spaceBreak || special) {
    a.plain = false;
    a.single = false;
    a.block = false;
  }
  if (lineBreaks) a.plain = false;
  if (blockIndicators) a.plain = false;
  return a;
}

/** Words of `s` folded as libyaml folds plain and single-quoted scalars: a break replaces a space once past the width. */
function fold(s: string, o: { column: number; indent: number }): string {
  let out = '';
  let column = o.column;
  const chars = [...s];
  let spaces = false;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] ?? '';
    if (c === ' ') {
      if (!spaces && column > BEST_WIDTH && chars[i + 1] !== ' ' && i !== 0 && i !== chars.length - 1) {
        out += `\n${' '.repeat(o.indent)}`;
        column = o.indent;
      } else {
        out += c;
        column++;
      }
      spaces = true;
    } else {
      out += c;
      column++;
      spaces = false;
    }
  }
  return out;
}

function doubleQuoted(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case '\\':
        out += '\\\\';
        continue;
      case '\0':
        out += '\\0';
        continue;
      case '\x07':
        out += '\\a';
        continue;
      case '\b':
        out += '\\b';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\v':
        out += '\\v';
        continue;
      case '\f':
        out += '\\f';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\x1b':
        out += '\\e';
        continue;
    }
    if (isPrintable(ch)) out += ch;
    else if (c <= 0xff) out += `\\x${c.toString(16).toUpperCase().padStart(2, '0')}`;
    else if (c <= 0xffff) out += `\\u${c.toString(16).toUpperCase().padStart(4, '0')}`;
    else out += `\\U${c.toString(16).toUpperCase().padStart(8, '0')}`;
  }
  return `${out}"`;
}

/** A literal block scalar (`|`, `|-`, `|+`; an indentation indicator when the text starts with a space). */
function literal(s: string, indent: number): string {
  const chomp = !s.endsWith('\n') ? '-' : s.endsWith('\n\n') || s === '\n' ? '+' : '';
  const indicator = s.startsWith(' ') || s.startsWith('\n') ? '2' : '';
  const body = s.endsWith('\n') ? s.slice(0, -1) : s;
  const pad = ' '.repeat(indent);
  return `|${indicator}${chomp}\n${body
    .split('\n')
    .map((l) => (l === '' ? '' : pad + l))
    .join('\n')}`;
}

/** A string scalar at `column`, continuation lines indented by `indent`. */
function scalarString(s: string, o: { column: number; indent: number; key?: boolean }): string {
  if (resolvesToOther(s)) return doubleQuoted(s);
  const a = analyze(s);
  if (!o.key && s.includes('\n') && a.block) return literal(s, o.indent);
  if (a.plain) return o.key ? s : fold(s, o);
  if (a.single) {
    const quoted = `'${s.replace(/'/g, "''")}'`;
    return o.key ? quoted : fold(quoted, o);
  }
  return doubleQuoted(s);
}

function scalar(v: unknown, o: { column: number; indent: number }): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : v > 0 ? '+.Inf' : v < 0 ? '-.Inf' : '.NaN';
  return scalarString(String(v), o);
}

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function emitMap(m: Record<string, unknown>, o: { indent: number; lines: string[]; firstPrefix?: string }): void {
  const { indent, lines, firstPrefix } = o;
  const keys = Object.keys(m).sort();
  keys.forEach((k, i) => {
    const lead = i === 0 && firstPrefix !== undefined ? firstPrefix : ' '.repeat(indent);
    const key = scalarString(k, { column: indent, indent, key: true });
    const head = `${lead}${key}:`;
    emitValue(m[k], { head, indent, lines, inMap: true });
  });
}

function emitValue(v: unknown, o: { head: string; indent: number; lines: string[]; inMap: boolean }): void {
  if (isMap(v)) {
    if (Object.keys(v).length === 0) o.lines.push(`${o.head} {}`);
    else {
      o.lines.push(o.head);
      emitMap(v, { indent: o.indent + 2, lines: o.lines });
    }
  } else if (Array.isArray(v)) {
    if (v.length === 0) o.lines.push(`${o.head} []`);
    else {
      o.lines.push(o.head);
      emitSeq(v, { indent: o.inMap ? o.indent : o.indent + 2, lines: o.lines });
    }
  } else {
    const column = o.head.length + 1;
    o.lines.push(`${o.head} ${scalar(v, { column, indent: o.indent + 2 })}`);
  }
}

function emitSeq(items: unknown[], o: { indent: number; lines: string[]; firstPrefix?: string }): void {
  const { indent, lines, firstPrefix } = o;
  items.forEach((item, i) => {
    const lead = (i === 0 && firstPrefix !== undefined ? firstPrefix : ' '.repeat(indent)) + '- ';
    if (isMap(item) && Object.keys(item).length > 0) emitMap(item, { indent: indent + 2, lines, firstPrefix: lead });
    else if (Array.isArray(item) && item.length > 0) emitSeq(item, { indent: indent + 2, lines, firstPrefix: lead });
    else if (isMap(item)) lines.push(`${lead}{}`);
    else if (Array.isArray(item)) lines.push(`${lead}[]`);
    else lines.push(`${lead}${scalar(item, { column: lead.length, indent: indent + 2 })}`);
  });
}

/** One document, newline-terminated. */
export function goYaml(v: unknown): string {
  const lines: string[] = [];
  if (isMap(v)) {
    if (Object.keys(v).length === 0) return '{}\n';
    emitMap(v, { indent: 0, lines });
  } else if (Array.isArray(v)) {
    if (v.length === 0) return '[]\n';
    emitSeq(v, { indent: 0, lines });
  } else return `${scalar(v, { column: 0, indent: 2 })}\n`;
  return `${lines.join('\n')}\n`;
}
