/**
 * A ValidatingAdmissionPolicy compiled for evaluation, as Kubernetes' plugin compiles it:
 * variables one after the other (each sees the ones before it, with their checked types),
 * then validations, matchConditions and auditAnnotations with `authorizer`, and
 * messageExpressions without it; `params` is declared only when the policy has a paramKind.
 */
import type { Environment } from '@marcbachmann/cel-js';
import type { ValidatingAdmissionPolicy } from '@svc/api';
import { declarableType, policyBaseEnvironment, typedEnvironment, type VariableTypes } from './cel-env.js';
import { compileExpression, type CompiledExpression, type ReturnTypes } from './compile.js';

export interface CompiledValidation {
  expression: CompiledExpression;
  message?: string;
  reason?: string;
  messageExpression?: CompiledExpression;
}

export interface CompiledPolicy {
  variables: ReadonlyArray<{ name: string; expression: CompiledExpression }>;
  validations: readonly CompiledValidation[];
  matchConditions: ReadonlyArray<{ name: string; expression: CompiledExpression }>;
  auditAnnotations: ReadonlyArray<{ key: string; expression: CompiledExpression }>;
  /** `Fail` unless the policy says `Ignore` (or something else, which fails). */
  failurePolicy: string;
  /** Top-level variables any expression reads, through its variables too. */
  reads: ReadonlySet<string>;
}

/** Compiles `vars` in order in environments over `types`; each is declared with its checked type. */
export function compileVariables(
  vars: ReadonlyArray<{ name: string; expression: string }>,
  o: { types: Environment; hasParams: boolean; paramsType?: string; objectType?: string },
): { compiled: Array<{ name: string; expression: CompiledExpression }>; types: VariableTypes } {
  const types: Array<[string, string]> = [];
  const compiled: Array<{ name: string; expression: CompiledExpression }> = [];
  const { types: typesEnv, ...declared } = o;
  for (const v of vars) {
    const env = typedEnvironment(typesEnv, { ...declared, hasAuthorizer: true, variables: types });
    const expression = compileExpression(v.expression, { env, returns: 'any' });
    compiled.push({ name: v.name, expression });
    types.push([v.name, declarableType(expression.outputType)]);
  }
  return { compiled, types };
}

export function compilePolicy(policy: ValidatingAdmissionPolicy): CompiledPolicy {
  const spec = policy.spec ?? {};
  const hasParams = spec.paramKind !== undefined && spec.paramKind !== null;
  const types = policyBaseEnvironment();
  const vars = compileVariables(spec.variables ?? [], { types, hasParams });
  const withAuthz = typedEnvironment(types, { hasParams, hasAuthorizer: true, variables: vars.types });
  const withoutAuthz = typedEnvironment(types, { hasParams, hasAuthorizer: false, variables: vars.types });
  const compile = (expr: string, returns: ReturnTypes, env = withAuthz) => compileExpression(expr, { env, returns });
  const validations = (spec.validations ?? []).map((v) => ({
    expression: compile(v.expression ?? '', 'bool'),
    message: v.message,
    reason: v.reason,
    messageExpression: v.messageExpression ? compile(v.messageExpression, 'string', withoutAuthz) : undefined,
  }));
  const matchConditions = (spec.matchConditions ?? []).map((m) => ({
    name: m.name,
    expression: compile(m.expression ?? '', 'bool'),
  }));
  const auditAnnotations = (spec.auditAnnotations ?? []).map((a) => ({
    key: a.key,
    expression: compile((a.valueExpression ?? '').trim(), 'string-or-null'),
  }));
  const all = [
    ...vars.compiled.map((v) => v.expression),
    ...validations.flatMap((v) => (v.messageExpression ? [v.expression, v.messageExpression] : [v.expression])),
    ...matchConditions.map((m) => m.expression),
    ...auditAnnotations.map((a) => a.expression),
  ];
  const reads = new Set(all.flatMap((e) => [...e.reads]));
  return {
    variables: vars.compiled,
    validations,
    matchConditions,
    auditAnnotations,
    failurePolicy: spec.failurePolicy ?? 'Fail',
    reads,
  };
}
