/**
 * The values an admission policy's expressions see, as Kubernetes builds them: `object` and
 * `oldObject` (null when absent), `params`, `request` (an AdmissionRequest as JSON: the
 * matched kind and resource, the requested ones, name, namespace, operation, userInfo,
 * dryRun, options), `namespaceObject` (the namespace's name, uid, labels, annotations, ...,
 * spec and status; null for cluster-scoped requests and namespaces themselves), `authorizer`,
 * and `variables`, each evaluated at most once, when first read.
 */
import { group as groupName, type ApiObject } from '@svc/api';
import { toCelValue } from '../../apiextensions/schema/index.js';
import type { AdmissionAttributes } from '../admission.js';
import { CelAuthorizer, type CachingAuthorizer } from './authz-library.js';
import { evaluationErrorText, type CompiledExpression } from './compile.js';
import { isNamespaceResource, requestNamespace, type Match } from './matching.js';

/** JSON as CEL sees it without a schema: whole numbers are ints. */
export function celJson(v: unknown): unknown {
  return toCelValue(v, undefined);
}

const OPTIONS_KIND = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' } as const;

/** Kubernetes' CreateAdmissionRequest, as the JSON its CEL `request` variable holds. */
export function admissionRequest(a: AdmissionAttributes, m: Match): Record<string, unknown> {
  const r = a.resource;
  const req: Record<string, unknown> = {
    uid: '',
    kind: m.kind,
    resource: m.resource,
    requestKind: { group: r.group, version: r.version, kind: r.kind },
    requestResource: { group: r.group, version: r.version, resource: r.plural },
    operation: a.operation,
    userInfo: {},
    dryRun: a.dryRun,
  };
  if (a.subresource) req.subResource = req.requestSubResource = a.subresource;
  if (a.name) req.name = a.name;
  const ns = requestNamespace(a);
  if (ns) req.namespace = ns;
  const u = a.user;
  if (u) {
    const info: Record<string, unknown> = {};
    if (u.name) info.username = u.name;
    if (u.uid) info.uid = u.uid;
    if (u.groups.length) info.groups = [...u.groups];
    if (u.extra && Object.keys(u.extra).length) info.extra = u.extra;
    req.userInfo = info;
  }
  const optionsKind = a.operation === 'CONNECT' ? undefined : OPTIONS_KIND[a.operation];
  if (optionsKind) {
    const options: Record<string, unknown> = { kind: optionsKind, apiVersion: `${groupName('meta')}/v1` };
    if (a.dryRun) options.dryRun = ['All'];
    req.options = options;
  }
  return celJson(req) as Record<string, unknown>;
}

/** Kubernetes' CreateNamespaceObject: the namespace's metadata (not managedFields), spec and status. */
export function namespaceValue(ns: ApiObject): unknown {
  const m = ns.metadata;
  const metadata: Record<string, unknown> = {};
  for (const k of [
    'name',
    'generateName',
    'namespace',
    'uid',
    'resourceVersion',
    'generation',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
    'labels',
    'annotations',
    'finalizers',
  ] as const) {
    if (m[k] !== undefined) metadata[k] = m[k];
  }
  return celJson({ metadata, spec: ns.spec ?? {}, status: ns.status ?? {} });
}

/** The namespace whose object a request's expressions see ('' for none). */
export function namespaceObjectName(a: AdmissionAttributes): string {
  return isNamespaceResource(a) ? '' : a.namespace;
}

/** What one evaluation of a policy (one binding, one param) runs over. */
export interface ActivationInput {
  object: unknown;
  oldObject: unknown;
  params: unknown;
  request: unknown;
  namespaceObject: unknown;
  authorizer?: CelAuthorizer;
  variables: ReadonlyArray<{ name: string; expression: CompiledExpression }>;
}

/**
 * The activation: every variable the expressions read. Policy variables are evaluated once,
 * when first read; those that call the authorizer (asynchronous) are evaluated before any
 * expression runs, their errors kept until read, as a lazy evaluation would report them.
 */
export async function activation(i: ActivationInput): Promise<Record<string, unknown>> {
  const ctx: Record<string, unknown> = {
    object: i.object,
    oldObject: i.oldObject,
    params: i.params,
    request: i.request,
    namespaceObject: i.namespaceObject,
    authorizer: i.authorizer,
  };
  const variables: Record<string, unknown> = {};
  ctx.variables = variables;
  const settled = new Map<string, { value?: unknown; error?: Error }>();
  const evaluate = (name: string, e: CompiledExpression): { value?: unknown; error?: Error } => {
    if (e.error !== undefined || !e.program)
      return { error: new Error(`composited variable "${name}" fails to compile: ${e.error ?? 'no program'}`) };
    try {
      return { value: e.program(ctx) };
    } catch (err) {
      return { error: new Error(`composited variable "${name}" fails to evaluate: ${evaluationErrorText(err)}`) };
    }
  };
  for (const { name, expression } of i.variables) {
    Object.defineProperty(variables, name, {
      enumerable: true,
      get() {
        let r = settled.get(name);
        if (!r) settled.set(name, (r = evaluate(name, expression)));
        if (r.error) throw r.error;
        return r.value;
      },
    });
  }
  for (const { name, expression } of i.variables) {
    if (!readsAuthorizer(expression, i.variables)) continue;
    const r = evaluate(name, expression);
    if (r.error) {
      settled.set(name, r);
      continue;
    }
    try {
      settled.set(name, { value: await r.value });
    } catch (err) {
      settled.set(name, {
        error: new Error(`composited variable "${name}" fails to evaluate: ${evaluationErrorText(err)}`),
      });
    }
  }
  return ctx;
}

function readsAuthorizer(
  e: CompiledExpression,
  vars: ReadonlyArray<{ name: string; expression: CompiledExpression }>,
  seen = new Set<string>(),
): boolean {
  if (e.reads.has('authorizer')) return true;
  for (const v of e.variables) {
    if (seen.has(v)) continue;
    seen.add(v);
    const dep = vars.find((x) => x.name === v);
    if (dep && readsAuthorizer(dep.expression, vars, seen)) return true;
  }
  return false;
}

/** A CEL authorizer for the request's user, its `requestResource` the request's own resource. */
export function celAuthorizer(a: AdmissionAttributes, authz: CachingAuthorizer): CelAuthorizer | undefined {
  if (!a.user) return undefined;
  const r = a.resource;
  return new CelAuthorizer(a.user, authz, {
    group: r.group,
    resource: r.plural,
    subresource: a.subresource,
    namespace: requestNamespace(a),
    name: a.name,
  });
}
