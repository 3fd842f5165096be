/**
 * kubectl's JSONPath templates (client-go util/jsonpath): text with `{...}` actions holding
 * a path (`.a.b`, `['k']`, `[0]`, `[-1]`, `[1:3]`, `[*]`, `..name`, `[?(@.x=="y")]`, `[a,b]`),
 * a quoted string, or `range <path>` ... `end`. Maps and lists print as compact JSON, scalars
 * as Go prints them, several results of one action separated by spaces.
 */
import { toCompactJson } from './json-yaml.js';

type Step =
  | { t: 'field'; name: string }
  | { t: 'recursive'; name: string | '*' }
  | { t: 'wildcard' }
  | { t: 'index'; i: number }
  | { t: 'slice'; start?: number; end?: number; step?: number }
  | { t: 'union'; keys: Array<string | number> }
  | { t: 'filter'; left: Path; op?: string; right?: Operand };

type Operand = { t: 'literal'; v: unknown } | { t: 'path'; p: Path };

interface Path {
  root: '$' | '@' | '';
  steps: Step[];
}

type Node = { t: 'text'; s: string } | { t: 'path'; p: Path } | { t: 'range'; p: Path; body: Node[] };

export class JsonPathError extends Error {}

function unquote(s: string): string {
  const q = s[0];
  const body = s.slice(1, -1);
  if (q === '"') return JSON.parse(`"${body.replace(/\\'/g, "'")}"`) as string;
  return body.replace(/\\(.)/g, '$1');
}

class PathParser {
  private i = 0;
  constructor(private readonly s: string) {}

  private peek(n = 0): string {
    return this.s[this.i + n] ?? '';
  }

  private name(): string {
    let out = '';
    while (this.i < this.s.length) {
      const c = this.peek();
      if (c === '\\' && this.i + 1 < this.s.length) {
        out += this.peek(1);
        this.i += 2;
        continue;
      }
      if (c === '.' || c === '[' || c === ' ' || c === ')' || c === '=' || c === '!' || c === '<' || c === '>') break;
      out += c;
      this.i++;
    }
    return out;
  }

  private bracketBody(): string {
    // up to the matching ']' (quotes and nested parentheses respected)
    let depth = 0;
    let quote = '';
    const start = this.i;
    for (; this.i < this.s.length; this.i++) {
      const c = this.peek();
      if (quote) {
        if (c === '\\') this.i++;
        else if (c === quote) quote = '';
        continue;
      }
      if (c === '"' || c === "'") quote = c;
      else if (c === '(') depth++;
      else if (c === ')') depth--;
      else if (c === ']' && depth === 0) break;
    }
    if (this.peek() !== ']') throw new JsonPathError(`unterminated array`);
    const body = this.s.slice(start, this.i);
    this.i++;
    return body.trim();
  }

