import { parse } from '@marcbachmann/cel-js';

/** A compiled CEL expression; evaluation errors are thrown with the expression named. */
export interface CelProgram {
  expression: string;
  evaluate(vars: Record<string, unknown>): unknown;
}

/** Compiles `expression`; a syntax error throws with the parser's message. */
export function compileCel(expression: string): CelProgram {
  const program = parse(expression);
  return {
    expression,
    evaluate(vars) {
      try {
        return program(vars);
      } catch (e) {
        throw new Error(`expression ${JSON.stringify(expression)}: ${(e as Error).message.split('\n')[0] ?? ''}`);
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
