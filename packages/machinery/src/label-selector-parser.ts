/**
 * The text form of label selectors (`a=b,c in (x,y),!d`), parsed as Kubernetes' `labels.Parse`
 * does, with its exact error messages, thrown as 400 BadRequest `StatusError`s.
 */
import { badRequest, fieldErrorMessage, fieldErrors } from '@svc/api';
import { aggregate, LabelSelector, requirementErrors, type Requirement } from './label-selector.js';
import { isQualifiedName } from './validation.js';

const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

type TokenKind = 'ident' | 'in' | 'notin' | '!' | '!=' | '(' | ')' | ',' | '=' | '==' | '>' | '<' | 'end';

interface Token {
  kind: TokenKind;
  text: string;
}

const SPECIAL = new Set(['=', '!', '(', ')', ',', '>', '<']);
const WHITESPACE = new Set([' ', '\t', '\r', '\n']);

function lex(input: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  for (;;) {
    while (i < input.length && WHITESPACE.has(input[i] ?? '')) i++;
    const ch = input[i];
    if (ch === undefined) {
      out.push({ kind: 'end', text: '' });
      return out;
    }
    if (SPECIAL.has(ch)) {
      const two = input.slice(i, i + 2);
      const text = two === '!=' || two === '==' ? two : ch;
      out.push({ kind: text as TokenKind, text });
      i += text.length;
      continue;
    }
    const start = i;
    while (i < input.length && !SPECIAL.has(input[i] ?? '') && !WHITESPACE.has(input[i] ?? '')) i++;
    const text = input.slice(start, i);
    out.push({ kind: text === 'in' || text === 'notin' ? text : 'ident', text });
  }
}

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

  /** `values` context: the keywords `in` and `notin` read as identifiers. */
  private peek(values = true): Token {
    const t = this.tokens[Math.min(this.pos, this.tokens.length - 1)] ?? { kind: 'end', text: '' };
    return values && (t.kind === 'in' || t.kind === 'notin') ? { kind: 'ident', text: t.text } : t;
  }

  private next(values = true): Token {
    const t = this.peek(values);
    this.pos++;
    return t;
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind === 'end') return reqs;
      if (t.kind !== 'ident' && t.kind !== '!') {
        throw new Error(`found '${t.text}', expected: !, identifier, or 'end of string'`);
      }
      let r: Requirement;
      try {
        r = this.requirement();
        const errs = requirementErrors(r, 'key');
        if (errs.length > 0) throw new Error(aggregate(errs));
      } catch (e) {
        throw new Error(`unable to parse requirement: ${(e as Error).message}`, { cause: e });
      }
      reqs.push(r);
      const sep = this.next();
      if (sep.kind === 'end') return reqs;
      if (sep.kind !== ',') throw new Error(`found '${sep.text}', expected: ',' or 'end of string'`);
      const after = this.peek();
      if (after.kind !== 'ident' && after.kind !== '!') {
        throw new Error(`found '${after.text}', expected: identifier after ','`);
      }
    }
  }

  private requirement(): Requirement {
    let t = this.next();
    const negated = t.kind === '!';
    if (negated) t = this.next();
    if (t.kind !== 'ident') throw new Error(`found '${t.text}', expected: identifier`);
    const key = t.text;
    const keyMsgs = isQualifiedName(key);
    if (keyMsgs.length > 0) throw new Error(fieldErrorMessage(fieldErrors.invalid('<nil>', key, keyMsgs.join('; '))));
    if (negated) return { key, operator: '!', values: [] };
    const la = this.peek().kind;
    if (la === 'end' || la === ',') return { key, operator: 'exists', values: [] };
    const op = this.next(false);
    switch (op.kind) {
      case 'in':
      case 'notin':
        return { key, operator: op.kind, values: this.valueSet() };
      case '=':
      case '==':
      case '!=':
        return { key, operator: op.kind, values: [this.exactValue()] };
      case '>':
      case '<':
        return { key, operator: op.kind === '>' ? 'gt' : 'lt', values: [this.exactValue()] };
      default:
        throw new Error(`found '${op.text}', expected: ${BINARY_OPERATORS}`);
    }
  }

  private exactValue(): string {
    const la = this.peek();
    if (la.kind === 'end' || la.kind === ',') return '';
    const t = this.next();
    if (t.kind !== 'ident') throw new Error(`found '${t.text}', expected: identifier`);
    return t.text;
  }

  /** `( v1, v2 )`; empty members (`()`, `(a,)`) stand for the empty value. Sorted, unique. */
  private valueSet(): string[] {
    const open = this.next();
    if (open.kind !== '(') throw new Error(`found '${open.text}' expected: '('`);
    const la = this.peek();
    if (la.kind === ')') {
      this.next();
      return [''];
    }
    if (la.kind !== 'ident' && la.kind !== ',') throw new Error(`found '${la.text}', expected: ',', ')' or identifier`);
    const set = new Set<string>();
    let closing = false;
    while (!closing) {
      const t = this.next();
      if (t.kind === 'ident') {
        set.add(t.text);
        const after = this.peek();
        if (after.kind === ')') closing = true;
        else if (after.kind !== ',') throw new Error(`found '${after.text}', expected: ',' or ')'`);
      } else if (t.kind === ',') {
        if (set.size === 0) set.add('');
        const after = this.peek().kind;
        if (after === ')') {
          set.add('');
          closing = true;
        } else if (after === ',') {
          this.next();
          set.add('');
        }
      } else {
        throw new Error(`found '${t.text}', expected: ',', or identifier`);
      }
    }
    this.next();
    return [...set].sort();
  }
}

/** Parses the text form; the empty string (or only whitespace) selects everything. */
export function parseLabelSelector(text: string): LabelSelector {
  let reqs: Requirement[];
  try {
    reqs = new Parser(lex(text)).parse();
  } catch (e) {
    throw badRequest((e as Error).message);
  }
  return LabelSelector.fromRequirements(reqs);
}
