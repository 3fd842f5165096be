/**
 * Compilation of validation rules, cached per root schema and node: each rule and
 * messageExpression is type-checked against the node's declared CEL type (cel-types.ts) and, when
 * it checks, parsed into a program evaluated over plain values with `self`/`oldSelf` dynamic.
 * Errors keep cel-go's layout (`ERROR: <input>:1:6: … | rule | …^`) with cel-js's texts
 * (`No such key` reads `undefined field`, `Unknown variable` reads `undeclared reference`).
 */
import { parse as parseCel, type Environment } from '@marcbachmann/cel-js';
import { celBaseEnvironment, rewriteHas } from './cel-library.js';
import { CelTypes } from './cel-types.js';
import { ruleFieldPath } from './rule-field-path.js';
import { isEmbeddedResource, rulesOf, type JSONSchemaProps, type ValidationRule } from './types.js';

export type Program = (ctx: Record<string, unknown>) => unknown;

export interface CompiledRule {
  rule: ValidationRule;
  program?: Program;
  error?: string;
  usesOldSelf: boolean;
  message?: Program;
  messageError?: string;
  fieldPath?: string;
}

export interface CompiledNode {
  rules: CompiledRule[];
  /** Set when the node has no declared type (Kubernetes cannot compile its rules). */
  declError?: string;
}

let base: Environment | undefined;
const dynEnvs = new Map<boolean, Environment>();
const compilations = new WeakMap<JSONSchemaProps, Compilation>();

function baseEnv(): Environment {
  base ??= celBaseEnvironment();
  return base;
}

/** Evaluation runs over plain values with `self` and `oldSelf` dynamically typed. */
function dynEnv(optionalOldSelf: boolean): Environment {
  let env = dynEnvs.get(optionalOldSelf);
  if (!env) {
    env = baseEnv().clone();
    env.registerVariable('self', 'dyn');
    env.registerVariable('oldSelf', optionalOldSelf ? 'optional<dyn>' : 'dyn');
    dynEnvs.set(optionalOldSelf, env);
  }
  return env;
}

export interface CelIssue {
  summary?: string;
  message: string;
  range?: { start: number };
}

/** cel-go's issue layout: `ERROR: <input>:line:col: message`, the line, and a caret. */
export function formatIssue(src: string, e: CelIssue): string {
  const at = Math.max(0, Math.min(e.range?.start ?? 0, src.length));
  const before = src.slice(0, at).split('\n');
  const line = before.length;
  const col = (before[before.length - 1] ?? '').length;
  const text = src.split('\n')[line - 1] ?? '';
  let msg = e.summary ?? e.message.split('\n')[0] ?? '';
  msg = msg
    .replace(/^No such key: (.*)$/, "undefined field '$1'")
    .replace(/^Unknown variable: (.*)$/, "undeclared reference to '$1' (in container '')");
  return `ERROR: <input>:${line}:${col + 1}: ${msg}\n | ${text}\n | ${'.'.repeat(col)}^`;
}

function usesOldSelf(expr: string): boolean {
  let found = false;
  const visit = (n: unknown): void => {
    if (found || !n || typeof n !== 'object') return;
    if (Array.isArray(n)) return n.forEach(visit);
    const node = n as { op?: string; args?: unknown };
    if (node.op === 'id' && node.args === 'oldSelf') found = true;
    else visit(node.args);
  };
  try {
    visit(parseCel(rewriteHas(expr)).ast);
  } catch {
    return /\boldSelf\b/.test(expr);
  }
  return found;
}

/** Type-checks `src` in `env` and returns a program, or a cel-go style error detail. */
function compileExpression(src: string, o: { env: Environment; result: 'bool' | 'string'; optional: boolean }) {
  const expr = rewriteHas(src);
  let checked: { valid: boolean; type?: string; error?: CelIssue };
  try {
    checked = o.env.check(expr) as typeof checked;
  } catch (e) {
    checked = { valid: false, error: e as CelIssue };
  }
  if (!checked.valid) return { error: formatIssue(src, checked.error ?? { message: 'invalid expression' }) };
  if (checked.type !== o.result) return { wrongType: true };
  try {
    return { program: dynEnv(o.optional).parse(expr) as Program };
  } catch (e) {
    return { error: formatIssue(src, e as CelIssue) };
  }
}

/** Compiled rules of the nodes of one root schema. */
export class Compilation {
  private readonly nodes = new Map<string, Map<JSONSchemaProps, CompiledNode>>();
  private types: CelTypes | undefined;

  constructor(private readonly root: JSONSchemaProps) {}

  node(s: JSONSchemaProps, resourceRoot: boolean): CompiledNode {
    const k = String(resourceRoot || isEmbeddedResource(s));
    let m = this.nodes.get(k);
    if (!m) this.nodes.set(k, (m = new Map()));
    let c = m.get(s);
    if (!c) m.set(s, (c = this.compile(s, resourceRoot)));
    return c;
  }

  private compile(s: JSONSchemaProps, resourceRoot: boolean): CompiledNode {
    this.types ??= new CelTypes(this.root, baseEnv());
    const type = this.types.typeOf(s, resourceRoot);
    if (!type) return { rules: [], declError: 'failed to convert to declType for CEL validation rules' };
    return { rules: rulesOf(s).map((r) => this.compileRule(s, { rule: r, type })) };
  }

  private compileRule(s: JSONSchemaProps, o: { rule: ValidationRule; type: string }): CompiledRule {
    const { rule } = o;
    const out: CompiledRule = { rule, usesOldSelf: false };
    if ((rule.rule ?? '').trim() === '') return out;
    const optional = rule.optionalOldSelf === true;
    const env = (this.types as CelTypes).envFor(o.type, optional);
    const r = compileExpression(rule.rule, { env, result: 'bool', optional });
    if (r.error) out.error = `compilation failed: ${r.error}`;
    else if (r.wrongType) out.error = 'cel expression must evaluate to a bool';
    if (out.error) return out;
    out.program = r.program;
    out.usesOldSelf = usesOldSelf(rule.rule);
    if (rule.messageExpression) {
      const m = compileExpression(rule.messageExpression, { env, result: 'string', optional });
      if (m.error) out.messageError = `messageExpression compilation failed: ${m.error}`;
      else if (m.wrongType) out.messageError = 'messageExpression must evaluate to a string';
      else out.message = m.program;
    }
    if (rule.fieldPath) {
      const fp = ruleFieldPath(rule.fieldPath, s);
      if ('path' in fp) out.fieldPath = fp.path;
    }
    return out;
  }
}

export function compilation(root: JSONSchemaProps): Compilation {
  let c = compilations.get(root);
  if (!c) compilations.set(root, (c = new Compilation(root)));
  return c;
}
