/**
 * Kubernetes' validation of ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
 * (pkg/apis/admissionregistration/validation): the same checks, messages and paths, CEL
 * expressions compiled as the API server compiles them on create (variables composed when
 * there are any; matchConditions without them; `params` only with a paramKind).
 */
import {
  fieldErrors,
  type FieldError,
  type MatchCondition,
  type MatchResources,
  type NamedRuleWithOperations,
  type ParamKind,
  type ParamRef,
  type PolicyValidation,
  type ValidatingAdmissionPolicy,
  type ValidatingAdmissionPolicyBinding,
} from '@svc/api';
import {
  isDns1035Label,
  isDns1123Subdomain,
  validateDnsSubdomain,
  validateLabelSelector,
  validatePathSegmentName,
  validateQualifiedName,
} from '@svc/machinery';
import { policyBaseEnvironment, typedEnvironment, type VariableTypes } from './cel-env.js';
import { compileExpression, type ReturnTypes } from './compile.js';
import { compileVariables } from './compiled-policy.js';
import { CEL_RESERVED_WORDS } from '../../apiextensions/schema/cel-types.js';
import { validateRuleWithOperations } from '../../registry/strategies/rule-validation.js';

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge'];
const ACTIONS = ['Audit', 'Deny', 'Warn'];
const MAX_AUDIT_ANNOTATIONS = 20;
const MAX_AUDIT_VALUE_EXPRESSION = 5 * 1024;

function duplicatesOf<T>(xs: readonly T[], path: (i: number) => string): FieldError[] {
  const seen = new Set<T>();
  const errs: FieldError[] = [];
  xs.forEach((x, i) => {
    if (seen.has(x)) errs.push(fieldErrors.duplicate(path(i), x));
    seen.add(x);
  });
  return errs;
}

function validateNamedRule(r: NamedRuleWithOperations, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = r.resourceNames ?? [];
  names.forEach((n, i) => errs.push(...validatePathSegmentName(n, `${path}.resourceNames[${i}]`)));
  errs.push(...duplicatesOf(names, (i) => `${path}.resourceNames[${i}]`));
  errs.push(...validateRuleWithOperations(r, path));
  return errs;
}

/** MatchResources after defaulting: matchPolicy and both selectors are required. */
export function validateMatchResources(m: MatchResources | undefined, path: string): FieldError[] {
  if (!m) return [];
  const errs: FieldError[] = [];
  if (m.matchPolicy === undefined) errs.push(fieldErrors.required(`${path}.matchPolicy`, ''));
  else if (!MATCH_POLICIES.includes(m.matchPolicy))
    errs.push(fieldErrors.notSupported(`${path}.matchPolicy`, m.matchPolicy, MATCH_POLICIES));
  if (m.namespaceSelector === undefined) errs.push(fieldErrors.required(`${path}.namespaceSelector`, ''));
  else errs.push(...validateLabelSelector(m.namespaceSelector, `${path}.namespaceSelector`));
  if (m.objectSelector === undefined) errs.push(fieldErrors.required(`${path}.objectSelector`, ''));
  else errs.push(...validateLabelSelector(m.objectSelector, `${path}.objectSelector`));
  (m.resourceRules ?? []).forEach((r, i) => errs.push(...validateNamedRule(r, `${path}.resourceRules[${i}]`)));
  (m.excludeResourceRules ?? []).forEach((r, i) =>
    errs.push(...validateNamedRule(r, `${path}.excludeResourceRules[${i}]`)),
  );
  return errs;
}

function parseGroupVersion(gv: string): { group: string; version: string } | Error {
  if (gv === '' || gv === '/') return { group: '', version: '' };
  const parts = gv.split('/');
  if (parts.length === 1) return { group: '', version: gv };
  if (parts.length === 2) return { group: parts[0] ?? '', version: parts[1] ?? '' };
  return new Error(`unexpected GroupVersion string: ${gv}`);
}

