/**
 * Kubernetes' validating policy dispatcher: for each policy whose matchConstraints select the
 * request, each of its bindings whose matchResources do, and each param the binding finds,
 * the policy is evaluated; failed validations go where the binding's validationActions say
 * (Deny: the request fails; Warn: a `Warning` header; Audit: an audit annotation), audit
 * annotations are collected per policy, and configuration errors (no param, a bad selector)
 * follow the policy's failurePolicy. The first denial answers the request: Kubernetes'
 * Forbidden message with the rule's reason (Invalid by default) and its HTTP code.
 */
import {
  notFound,
  REASON_CODES,
  StatusError,
  statusFailure,
  type ApiObject,
  type Catalog,
  type ValidatingAdmissionPolicy,
  type ValidatingAdmissionPolicyBinding,
  group,
} from '@svc/api';
import type { AdmissionAttributes } from '../admission.js';
import type { Authorizer } from '../../authz/authorizer.js';
import {
  activation,
  admissionRequest,
  celAuthorizer,
  celJson,
  namespaceObjectName,
  namespaceValue,
} from './activation.js';
import { CachingAuthorizer } from './authz-library.js';
import type { CompiledPolicy } from './compiled-policy.js';
import { matches, type Match } from './matching.js';
import { collectParams, type ParamSource } from './params.js';
import { validate, type PolicyDecision, type ValidateResult } from './validator.js';

/** One policy with its bindings, compiled, and its paramKind's informer (or why it has none). */
export interface PolicyHook {
  policy: ValidatingAdmissionPolicy;
  bindings: readonly ValidatingAdmissionPolicyBinding[];
  compiled: CompiledPolicy;
  params?: ParamSource;
  configurationError?: Error;
}

export interface DispatchDeps {
  catalog: Catalog;
  authorizer: Authorizer;
  /** The namespace, or undefined when it does not exist. */
  namespace(name: string): Promise<ApiObject | undefined> | ApiObject | undefined;
}

interface Denial {
  policy: ValidatingAdmissionPolicy;
  binding?: ValidatingAdmissionPolicyBinding;
  decision: PolicyDecision;
}

const MAX_AUDIT_ANNOTATION_VALUE = 10 * 1024;

/** Audit annotations are never overwritten (Kubernetes' AddAnnotation keeps the first value). */
function addAnnotation(a: AdmissionAttributes, o: { key: string; value: string }): void {
  if (!(o.key in a.annotations)) a.annotations[o.key] = o.value;
}

/** Go's encoding/json escapes these in strings. */
function goJson(v: unknown): string {
  return JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function validationFailureAnnotation(
  a: AdmissionAttributes,
  o: { binding: ValidatingAdmissionPolicyBinding; index: number; decision: PolicyDecision },
): void {
  const spec = o.binding.spec ?? {};
  const value = goJson([
    {
      message: o.decision.message,
      policy: spec.policyName ?? '',
      binding: o.binding.metadata.name ?? '',
      expressionIndex: o.index,
      validationActions: spec.validationActions ?? [],
    },
  ]);
  addAnnotation(a, { key: `${group('validation.policy.admission')}/validation_failure`, value });
}

/** Kubernetes' admission.NewForbidden name: the request's, the object's, its generateName, or `Unknown`. */
function resourceName(a: AdmissionAttributes): string {
  return a.name || a.object?.metadata.name || a.object?.metadata.generateName || 'Unknown';
}

/** Kubernetes' reasonToCode: other reasons answer 422. */
const DENIAL_CODES: Readonly<Record<string, number>> = {
  Forbidden: REASON_CODES.Forbidden,
  Unauthorized: REASON_CODES.Unauthorized,
  RequestEntityTooLarge: REASON_CODES.RequestEntityTooLarge,
  Invalid: REASON_CODES.Invalid,
};

function denialError(a: AdmissionAttributes, d: Denial): StatusError {
  const policy = d.policy.metadata.name ?? '';
  const text = d.binding
    ? `ValidatingAdmissionPolicy '${policy}' with binding '${d.binding.metadata.name ?? ''}' denied request: ${d.decision.message}`
    : `ValidatingAdmissionPolicy '${policy}' denied request: ${d.decision.message}`;
  const r = a.resource;
  const name = resourceName(a);
  const qualified = r.group ? `${r.plural}.${r.group}` : r.plural;
  const details = { name, kind: r.plural, causes: [{ message: text }], ...(r.group ? { group: r.group } : {}) };
  const status = statusFailure('Forbidden', `${qualified} "${name}" is forbidden: ${text}`, details);
  const reason = d.decision.reason || 'Invalid';
  status.reason = reason;
  status.code = DENIAL_CODES[reason] ?? REASON_CODES.Invalid;
  return new StatusError(status);
}

function sameMatch(x: Match, y: Match): boolean {
  return (
    x.kind.version === y.kind.version && x.kind.kind === y.kind.kind && x.resource.resource === y.resource.resource
  );
}

/** The object at the matched version (Equivalent matching): only its apiVersion changes. */
function atVersion(obj: ApiObject | undefined, m: Match): unknown {
  if (!obj) return null;
  const apiVersion = m.kind.group ? `${m.kind.group}/${m.kind.version}` : m.kind.version;
  const v = obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion, kind: m.kind.kind };
  return celJson(v);
}

