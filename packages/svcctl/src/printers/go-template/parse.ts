/**
 * The parser of Go's text/template subset: text, actions, pipelines with `|`, variables
 * (`$x :=`, `$x =`, `$i, $v :=` in range), `if`/`else if`/`with`/`range` with `else`,
 * `break`/`continue`, parenthesised pipelines and field chains. Errors read as Go's
 * (`template: NAME:LINE: ...`).
 */
import { GoInt } from './fmt.js';
import { goQuote, lex, tokenText, type Token } from './lex.js';

export type Node =
  | { type: 'text'; pos: number; text: string }
  | { type: 'action'; pos: number; line: number; pipe: PipeNode }
  | ControlNode
  | { type: 'break' | 'continue'; pos: number; line: number };

export interface ControlNode {
  type: 'if' | 'with' | 'range';
  pos: number;
  line: number;
  pipe: PipeNode;
  list: Node[];
  elseList?: Node[];
}

export interface PipeNode {
  type: 'pipe';
  pos: number;
  decl: string[];
  isAssign: boolean;
  cmds: CommandNode[];
}

export interface CommandNode {
  type: 'command';
  pos: number;
  args: ArgNode[];
}

export type ArgNode =
  | { type: 'field'; pos: number; idents: string[] }
  | { type: 'variable'; pos: number; idents: string[] }
  | { type: 'chain'; pos: number; node: ArgNode; fields: string[] }
  | { type: 'identifier'; pos: number; name: string }
  | { type: 'dot'; pos: number }
  | { type: 'nil'; pos: number }
  | { type: 'bool'; pos: number; value: boolean }
  | { type: 'number'; pos: number; text: string; value: number | GoInt }
  | { type: 'string'; pos: number; quoted: string; text: string }
  | PipeNode;

export interface Tree {
  name: string;
  text: string;
  root: Node[];
}

export class TemplateParseError extends Error {}

/** `{{end}}` or `{{else}}` (with the keyword of `{{else if}}`): where a list ends. */
interface Delim {
  type: 'end' | 'else';
  pos: number;
  elseKeyword?: string;
}

const isDelim = (n: Node | Delim): n is Delim => n.type === 'end' || n.type === 'else';

/** Go's Node.String() of an argument, command or pipeline (error contexts). */
export function nodeString(n: ArgNode | CommandNode): string {
  switch (n.type) {
    case 'field':
      return n.idents.map((i) => `.${i}`).join('');
    case 'variable':
      return n.idents.join('.');
    case 'chain': {
      const inner = n.node.type === 'pipe' ? `(${nodeString(n.node)})` : nodeString(n.node);
      return inner + n.fields.map((f) => `.${f}`).join('');
    }
    case 'identifier':
      return n.name;
    case 'dot':
      return '.';
    case 'nil':
      return 'nil';
    case 'bool':
      return String(n.value);
    case 'number':
      return n.text;
    case 'string':
      return n.quoted;
    case 'command':
      return n.args.map((a) => (a.type === 'pipe' ? `(${nodeString(a)})` : nodeString(a))).join(' ');
    case 'pipe': {
      const decl = n.decl.length ? `${n.decl.join(', ')} ${n.isAssign ? '=' : ':='} ` : '';
      return decl + n.cmds.map((c) => nodeString(c)).join(' | ');
    }
  }
}

