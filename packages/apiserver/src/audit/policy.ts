import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import {
  fieldErrorMessage,
  fieldErrors,
  type AuditLevel,
  type AuditPolicy,
  type AuditPolicyRule,
  type AuditStage,
  type FieldError,
} from '@svc/api';
import { isDns1123Subdomain } from '@svc/machinery';
import type { UserInfo } from '@svc/component-base';

export const AUDIT_LEVELS: readonly AuditLevel[] = ['None', 'Metadata', 'Request', 'RequestResponse'];
export const AUDIT_STAGES: readonly AuditStage[] = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'];

/** `a` records at least as much as `b`. */
export function levelAtLeast(a: AuditLevel, b: AuditLevel): boolean {
  return AUDIT_LEVELS.indexOf(a) >= AUDIT_LEVELS.indexOf(b);
}

/** What the policy decides for one request (Kubernetes' RequestAuditConfig). */
export interface RequestAuditConfig {
  level: AuditLevel;
  omitStages: ReadonlySet<AuditStage>;
  omitManagedFields: boolean;
}

/** The request attributes rules match on: the authenticated user (before impersonation) and the request info. */
export interface PolicyAttributes {
  /** Absent for a request whose authentication failed. */
  user?: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  path: string;
  apiGroup: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

/** A loaded policy and the warnings its lenient reading produced (unknown or duplicate fields). */
export interface LoadedPolicy {
  policy: AuditPolicy;
  warnings: string[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const POLICY_FIELDS = new Set(['apiVersion', 'kind', 'metadata', 'rules', 'omitStages', 'omitManagedFields']);
const RULE_FIELDS = new Set([
  'level',
  'users',
  'userGroups',
  'verbs',
  'resources',
  'namespaces',
  'nonResourceURLs',
  'omitStages',
  'omitManagedFields',
]);
const GROUP_RESOURCE_FIELDS = new Set(['group', 'resources', 'resourceNames']);

/** Reads the policy file (YAML or JSON); throws with one line naming the file on anything unusable. */
export function loadPolicyFile(file: string, o: { apiVersions: readonly string[] }): LoadedPolicy {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`failed to read file path ${JSON.stringify(file)}: ${(e as Error).message}`, { cause: e });
  }
  try {
    return parsePolicy(text, o);
  } catch (e) {
    throw new Error(`${(e as Error).message}: from file ${file}`, { cause: e });
  }
}

/**
 * Decodes and validates a policy as Kubernetes does: the apiVersion must be the audit group's
 * v1, fields of the wrong type fail, unknown fields are only warned about (its lenient
 * fallback), validation errors fail all at once, and a policy without rules is refused.
 */
export function parsePolicy(text: string, o: { apiVersions: readonly string[] }): LoadedPolicy {
  let doc: unknown;
  try {
    doc = parseYaml(text, { uniqueKeys: false });
  } catch (e) {
    throw new Error(`failed decoding: ${(e as Error).message.split('\n')[0] ?? ''}`, { cause: e });
  }
  if (!isObj(doc)) throw new Error('failed decoding: the policy is not an object');
  if (typeof doc.apiVersion !== 'string' || typeof doc.kind !== 'string' || doc.apiVersion === '' || doc.kind === '')
    throw new Error("failed decoding: Object 'Kind' is missing or 'apiVersion' is missing");
  if (!o.apiVersions.includes(doc.apiVersion) || doc.kind !== 'Policy')
    throw new Error(`unknown group version field ${doc.apiVersion}, Kind=${doc.kind} in policy`);
  const warnings: string[] = [];
  unknownFields(doc, { known: POLICY_FIELDS, prefix: '', out: warnings });
  const decode = new Decoder();
  const policy: AuditPolicy = {
    apiVersion: doc.apiVersion,
    kind: 'Policy',
    rules: decode.list(doc.rules, 'rules', (r, path) => decodeRule(decode, { r, path, warnings })),
    omitStages: decode.strings(doc.omitStages, 'omitStages') as AuditStage[],
    omitManagedFields: decode.bool(doc.omitManagedFields, 'omitManagedFields'),
  };
  if (decode.error) throw new Error(`failed decoding: ${decode.error}`);
  const errs = validatePolicy(policy);
  if (errs.length > 0) throw new Error(aggregate(errs.map(fieldErrorMessage)));
  if (policy.rules.length === 0) throw new Error('loaded illegal policy with 0 rules');
  return { policy, warnings };
}

function decodeRule(d: Decoder, a: { r: unknown; path: string; warnings: string[] }): AuditPolicyRule {
  const { path } = a;
  if (!isObj(a.r)) {
    d.fail(`${path}: must be an object`);
    return { level: 'None' };
  }
  const r = a.r;
  unknownFields(r, { known: RULE_FIELDS, prefix: `${path}.`, out: a.warnings });
  const rule: AuditPolicyRule = { level: d.string(r.level, `${path}.level`) as AuditLevel };
  const lists = ['users', 'userGroups', 'verbs', 'namespaces', 'nonResourceURLs'] as const;
  for (const k of lists) {
    const v = d.strings(r[k], `${path}.${k}`);
    if (v) rule[k] = v;
  }
  if (r.resources !== undefined && r.resources !== null) {
    rule.resources = d.list(r.resources, `${path}.resources`, (g, p) => {
      if (!isObj(g)) {
        d.fail(`${p}: must be an object`);
        return {};
      }
      unknownFields(g, { known: GROUP_RESOURCE_FIELDS, prefix: `${p}.`, out: a.warnings });
      return {
        group: g.group === undefined || g.group === null ? undefined : d.string(g.group, `${p}.group`),
        resources: d.strings(g.resources, `${p}.resources`),
        resourceNames: d.strings(g.resourceNames, `${p}.resourceNames`),
      };
    });
  }
  const stages = d.strings(r.omitStages, `${path}.omitStages`);
  if (stages) rule.omitStages = stages as AuditStage[];
  if (r.omitManagedFields !== undefined && r.omitManagedFields !== null)
    rule.omitManagedFields = d.bool(r.omitManagedFields, `${path}.omitManagedFields`);
  return rule;
}

function unknownFields(o: Obj, f: { known: ReadonlySet<string>; prefix: string; out: string[] }): void {
  for (const k of Object.keys(o)) if (!f.known.has(k)) f.out.push(`unknown field "${f.prefix}${k}"`);
}

/** Type-checks values as it decodes them; the first type error is kept. */
class Decoder {
  error?: string;

