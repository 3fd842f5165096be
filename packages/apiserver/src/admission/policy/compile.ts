/**
 * Compilation of one CEL expression of a policy, as Kubernetes' CompileCELExpression: type
 * checked in a typed environment (cel-env.ts), its result type checked against what the
 * field must evaluate to, then parsed for evaluation in the dynamic environment. Errors keep
 * Kubernetes' details (`compilation failed: ERROR: <input>:1:5: …`, `must evaluate to bool
 * but got int`).
 */
import type { Environment } from '@marcbachmann/cel-js';
import { formatCelIssue, rewriteHas, type CelIssue } from '../../apiextensions/schema/index.js';
import { celGoTypeName, runtimeEnvironment } from './cel-env.js';

/** Evaluates over an activation; the result may be a promise (authorizer checks). */
export type Program = (ctx: Record<string, unknown>) => unknown;

/** What a field must evaluate to (Kubernetes' ReturnTypes). */
export type ReturnTypes = 'bool' | 'string' | 'string-or-null' | 'any';

export interface CompiledExpression {
  expression: string;
  program?: Program;
  /** Kubernetes' error detail when the expression does not compile. */
  error?: string;
  /** The checked type (cel-js spelling). */
  outputType?: string;
  /** Top-level variables it reads (`object`, `params`, `authorizer`, ...). */
  reads: ReadonlySet<string>;
  /** Policy variables it reads (`variables.<name>`). */
  variables: ReadonlySet<string>;
}

interface AstNode {
  op: string;
  args: unknown;
}

function isNode(n: unknown): n is AstNode {
  return typeof n === 'object' && n !== null && 'op' in n;
}

/** The identifiers and `variables.<name>` selections of a parsed expression. */
function references(ast: unknown): { reads: Set<string>; variables: Set<string> } {
  const reads = new Set<string>();
  const variables = new Set<string>();
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(visit);
    if (!isNode(n)) return;
    if (n.op === 'id' && typeof n.args === 'string') reads.add(n.args);
    if ((n.op === '.' || n.op === '.?') && Array.isArray(n.args)) {
      const [target, field] = n.args as [unknown, unknown];
      if (isNode(target) && target.op === 'id' && target.args === 'variables' && typeof field === 'string')
        variables.add(field);
    }
    visit(n.args);
  };
  visit(ast);
  return { reads, variables };
}

/** cel-go reports an undefined field at the `.` before it; cel-js at the field's name. */
function atCelGoPosition(src: string, issue: CelIssue): CelIssue {
  const start = issue.range?.start;
  const text = issue.summary ?? issue.message;
  if (start === undefined || !/^No such key/.test(text) || src[start - 1] !== '.') return issue;
  return { summary: issue.summary, message: issue.message, range: { start: start - 1 } };
}

function returnTypeError(returns: ReturnTypes, got: string): string | undefined {
  switch (returns) {
    case 'any':
      return undefined;
    case 'string-or-null':
      return got === 'string' || got === 'null'
        ? undefined
        : `must evaluate to one of [string null_type] but got ${celGoTypeName(got)}`;
    default:
      return got === returns ? undefined : `must evaluate to ${returns} but got ${celGoTypeName(got)}`;
  }
}

/**
 * Type-checks `expression` in `env` and, when it checks and has the right result type, parses
 * it for evaluation.
 */
export function compileExpression(
  expression: string,
  o: { env: Environment; returns: ReturnTypes },
): CompiledExpression {
  const src = rewriteHas(expression);
  const none = { expression, reads: new Set<string>(), variables: new Set<string>() };
  let checked: { valid: boolean; type?: string; error?: CelIssue };
  try {
    checked = o.env.check(src) as typeof checked;
  } catch (e) {
    checked = { valid: false, error: e as CelIssue };
  }
  if (!checked.valid) {
    const issue = atCelGoPosition(expression, checked.error ?? { message: 'invalid expression' });
    return { ...none, error: `compilation failed: ${formatCelIssue(expression, issue)}` };
  }
  const outputType = checked.type ?? 'dyn';
  const wrong = returnTypeError(o.returns, outputType);
  if (wrong) return { ...none, error: wrong, outputType };
  try {
    const program = runtimeEnvironment().parse(src) as Program & { ast?: unknown };
    return { expression, program, outputType, ...references(program.ast) };
  } catch (e) {
    return { ...none, error: `compilation failed: ${formatCelIssue(expression, e as CelIssue)}` };
  }
}

/** The first line of an evaluation error as cel-go words it (`no such key: x`). */
export function evaluationErrorText(e: unknown): string {
  const msg = ((e as Error)?.message ?? String(e)).split('\n')[0] ?? '';
  return msg.replace(/^No such key/, 'no such key').trim();
}
