import { Environment, parse } from '@marcbachmann/cel-js';

/** A compiled CEL expression; evaluation errors are thrown with the expression named. */
export interface CelProgram {
  expression: string;
  evaluate(vars: Record<string, unknown>): unknown;
}

/** What an expression must yield: checked at load when its static type is known (`dyn` passes). */
export type CelResult = 'bool' | 'string' | 'string-or-list';

/**
 * Compiles `expression`; a syntax error throws with the parser's message. When `check` is
 * given, the expression is type-checked with those variables declared as maps (so field
 * access stays `dyn`, as in Kubernetes) and a statically wrong result type throws.
 */
export function compileCel(
  expression: string,
  check?: { variables: readonly string[]; result: CelResult },
): CelProgram {
  const program = parse(expression);
  if (check) {
    const env = new Environment();
    for (const v of check.variables) env.registerVariable(v, 'map');
    const r = env.check(expression) as { valid: boolean; type?: string; error?: { message: string } };
    if (!r.valid) throw new Error(r.error?.message ?? 'type check failed');
    const ok =
      r.type === 'dyn' ||
      r.type === undefined ||
      (check.result === 'bool' && r.type === 'bool') ||
      (check.result === 'string' && r.type === 'string') ||
      (check.result === 'string-or-list' && (r.type === 'string' || r.type.startsWith('list')));
    if (!ok)
      throw new Error(
        `must evaluate to ${check.result === 'string-or-list' ? 'string or list of strings' : check.result}, not ${r.type}`,
      );
  }
  return {
    expression,
    evaluate(vars) {
      try {
        return program(vars);
      } catch (e) {
        throw new Error(`expression ${JSON.stringify(expression)}: ${(e as Error).message.split('\n')[0] ?? ''}`, {
          cause: e,
        });
      }
    },
  };
}

/** `claims.email` used as such (not `claims.email_verified`). */
export function usesClaimsEmail(expression: string): boolean {
  return /\bclaims\s*\.\s*email\b(?!_)|\bclaims\s*\[\s*["']email["']\s*\]/.test(expression);
}

export function usesClaimsEmailVerified(expression: string): boolean {
  return /\bclaims\s*\.\s*email_verified\b|\bclaims\s*\[\s*["']email_verified["']\s*\]/.test(expression);
}
