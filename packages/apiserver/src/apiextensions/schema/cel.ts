/**
 * CEL validation rules (`x-…-validations`) as Kubernetes runs them for custom resources.
 * `celErrors` compiles every rule of a CRD schema (type-checked against the schema's declared
 * types, see cel-types.ts) and reports what Kubernetes rejects; `evaluateRules` runs them on an
 * object, with `self` (and `oldSelf` on update), transition rules only where an old value
 * correlates, `optionalOldSelf`, `messageExpression`, `fieldPath`, `reason`, and ratcheting.
 * Compiled rules are cached per root schema and node (cel-compile.ts). Cost estimates and runtime
 * cost limits are not enforced.
 */
import { Optional } from '@marcbachmann/cel-js';
import { fieldErrors, type FieldError } from '@svc/api';
import { isJsonObject } from '@svc/machinery';
import { compilation, type Compilation, type CompiledRule } from './cel-compile.js';
import { toCelValue } from './cel-values.js';
import { Correlation } from './correlation.js';
import { child, index, key, shown } from './paths.js';
import {
  additionalPropertiesOf,
  ext,
  extKey,
  isEmbeddedResource,
  itemsOf,
  rulesOf,
  type JSONSchemaProps,
  type ValidationRule,
} from './types.js';

// --- CRD validation -------------------------------------------------------------------------

interface SchemaWalk {
  path: string;
  resourceRoot: boolean;
  /** The list above whose items old values cannot be correlated with, if any. */
  uncorrelatable?: string;
  /** Nodes whose rules are not compiled (Kubernetes skips subtrees with schema errors). */
  skip?: (path: string) => boolean;
}

function compileErrors(c: Compilation, s: JSONSchemaProps, w: SchemaWalk): FieldError[] {
  const errs: FieldError[] = [];
  const rules = rulesOf(s);
  if (rules.length > 0 && !w.skip?.(w.path)) {
    const vpath = child(w.path, extKey('validations'));
    const node = c.node(s, w.resourceRoot);
    if (node.declError) errs.push(fieldErrors.invalid(vpath, '', `internal error: ${node.declError}`));
    node.rules.forEach((r, i) => {
      const rp = index(vpath, i);
      if (r.error) errs.push(fieldErrors.invalid(child(rp, 'rule'), r.rule, r.error));
      if (r.messageError) errs.push(fieldErrors.invalid(child(rp, 'messageExpression'), r.rule, r.messageError));
      if (r.usesOldSelf && w.uncorrelatable !== undefined) {
        const detail = `oldSelf cannot be used on the uncorrelatable portion of the schema within ${w.uncorrelatable}`;
        errs.push(fieldErrors.invalid(child(rp, 'rule'), r.rule.rule, detail));
      } else if (
        !r.usesOldSelf &&
        !r.error &&
        r.rule.optionalOldSelf !== undefined &&
        r.rule.optionalOldSelf !== null
      ) {
        errs.push(
          fieldErrors.invalid(
            child(rp, 'optionalOldSelf'),
            r.rule.optionalOldSelf,
            'may not be set if oldSelf is not used in rule',
          ),
        );
      }
    });
  }
  const ap = additionalPropertiesOf(s);
  if (ap)
    errs.push(...compileErrors(c, ap, { ...w, path: child(w.path, 'additionalProperties'), resourceRoot: false }));
  for (const [k, p] of Object.entries(s.properties ?? {})) {
    const sub = { ...w, path: key(child(w.path, 'properties'), k), resourceRoot: isEmbeddedResource(p) };
    errs.push(...compileErrors(c, p, sub));
  }
  const items = itemsOf(s);
  if (items) {
    const uncorrelatable = w.uncorrelatable ?? (ext(s, 'list-type') === 'map' ? undefined : w.path);
    errs.push(
      ...compileErrors(c, items, {
        path: child(w.path, 'items'),
        resourceRoot: isEmbeddedResource(items),
        uncorrelatable,
      }),
    );
  }
  return errs;
}

