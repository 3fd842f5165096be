/** RBAC rule arithmetic as Kubernetes' helpers do it (component-helpers auth/rbac/validation, kubectl util/rbac). */

export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** Equivalent rules of one verb, one resource and at most one resource name each. */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs ?? []) {
        if ((rule.resourceNames ?? []).length > 0) {
          for (const name of rule.resourceNames ?? []) {
            out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] });
          }
        } else out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) {
    for (const verb of rule.verbs ?? []) out.push({ nonResourceURLs: [url], verbs: [verb] });
  }
  return out;
}

const has = (set: string[] | undefined, x: string): boolean => (set ?? []).includes(x);
const hasAll = (set: string[] | undefined, xs: string[] | undefined): boolean => (xs ?? []).every((x) => has(set, x));

function resourceCoversAll(set: string[] | undefined, covers: string[] | undefined): boolean {
  if (has(set, '*') || hasAll(set, covers)) return true;
  return (covers ?? []).every((path) => {
    if (has(set, path)) return true;
    const i = path.indexOf('/');
    return i >= 0 && has(set, `*/${path.slice(i + 1)}`);
  });
}

function nonResourceUrlCovers(owner: string, sub: string): boolean {
  return owner === sub || (owner.endsWith('*') && sub.startsWith(owner.replace(/\*+$/, '')));
}

function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = has(owner.verbs, '*') || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, '*') || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = resourceCoversAll(owner.resources, sub.resources);
  const urls = (sub.nonResourceURLs ?? []).every((p) =>
    (owner.nonResourceURLs ?? []).some((o) => nonResourceUrlCovers(o, p)),
  );
  const subNames = sub.resourceNames ?? [];
  const ownNames = owner.resourceNames ?? [];
  const names = subNames.length === 0 ? ownNames.length === 0 : ownNames.length === 0 || hasAll(ownNames, subNames);
  return verbs && groups && resources && urls && names;
}

/** The broken-down `servant` rules that no `owner` rule covers. */
export function uncovered(owner: PolicyRule[], servant: PolicyRule[]): PolicyRule[] {
  return servant.flatMap(breakdownRule).filter((sub) => !owner.some((o) => ruleCovers(o, sub)));
}

/** kubectl's CompactRules: simple rules (one group, one resource, at most one name) that differ only by verbs merge. */
export function compactRules(rules: PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const r of rules) {
    const isSimple =
      (r.resourceNames ?? []).length <= 1 &&
      (r.nonResourceURLs ?? []).length === 0 &&
      (r.apiGroups ?? []).length === 1 &&
      (r.resources ?? []).length === 1;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([
      r.apiGroups?.[0],
      r.resources?.[0],
      (r.resourceNames ?? []).length > 0,
      r.resourceNames?.[0] ?? '',
    ]);
    const existing = simple.get(key);
    if (existing) {
      for (const v of r.verbs ?? []) if (!has(existing.verbs, v)) existing.verbs = [...(existing.verbs ?? []), v];
    } else simple.set(key, { ...r, verbs: [...(r.verbs ?? [])] });
  }
  out.push(...simple.values());
  return out;
}

/** Go's `%v` of a string slice: `[a b]`. */
export function goList(xs: string[] | undefined): string {
  return `[${(xs ?? []).join(' ')}]`;
}

/** The generated protobuf String() of a PolicyRule, which kubectl sorts rules by. */
export function ruleString(r: PolicyRule): string {
  return `&PolicyRule{Verbs:${goList(r.verbs)},APIGroups:${goList(r.apiGroups)},Resources:${goList(r.resources)},ResourceNames:${goList(r.resourceNames)},NonResourceURLs:${goList(r.nonResourceURLs)},}`;
}

/** Go's `%+v` of a PolicyRule: `{Verbs:[get] APIGroups:[] Resources:[pods] ResourceNames:[] NonResourceURLs:[]}`. */
export function ruleText(r: PolicyRule): string {
  return `{Verbs:${goList(r.verbs)} APIGroups:${goList(r.apiGroups)} Resources:${goList(r.resources)} ResourceNames:${goList(r.resourceNames)} NonResourceURLs:${goList(r.nonResourceURLs)}}`;
}

/** kubectl's CombineResourceGroup: `pods`, `deployments.apps`, `pods/log`, `deployments.apps/scale`. */
export function combineResourceGroup(resources: string[] | undefined, groups: string[] | undefined): string {
  const first = resources?.[0];
  if (first === undefined) return '';
  const [res, sub] = first.split(/\/(.*)/s, 2);
  let out = res ?? '';
  const g = groups?.[0];
  if (g) out += `.${g}`;
  if (sub !== undefined && first.includes('/')) out += `/${sub}`;
  return out;
}
