import { group, type Catalog, type ResourceType, type RuleWithOperations } from '@svc/api';

/** A request as a rule sees it: the operation, the resource (maybe an equivalent one), its subresource and namespace. */
export interface RuleInput {
  operation: string;
  resource: { group: string; version: string; resource: string };
  subresource: string;
  /** '' for cluster-scoped objects. */
  namespace: string;
}

const exactOrWildcard = (items: readonly string[] | undefined, requested: string): boolean =>
  (items ?? []).some((i) => i === '*' || i === requested);

const isNamespaceResource = (r: RuleInput['resource']): boolean =>
  r.group === '' && r.version === 'v1' && r.resource === 'namespaces';

/** Kubernetes' rules.Matcher: scope, operation, group, version, and resource/subresource (`*` anywhere). */
export function ruleMatches(rule: RuleWithOperations, a: RuleInput): boolean {
  return scopeMatches(rule.scope, a) && operationMatches(rule, a) && resourceMatches(rule, a);
}

function scopeMatches(scope: string | undefined, a: RuleInput): boolean {
  // Namespaces are cluster scoped, though their requests carry their own name as namespace.
  switch (scope ?? '*') {
    case '*':
      return true;
    case 'Namespaced':
      return !isNamespaceResource(a.resource) && a.namespace !== '';
    case 'Cluster':
      return isNamespaceResource(a.resource) || a.namespace === '';
    default:
      return false;
  }
}

function operationMatches(rule: RuleWithOperations, a: RuleInput): boolean {
  return (rule.operations ?? []).some((op) => op === '*' || op === a.operation);
}

function resourceMatches(rule: RuleWithOperations, a: RuleInput): boolean {
  if (!exactOrWildcard(rule.apiGroups, a.resource.group) || !exactOrWildcard(rule.apiVersions, a.resource.version))
    return false;
  return (rule.resources ?? []).some((resSub) => {
    const slash = resSub.indexOf('/');
    const res = slash < 0 ? resSub : resSub.slice(0, slash);
    const sub = slash < 0 ? '' : resSub.slice(slash + 1);
    return (res === '*' || res === a.resource.resource) && (sub === '*' || sub === a.subresource);
  });
}

const EXEMPT_KINDS = new Set([
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionPolicyBinding',
]);

/** Kubernetes' IsExemptAdmissionConfigurationResource: webhooks never see the objects that configure admission. */
export function isExemptConfigurationResource(r: ResourceType): boolean {
  return r.group === group('admissionregistration') && EXEMPT_KINDS.has(r.kind);
}

/**
 * The resources equivalent to `r` for `matchPolicy: Equivalent` (Kubernetes'
 * EquivalentResourceMapper): the types served from the same storage — the other versions of a
 * group's resource (a CRD's versions), and a type stored as another (events.<suffix>/v1 Events
 * are core Events) — that serve `subresource`. `r` itself comes first.
 */
export function equivalentResources(catalog: Catalog, r: ResourceType, subresource: string): ResourceType[] {
  const identity = (x: ResourceType): string => {
    const stored = x.storedAs ?? x;
    return `${stored.group}/${stored.plural}`;
  };
  const id = identity(r);
  const others = catalog
    .all()
    .filter((x) => x !== r && identity(x) === id && (subresource === '' || x.subresources.includes(subresource)));
  return [r, ...others];
}