function validateParamKind(pk: ParamKind, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const apiVersion = pk.apiVersion ?? '';
  if (apiVersion === '') errs.push(fieldErrors.required(`${path}.apiVersion`, ''));
  else {
    const gv = parseGroupVersion(apiVersion);
    if (gv instanceof Error) errs.push(fieldErrors.invalid(`${path}.apiVersion`, apiVersion, gv.message));
    else {
      const groupErrs = gv.group ? isDns1123Subdomain(gv.group) : [];
      if (groupErrs.length) errs.push(fieldErrors.invalid(`${path}.apiVersion`, gv.group, groupErrs.join(',')));
      if (gv.version === '')
        errs.push(fieldErrors.invalid(`${path}.apiVersion`, apiVersion, 'version must be specified'));
      else {
        const vErrs = isDns1035Label(gv.version);
        if (vErrs.length) errs.push(fieldErrors.invalid(`${path}.apiVersion`, gv.version, vErrs.join(',')));
      }
    }
  }
  const kind = pk.kind ?? '';
  if (kind === '') errs.push(fieldErrors.required(`${path}.kind`, ''));
  else {
    const kErrs = isDns1035Label(kind.toLowerCase());
    if (kErrs.length)
      errs.push(
        fieldErrors.invalid(
          `${path}.kind`,
          kind,
          `may have mixed case, but should otherwise match: ${kErrs.join(',')}`,
        ),
      );
  }
  return errs;
}

/** How expressions compile while validating one policy. */
interface CompileContext {
  hasParams: boolean;
  /** The composed variables' types, when the policy has variables (else `variables` is undeclared). */
  variables?: VariableTypes;
}

function celError(path: string, expression: string, o: { returns: ReturnTypes; env: CompileEnv }): FieldError[] {
  const env = o.env();
  const r = compileExpression(expression, { env, returns: o.returns });
  return r.error === undefined ? [] : [fieldErrors.invalid(path, expression, r.error)];
}

type CompileEnv = () => ReturnType<typeof typedEnvironment>;

function envFor(c: CompileContext, hasAuthorizer: boolean): CompileEnv {
  let env: ReturnType<typeof typedEnvironment> | undefined;
  return () => {
    env ??= typedEnvironment(policyBaseEnvironment(), {
      hasParams: c.hasParams,
      hasAuthorizer,
      variables: c.variables,
    });
    return env;
  };
}

function validateMatchConditions(
  conditions: readonly MatchCondition[],
  o: { path: string; hasParams: boolean },
): FieldError[] {
  const errs: FieldError[] = [];
  if (conditions.length > 64)
    errs.push({ path: o.path, type: 'FieldValueTooMany', detail: `${conditions.length}: must have at most 64 items` });
  const env = envFor({ hasParams: o.hasParams }, true);
  const names = new Set<string>();
  conditions.forEach((m, i) => {
    const p = `${o.path}[${i}]`;
    const expr = (m.expression ?? '').trim();
    if (expr === '') errs.push(fieldErrors.required(`${p}.expression`, ''));
    else errs.push(...celError(`${p}.expression`, expr, { returns: 'bool', env }));
    if (!m.name) errs.push(fieldErrors.required(`${p}.name`, ''));
    else errs.push(...validateQualifiedName(m.name, `${p}.name`));
    if (m.name) {
      if (names.has(m.name)) errs.push(fieldErrors.duplicate(`${p}.name`, m.name));
      names.add(m.name);
    }
  });
  return errs;
}

function validateValidation(v: PolicyValidation, o: { path: string; c: CompileContext }): FieldError[] {
  const errs: FieldError[] = [];
  const { path, c } = o;
  const expression = v.expression ?? '';
  if (expression.trim() === '') errs.push(fieldErrors.required(`${path}.expression`, 'expression is not specified'));
  else errs.push(...celError(`${path}.expression`, expression, { returns: 'bool', env: envFor(c, true) }));
  const me = v.messageExpression ?? '';
  if (me.length > 0 && me.trim() === '')
    errs.push(fieldErrors.invalid(`${path}.messageExpression`, me, 'must be non-empty if specified'));
  else if (me.trim() !== '')
    errs.push(...celError(`${path}.messageExpression`, me, { returns: 'string', env: envFor(c, false) }));
  const msg = v.message ?? '';
  if (msg.length > 0 && msg.trim() === '')
    errs.push(fieldErrors.invalid(`${path}.message`, msg, 'message must be non-empty if specified'));
  else if (/[\n\r]/.test(msg.trim()))
    errs.push(fieldErrors.invalid(`${path}.message`, msg, 'message must not contain line breaks'));
  if (v.reason !== undefined && !REASONS.includes(v.reason))
    errs.push(fieldErrors.notSupported(`${path}.reason`, v.reason, REASONS));
  return errs;
}

