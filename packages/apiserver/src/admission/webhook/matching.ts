import {
  group,
  internalError,
  notFound,
  type ApiObject,
  type Catalog,
  type ResourceType,
  type StatusError,
} from '@svc/api';
import type { Authorizer } from '../../authz/authorizer.js';
import type { AdmissionAttributes } from '../admission.js';
import { admissionForbidden } from '../admission-errors.js';
import { conditionVariables, evaluateCondition, type CelAdmissionRequest } from './match-conditions.js';
import { equivalentResources, ruleMatches, type RuleInput } from './rules.js';
import type { WebhookAccessor } from './source.js';

/** A webhook to call, and the resource it matched (the request's, or an equivalent one). */
export interface Invocation {
  hook: WebhookAccessor;
  resource: ResourceType;
}

/** The request's objects in one version (Kubernetes' VersionedAttributes). */
export interface Versioned {
  resource: ResourceType;
  object?: ApiObject;
  oldObject?: ApiObject;
}

export interface MatchDeps {
  catalog: Catalog;
  authorizer: Authorizer;
  /** A namespace's labels; undefined when it does not exist. */
  namespaceLabels(name: string): Promise<Record<string, string> | undefined>;
}

export interface MatchInput {
  hook: WebhookAccessor;
  attrs: AdmissionAttributes;
  /** The objects as the earlier webhooks left them (object selectors see these). */
  current: { object?: ApiObject; oldObject?: ApiObject };
  /** The objects in a resource's version (converted when an equivalent resource matched). */
  versioned(r: ResourceType): Promise<Versioned>;
}

const isCoreNamespaces = (r: ResourceType): boolean => r.group === '' && r.plural === 'namespaces';

/** The request's namespace as Kubernetes' attributes carry it: a namespace's own name for namespaces. */
export function requestNamespace(attrs: AdmissionAttributes): string {
  if (isCoreNamespaces(attrs.resource)) return attrs.operation === 'CREATE' ? '' : attrs.name;
  return attrs.namespace;
}

/**
 * Kubernetes' ShouldCallHook: the namespace and object selectors, then the rules (against the
 * request's resource; with `matchPolicy: Equivalent` also against equivalent resources, earlier
 * rules first), then the matchConditions in CEL (a false condition skips the webhook; an error
 * with none false fails the request under `Fail` as a 403, skips it under `Ignore`). Selector
 * problems are reported only for a webhook whose rules match.
 */
export async function shouldCallHook(m: MatchInput, deps: MatchDeps): Promise<Invocation | undefined> {
  const { hook, attrs } = m;
  const ns = await matchNamespace(m, deps);
  if (!ns.matches && !ns.error) return undefined;
  const obj = matchObject(m);
  if (!obj.matches && !obj.error) return undefined;

  const input = (resource: ResourceType): RuleInput => ({
    operation: attrs.operation,
    resource: { group: resource.group, version: resource.version, resource: resource.plural },
    subresource: attrs.subresource,
    namespace: requestNamespace(attrs),
  });
  const rules = hook.hook.rules ?? [];
  let resource: ResourceType | undefined = rules.some((r) => ruleMatches(r, input(attrs.resource)))
    ? attrs.resource
    : undefined;
  if (!resource && hook.hook.matchPolicy === 'Equivalent') {
    const equivalents = equivalentResources(deps.catalog, attrs.resource, attrs.subresource).slice(1);
    outer: for (const rule of rules) {
      for (const e of equivalents) {
        if (ruleMatches(rule, input(e))) {
          resource = e;
          break outer;
        }
      }
    }
  }
  if (!resource) return undefined;
  if (ns.error) throw ns.error;
  if (obj.error) throw obj.error;
  const invocation = { hook, resource };
  if (hook.matchConditions.length > 0 && !(await matchConditions(m, { invocation, deps }))) return undefined;
  return invocation;
}

