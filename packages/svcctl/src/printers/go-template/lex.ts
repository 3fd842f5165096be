/**
 * The lexer of Go's text/template (the subset kubectl's `-o go-template` users write):
 * text, `{{ }}` actions with `{{-`/`-}}` trimming, comments, fields, variables, strings,
 * numbers, keywords and punctuation. Positions are offsets in the template, as Go's.
 */

export type TokenType =
  | 'text'
  | 'leftDelim'
  | 'rightDelim'
  | 'space'
  | 'field'
  | 'variable'
  | 'identifier'
  | 'keyword'
  | 'dot'
  | 'string'
  | 'rawString'
  | 'char'
  | 'number'
  | 'bool'
  | 'nil'
  | 'pipe'
  | 'leftParen'
  | 'rightParen'
  | 'declare'
  | 'assign'
  | 'comma'
  | 'eof'
  | 'error';

export interface Token {
  type: TokenType;
  value: string;
  pos: number;
  line: number;
}

const KEYWORDS = new Set(['block', 'break', 'continue', 'define', 'else', 'end', 'if', 'range', 'template', 'with']);
const LEFT = '{{';
const RIGHT = '}}';

const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isAlnum = (c: string): boolean => c === '_' || /[\p{L}\p{Nd}]/u.test(c);

/** Go's item.String(), used in "unexpected ... in ..." parse errors. */
export function tokenText(t: Token): string {
  if (t.type === 'eof') return 'EOF';
  if (t.type === 'error') return t.value;
  if (t.type === 'keyword') return `<${t.value}>`;
  if (t.value.length > 10) return `${goQuote(t.value.slice(0, 10))}...`;
  return goQuote(t.value);
}

