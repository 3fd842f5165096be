import { readFileSync } from 'node:fs';
import { naming } from '@svc/api';
import type { UserInfo } from '@svc/component-base';
import type { AuthorizationAttributes, Authorizer, Decision } from './authorizer.js';

/** One ABAC policy's spec (Kubernetes' `abac.authorization.<prefix>/v1beta1` Policy). */
export interface AbacPolicySpec {
  user?: string;
  group?: string;
  readonly?: boolean;
  apiGroup?: string;
  namespace?: string;
  resource?: string;
  nonResourcePath?: string;
}

/** The Policy apiVersion under the current naming (`abac.authorization.<label prefix>/v1beta1`). */
export function abacApiVersion(): string {
  return `abac.authorization.${naming().labelPrefix}/v1beta1`;
}

/** Parses a policy file: one JSON Policy per line; blank lines and `#` comments are skipped. Throws naming the line. */
export function parseAbacPolicies(text: string, file = 'policy file'): AbacPolicySpec[] {
  const out: AbacPolicySpec[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').trim();
    if (!line || line.startsWith('#')) continue;
    let doc: { apiVersion?: unknown; kind?: unknown; spec?: unknown };
    try {
      doc = JSON.parse(line) as typeof doc;
    } catch (e) {
      throw new Error(`${file}:${i + 1}: ${(e as Error).message}`, { cause: e });
    }
    if (doc.apiVersion !== abacApiVersion() || doc.kind !== 'Policy') {
      throw new Error(`${file}:${i + 1}: expected apiVersion ${abacApiVersion()} and kind Policy`);
    }
    if (!doc.spec || typeof doc.spec !== 'object') throw new Error(`${file}:${i + 1}: spec is required`);
    out.push(doc.spec as AbacPolicySpec);
  }
  return out;
}

function subjectMatches(p: AbacPolicySpec, u: UserInfo): boolean {
  let matched = false;
  if (p.user) {
    if (p.user !== '*' && p.user !== u.name) return false;
    matched = true;
  }
  if (p.group) {
    if (p.group !== '*' && !u.groups.includes(p.group)) return false;
    matched = true;
  }
  return matched;
}

const READ_ONLY = new Set(['get', 'list', 'watch']);

/** Kubernetes' ABAC matching: subject, readonly, then resource (namespace, resource, apiGroup) or non-resource path (trailing `*`). */
export function abacMatches(p: AbacPolicySpec, a: AuthorizationAttributes): boolean {
  if (!subjectMatches(p, a.user)) return false;
  if (p.readonly && !READ_ONLY.has(a.verb)) return false;
  if (a.isResourceRequest) {
    const eq = (want: string | undefined, got: string): boolean => want === '*' || (want ?? '') === got;
    return eq(p.namespace, a.namespace) && eq(p.resource, a.resource) && eq(p.apiGroup, a.apiGroup);
  }
  const np = p.nonResourcePath;
  if (!np) return false;
  return np === '*' || np === a.path || (np.endsWith('*') && a.path.startsWith(np.replace(/\*+$/, '')));
}

/** `--authorization-policy-file`: allow on the first matching policy, else no opinion (ABAC never denies). */
export class AbacAuthorizer implements Authorizer {
  constructor(private readonly policies: readonly AbacPolicySpec[]) {}

  static fromFile(path: string): AbacAuthorizer {
    return new AbacAuthorizer(parseAbacPolicies(readFileSync(path, 'utf8'), path));
  }

  async authorize(a: AuthorizationAttributes): Promise<{ decision: Decision; reason?: string }> {
    return this.policies.some((p) => abacMatches(p, a))
      ? { decision: 'allow' }
      : { decision: 'noOpinion', reason: 'No policy matched.' };
  }
}