function validateVariables(
  vars: ReadonlyArray<{ name: string; expression: string }>,
  o: { path: string; c: CompileContext },
) {
  const errs: FieldError[] = [];
  const compiled = compileVariables(
    vars.map((v) => ({ name: v.name, expression: v.expression ?? '' })),
    { types: policyBaseEnvironment(), hasParams: o.c.hasParams },
  );
  vars.forEach((v, i) => {
    const p = `${o.path}[${i}]`;
    if (!v.name || v.name.trim() === '') errs.push(fieldErrors.required(`${p}.name`, 'name is not specified'));
    else if (!/^[_a-zA-Z][_a-zA-Z0-9]*$/.test(v.name) || CEL_RESERVED_WORDS.has(v.name))
      errs.push(fieldErrors.invalid(`${p}.name`, v.name, 'name is not a valid CEL identifier'));
    const expression = v.expression ?? '';
    if (expression.trim() === '') errs.push(fieldErrors.required(`${p}.expression`, 'expression is not specified'));
    else {
      const error = compiled.compiled[i]?.expression.error;
      if (error !== undefined) errs.push(fieldErrors.invalid(`${p}.expression`, expression, error));
    }
  });
  return { errs, types: compiled.types };
}

function validateAuditAnnotations(
  policy: ValidatingAdmissionPolicy,
  o: { path: string; c: CompileContext },
): FieldError[] {
  const list = policy.spec?.auditAnnotations ?? [];
  const errs: FieldError[] = [];
  if (list.length > MAX_AUDIT_ANNOTATIONS)
    errs.push(fieldErrors.invalid(o.path, list, `must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations`));
  const env = envFor(o.c, true);
  const keys = new Set<string>();
  list.forEach((a, i) => {
    const p = `${o.path}[${i}]`;
    const name = policy.metadata.name ?? '';
    if (name !== '') errs.push(...validateQualifiedName(`${name}/${a.key ?? ''}`, `${p}.key`));
    else errs.push(fieldErrors.invalid(`${p}.key`, a.key, 'requires metadata.name be non-empty'));
    const value = (a.valueExpression ?? '').trim();
    if (value === '') errs.push(fieldErrors.required(`${p}.valueExpression`, 'valueExpression is not specified'));
    else if (value.length > MAX_AUDIT_VALUE_EXPRESSION)
      errs.push(
        fieldErrors.required(`${p}.valueExpression`, `must not exceed ${MAX_AUDIT_VALUE_EXPRESSION} bytes in length`),
      );
    else {
      const r = compileExpression(value, { env: env(), returns: 'string-or-null' });
      if (r.error !== undefined) errs.push(fieldErrors.invalid(`${p}.valueExpression`, a.valueExpression, r.error));
    }
    if (keys.has(a.key)) errs.push(fieldErrors.duplicate(`${p}.key`, a.key));
    keys.add(a.key);
  });
  return errs;
}

/**
 * Kubernetes' ValidateValidatingAdmissionPolicy (after defaulting). `old` (on update) skips
 * the matchConditions when they and the paramKind did not change, as Kubernetes does.
 */
export function validatePolicy(p: ValidatingAdmissionPolicy, old?: ValidatingAdmissionPolicy): FieldError[] {
  const spec = p.spec ?? {};
  const errs: FieldError[] = [];
  if (spec.failurePolicy === undefined) errs.push(fieldErrors.required('spec.failurePolicy', ''));
  else if (!FAILURE_POLICIES.includes(spec.failurePolicy))
    errs.push(fieldErrors.notSupported('spec.failurePolicy', spec.failurePolicy, FAILURE_POLICIES));
  const hasParams = spec.paramKind !== undefined && spec.paramKind !== null;
  if (spec.paramKind) errs.push(...validateParamKind(spec.paramKind, 'spec.paramKind'));
  if (!spec.matchConstraints) errs.push(fieldErrors.required('spec.matchConstraints', ''));
  else {
    errs.push(...validateMatchResources(spec.matchConstraints, 'spec.matchConstraints'));
    if ((spec.matchConstraints.resourceRules ?? []).length === 0)
      errs.push(fieldErrors.required('spec.matchConstraints.resourceRules', ''));
  }
  const unchangedConditions =
    old !== undefined &&
    JSON.stringify(old.spec?.paramKind) === JSON.stringify(spec.paramKind) &&
    JSON.stringify(old.spec?.matchConditions) === JSON.stringify(spec.matchConditions);
  if (!unchangedConditions)
    errs.push(...validateMatchConditions(spec.matchConditions ?? [], { path: 'spec.matchConditions', hasParams }));
  const c: CompileContext = { hasParams };
  if ((spec.variables ?? []).length > 0) {
    const vars = validateVariables(spec.variables ?? [], { path: 'spec.variables', c });
    errs.push(...vars.errs);
    c.variables = vars.types;
  }
  const validations = spec.validations ?? [];
  if (validations.length === 0 && (spec.auditAnnotations ?? []).length === 0) {
    const detail = 'validations or auditAnnotations must contain at least one item';
    errs.push(fieldErrors.required('spec.validations', detail), fieldErrors.required('spec.auditAnnotations', detail));
  } else {
    validations.forEach((v, i) => errs.push(...validateValidation(v, { path: `spec.validations[${i}]`, c })));
    if (spec.auditAnnotations) errs.push(...validateAuditAnnotations(p, { path: 'spec.auditAnnotations', c }));
  }
  return errs;
}

