import type { AuthorizationAttributes } from '../authorizer.js';
import type { PolicyRule } from '../../registry/strategies/rbac.js';

export type { PolicyRule };

const has = (list: readonly string[] | undefined, v: string): boolean =>
  !!list && (list.includes('*') || list.includes(v));

function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const r of rule.resources ?? []) {
    if (r === '*' || r === combined) return true;
    if (subresource && r === `*/${subresource}`) return true;
  }
  return false;
}

/** Non-resource URL match: `*`, the exact path, or a prefix ending in `*`. */
export function nonResourceUrlMatches(pattern: string, path: string): boolean {
  if (pattern === '*' || pattern === path) return true;
  return pattern.endsWith('*') && path.startsWith(pattern.slice(0, -1));
}

/** Kubernetes' RuleAllows: one rule against one request's attributes. */
export function ruleAllows(
  a: Pick<
    AuthorizationAttributes,
    'isResourceRequest' | 'verb' | 'apiGroup' | 'resource' | 'subresource' | 'name' | 'path'
  >,
  rule: PolicyRule,
): boolean {
  if (!has(rule.verbs, a.verb)) return false;
  if (!a.isResourceRequest) return (rule.nonResourceURLs ?? []).some((u) => nonResourceUrlMatches(u, a.path));
  if (!has(rule.apiGroups, a.apiGroup)) return false;
  if (!resourceMatches(rule, a.resource, a.subresource)) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(a.name);
}

/** One atomic permission: one verb on one group/resource/name, or one verb on one URL. */
interface Atom {
  verb: string;
  apiGroup?: string;
  resource?: string;
  name?: string;
  url?: string;
}

function breakdown(rule: PolicyRule): Atom[] {
  const out: Atom[] = [];
  for (const verb of rule.verbs ?? []) {
    for (const url of rule.nonResourceURLs ?? []) out.push({ verb, url });
    for (const apiGroup of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        const names = rule.resourceNames ?? [];
        if (names.length === 0) out.push({ verb, apiGroup, resource });
        else for (const name of names) out.push({ verb, apiGroup, resource, name });
      }
    }
  }
  return out;
}

function resourceCovers(owner: readonly string[], wanted: string): boolean {
  if (owner.includes('*') || owner.includes(wanted)) return true;
  const slash = wanted.indexOf('/');
  if (slash < 0) return false;
  return owner.includes(`*${wanted.slice(slash)}`) || owner.includes(`${wanted.slice(0, slash)}/*`);
}

function atomCovered(owner: PolicyRule, a: Atom): boolean {
  if (!has(owner.verbs, a.verb)) return false;
  if (a.url !== undefined) {
    const url = a.url;
    return (owner.nonResourceURLs ?? []).some((u) => u === url || (u.endsWith('*') && url.startsWith(u.slice(0, -1))));
  }
  if (!has(owner.apiGroups, a.apiGroup ?? '')) return false;
  if (!resourceCovers(owner.resources ?? [], a.resource ?? '')) return false;
  const names = owner.resourceNames ?? [];
  return names.length === 0 || (a.name !== undefined && names.includes(a.name));
}

/**
 * Kubernetes' validation.Covers: the rules of `servant` that `owner` does not hold (each
 * broken down to one verb × group × resource × name, or one verb × URL). Empty = covered.
 */
export function uncoveredRules(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const rule of servant) {
    for (const a of breakdown(rule)) {
      if (owner.some((o) => atomCovered(o, a))) continue;
      missing.push(
        a.url !== undefined
          ? { verbs: [a.verb], nonResourceURLs: [a.url] }
          : {
              verbs: [a.verb],
              apiGroups: [a.apiGroup ?? ''],
              resources: [a.resource ?? ''],
              ...(a.name !== undefined ? { resourceNames: [a.name] } : {}),
            },
      );
    }
  }
  return missing;
}

/** A rule as Kubernetes prints it in escalation errors: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`. */
export function compactRuleString(r: PolicyRule): string {
  const q = (l: readonly string[]): string => `[${l.map((x) => JSON.stringify(x)).join(' ')}]`;
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${q(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${q(r.resources)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${q(r.resourceNames)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${q(r.nonResourceURLs)}`);
  parts.push(`Verbs:${q(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}