  fail(msg: string): void {
    this.error ??= msg;
  }

  string(v: unknown, path: string): string {
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') this.fail(`${path}: expected a string, got ${JSON.stringify(v)}`);
    return typeof v === 'string' ? v : '';
  }

  strings(v: unknown, path: string): string[] | undefined {
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
      this.fail(`${path}: expected a list of strings, got ${JSON.stringify(v)}`);
      return undefined;
    }
    return v as string[];
  }

  bool(v: unknown, path: string): boolean {
    if (v === undefined || v === null) return false;
    if (typeof v !== 'boolean') this.fail(`${path}: expected a boolean, got ${JSON.stringify(v)}`);
    return v === true;
  }

  list<T>(v: unknown, path: string, item: (x: unknown, path: string) => T): T[] {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) {
      this.fail(`${path}: expected a list, got ${JSON.stringify(v)}`);
      return [];
    }
    return v.map((x, i) => item(x, `${path}[${i}]`));
  }
}

/** Kubernetes' aggregate of several errors: one as it is, more as `[a, b]`. */
function aggregate(msgs: string[]): string {
  return msgs.length === 1 ? (msgs[0] ?? '') : `[${msgs.join(', ')}]`;
}

/** Kubernetes' policy validation: levels, stages, non-resource URLs, group names, resourceNames. */
export function validatePolicy(p: AuditPolicy): FieldError[] {
  const errs = validateStages(p.omitStages, 'omitStages');
  p.rules.forEach((rule, i) => {
    const path = `rules[${i}]`;
    if (rule.level === ('' as AuditLevel)) errs.push(fieldErrors.required(`${path}.level`, ''));
    else if (!AUDIT_LEVELS.includes(rule.level))
      errs.push(fieldErrors.notSupported(`${path}.level`, rule.level, [...AUDIT_LEVELS]));
    (rule.nonResourceURLs ?? []).forEach((url, j) => {
      if (url === '*') return;
      const p2 = `${path}.nonResourceURLs[${j}]`;
      if (!url.startsWith('/'))
        errs.push(fieldErrors.invalid(p2, url, "non-resource URL rules must begin with a '/' character"));
      if (url !== '' && url.slice(0, -1).includes('*'))
        errs.push(
          fieldErrors.invalid(p2, url, "non-resource URL wildcards '*' must be the final character of the rule"),
        );
    });
    for (const gr of rule.resources ?? []) {
      if (gr.group) {
        const msgs = isDns1123Subdomain(gr.group);
        if (msgs.length > 0) errs.push(fieldErrors.invalid(`${path}.resources.group`, gr.group, msgs.join(',')));
      }
      if ((gr.resourceNames ?? []).length > 0 && (gr.resources ?? []).length === 0)
        errs.push(
          fieldErrors.invalid(
            `${path}.resources.resourceNames`,
            gr.resourceNames,
            'using resourceNames requires at least one resource',
          ),
        );
    }
    errs.push(...validateStages(rule.omitStages, `${path}.omitStages`));
    if (
      (rule.nonResourceURLs ?? []).length > 0 &&
      ((rule.resources ?? []).length > 0 || (rule.namespaces ?? []).length > 0)
    )
      errs.push(
        fieldErrors.invalid(
          `${path}.nonResourceURLs`,
          rule.nonResourceURLs,
          'rules cannot apply to both regular resources and non-resource URLs',
        ),
      );
  });
  return errs;
}

