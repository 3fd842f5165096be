/**
 * Kubernetes label selectors (k8s.io/apimachinery `labels`): requirements, matching and the
 * canonical text form. Invalid requirements are 400 BadRequest `StatusError`s carrying
 * Kubernetes' exact messages. Parsing lives in `label-selector-parser.ts`, the object form in
 * `label-selector-object.ts`.
 */
import { badRequest, fieldErrorMessage, fieldErrors, type FieldError } from '@svc/api';
import { isQualifiedName, isValidLabelValue } from './validation.js';

/** Operators of the text form; `!` is "does not exist", `gt`/`lt` compare integers. */
export type SelectorOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

export interface Requirement {
  readonly key: string;
  readonly operator: SelectorOperator;
  /** Sorted and unique when parsed from text; as given when built from an object. */
  readonly values: readonly string[];
}

export type Labels = Readonly<Record<string, string>>;

/**
 * An immutable conjunction of requirements, sorted by key. The empty selector matches
 * everything; `LabelSelector.nothing()` matches nothing.
 */
export class LabelSelector {
  private constructor(
    private readonly reqs: readonly Requirement[],
    private readonly matchesNothing = false,
  ) {}

  static everything(): LabelSelector {
    return new LabelSelector([]);
  }

  static nothing(): LabelSelector {
    return new LabelSelector([], true);
  }

  /** Requirements are validated as Kubernetes' NewRequirement does; throws BadRequest. */
  static fromRequirements(reqs: readonly Requirement[]): LabelSelector {
    for (const r of reqs) checkRequirement(r, 'key');
    return new LabelSelector(sortByKey(reqs));
  }

  requirements(): readonly Requirement[] {
    return this.reqs;
  }

  isEmpty(): boolean {
    return !this.matchesNothing && this.reqs.length === 0;
  }

  matches(labels: Labels | undefined): boolean {
    if (this.matchesNothing) return false;
    const ls = labels ?? {};
    return this.reqs.every((r) => requirementMatches(r, ls));
  }

  /** Canonical text form (`a=b,c in (x,y),!d`), parseable back to an equal selector. */
  toString(): string {
    return this.reqs.map(requirementToString).join(',');
  }
}

function sortByKey(reqs: readonly Requirement[]): Requirement[] {
  return [...reqs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function hasLabel(ls: Labels, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(ls, key);
}

function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  return v >= -(1n << 63n) && v < 1n << 63n ? v : undefined;
}

function requirementMatches(r: Requirement, ls: Labels): boolean {
  const has = hasLabel(ls, r.key);
  const value = has ? ls[r.key] : undefined;
  switch (r.operator) {
    case '=':
    case '==':
    case 'in':
      return has && r.values.includes(value ?? '');
    case '!=':
    case 'notin':
      return !has || !r.values.includes(value ?? '');
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has || r.values.length !== 1) return false;
      const lv = parseInt64(value ?? '');
      const rv = parseInt64(r.values[0] ?? '');
      if (lv === undefined || rv === undefined) return false;
      return r.operator === 'gt' ? lv > rv : lv < rv;
    }
  }
}

function requirementToString(r: Requirement): string {
  const vals = r.values.length === 1 ? (r.values[0] ?? '') : [...r.values].sort().join(',');
  switch (r.operator) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'in':
      return `${r.key} in (${vals})`;
    case 'notin':
      return `${r.key} notin (${vals})`;
    case 'gt':
      return `${r.key}>${vals}`;
    case 'lt':
      return `${r.key}<${vals}`;
    default:
      return `${r.key}${r.operator}${vals}`;
  }
}

/** Go's aggregate error text: one message alone, several as `[a, b]`, duplicates dropped. */
export function aggregate(msgs: string[]): string {
  const unique = [...new Set(msgs)];
  return unique.length === 1 ? (unique[0] ?? '') : `[${unique.join(', ')}]`;
}

/**
 * Kubernetes' NewRequirement checks, as error text. `keyPath` is where a bad key is reported:
 * the text parser reports it at a nil path (`<nil>`), as Kubernetes does.
 */
export function requirementErrors(r: Requirement, keyPath: string): string[] {
  const errs: FieldError[] = [];
  const keyMsgs = isQualifiedName(r.key);
  if (keyMsgs.length > 0) errs.push(fieldErrors.invalid(keyPath, r.key, keyMsgs.join('; ')));
  const n = r.values.length;
  switch (r.operator) {
    case 'in':
    case 'notin':
      if (n === 0)
        errs.push(fieldErrors.invalid('values', r.values, "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=':
    case '==':
    case '!=':
      if (n !== 1)
        errs.push(fieldErrors.invalid('values', r.values, 'exact-match compatibility requires one single value'));
      break;
    case 'exists':
    case '!':
      if (n !== 0)
        errs.push(fieldErrors.invalid('values', r.values, 'values set must be empty for exists and does not exist'));
      break;
    case 'gt':
    case 'lt':
      if (n !== 1)
        errs.push(fieldErrors.invalid('values', r.values, "for 'Gt', 'Lt' operators, exactly one value is required"));
      r.values.forEach((v, i) => {
        if (parseInt64(v) === undefined) {
          errs.push(fieldErrors.invalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
        }
      });
      break;
    default:
      errs.push(
        fieldErrors.notSupported('operator', r.operator, ['!', '=', '==', 'in', '!=', 'notin', 'exists', 'gt', 'lt']),
      );
  }
  r.values.forEach((v, i) => {
    const msgs = isValidLabelValue(v);
    if (msgs.length > 0) errs.push(fieldErrors.invalid(`values[${i}][${r.key}]`, v, msgs.join('; ')));
  });
  return errs.map(fieldErrorMessage);
}

function checkRequirement(r: Requirement, keyPath: string): void {
  const errs = requirementErrors(r, keyPath);
  if (errs.length > 0) throw badRequest(aggregate(errs));
}