/** Kubernetes' ValidateValidatingAdmissionPolicyStatusUpdate. */
export function validatePolicyStatus(p: ValidatingAdmissionPolicy): FieldError[] {
  const errs: FieldError[] = [];
  (p.status?.typeChecking?.expressionWarnings ?? []).forEach((w, i) => {
    const path = `status.typeChecking.expressionWarnings[${i}]`;
    if (!w.warning) errs.push(fieldErrors.required(`${path}.warning`, ''));
    if ((w.fieldRef ?? '').trim() === '') errs.push(fieldErrors.required(`${path}.fieldRef`, ''));
  });
  return errs;
}

function validateParamRef(pr: ParamRef | undefined, path: string): FieldError[] {
  if (!pr) return [];
  const errs: FieldError[] = [];
  if (pr.name) {
    errs.push(...validatePathSegmentName(pr.name, `${path}.name`));
    if (pr.selector) errs.push(fieldErrors.forbidden(`${path}.name`, 'name and selector are mutually exclusive'));
  }
  if (pr.selector) {
    errs.push(...validateLabelSelector(pr.selector, `${path}.selector`));
    if (pr.name) errs.push(fieldErrors.forbidden(`${path}.selector`, 'name and selector are mutually exclusive'));
  }
  if (!pr.name && !pr.selector) errs.push(fieldErrors.required(path, 'one of name or selector must be specified'));
  if (!pr.parameterNotFoundAction) errs.push(fieldErrors.required(`${path}.parameterNotFoundAction`, ''));
  else if (pr.parameterNotFoundAction !== 'Deny' && pr.parameterNotFoundAction !== 'Allow')
    errs.push(
      fieldErrors.notSupported(`${path}.parameterNotFoundAction`, pr.parameterNotFoundAction, ['Deny', 'Allow']),
    );
  return errs;
}

function validateValidationActions(actions: readonly string[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  actions.forEach((a, i) => {
    if (!ACTIONS.includes(a)) errs.push(fieldErrors.notSupported(`${path}[${i}]`, a, ACTIONS));
    if (seen.has(a)) errs.push(fieldErrors.duplicate(`${path}[${i}]`, a));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn'))
    errs.push(
      fieldErrors.invalid(
        path,
        actions,
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      ),
    );
  if (seen.size === 0) errs.push(fieldErrors.required(path, 'at least one validation action is required'));
  return errs;
}

/** Kubernetes' ValidateValidatingAdmissionPolicyBinding (after defaulting). */
export function validateBinding(b: ValidatingAdmissionPolicyBinding): FieldError[] {
  const spec = b.spec ?? {};
  const errs: FieldError[] = [];
  if (!spec.policyName) errs.push(fieldErrors.required('spec.policyName', ''));
  else errs.push(...validateDnsSubdomain(spec.policyName, 'spec.policyName'));
  errs.push(...validateParamRef(spec.paramRef, 'spec.paramRef'));
  // Kubernetes' path, spelling included.
  errs.push(...validateMatchResources(spec.matchResources, 'spec.matchResouces'));
  errs.push(...validateValidationActions(spec.validationActions ?? [], 'spec.validationActions'));
  return errs;
}
