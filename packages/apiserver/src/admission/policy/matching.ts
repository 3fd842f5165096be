/**
 * Which requests a policy's matchConstraints (or a binding's matchResources) select, as
 * Kubernetes' policy matcher: the namespace selector (cluster-scoped requests pass, a
 * namespace's own labels on its create and update), the object selector (new or old object),
 * excludeResourceRules, then resourceRules (none: everything), with `Equivalent` also matching
 * the same resource in another served version. Selector and namespace errors count only when
 * the rules match.
 */
import { notFound, type ApiObject, type Catalog, type MatchResources, type RuleWithOperations } from '@svc/api';
import { labelSelectorFromObject, type LabelSelector } from '@svc/machinery';
import type { AdmissionAttributes } from '../admission.js';

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** A match: the resource and kind the policy sees (an equivalent version's under `Equivalent`). */
export interface Match {
  resource: GroupVersionResource;
  kind: GroupVersionKind;
}

export interface MatchDeps {
  catalog: Catalog;
  /** The namespace, or undefined when it does not exist. */
  namespace(name: string): Promise<ApiObject | undefined> | ApiObject | undefined;
}

const selectors = new WeakMap<object, LabelSelector | Error>();

function selectorOf(obj: object | undefined): LabelSelector | Error | undefined {
  if (!obj) return undefined;
  let s = selectors.get(obj);
  if (!s) {
    try {
      s = labelSelectorFromObject(obj);
    } catch (e) {
      s = e as Error;
    }
    selectors.set(obj, s);
  }
  return s;
}

export function isNamespaceResource(a: Pick<AdmissionAttributes, 'resource'>): boolean {
  return a.resource.group === '' && a.resource.plural === 'namespaces';
}

/** The request's namespace as Kubernetes' attributes carry it (a namespace's own name for namespaces). */
export function requestNamespace(a: AdmissionAttributes): string {
  return isNamespaceResource(a) ? a.name : a.namespace;
}

function exactOrWildcard(items: readonly string[] | undefined, value: string): boolean {
  return (items ?? []).some((i) => i === '*' || i === value);
}

/** Kubernetes' rules.Matcher for one rule against a request (as `resource`). */
export function ruleMatches(rule: RuleWithOperations, a: AdmissionAttributes, resource: GroupVersionResource): boolean {
  const scope = rule.scope ?? '*';
  const isNs = resource.group === '' && resource.version === 'v1' && resource.resource === 'namespaces';
  if (scope === 'Namespaced' && (isNs || a.namespace === '')) return false;
  if (scope === 'Cluster' && !(isNs || a.namespace === '')) return false;
  if (scope !== '*' && scope !== 'Namespaced' && scope !== 'Cluster') return false;
  if (!(rule.operations ?? []).some((op) => op === '*' || op === a.operation)) return false;
  if (!exactOrWildcard(rule.apiGroups, resource.group) || !exactOrWildcard(rule.apiVersions, resource.version))
    return false;
  return (rule.resources ?? []).some((rs) => {
    const at = rs.indexOf('/');
    const res = at < 0 ? rs : rs.slice(0, at);
    const sub = at < 0 ? '' : rs.slice(at + 1);
    return (res === '*' || res === resource.resource) && (sub === '*' || sub === a.subresource);
  });
}

function own(a: AdmissionAttributes): Match {
  const r = a.resource;
  return {
    resource: { group: r.group, version: r.version, resource: r.plural },
    kind: { group: r.group, version: r.version, kind: r.kind },
  };
}

/** The first rule matching the request (or, under `Equivalent`, an equivalent resource), as Kubernetes. */
function matchRules(
  rules: MatchResources['resourceRules'],
  o: { a: AdmissionAttributes; equivalent: boolean; catalog: Catalog },
): Match | undefined {
  const { a } = o;
  const named = (r: { resourceNames?: string[] }) => !r.resourceNames?.length || r.resourceNames.includes(a.name);
  const self = own(a);
  for (const r of rules ?? []) if (ruleMatches(r, a, self.resource) && named(r)) return self;
  if (!o.equivalent) return undefined;
  const others = o.catalog
    .all()
    .filter((t) => t.group === a.resource.group && t.plural === a.resource.plural && t.version !== a.resource.version);
  for (const r of rules ?? []) {
    for (const t of others) {
      const resource = { group: t.group, version: t.version, resource: t.plural };
      if (ruleMatches(r, a, resource) && named(r))
        return { resource, kind: { group: t.group, version: t.version, kind: t.kind } };
    }
  }
  return undefined;
}

async function namespaceSelectorMatches(
  m: MatchResources,
  o: { a: AdmissionAttributes; deps: MatchDeps },
): Promise<boolean> {
  const { a } = o;
  const isNs = isNamespaceResource(a);
  if (a.namespace === '' && !isNs) return true;
  const sel = selectorOf(m.namespaceSelector);
  if (sel instanceof Error) throw sel;
  if (!sel || sel.isEmpty()) return true;
  if (isNs && a.subresource === '' && (a.operation === 'CREATE' || a.operation === 'UPDATE'))
    return sel.matches(a.object?.metadata.labels ?? {});
  const name = requestNamespace(a);
  const ns = await o.deps.namespace(name);
  if (!ns) throw notFound({ group: '', resource: 'namespaces' }, name);
  return sel.matches(ns.metadata.labels ?? {});
}

function objectSelectorMatches(m: MatchResources, a: AdmissionAttributes): boolean {
  const sel = selectorOf(m.objectSelector);
  if (sel instanceof Error) throw sel;
  if (!sel || sel.isEmpty()) return true;
  const matches = (o: ApiObject | undefined) => o !== undefined && sel.matches(o.metadata.labels ?? {});
  return matches(a.object) || matches(a.oldObject);
}

async function settle<T>(f: () => Promise<T> | T): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await f() };
  } catch (error) {
    return { error };
  }
}

/**
 * Whether `m` selects the request: the match, or undefined. Throws the error Kubernetes would
 * report (a bad selector, a missing namespace) when the rules match but a selector could not
 * be evaluated.
 */
export async function matches(
  m: MatchResources,
  o: { a: AdmissionAttributes; deps: MatchDeps },
): Promise<Match | undefined> {
  const ns = await settle(() => namespaceSelectorMatches(m, o));
  if (ns.value === false) return undefined;
  const obj = await settle(() => objectSelectorMatches(m, o.a));
  if (obj.value === false) return undefined;
  // Defaulting makes it Equivalent; unset reads as Exact, as in Kubernetes' matcher.
  const equivalent = m.matchPolicy === 'Equivalent';
  const ctx = { a: o.a, equivalent, catalog: o.deps.catalog };
  if (matchRules(m.excludeResourceRules, ctx)) return undefined;
  const match = (m.resourceRules ?? []).length === 0 ? own(o.a) : matchRules(m.resourceRules, ctx);
  if (!match) return undefined;
  if (ns.error !== undefined) throw ns.error;
  if (obj.error !== undefined) throw obj.error;
  return match;
}
