/**
 * Kubernetes field selectors (k8s.io/apimachinery `fields.ParseSelector`): `a=b`, `a==b`,
 * `a!=b` joined by commas. In values, `\,`, `\=` and `\\` escape; unescaped `,` splits terms
 * and an unescaped `=` in a value is an error. Field names are not trimmed or checked here: which
 * fields a resource supports is decided by the caller. Errors are 400 BadRequest `StatusError`s.
 */
import { badRequest } from '@svc/api';

export type FieldOperator = '=' | '==' | '!=';

export interface FieldRequirement {
  readonly field: string;
  readonly operator: FieldOperator;
  /** Unescaped. */
  readonly value: string;
}

/** Reads one field of the object being matched; absent reads as the empty string. */
export type FieldGetter = (field: string) => string | undefined;

/** An immutable conjunction of field terms; the empty selector matches everything. */
export class FieldSelector {
  private constructor(private readonly reqs: readonly FieldRequirement[]) {}

  static everything(): FieldSelector {
    return new FieldSelector([]);
  }

  static fromRequirements(reqs: readonly FieldRequirement[]): FieldSelector {
    return new FieldSelector([...reqs]);
  }

  requirements(): readonly FieldRequirement[] {
    return this.reqs;
  }

  isEmpty(): boolean {
    return this.reqs.length === 0;
  }

  matches(getField: FieldGetter): boolean {
    return this.reqs.every((r) => {
      const equal = (getField(r.field) ?? '') === r.value;
      return r.operator === '!=' ? !equal : equal;
    });
  }

  /** The value this selector requires `field` to equal (`=`/`==`), if any (Kubernetes' RequiresExactMatch). */
  requiresExactMatch(field: string): string | undefined {
    return this.reqs.find((r) => r.field === field && r.operator !== '!=')?.value;
  }

  /** Canonical text form with values escaped (`a=b,c!=d`); `==` prints as `=`. */
  toString(): string {
    return this.reqs.map((r) => `${r.field}${r.operator === '!=' ? '!=' : '='}${escapeFieldValue(r.value)}`).join(',');
  }
}

/** Escapes `\`, `,` and `=` so a value survives `parseFieldSelector`. */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/** Reverses `escapeFieldValue`; throws BadRequest on an unknown escape or an unescaped `,`/`=`. */
export function unescapeFieldValue(value: string): string {
  let out = '';
  let escaped = false;
  for (const c of value) {
    if (escaped) {
      if (c !== '\\' && c !== ',' && c !== '=')
        throw badRequest(`invalid field selector: invalid escape sequence: \\${c}`);
      out += c;
      escaped = false;
    } else if (c === '\\') {
      escaped = true;
    } else if (c === ',' || c === '=') {
      throw badRequest(`invalid field selector: unescaped character in value: ${c}`);
    } else {
      out += c;
    }
  }
  if (escaped) throw badRequest('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** Splits on commas not escaped by a backslash; the backslashes stay in the terms. */
function splitTerms(text: string): string[] {
  if (text === '') return [];
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (escaped) escaped = false;
    else if (c === '\\') escaped = true;
    else if (c === ',') {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms;
}

/** Splits at the first operator; `!=` and `==` win over `=` at the same position. */
function splitTerm(term: string): [string, FieldOperator, string] | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of ['!=', '==', '='] as const) {
      if (term.startsWith(op, i)) return [term.slice(0, i), op, term.slice(i + op.length)];
    }
  }
  return undefined;
}

/** Parses the text form; terms are kept in sorted order as Kubernetes does. */
export function parseFieldSelector(text: string): FieldSelector {
  const terms = splitTerms(text).sort();
  const reqs: FieldRequirement[] = [];
  for (const term of terms) {
    if (term === '') continue;
    const parts = splitTerm(term);
    if (!parts) throw badRequest(`invalid selector: '${text}'; can't understand '${term}'`);
    const [field, operator, raw] = parts;
    reqs.push({ field, operator, value: unescapeFieldValue(raw) });
  }
  return FieldSelector.fromRequirements(reqs);
}

/**
 * The object name a selector pins with `metadata.name=<name>` (single-object list/watch), or
 * undefined when it does not.
 */
export function exactMetadataName(selector: FieldSelector): string | undefined {
  return selector.requiresExactMatch('metadata.name');
}