/** Go's strconv.Unquote of a double-quoted literal. */
function unquote(q: string): string {
  let out = '';
  for (let i = 1; i < q.length - 1; i++) {
    const c = q[i] ?? '';
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = q[++i] ?? '';
    const simple: Record<string, string> = {
      n: '\n',
      t: '\t',
      r: '\r',
      a: '\x07',
      b: '\b',
      f: '\f',
      v: '\v',
      '\\': '\\',
      '"': '"',
      "'": "'",
    };
    if (e in simple) out += simple[e];
    else if (e === 'x') {
      out += String.fromCharCode(parseInt(q.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (e === 'u' || e === 'U') {
      const n = e === 'u' ? 4 : 8;
      out += String.fromCodePoint(parseInt(q.slice(i + 1, i + 1 + n), 16));
      i += n;
    } else if (/[0-7]/.test(e)) {
      out += String.fromCharCode(parseInt(q.slice(i, i + 3), 8));
      i += 2;
    } else throw new Error('invalid syntax');
  }
  return out;
}

/** A number literal as Go's template parser reads it: an int when it is one, else a float64. */
function numberValue(text: string, char: boolean): number | GoInt | undefined {
  if (char) {
    const inner = text.slice(1, -1);
    const s = inner.startsWith('\\') ? unquote(`"${inner}"`) : inner;
    const cp = s.codePointAt(0);
    return cp === undefined ? undefined : new GoInt(BigInt(cp));
  }
  const t = text.replace(/_/g, '');
  if (/^[+-]?(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO]?[0-7]+|[1-9]\d*|0)$/.test(t)) {
    const neg = t.startsWith('-');
    const body = t.replace(/^[+-]/, '');
    const v = /^0[0-7]+$/.test(body) ? BigInt(`0o${body.slice(1)}`) : BigInt(body);
    return new GoInt(neg ? -v : v);
  }
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) {
    const f = Number(t);
    // A float with no fraction that fits is still an int constant in Go (`1e3`), but typed as float64 in interface context.
    return Number.isFinite(f) ? f : undefined;
  }
  return undefined;
}

class Parser {
  private i = 0;
  private vars: string[] = ['$'];
  private rangeDepth = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly o: { name: string; funcs: ReadonlySet<string> },
  ) {}

  private peek(): Token {
    return this.tokens[this.i] ?? this.tokens[this.tokens.length - 1]!;
  }

  private next(): Token {
    const t = this.peek();
    this.i++;
    return t;
  }

  private backup(): void {
    this.i--;
  }

  private nextNonSpace(): Token {
    let t = this.next();
    while (t.type === 'space') t = this.next();
    return t;
  }

  private peekNonSpace(): Token {
    const t = this.nextNonSpace();
    this.backup();
    return t;
  }

  private errorf(msg: string, line = this.peek().line): never {
    throw new TemplateParseError(`template: ${this.o.name}:${line}: ${msg}`);
  }

  private unexpected(t: Token, context: string): never {
    if (t.type === 'error') this.errorf(t.value, t.line);
    this.errorf(`unexpected ${tokenText(t)} in ${context}`, t.line);
  }

  private expect(type: Token['type'], context: string): Token {
    const t = this.nextNonSpace();
    if (t.type !== type) this.unexpected(t, context);
    return t;
  }

  parse(): Node[] {
    const root: Node[] = [];
    for (;;) {
      const t = this.peek();
      if (t.type === 'eof') return root;
      if (t.type === 'error') this.errorf(t.value, t.line);
      const n = this.textOrAction();
      if (isDelim(n)) return this.errorf(`unexpected ${n.type === 'end' ? '{{end}}' : '{{else}}'}`);
      root.push(n);
    }
  }

  private textOrAction(): Node | Delim {
    const t = this.nextNonSpace();
    if (t.type === 'text') return { type: 'text', pos: t.pos, text: t.value };
    if (t.type === 'leftDelim') return this.action();
    if (t.type === 'error') this.errorf(t.value, t.line);
    return this.unexpected(t, 'input');
  }

  private action(): Node | Delim {
    const t = this.nextNonSpace();
    if (t.type === 'keyword') {
      switch (t.value) {
        case 'if':
        case 'with':
        case 'range':
          return this.control(t);
        case 'end':
          this.expect('rightDelim', 'end');
          return { type: 'end', pos: t.pos };
        case 'else': {
          const p = this.peekNonSpace();
          if (p.type === 'keyword' && (p.value === 'if' || p.value === 'with')) {
            return { type: 'else', pos: t.pos, elseKeyword: p.value };
          }
          this.expect('rightDelim', 'else');
          return { type: 'else', pos: t.pos };
        }
        case 'break':
        case 'continue':
          if (this.rangeDepth === 0) this.errorf(`{{${t.value}}} outside {{range}}`);
          this.expect('rightDelim', `{{${t.value}}}`);
          return { type: t.value, pos: t.pos, line: t.line };
        default:
          this.errorf(`{{${t.value}}} is not supported by this printer`);
      }
    }
    this.backup();
    return { type: 'action', pos: t.pos, line: t.line, pipe: this.pipeline('command', 'rightDelim') };
  }

  private control(keyword: Token): ControlNode {
    const type = keyword.value as ControlNode['type'];
    const mark = this.vars.length;
    const pipe = this.pipeline(type, 'rightDelim');
    if (type === 'range') this.rangeDepth++;
    const list: Node[] = [];
    let elseList: Node[] | undefined;
    for (;;) {
      const p = this.peekNonSpace();
      if (p.type === 'eof') this.errorf('unexpected EOF');
      const n = this.textOrAction();
      if (!isDelim(n)) {
        list.push(n);
        continue;
      }
      if (n.type === 'end') break;
      {
        if (n.elseKeyword) {
          // `{{else if ...}}` is `{{else}}{{if ...}}...{{end}}{{end}}` sharing the one end.
          if (type === 'range') this.rangeDepth--;
          const kw = this.nextNonSpace();
          elseList = [this.control(kw)];
          this.vars.length = mark;
          return { type, pos: keyword.pos, line: keyword.line, pipe, list, elseList };
        }
        if (type === 'range') this.rangeDepth--;
        elseList = [];
        for (;;) {
          const q = this.peekNonSpace();
          if (q.type === 'eof') this.errorf('unexpected EOF');
          const m = this.textOrAction();
          if (!isDelim(m)) {
            elseList.push(m);
            continue;
          }
          if (m.type === 'end') break;
          return this.errorf('expected end; found {{else}}');
        }
        this.vars.length = mark;
        return { type, pos: keyword.pos, line: keyword.line, pipe, list, elseList };
      }
    }
    if (type === 'range') this.rangeDepth--;
    this.vars.length = mark;
    return { type, pos: keyword.pos, line: keyword.line, pipe, list, elseList };
  }

  private pipeline(context: string, end: 'rightDelim' | 'rightParen'): PipeNode {
    const start = this.peekNonSpace();
    const pipe: PipeNode = { type: 'pipe', pos: start.pos, decl: [], isAssign: false, cmds: [] };
    // Declarations: `$x :=`, `$x =`, `$i, $v :=`.
    const save = this.i;
    const v = this.nextNonSpace();
    if (v.type === 'variable') {
      const after = this.nextNonSpace();
      if (after.type === 'declare' || after.type === 'assign') {
        pipe.decl.push(v.value);
        pipe.isAssign = after.type === 'assign';
        if (pipe.isAssign && !this.vars.includes(v.value)) this.errorf(`undefined variable "${v.value}"`);
        if (!pipe.isAssign) this.vars.push(v.value);
      } else if (after.type === 'comma' && context === 'range') {
        const v2 = this.nextNonSpace();
        const d = this.nextNonSpace();
        if (v2.type !== 'variable' || (d.type !== 'declare' && d.type !== 'assign'))
          this.errorf(`range can only initialize variables`);
        pipe.decl.push(v.value, v2.value);
        pipe.isAssign = d.type === 'assign';
        if (!pipe.isAssign) this.vars.push(v.value, v2.value);
      } else if (after.type === 'comma') {
        this.errorf(`too many declarations in ${context}`);
      } else this.i = save;
    } else this.i = save;
    for (;;) {
      const t = this.nextNonSpace();
      if (t.type === end) {
        if (pipe.cmds.length === 0) this.errorf(`missing value for ${context}`);
        return pipe;
      }
      if (t.type === 'error') this.errorf(t.value, t.line);
      if (
        [
          'bool',
          'char',
          'dot',
          'field',
          'identifier',
          'number',
          'nil',
          'rawString',
          'string',
          'variable',
          'leftParen',
        ].includes(t.type)
      ) {
        this.backup();
        pipe.cmds.push(this.command());
        continue;
      }
      this.unexpected(t, context);
    }
  }

  private command(): CommandNode {
    const cmd: CommandNode = { type: 'command', pos: this.peekNonSpace().pos, args: [] };
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand) cmd.args.push(operand);
      const t = this.next();
      switch (t.type) {
        case 'space':
          continue;
        case 'rightDelim':
        case 'rightParen':
          this.backup();
          break;
        case 'pipe':
          break;
        case 'error':
          this.errorf(t.value, t.line);
        // eslint-disable-next-line no-fallthrough
        default:
          this.unexpected(t, 'operand');
      }
      break;
    }
    if (cmd.args.length === 0) this.errorf('empty command');
    return cmd;
  }

  private operand(): ArgNode | undefined {
    const node = this.term();
    if (!node) return undefined;
    if (this.peek().type !== 'field') return node;
    const pos = this.peek().pos;
    const fields: string[] = [];
    while (this.peek().type === 'field') fields.push(this.next().value.slice(1));
    switch (node.type) {
      case 'field':
        return { type: 'field', pos, idents: [...node.idents, ...fields] };
      case 'variable':
        return { type: 'variable', pos, idents: [...node.idents, ...fields] };
      case 'bool':
      case 'string':
      case 'number':
      case 'nil':
      case 'dot':
        return this.errorf(`unexpected . after term ${goQuote(nodeString(node)).slice(1, -1)}`);
      default:
        return { type: 'chain', pos, node, fields };
    }
  }

  private term(): ArgNode | undefined {
    const t = this.nextNonSpace();
    switch (t.type) {
      case 'identifier':
        if (!this.o.funcs.has(t.value)) this.errorf(`function ${goQuote(t.value)} not defined`);
        return { type: 'identifier', pos: t.pos, name: t.value };
      case 'dot':
        return { type: 'dot', pos: t.pos };
      case 'nil':
        return { type: 'nil', pos: t.pos };
      case 'variable': {
        if (!this.vars.includes(t.value)) this.errorf(`undefined variable ${goQuote(t.value)}`);
        return { type: 'variable', pos: t.pos, idents: [t.value] };
      }
      case 'field':
        return { type: 'field', pos: t.pos, idents: [t.value.slice(1)] };
      case 'bool':
        return { type: 'bool', pos: t.pos, value: t.value === 'true' };
      case 'char':
      case 'number': {
        const value = numberValue(t.value, t.type === 'char');
        if (value === undefined) this.errorf(`illegal number syntax: ${goQuote(t.value)}`);
        return { type: 'number', pos: t.pos, text: t.value, value };
      }
      case 'leftParen':
        return this.pipeline('parenthesized pipeline', 'rightParen');
      case 'string':
      case 'rawString': {
        let text: string;
        try {
          text = t.type === 'rawString' ? t.value.slice(1, -1).replace(/\r/g, '') : unquote(t.value);
        } catch {
          return this.errorf(`invalid syntax`);
        }
        return { type: 'string', pos: t.pos, quoted: t.value, text };
      }
    }
    this.backup();
    return undefined;
  }
}

/** Parses `text` into a tree; `funcs` are the names of the functions it may call. */
export function parseTemplate(o: { name: string; text: string; funcs: ReadonlySet<string> }): Tree {
  const root = new Parser(lex(o.text), { name: o.name, funcs: o.funcs }).parse();
  return { name: o.name, text: o.text, root };
}