  private bracket(body: string): Step {
    if (body === '*') return { t: 'wildcard' };
    if (body.startsWith('?(') && body.endsWith(')')) return this.filter(body.slice(2, -1).trim());
    const parts = splitTop(body, ',').map((p) => p.trim());
    if (parts.length > 1) {
      return { t: 'union', keys: parts.map((p) => (/^['"]/.test(p) ? unquote(p) : Number(p))) };
    }
    if (/^['"]/.test(body)) return { t: 'field', name: unquote(body) };
    if (body.includes(':')) {
      const [a, b, c] = body.split(':').map((x) => x.trim());
      const num = (x: string | undefined): number | undefined => (x === undefined || x === '' ? undefined : Number(x));
      return { t: 'slice', start: num(a), end: num(b), step: num(c) };
    }
    if (/^-?\d+$/.test(body)) return { t: 'index', i: Number(body) };
    throw new JsonPathError(`invalid array index ${body}`);
  }

  private filter(expr: string): Step {
    const m = /^(.*?)\s*(==|!=|<=|>=|<|>|=~)\s*(.*)$/.exec(expr);
    if (!m) return { t: 'filter', left: parsePath(expr) };
    const right = (m[3] ?? '').trim();
    let operand: Operand;
    if (/^['"]/.test(right)) operand = { t: 'literal', v: unquote(right) };
    else if (/^-?\d+(\.\d+)?$/.test(right)) operand = { t: 'literal', v: Number(right) };
    else if (right === 'true' || right === 'false') operand = { t: 'literal', v: right === 'true' };
    else operand = { t: 'path', p: parsePath(right) };
    return { t: 'filter', left: parsePath((m[1] ?? '').trim()), op: m[2], right: operand };
  }

  parse(): Path {
    const path: Path = { root: '', steps: [] };
    if (this.peek() === '$' || this.peek() === '@') {
      path.root = this.peek() as '$' | '@';
      this.i++;
    }
    while (this.i < this.s.length) {
      const c = this.peek();
      if (c === '.' && this.peek(1) === '.') {
        this.i += 2;
        if (this.peek() === '[') {
          this.i++;
          const b = this.bracket(this.bracketBody());
          path.steps.push({ t: 'recursive', name: b.t === 'field' ? b.name : '*' });
        } else {
          const n = this.name();
          path.steps.push({ t: 'recursive', name: n === '*' ? '*' : n });
        }
      } else if (c === '.') {
        this.i++;
        if (this.peek() === '*') {
          this.i++;
          path.steps.push({ t: 'wildcard' });
        } else {
          const n = this.name();
          if (n !== '') path.steps.push({ t: 'field', name: n });
        }
      } else if (c === '[') {
        this.i++;
        path.steps.push(this.bracket(this.bracketBody()));
      } else if (c === ' ') {
        this.i++;
      } else {
        const n = this.name();
        if (n === '') throw new JsonPathError(`unrecognized character in action: ${c}`);
        path.steps.push({ t: 'field', name: n });
      }
    }
    return path;
  }
}

/** `s` split at top-level `sep` (outside quotes and brackets). */
function splitTop(s: string, sep: string): string[] {
  const out: string[] = [];
  let quote = '';
  let depth = 0;
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i] ?? '';
    if (quote) {
      if (c === '\\') {
        cur += c + (s[i + 1] ?? '');
        i++;
        continue;
      }
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') depth--;
    else if (c === sep && depth === 0) {
      out.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  out.push(cur);
  return out;
}

function parsePath(s: string): Path {
  return new PathParser(s.trim()).parse();
}

/** The actions of a template, in order (`range` ... `end` nested). */
function parseTemplate(template: string): Node[] {
  const root: Node[] = [];
  const stack: Node[][] = [root];
  let i = 0;
  const top = (): Node[] => stack[stack.length - 1] ?? root;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    if (open < 0) {
      top().push({ t: 'text', s: template.slice(i) });
      break;
    }
    if (open > i) top().push({ t: 'text', s: template.slice(i, open) });
    let j = open + 1;
    let quote = '';
    for (; j < template.length; j++) {
      const c = template[j];
      if (quote) {
        if (c === '\\') j++;
        else if (c === quote) quote = '';
      } else if (c === '"' || c === "'") quote = c;
      else if (c === '}') break;
    }
    if (j >= template.length) throw new JsonPathError(`unclosed action`);
    const action = template.slice(open + 1, j).trim();
    i = j + 1;
    if (action === 'end') {
      if (stack.length === 1) throw new JsonPathError(`not in range, nothing to end`);
      stack.pop();
    } else if (action.startsWith('range ')) {
      const body: Node[] = [];
      top().push({ t: 'range', p: parsePath(action.slice(6)), body });
      stack.push(body);
    } else if (/^"(?:[^"\\]|\\.)*"$/.test(action) || /^'(?:[^'\\]|\\.)*'$/.test(action)) {
      top().push({ t: 'text', s: unquote(action) });
    } else if (action !== '') {
      top().push({ t: 'path', p: parsePath(action) });
    }
  }
  if (stack.length > 1) throw new JsonPathError(`unclosed range`);
  return root;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function compare(a: unknown, op: string, b: unknown): boolean {
  switch (op) {
    case '==':
      return a === b || (typeof a === 'number' && typeof b === 'string' && String(a) === b);
    case '!=':
      return a !== b;
    case '<':
      return (a as number) < (b as number);
    case '>':
      return (a as number) > (b as number);
    case '<=':
      return (a as number) <= (b as number);
    case '>=':
      return (a as number) >= (b as number);
    case '=~':
      return typeof a === 'string' && new RegExp(String(b)).test(a);
  }
  return false;
}

function descendants(v: unknown, name: string | '*', out: unknown[]): void {
  if (isObject(v)) {
    if (name === '*')
      out.push(
        ...Object.keys(v)
          .sort()
          .map((k) => v[k]),
      );
    else if (Object.hasOwn(v, name)) out.push(v[name]);
    for (const k of Object.keys(v).sort()) descendants(v[k], name, out);
  } else if (Array.isArray(v)) {
    if (name === '*') out.push(...v);
    for (const x of v) descendants(x, name, out);
  }
}

function evalPath(p: Path, o: { root: unknown; current: unknown }): unknown[] {
  let cur: unknown[] = [p.root === '$' ? o.root : o.current];
  for (const step of p.steps) {
    const next: unknown[] = [];
    for (const v of cur) {
      switch (step.t) {
        case 'field':
          if (isObject(v) && Object.hasOwn(v, step.name)) next.push(v[step.name]);
          break;
        case 'wildcard':
          if (Array.isArray(v)) next.push(...v);
          else if (isObject(v))
            next.push(
              ...Object.keys(v)
                .sort()
                .map((k) => v[k]),
            );
          break;
        case 'recursive':
          descendants(v, step.name, next);
          break;
        case 'index':
          if (Array.isArray(v)) {
            const i = step.i < 0 ? v.length + step.i : step.i;
            if (i < 0 || i >= v.length)
              throw new JsonPathError(`array index out of bounds: index ${step.i}, length ${v.length}`);
            next.push(v[i]);
          }
          break;
        case 'slice':
          if (Array.isArray(v)) {
            const len = v.length;
            const norm = (x: number | undefined, d: number): number =>
              x === undefined ? d : Math.min(len, Math.max(0, x < 0 ? len + x : x));
            const st = step.step ?? 1;
            for (let i = norm(step.start, 0); i < norm(step.end, len); i += st) next.push(v[i]);
          }
          break;
        case 'union':
          for (const k of step.keys) {
            if (typeof k === 'number' && Array.isArray(v)) {
              const i = k < 0 ? v.length + k : k;
              if (i >= 0 && i < v.length) next.push(v[i]);
            } else if (typeof k === 'string' && isObject(v) && Object.hasOwn(v, k)) next.push(v[k]);
          }
          break;
        case 'filter': {
          const items = Array.isArray(v) ? v : isObject(v) ? [v] : [];
          for (const item of items) {
            const left = evalPath(step.left, { root: o.root, current: item });
            if (step.op === undefined) {
              if (left.length > 0) next.push(item);
              continue;
            }
            const right =
              step.right?.t === 'literal'
                ? [step.right.v]
                : step.right
                  ? evalPath(step.right.p, { root: o.root, current: item })
                  : [];
            if (left.length > 0 && right.length > 0 && compare(left[0], step.op, right[0])) next.push(item);
          }
          break;
        }
      }
    }
    cur = next;
  }
  return cur;
}

/** A scalar as Go's fmt prints it; maps and lists as compact JSON (jsonpath's PrintResults). */
export function jsonPathText(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'object') return toCompactJson(v);
  if (typeof v === 'number' && !Number.isInteger(v) && Math.abs(v) >= 1e21) return v.toExponential();
  return String(v);
}

function render(nodes: Node[], o: { root: unknown; current: unknown }): string {
  let out = '';
  for (const n of nodes) {
    if (n.t === 'text') out += n.s;
    else if (n.t === 'path') out += evalPath(n.p, o).map(jsonPathText).join(' ');
    else
      for (const item of evalPath(n.p, o).flatMap((v) => (Array.isArray(v) ? v : [v])))
        out += render(n.body, { root: o.root, current: item });
  }
  return out;
}

/** A compiled template: `execute(obj)` renders it against one object. */
export class JsonPathTemplate {
  private readonly nodes: Node[];
  constructor(readonly template: string) {
    this.nodes = parseTemplate(template);
  }
  execute(obj: unknown): string {
    return render(this.nodes, { root: obj, current: obj });
  }
  /** The values of a template holding one path (custom columns). */
  values(obj: unknown): unknown[] {
    const path = this.nodes.find((n): n is Extract<Node, { t: 'path' }> => n.t === 'path');
    return path ? evalPath(path.p, { root: obj, current: obj }) : [];
  }
}

/** kubectl's relaxed form of a column expression: `.a.b`, `a.b` or `{.a.b}` → `{.a.b}`. */
export function relaxedJsonPath(expr: string): string {
  let e = expr.trim();
  if (e.startsWith('{') && e.endsWith('}')) e = e.slice(1, -1);
  if (!e.startsWith('.') && !e.startsWith('$') && !e.startsWith('[')) e = `.${e}`;
  return `{${e}}`;
}