/** Go's %q of a string. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Splits a template into tokens; a lexical error ends the list with an `error` token. */
export function lex(input: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  let start = 0;
  let line = 1;
  let startLine = 1;
  let parenDepth: number;
  const emit = (type: TokenType, value = input.slice(start, pos)): void => {
    tokens.push({ type, value, pos: start, line: startLine });
    startLine = line + 0;
    start = pos;
  };
  const advance = (n: number): void => {
    for (let i = 0; i < n; i++) if (input[pos + i] === '\n') line++;
    pos += n;
  };
  const ignore = (): void => {
    start = pos;
    startLine = line;
  };
  const fail = (msg: string): Token[] => {
    tokens.push({ type: 'error', value: msg, pos: start, line: startLine });
    return tokens;
  };
  const rightTrimAt = (p: number): boolean =>
    p > 0 && isSpace(input[p] ?? '') && input[p + 1] === '-' && input.startsWith(RIGHT, p + 2);
  const atRightDelim = (): { trim: boolean } | undefined => {
    if (rightTrimAt(pos)) return { trim: true };
    if (input.startsWith(RIGHT, pos)) return { trim: false };
    return undefined;
  };

  for (;;) {
    // Text up to the next action.
    const next = input.indexOf(LEFT, pos);
    if (next < 0) {
      advance(input.length - pos);
      if (pos > start) emit('text');
      tokens.push({ type: 'eof', value: '', pos, line });
      return tokens;
    }
    const trimLeft = input[next + 2] === '-' && isSpace(input[next + 3] ?? '');
    advance(next - pos);
    let textEnd = pos;
    if (trimLeft) while (textEnd > start && isSpace(input[textEnd - 1] ?? '')) textEnd--;
    if (textEnd > start) tokens.push({ type: 'text', value: input.slice(start, textEnd), pos: start, line: startLine });
    ignore();
    advance(LEFT.length);
    if (trimLeft) advance(2);
    // A comment: the whole action.
    if (input.startsWith('/*', pos)) {
      const end = input.indexOf('*/', pos + 2);
      if (end < 0) return fail('unclosed comment');
      advance(end + 2 - pos);
      const d = atRightDelim();
      if (!d) return fail('comment ends before closing delimiter');
      advance(d.trim ? 3 + RIGHT.length - 1 : RIGHT.length);
      if (d.trim) while (isSpace(input[pos] ?? '')) advance(1);
      ignore();
      continue;
    }
    emit('leftDelim', LEFT);
    parenDepth = 0;
    // Inside the action.
    for (;;) {
      const d = atRightDelim();
      if (d) {
        if (d.trim) {
          advance(1);
          ignore();
          advance(1);
        }
        advance(RIGHT.length);
        emit('rightDelim', RIGHT);
        if (d.trim) {
          while (isSpace(input[pos] ?? '')) advance(1);
          ignore();
        }
        break;
      }
      if (pos >= input.length) return fail('unclosed action');
      const c = input[pos] ?? '';
      if (isSpace(c)) {
        while (isSpace(input[pos] ?? '') && !rightTrimAt(pos)) advance(1);
        emit('space');
        continue;
      }
      if (c === '=') {
        advance(1);
        emit('assign');
      } else if (c === ':') {
        if (input[pos + 1] !== '=') return fail('expected :=');
        advance(2);
        emit('declare');
      } else if (c === '|') {
        advance(1);
        emit('pipe');
      } else if (c === ',') {
        advance(1);
        emit('comma');
      } else if (c === '(') {
        advance(1);
        parenDepth++;
        emit('leftParen');
      } else if (c === ')') {
        advance(1);
        parenDepth--;
        if (parenDepth < 0) return fail(`unexpected right paren`);
        emit('rightParen');
      } else if (c === '"') {
        advance(1);
        for (;;) {
          const ch = input[pos];
          if (ch === undefined || ch === '\n') return fail('unterminated quoted string');
          advance(1);
          if (ch === '\\') {
            if (input[pos] === undefined || input[pos] === '\n') return fail('unterminated quoted string');
            advance(1);
          } else if (ch === '"') break;
        }
        emit('string');
      } else if (c === '`') {
        const end = input.indexOf('`', pos + 1);
        if (end < 0) return fail('unterminated raw quoted string');
        advance(end + 1 - pos);
        emit('rawString');
      } else if (c === "'") {
        advance(1);
        for (;;) {
          const ch = input[pos];
          if (ch === undefined || ch === '\n') return fail('unterminated character constant');
          advance(1);
          if (ch === '\\') advance(1);
          else if (ch === "'") break;
        }
        emit('char');
      } else if (c === '$') {
        advance(1);
        while (isAlnum(input[pos] ?? '')) advance(1);
        emit('variable');
      } else if (c === '.') {
        const n = input[pos + 1] ?? '';
        if (/[0-9]/.test(n)) {
          if (!lexNumber()) return fail(`bad number syntax: ${JSON.stringify(input.slice(start, pos))}`);
          emit('number');
        } else {
          advance(1);
          if (isAlnum(n)) {
            while (isAlnum(input[pos] ?? '')) advance(1);
            emit('field');
          } else emit('dot');
        }
      } else if (c === '+' || c === '-' || /[0-9]/.test(c)) {
        if (!lexNumber()) return fail(`bad number syntax: ${JSON.stringify(input.slice(start, pos))}`);
        emit('number');
      } else if (isAlnum(c)) {
        while (isAlnum(input[pos] ?? '')) advance(1);
        const word = input.slice(start, pos);
        if (KEYWORDS.has(word)) emit('keyword');
        else if (word === 'true' || word === 'false') emit('bool');
        else if (word === 'nil') emit('nil');
        else emit('identifier');
      } else {
        const cp = c.codePointAt(0) ?? 0;
        return fail(`unrecognized character in action: U+${cp.toString(16).toUpperCase().padStart(4, '0')} '${c}'`);
      }
    }
  }

  function lexNumber(): boolean {
    const m =
      /^[+-]?(0[xX][0-9a-fA-F_]+(\.[0-9a-fA-F_]*)?([pP][+-]?\d+)?|0[bB][01_]+|0[oO][0-7_]+|(\d[\d_]*)?\.?\d*([eE][+-]?\d+)?i?)/.exec(
        input.slice(pos),
      );
    const len = m?.[0].length ?? 0;
    if (len === 0) return false;
    advance(len);
    if (isAlnum(input[pos] ?? '')) {
      advance(1);
      return false;
    }
    return true;
  }
}