function validateStages(stages: readonly string[] | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  (stages ?? []).forEach((s, i) => {
    if (!(AUDIT_STAGES as readonly string[]).includes(s))
      errs.push(fieldErrors.invalid(`${path}[${i}]`, s, `allowed stages are ${AUDIT_STAGES.join(',')}`));
  });
  return errs;
}

/**
 * Kubernetes' policy rule evaluator: the first matching rule decides; its stages to omit are
 * the policy's and its own; no match is level None.
 */
export class PolicyEvaluator {
  private readonly rules: ReadonlyArray<{ rule: AuditPolicyRule; config: RequestAuditConfig }>;
  private readonly noMatch: RequestAuditConfig;

  constructor(policy: AuditPolicy) {
    const policyStages = policy.omitStages ?? [];
    const policyOmitManaged = policy.omitManagedFields === true;
    this.rules = policy.rules.map((rule) => ({
      rule,
      config: {
        level: rule.level,
        omitStages: new Set([...policyStages, ...(rule.omitStages ?? [])]),
        omitManagedFields: rule.omitManagedFields ?? policyOmitManaged,
      },
    }));
    this.noMatch = { level: 'None', omitStages: new Set(policyStages), omitManagedFields: policyOmitManaged };
  }

  evaluate(attrs: PolicyAttributes): RequestAuditConfig {
    for (const { rule, config } of this.rules) if (ruleMatches(rule, attrs)) return config;
    return this.noMatch;
  }
}

function has(list: readonly string[] | undefined, v: string): boolean {
  return list !== undefined && list.includes(v);
}

function ruleMatches(r: AuditPolicyRule, a: PolicyAttributes): boolean {
  if (r.users?.length && (!a.user || !has(r.users, a.user.name))) return false;
  if (r.userGroups?.length && (!a.user || !a.user.groups.some((g) => has(r.userGroups, g)))) return false;
  if (r.verbs?.length && !has(r.verbs, a.verb)) return false;
  if (r.namespaces?.length || r.resources?.length) return resourceMatches(r, a);
  if (r.nonResourceURLs?.length) return !a.isResourceRequest && r.nonResourceURLs.some((s) => pathMatches(a.path, s));
  return true;
}

function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.replace(/\*+$/, ''));
}

function resourceMatches(r: AuditPolicyRule, a: PolicyAttributes): boolean {
  if (!a.isResourceRequest) return false;
  // Cluster-scoped resources have the empty namespace.
  if (r.namespaces?.length && !has(r.namespaces, a.namespace)) return false;
  if (!r.resources?.length) return true;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  for (const gr of r.resources) {
    if ((gr.group ?? '') !== a.apiGroup) continue;
    if (!gr.resources?.length) return true;
    if (gr.resourceNames?.length && !has(gr.resourceNames, a.name)) continue;
    for (const res of gr.resources) {
      if (res === combined || res === '*') return true;
      if (a.subresource && res.startsWith('*/') && res.slice(2) === a.subresource) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === a.resource) return true;
    }
  }
  return false;
}
