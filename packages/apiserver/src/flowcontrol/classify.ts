import type { FlowSchema, FlowSchemaSubject, PolicyRulesWithSubjects } from '@svc/api';
import type { UserInfo } from '@svc/component-base';
import type { RequestInfo } from '../endpoints/request-info.js';

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

function subjectMatches(s: FlowSchemaSubject, user: UserInfo): boolean {
  switch (s.kind) {
    case 'User':
      return s.user?.name === '*' || s.user?.name === user.name;
    case 'Group':
      return s.group?.name === '*' || user.groups.includes(s.group?.name ?? '');
    case 'ServiceAccount': {
      const sa = s.serviceAccount;
      if (!sa || !user.name.startsWith(SERVICE_ACCOUNT_PREFIX)) return false;
      const [namespace, name] = user.name.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
      return namespace === sa.namespace && (sa.name === '*' || sa.name === name);
    }
    default:
      return false;
  }
}

const has = (list: readonly string[] | undefined, v: string): boolean =>
  !!list && (list.includes('*') || list.includes(v));

function ruleMatches(rule: PolicyRulesWithSubjects, user: UserInfo, info: RequestInfo): boolean {
  if (!rule.subjects.some((s) => subjectMatches(s, user))) return false;
  if (info.isResourceRequest) {
    const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
    return (rule.resourceRules ?? []).some(
      (r) =>
        has(r.verbs, info.verb) &&
        has(r.apiGroups, info.apiGroup) &&
        (r.resources.includes('*') || r.resources.includes(resource)) &&
        (info.namespace === '' ? r.clusterScope === true : has(r.namespaces, info.namespace)),
    );
  }
  return (rule.nonResourceRules ?? []).some(
    (r) =>
      has(r.verbs, info.verb) &&
      r.nonResourceURLs.some(
        (u) => u === '*' || u === info.path || (u.endsWith('*') && info.path.startsWith(u.slice(0, -1))),
      ),
  );
}

/** Does the schema take this request (any of its rules matches user and request). */
export function schemaMatches(fs: FlowSchema, user: UserInfo, info: RequestInfo): boolean {
  return (fs.spec.rules ?? []).some((r) => ruleMatches(r, user, info));
}

/** The flow within the schema: the user's name (ByUser), the request's namespace (ByNamespace), or none. */
export function flowDistinguisher(fs: FlowSchema, user: UserInfo, info: RequestInfo): string {
  switch (fs.spec.distinguisherMethod?.type) {
    case 'ByUser':
      return user.name;
    case 'ByNamespace':
      return info.namespace;
    default:
      return '';
  }
}

/** Kubernetes' order: lower matchingPrecedence first, ties by name. */
export function byPrecedence(a: FlowSchema, b: FlowSchema): number {
  const d = (a.spec.matchingPrecedence ?? 1000) - (b.spec.matchingPrecedence ?? 1000);
  if (d !== 0) return d;
  const [an, bn] = [a.metadata.name ?? '', b.metadata.name ?? ''];
  return an < bn ? -1 : an > bn ? 1 : 0;
}