/** Runs the hooks for one request: throws the denial, adds warnings and audit annotations to `a`. */
export async function dispatch(
  a: AdmissionAttributes,
  o: { hooks: readonly PolicyHook[]; deps: DispatchDeps },
): Promise<void> {
  const { deps } = o;
  const denied: Denial[] = [];
  const configError = (
    e: unknown,
    d: { policy: ValidatingAdmissionPolicy; binding?: ValidatingAdmissionPolicyBinding },
  ) => {
    const fp = d.policy.spec?.failurePolicy ?? 'Fail';
    if (fp === 'Ignore') return;
    const why = (e as Error).message ?? String(e);
    const message =
      fp === 'Fail'
        ? `failed to configure ${d.binding ? 'binding' : 'policy'}: ${why}`
        : `unrecognized failure policy: '${fp}'`;
    denied.push({ ...d, decision: { action: 'deny', evaluation: 'error', message } });
  };
  const authz = new CachingAuthorizer(deps.authorizer);
  const matchDeps = { catalog: deps.catalog, namespace: (n: string) => deps.namespace(n) };
  let request: { match: Match; value: unknown } | undefined;
  let namespaceObject: unknown;
  for (const hook of o.hooks) {
    const { policy } = hook;
    const constraints = policy.spec?.matchConstraints;
    let match: Match | undefined;
    try {
      if (!constraints) throw new Error('policy contained no match constraints, a required field');
      match = await matches(constraints, { a, deps: matchDeps });
    } catch (e) {
      configError(e, { policy });
      continue;
    }
    if (!match) continue;
    if (hook.configurationError) {
      configError(hook.configurationError, { policy });
      continue;
    }
    const collected = new Map<string, string[]>();
    for (const binding of hook.bindings) {
      try {
        const m = binding.spec?.matchResources;
        if (m && !(await matches(m, { a, deps: matchDeps }))) continue;
      } catch (e) {
        configError(e, { policy, binding });
        continue;
      }
      const params = await collectParams({
        paramKind: policy.spec?.paramKind,
        source: hook.params,
        paramRef: binding.spec?.paramRef,
        namespace: a.namespace,
      });
      if (params instanceof Error) {
        configError(params, { policy, binding });
        continue;
      }
      if (params.length === 0) continue;
      const reads = hook.compiled.reads;
      if (reads.has('request') && (request === undefined || !sameMatch(request.match, match)))
        request = { match, value: admissionRequest(a, match) };
      if (reads.has('namespaceObject') && namespaceObject === undefined) {
        const name = namespaceObjectName(a);
        namespaceObject = null;
        if (name !== '') {
          const ns = await deps.namespace(name);
          if (!ns) throw notFound({ group: '', resource: 'namespaces' }, name);
          namespaceObject = namespaceValue(ns);
        }
      }
      const base = {
        object: reads.has('object') ? atVersion(a.object, match) : null,
        oldObject: reads.has('oldObject') ? atVersion(a.oldObject, match) : null,
        request: request?.value ?? null,
        namespaceObject: namespaceObject ?? null,
        authorizer: reads.has('authorizer') ? celAuthorizer(a, authz) : undefined,
        variables: hook.compiled.variables,
      };
      const results: ValidateResult[] = [];
      for (const param of params) {
        const ctx = await activation({ ...base, params: param === null ? null : celJson(param) });
        results.push(await validate(hook.compiled, ctx));
      }
      record(a, { policy, binding, results, denied, collected });
    }
    for (const [key, values] of collected)
      addAnnotation(a, { key: `${policy.metadata.name ?? ''}/${key}`, value: values.join(', ') });
  }
  const first = denied[0];
  if (first) throw denialError(a, first);
}

/** Files one binding's results: denials, warnings, validation-failure annotations, audit annotations. */
function record(
  a: AdmissionAttributes,
  o: {
    policy: ValidatingAdmissionPolicy;
    binding: ValidatingAdmissionPolicyBinding;
    results: readonly ValidateResult[];
    denied: Denial[];
    collected: Map<string, string[]>;
  },
): void {
  const { policy, binding } = o;
  const actions = binding.spec?.validationActions ?? [];
  for (const result of o.results) {
    result.decisions.forEach((decision, index) => {
      if (decision.action !== 'deny') return;
      for (const action of actions) {
        if (action === 'Deny') o.denied.push({ policy, binding, decision });
        else if (action === 'Audit') validationFailureAnnotation(a, { binding, index, decision });
        else if (action === 'Warn')
          a.warnings.push(
            `Validation failed for ValidatingAdmissionPolicy '${policy.metadata.name ?? ''}' with binding '${binding.metadata.name ?? ''}': ${decision.message}`,
          );
      }
    });
    for (const ann of result.auditAnnotations) {
      if (ann.action === 'publish' && ann.value !== undefined) {
        const value = Buffer.from(ann.value).subarray(0, MAX_AUDIT_ANNOTATION_VALUE).toString();
        const values = o.collected.get(ann.key) ?? [];
        if (!values.includes(value)) values.push(value);
        o.collected.set(ann.key, values);
      } else if (ann.action === 'error') {
        o.denied.push({ policy, binding, decision: { action: 'deny', evaluation: 'error', message: ann.error ?? '' } });
      }
    }
  }
}