/**
 * The errors Kubernetes reports for the validation rules of a CRD's `openAPIV3Schema` (at
 * `path`): rules and messageExpressions that do not compile or have the wrong result type,
 * `oldSelf` in rules below a list that is not `list-type: map`, and `optionalOldSelf` on rules
 * without `oldSelf`. As Kubernetes, meant for schemas without structural errors.
 */
export function celErrors(schema: JSONSchemaProps, path: string, skip?: (path: string) => boolean): FieldError[] {
  return compileErrors(compilation(schema), schema, { path, resourceRoot: true, skip });
}

// --- Evaluation -----------------------------------------------------------------------------

export interface RuleInput {
  value: unknown;
  /** The stored object on update; transition rules (using `oldSelf`) run only where it correlates. */
  old?: unknown;
  /**
   * CRDValidationRatcheting (default on): a failing rule on an unchanged value is not an error,
   * and rules with `optionalOldSelf` also run on create.
   */
  ratcheting?: boolean;
  /** `schema` is a resource root (default): `self` has apiVersion, kind and metadata. */
  resourceRoot?: boolean;
}

interface Ratchet {
  current?: Correlation;
  parent?: Correlation;
}

interface EvalWalk {
  path: string;
  resourceRoot: boolean;
  ratchet: Ratchet;
  /** The ratcheting feature gate (optionalOldSelf rules run without an old value). */
  gate: boolean;
  errs: FieldError[];
}

const hasRulesMemo = new WeakMap<JSONSchemaProps, boolean>();

/** Whether `s` or any node below it has validation rules. */
export function hasRules(s: JSONSchemaProps | undefined): boolean {
  if (!s) return false;
  const hit = hasRulesMemo.get(s);
  if (hit !== undefined) return hit;
  hasRulesMemo.set(s, false);
  const r =
    rulesOf(s).length > 0 ||
    hasRules(itemsOf(s)) ||
    hasRules(additionalPropertiesOf(s)) ||
    Object.values(s.properties ?? {}).some(hasRules);
  hasRulesMemo.set(s, r);
  return r;
}

function ratchetKey(r: Ratchet, field: string): Ratchet {
  if (!r.current) return r;
  if (!r.parent && (field === 'apiVersion' || field === 'kind')) return {};
  return { current: r.current.key(field), parent: r.current };
}

function ratchetIndex(r: Ratchet, i: number): Ratchet {
  return r.current ? { current: r.current.index(i), parent: r.current } : r;
}

function shouldRatchet(r: Ratchet): boolean {
  return (r.current ?? r.parent)?.unchanged() ?? false;
}

function reasonError(o: { path: string; type: string; detail: string; reason?: string }): FieldError {
  switch (o.reason) {
    case 'FieldValueForbidden':
      return fieldErrors.forbidden(o.path, o.detail);
    case 'FieldValueRequired':
      return fieldErrors.required(o.path, o.detail);
    case 'FieldValueDuplicate':
      return fieldErrors.duplicate(o.path, o.type);
    default:
      return fieldErrors.invalid(o.path, o.type, o.detail);
  }
}

function ruleText(r: ValidationRule): string {
  return (r.message ?? '').trim() || r.rule.trim();
}

function messageOf(r: CompiledRule, ctx: Record<string, unknown>): string {
  const fallback = (r.rule.message ?? '').trim() || `failed rule: ${ruleText(r.rule)}`;
  if (!r.message) return fallback;
  try {
    const m = r.message(ctx);
    if (typeof m !== 'string') return fallback;
    const t = m.trim();
    return t === '' || t.length > 5120 || t.includes('\n') ? fallback : t;
  } catch {
    return fallback;
  }
}

function evalError(e: unknown, r: ValidationRule): string {
  const msg = ((e as Error).message ?? String(e)).split('\n')[0] ?? '';
  if (/^no such overload|^found no matching overload/i.test(msg)) {
    return `'${msg}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText(r)}`;
  }
  return `${msg.replace(/^No such key/, 'no such key')} evaluating rule: ${ruleText(r)}`;
}

interface NodeEval {
  s: JSONSchemaProps;
  value: unknown;
  old: unknown;
}