async function matchNamespace(m: MatchInput, deps: MatchDeps): Promise<{ matches: boolean; error?: StatusError }> {
  const { attrs } = m;
  const namespace = requestNamespace(attrs);
  const forNamespace = isCoreNamespaces(attrs.resource);
  if (namespace === '' && !forNamespace) return { matches: true };
  const parsed = m.hook.namespaceSelector;
  if ('error' in parsed) return { matches: false, error: internalError(parsed.error) };
  if (parsed.selector.isEmpty()) return { matches: true };
  let labels: Record<string, string> | undefined;
  if (forNamespace && attrs.subresource === '' && (attrs.operation === 'CREATE' || attrs.operation === 'UPDATE')) {
    labels = m.current.object?.metadata.labels ?? {};
  } else {
    labels = await deps.namespaceLabels(namespace);
    if (!labels) return { matches: false, error: notFound({ group: '', resource: 'namespaces' }, namespace) };
  }
  return { matches: parsed.selector.matches(labels) };
}

function matchObject(m: MatchInput): { matches: boolean; error?: StatusError } {
  const parsed = m.hook.objectSelector;
  if ('error' in parsed) return { matches: false, error: internalError(parsed.error) };
  const s = parsed.selector;
  if (s.isEmpty()) return { matches: true };
  const matches = (o: ApiObject | undefined): boolean => o !== undefined && s.matches(o.metadata.labels ?? {});
  return { matches: matches(m.current.object) || matches(m.current.oldObject) };
}

/** Kubernetes' matchconditions.Matcher, failing by the webhook's failurePolicy. */
async function matchConditions(m: MatchInput, o: { invocation: Invocation; deps: MatchDeps }): Promise<boolean> {
  const { hook, attrs } = m;
  const v = await m.versioned(o.invocation.resource);
  const vars = conditionVariables({
    object: v.object,
    oldObject: v.oldObject,
    request: admissionRequest(attrs, o.invocation.resource),
    authorizer: o.deps.authorizer,
    user: attrs.user,
  });
  const errors: string[] = [];
  for (const c of hook.matchConditions) {
    const result = c.program ? await evaluateCondition(c.program, vars) : new Error(c.error ?? 'not compiled');
    if (result === false) return false;
    if (result instanceof Error) errors.push(result.message);
  }
  if (errors.length === 0) return true;
  if (hook.hook.failurePolicy === 'Ignore') return false;
  throw admissionForbidden(attrs, errors.length === 1 ? (errors[0] ?? '') : `[${errors.join(', ')}]`);
}

/** The request as the webhook and CEL see it, with `resource` the matched (maybe equivalent) one. */
export function admissionRequest(attrs: AdmissionAttributes, matched: ResourceType): CelAdmissionRequest {
  const r = attrs.resource;
  const user = attrs.user;
  const options: Record<string, unknown> = {
    kind: `${attrs.operation === 'DELETE' ? 'Delete' : attrs.operation === 'UPDATE' ? 'Update' : 'Create'}Options`,
    apiVersion: `${group('meta')}/v1`,
  };
  if (attrs.dryRun) options.dryRun = ['All'];
  return {
    kind: { group: matched.group, version: matched.version, kind: matched.kind },
    resource: { group: matched.group, version: matched.version, resource: matched.plural },
    subResource: attrs.subresource,
    requestKind: { group: r.group, version: r.version, kind: r.kind },
    requestResource: { group: r.group, version: r.version, resource: r.plural },
    requestSubResource: attrs.subresource,
    name: attrs.name,
    namespace: requestNamespace(attrs),
    operation: attrs.operation,
    userInfo: {
      username: user?.name ?? '',
      uid: user?.uid ?? '',
      groups: user?.groups ?? [],
      extra: user?.extra ?? {},
    },
    dryRun: attrs.dryRun,
    options: attrs.operation === 'CONNECT' ? null : options,
  };
}
