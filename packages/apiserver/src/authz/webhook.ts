import { request as httpsRequest } from 'node:https';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { parse as parseCel } from '@marcbachmann/cel-js';
import { group } from '@svc/api';
import type { WebhookTarget } from '../webhook/kubeconfig.js';
import type { AuthorizationAttributes, Authorizer, Decision } from './authorizer.js';

/** Where and how to call the webhook (its kubeconfig-format file, read by `webhook/kubeconfig.ts`). */
export type WebhookConnection = WebhookTarget;

export type FailurePolicy = 'NoOpinion' | 'Deny';

export interface WebhookAuthorizerOptions {
  name: string;
  connection: WebhookConnection;
  /** SubjectAccessReview version sent: `v1beta1` spells groups `group`, `v1` `groups` (as Kubernetes). */
  version: 'v1' | 'v1beta1';
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  timeoutMs: number;
  failurePolicy: FailurePolicy;
  /** CEL expressions over the v1 SubjectAccessReview (`request` = its spec). */
  matchConditions?: readonly string[];
  now?: () => number;
}

type Answer = { decision: Decision; reason?: string };

/** Compiles a CEL match condition; throws with the parser's first line on a syntax error. */
export function compileMatchCondition(expression: string): (vars: Record<string, unknown>) => unknown {
  try {
    return parseCel(expression) as unknown as (vars: Record<string, unknown>) => unknown;
  } catch (e) {
    throw new Error(`compilation failed: ${(e as Error).message.split('\n')[0]}`, { cause: e });
  }
}

/** The `v1` SubjectAccessReview spec of request attributes (matchConditions see this shape). */
export function subjectAccessReviewSpec(
  a: AuthorizationAttributes,
  version: 'v1' | 'v1beta1',
): Record<string, unknown> {
  const spec: Record<string, unknown> = { user: a.user.name };
  if (a.user.uid) spec.uid = a.user.uid;
  if (a.user.groups.length) spec[version === 'v1' ? 'groups' : 'group'] = [...a.user.groups];
  if (a.user.extra && Object.keys(a.user.extra).length) spec.extra = a.user.extra;
  if (a.isResourceRequest) {
    const r: Record<string, string> = {};
    for (const [k, v] of [
      ['namespace', a.namespace],
      ['verb', a.verb],
      ['group', a.apiGroup],
      ['version', a.apiVersion],
      ['resource', a.resource],
      ['subresource', a.subresource],
      ['name', a.name],
    ] as const) {
      if (v) r[k] = v;
    }
    spec.resourceAttributes = r;
  } else {
    spec.nonResourceAttributes = { path: a.path, verb: a.verb };
  }
  return spec;
}

/**
 * Kubernetes' webhook authorizer: POSTs a SubjectAccessReview, `status.allowed` → allow,
 * `status.denied` → deny, else no opinion. Answers are cached per request attributes
 * (allowed for the authorized TTL, the rest for the unauthorized TTL). Failed calls,
 * timeouts and malformed answers are not cached and answer per the failure policy.
 */
export class WebhookAuthorizer implements Authorizer {
  private readonly cache = new Map<string, { answer: Answer; expires: number }>();
  private readonly conditions: Array<(vars: Record<string, unknown>) => unknown>;
  private readonly now: () => number;

  constructor(private readonly o: WebhookAuthorizerOptions) {
    this.conditions = (o.matchConditions ?? []).map(compileMatchCondition);
    this.now = o.now ?? Date.now;
  }

  async authorize(a: AuthorizationAttributes): Promise<Answer> {
    if (this.conditions.length) {
      const request = subjectAccessReviewSpec(a, 'v1');
      let errored: string | undefined;
      for (const c of this.conditions) {
        try {
          const v = c({ request });
          if (v === false) return { decision: 'noOpinion' };
          if (v !== true) errored = 'match condition did not evaluate to a bool';
        } catch (e) {
          errored = (e as Error).message.split('\n')[0];
        }
      }
      if (errored !== undefined) return this.failure(`matchConditions error: ${errored}`);
    }
    const spec = subjectAccessReviewSpec(a, this.o.version);
    const key = JSON.stringify(spec);
    const hit = this.cache.get(key);
    if (hit && hit.expires > this.now()) return hit.answer;
    let status: { allowed?: unknown; denied?: unknown; reason?: unknown };
    try {
      status = await this.call(spec);
    } catch (e) {
      return this.failure(`error contacting webhook: ${(e as Error).message}`);
    }
    if (typeof status.allowed !== 'boolean') return this.failure('webhook answer carries no status.allowed');
    const reason = typeof status.reason === 'string' && status.reason ? status.reason : undefined;
    const answer: Answer = status.allowed
      ? { decision: 'allow', reason }
      : status.denied === true
        ? { decision: 'deny', reason }
        : { decision: 'noOpinion', reason };
    const ttl = status.allowed ? this.o.authorizedTtlMs : this.o.unauthorizedTtlMs;
    if (ttl > 0) this.cache.set(key, { answer, expires: this.now() + ttl });
    if (this.cache.size > 10_000) this.evictExpired();
    return answer;
  }

  private failure(reason: string): Answer {
    return { decision: this.o.failurePolicy === 'Deny' ? 'deny' : 'noOpinion', reason: `${this.o.name}: ${reason}` };
  }

  private evictExpired(): void {
    const now = this.now();
    for (const [k, v] of this.cache) if (v.expires <= now) this.cache.delete(k);
  }

  private call(spec: Record<string, unknown>): Promise<{ allowed?: unknown; denied?: unknown; reason?: unknown }> {
    const c = this.o.connection;
    const body = JSON.stringify({
      apiVersion: `${group('authorization')}/${this.o.version}`,
      kind: 'SubjectAccessReview',
      spec,
    });
    const url = new URL(c.server);
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'Content-Length': String(Buffer.byteLength(body)),
    };
    if (c.token) headers.Authorization = `Bearer ${c.token}`;
    return new Promise((resolvePromise, reject) => {
      const onResponse = (res: IncomingMessage): void => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) {
            reject(new Error(`webhook answered ${res.statusCode}`));
            return;
          }
          try {
            const doc = JSON.parse(text) as { status?: { allowed?: unknown; denied?: unknown; reason?: unknown } };
            if (!doc || typeof doc !== 'object' || !doc.status || typeof doc.status !== 'object')
              throw new Error('no status');
            resolvePromise(doc.status);
          } catch (e) {
            reject(new Error(`malformed webhook answer: ${(e as Error).message}`));
          }
        });
      };
      const opts = { method: 'POST', headers, timeout: this.o.timeoutMs };
      const req =
        url.protocol === 'http:'
          ? httpRequest(url, opts, onResponse)
          : httpsRequest(
              url,
              { ...opts, ca: c.caPem, cert: c.certPem, key: c.keyPem, rejectUnauthorized: !c.insecureSkipTlsVerify },
              onResponse,
            );
      req.on('timeout', () => req.destroy(new Error(`timed out after ${this.o.timeoutMs} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  }
}