function evaluateNode(c: Compilation, n: NodeEval, w: EvalWalk): void {
  const { s, value, old } = n;
  if (rulesOf(s).length === 0) return;
  const type = s.type ?? '';
  const node = c.node(s, w.resourceRoot);
  if (node.declError) {
    w.errs.push(fieldErrors.invalid(shown(w.path), type, `rule compiler initialization error: ${node.declError}`));
    return;
  }
  const self = toCelValue(value, s, w.resourceRoot);
  const hasOld = old !== undefined && old !== null;
  const oldSelf = hasOld ? toCelValue(old, s, w.resourceRoot) : undefined;
  for (const r of node.rules) {
    if (r.error) {
      w.errs.push(fieldErrors.invalid(shown(w.path), type, `rule compile error: ${r.error}`));
      continue;
    }
    if (!r.program) continue;
    const optional = r.rule.optionalOldSelf === true;
    if (r.usesOldSelf && !hasOld && !(optional && w.gate)) continue;
    const ctx = { self, oldSelf: optional ? (hasOld ? Optional.of(oldSelf) : Optional.none()) : oldSelf };
    let result: unknown;
    try {
      result = r.program(ctx);
    } catch (e) {
      w.errs.push(fieldErrors.invalid(shown(w.path), type, evalError(e, r.rule)));
      continue;
    }
    if (result === true) continue;
    const path = shown(r.fieldPath ? child(w.path, r.fieldPath) : w.path);
    const err = reasonError({ path, type, detail: messageOf(r, ctx), reason: r.rule.reason });
    if (r.usesOldSelf || !shouldRatchet(w.ratchet)) w.errs.push(err);
  }
}

function walkValue(c: Compilation, n: NodeEval, w: EvalWalk): void {
  if (n.value === null || n.value === undefined || !hasRules(n.s)) return;
  evaluateNode(c, n, w);
  const { s, value, old } = n;
  if (Array.isArray(value)) {
    const items = itemsOf(s);
    if (!items) return;
    const corr = new Correlation(value, old, s);
    value.forEach((v: unknown, i) => {
      const sub = {
        ...w,
        path: index(w.path, i),
        resourceRoot: isEmbeddedResource(items),
        ratchet: ratchetIndex(w.ratchet, i),
      };
      walkValue(c, { s: items, value: v, old: corr.oldItemFor(v) }, sub);
    });
    return;
  }
  if (!isJsonObject(value)) return;
  const oldObj = isJsonObject(old) ? old : undefined;
  const ap = additionalPropertiesOf(s);
  for (const [k, v] of Object.entries(value)) {
    const prop = s.properties?.[k];
    const sub = prop ?? ap;
    if (!sub) continue;
    const path = prop ? child(w.path, k) : key(w.path, k);
    const subWalk = { ...w, path, resourceRoot: isEmbeddedResource(sub), ratchet: ratchetKey(w.ratchet, k) };
    walkValue(c, { s: sub, value: v, old: oldObj?.[k] }, subWalk);
  }
}

/**
 * Runs the validation rules of `schema` on `input.value` (at field path `path`, '' for a whole
 * object). Errors carry the rule's message (default `failed rule: <rule>`), or its
 * messageExpression, at the node's path or the rule's fieldPath, with the rule's reason.
 */
export function evaluateRules(schema: JSONSchemaProps, input: RuleInput, path = ''): FieldError[] {
  const ratcheting = input.ratcheting ?? true;
  return runRules(schema, input, { path, correlate: ratcheting });
}

/**
 * As `evaluateRules`; `correlate: false` runs with the ratcheting gate on but without correlating
 * to the old value (Kubernetes' check of defaults).
 */
export function runRules(
  schema: JSONSchemaProps,
  input: RuleInput,
  o: { path: string; correlate: boolean },
): FieldError[] {
  const c = compilation(schema);
  const hasOld = input.old !== undefined && input.old !== null;
  const ratchet: Ratchet = o.correlate && hasOld ? { current: new Correlation(input.value, input.old, schema) } : {};
  const gate = input.ratcheting ?? true;
  const w: EvalWalk = { path: o.path, resourceRoot: input.resourceRoot ?? true, ratchet, gate, errs: [] };
  walkValue(c, { s: schema, value: input.value, old: input.old }, w);
  return w.errs;
}
