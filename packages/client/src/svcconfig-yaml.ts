import YAML from 'yaml';

// Reading a client configuration file is on every command-line client's start path, and the
// `yaml` library's full parse (lexer, CST, document, then plain values) took ~10 ms of svcctl's
// start for a 2 KB file. Configuration files as kubectl and svcctl write them use a small part
// of YAML: block mappings and sequences, one entry per line, plain and quoted scalars. That part
// is read here directly; anything else (anchors, flow collections, block scalars, multi-line or
// number-like scalars, tags, duplicate keys, tabs, several documents) makes `simpleYaml` give up
// and the `yaml` library parse the text, so the result is always what YAML.parse gives.

/** Parses configuration text: JSON, the simple YAML below, else the full YAML parser. */
export function parseConfigText(text: string): unknown {
  // JSON is YAML, and JSON.parse is much faster; a duplicate key is the one difference (the
  // last wins where the yaml library refuses the file).
  if (text.trimStart().startsWith('{')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // not JSON after all: YAML's flow mappings
    }
  }
  const simple = simpleYaml(text);
  return simple === GIVE_UP ? (YAML.parse(text) as unknown) : simple;
}

/** `simpleYaml`'s answer for text outside the subset it reads. */
export const GIVE_UP: unique symbol = Symbol('give up');

interface Line {
  indent: number;
  text: string;
}

class GiveUp extends Error {}

const KEY = /^([A-Za-z0-9_][A-Za-z0-9_./-]*):(?: +(.*))?$/;
const DOUBLE_QUOTED = /^"((?:[^"\\]|\\["\\/nt])*)"$/;
const SINGLE_QUOTED = /^'((?:[^']|'')*)'$/;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', n: '\n', t: '\t' };

/**
 * The value of YAML text made of block mappings (`key: value`, `key:` and a nested block) and
 * block sequences (`- value`, `- key: value` starting a mapping) of plain or quoted scalars,
 * `{}` and `[]`; comments on lines of their own. GIVE_UP for anything else.
 */
export function simpleYaml(text: string): unknown {
  if (/\r(?!\n)/.test(text)) return GIVE_UP;
  const lines: Line[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const body = line.trimStart();
    if (body === '' || body.startsWith('#')) continue;
    const indent = line.length - body.length;
    if (!/^ *$/.test(line.slice(0, indent)) || /^(---|\.\.\.|%)/.test(line)) return GIVE_UP;
    lines.push({ indent, text: body.trimEnd() });
  }
  const top = lines[0];
  if (top === undefined || top.indent !== 0 || top.text.startsWith('-')) return GIVE_UP;
  try {
    const at = { i: 0 };
    const doc = mapping(lines, { at, indent: 0 });
    if (at.i !== lines.length) return GIVE_UP;
    return doc;
  } catch (e) {
    if (e instanceof GiveUp) return GIVE_UP;
    throw e;
  }
}

interface Cursor {
  at: { i: number };
  indent: number;
}

function isItem(text: string): boolean {
  return text === '-' || text.startsWith('- ');
}

/** A block mapping whose keys are at `indent`; `first` is an entry already cut from a `- ` line. */
function mapping(lines: Line[], c: Cursor, first?: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let entry = first ?? lines[c.at.i++]?.text ?? '';
  for (;;) {
    const [, key, value] = KEY.exec(entry) ?? [];
    if (key === undefined || Object.hasOwn(out, key) || key === '__proto__') throw new GiveUp();
    out[key] = value === undefined ? nested(lines, c) : scalar(value);
    const next = lines[c.at.i];
    if (next === undefined || next.indent < c.indent) return out;
    if (next.indent > c.indent || isItem(next.text)) throw new GiveUp();
    entry = next.text;
    c.at.i++;
  }
}

/** The value after `key:` with nothing after it: a more indented block, a sequence at the key's indent, or null. */
function nested(lines: Line[], c: Cursor): unknown {
  const next = lines[c.at.i];
  if (next === undefined || next.indent < c.indent) return null;
  if (next.indent === c.indent) return isItem(next.text) ? sequence(lines, c) : null;
  return isItem(next.text)
    ? sequence(lines, { at: c.at, indent: next.indent })
    : mapping(lines, { at: c.at, indent: next.indent });
}

/** A block sequence whose `-` are at `c.indent` (the current line is its first item). */
function sequence(lines: Line[], c: Cursor): unknown[] {
  const out: unknown[] = [];
  for (;;) {
    const line = lines[c.at.i];
    if (line === undefined || line.indent !== c.indent || !isItem(line.text)) return out;
    c.at.i++;
    const rest = line.text.slice(1).trimStart();
    if (rest === '' || isItem(rest)) throw new GiveUp();
    const column = c.indent + (line.text.length - rest.length);
    out.push(KEY.test(rest) ? mapping(lines, { at: c.at, indent: column }, rest) : scalar(rest));
    // A scalar continued on the next line, or a line between the item's and the sequence's indent.
    const next = lines[c.at.i];
    if (next !== undefined && next.indent > c.indent) throw new GiveUp();
  }
}

/** A one-line scalar, resolved as YAML 1.2's core schema does; numbers and the like give up. */
function scalar(s: string): unknown {
  if (s === '{}') return {};
  if (s === '[]') return [];
  const double = DOUBLE_QUOTED.exec(s)?.[1];
  if (double !== undefined) return double.replace(/\\(.)/g, (_, c: string) => ESCAPES[c] ?? c);
  const single = SINGLE_QUOTED.exec(s)?.[1];
  if (single !== undefined) return single.replace(/''/g, "'");
  // Indicators (`-x` is text, `- x` an item), comments, `key: value` inside a value, and
  // anything a number or .inf/.nan could be.
  if (/^([?:,[\]{}#&*!|>'"%@`]|-( |$)|[-+]?[.0-9])/.test(s) || /: | #|:$|\t/.test(s)) throw new GiveUp();
  if (/^(~|null|Null|NULL)$/.test(s)) return null;
  if (/^(true|True|TRUE)$/.test(s)) return true;
  if (/^(false|False|FALSE)$/.test(s)) return false;
  return s;
}
