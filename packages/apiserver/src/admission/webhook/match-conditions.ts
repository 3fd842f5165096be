/**
 * The CEL of admission webhooks' `matchConditions`, in the admission CEL environment the
 * policies use (admission/policy/cel-env.ts): `object` and `oldObject` (null when absent),
 * `request` (the AdmissionRequest without uid and objects), `namespaceObject` (null for
 * webhooks, as Kubernetes binds it) and `authorizer` (the requesting user's permissions);
 * `params` is not declared. An expression must type-check to bool. Not enforced: cel-go's
 * cost limits.
 */
import type { Environment } from '@marcbachmann/cel-js';
import type { UserInfo } from '@svc/component-base';
import type { Authorizer } from '../../authz/authorizer.js';
import { toCelValue } from '../../apiextensions/schema/index.js';
import { CachingAuthorizer, CelAuthorizer } from '../policy/authz-library.js';
import { policyBaseEnvironment, typedEnvironment } from '../policy/cel-env.js';
import { compileExpression, evaluationErrorText, type Program } from '../policy/compile.js';

/** Kubernetes' AdmissionRequest as CEL sees it (`request`). */
export interface CelAdmissionRequest {
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource: string;
  requestKind: { group: string; version: string; kind: string };
  requestResource: { group: string; version: string; resource: string };
  requestSubResource: string;
  name: string;
  namespace: string;
  operation: string;
  userInfo: { username: string; uid: string; groups: string[]; extra: Record<string, string[]> };
  dryRun: boolean;
  options: unknown;
}

/** What one evaluation sees. */
export interface ConditionInput {
  object?: unknown;
  oldObject?: unknown;
  request: CelAdmissionRequest;
  authorizer: Authorizer;
  user?: UserInfo;
}

let typed: Environment | undefined;

/**
 * Compiles one condition's expression: a program, or Kubernetes' detail for the field error
 * (`compilation failed: ERROR: <input>:1:5: ...`, `must evaluate to bool but got int`).
 */
export function compileMatchCondition(expression: string): { program: Program } | { error: string } {
  typed ??= typedEnvironment(policyBaseEnvironment(), { hasParams: false, hasAuthorizer: true });
  const c = compileExpression(expression, { env: typed, returns: 'bool' });
  if (c.program) return { program: c.program };
  return { error: c.error ?? 'compilation failed' };
}

/** The variables of one request, built once for all of its conditions. */
export function conditionVariables(input: ConditionInput): Record<string, unknown> {
  const r = input.request;
  const user: UserInfo = input.user ?? { name: '', groups: [] };
  const authorizer = new CelAuthorizer(user, new CachingAuthorizer(input.authorizer), {
    group: r.resource.group,
    resource: r.resource.resource,
    subresource: r.subResource,
    namespace: r.namespace,
    name: r.name,
  });
  return {
    object: toCelValue(input.object, undefined),
    oldObject: toCelValue(input.oldObject, undefined),
    namespaceObject: null,
    request: toCelValue(r, undefined),
    authorizer,
  };
}

/** Evaluates one condition: true, false, or the evaluation error in cel-go's words. */
export async function evaluateCondition(program: Program, vars: Record<string, unknown>): Promise<boolean | Error> {
  try {
    const v: unknown = await program(vars);
    return typeof v === 'boolean' ? v : new Error(`expected a bool, got ${typeof v}`);
  } catch (e) {
    return new Error(evaluationErrorText(e));
  }
}
