import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { group } from '@svc/api';
import { AuthenticationFailed, bearerToken, type Authenticator } from './authenticator.js';
import type { UserInfo } from './user.js';

/** The one call delegated authentication and authorization make (a `RestClient` is one). */
export interface ReviewPoster {
  request(method: string, path: string, opts: { body: object }): Promise<{ status: number; json<T = unknown>(): T }>;
}

/** A small TTL cache; entries expire `ttlMs` after they were set. */
class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  constructor(private readonly max = 4096) {}

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (Date.now() >= e.until) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, until: Date.now() + ttlMs });
  }
}

interface ReviewedUser {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/**
 * Delegated authentication of bearer tokens: each token is checked with a TokenReview at the
 * API server (`--authentication-kubeconfig`), and the answer, either way, is kept for
 * `cacheTtlMs` (`--authentication-token-webhook-cache-ttl`). An API server that cannot be
 * asked fails the request (→ 401), as Kubernetes does.
 */
export class TokenReviewAuthenticator implements Authenticator {
  private readonly cache = new TtlCache<UserInfo | null>();

  constructor(
    private readonly client: ReviewPoster,
    private readonly cacheTtlMs: number,
  ) {}

  async authenticate(req: IncomingMessage): Promise<UserInfo | null> {
    const token = bearerToken(req);
    if (token === undefined) return null;
    const key = createHash('sha256').update(token).digest('hex');
    let user = this.cache.get(key);
    if (user === undefined) {
      user = await this.review(token);
      this.cache.set(key, user, this.cacheTtlMs);
    }
    if (!user) throw new AuthenticationFailed('invalid bearer token');
    return user;
  }

  private async review(token: string): Promise<UserInfo | null> {
    const res = await this.client.request('POST', `/apis/${group('authentication')}/v1/tokenreviews`, {
      body: { apiVersion: `${group('authentication')}/v1`, kind: 'TokenReview', spec: { token } },
    });
    if (res.status !== 201 && res.status !== 200)
      throw new AuthenticationFailed(`token review failed with status ${res.status}`);
    const status = res.json<{ status?: { authenticated?: boolean; user?: ReviewedUser } }>().status;
    if (!status?.authenticated || !status.user?.username) return null;
    const u = status.user;
    return { name: u.username ?? '', uid: u.uid, groups: u.groups ?? [], extra: u.extra };
  }
}

/** What a request asks for, in SubjectAccessReview terms (only non-resource paths here). */
export interface PathAttributes {
  user: UserInfo;
  verb: string;
  path: string;
}

export type Decision = { allowed: true } | { allowed: false; reason: string };

/** `resourceAttributes` of a SubjectAccessReview (authorization/v1). */
export interface ResourceAttributes {
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export interface PathAuthorizer {
  authorize(a: PathAttributes): Promise<Decision>;
}

export interface SubjectAccessReviewAuthorizerOptions {
  /** Absent (`--authorization-kubeconfig` empty): every request not on an always-allowed path is forbidden. */
  client?: ReviewPoster;
  /** `--authorization-always-allow-paths`: exact paths, or prefixes ending in `*`. */
  alwaysAllowPaths: readonly string[];
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  /**
   * The resource a request stands for (the svclet's `nodes/<subresource>`); absent, or returning
   * undefined, the review asks about the non-resource path.
   */
  resourceAttributes?: (a: PathAttributes) => ResourceAttributes | undefined;
}

/**
 * Delegated authorization: a SubjectAccessReview at the API server for each (user, verb, path),
 * answers cached for the authorized / unauthorized TTLs. Always-allowed paths are decided
 * here without asking anyone.
 */
export class SubjectAccessReviewAuthorizer implements PathAuthorizer {
  private readonly cache = new TtlCache<Decision>();

  constructor(private readonly o: SubjectAccessReviewAuthorizerOptions) {}

  /** True when `path` needs neither authentication nor authorization. */
  alwaysAllowed(path: string): boolean {
    return this.o.alwaysAllowPaths.some((p) => (p.endsWith('*') ? path.startsWith(p.slice(0, -1)) : p === path));
  }

  async authorize(a: PathAttributes): Promise<Decision> {
    if (this.alwaysAllowed(a.path)) return { allowed: true };
    if (!this.o.client) return { allowed: false, reason: 'no authorization-kubeconfig is configured' };
    const resourceAttributes = this.o.resourceAttributes?.(a);
    const spec = {
      user: a.user.name,
      uid: a.user.uid,
      groups: a.user.groups,
      extra: a.user.extra,
      ...(resourceAttributes ? { resourceAttributes } : { nonResourceAttributes: { path: a.path, verb: a.verb } }),
    };
    const key = JSON.stringify(spec);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const res = await this.o.client.request('POST', `/apis/${group('authorization')}/v1/subjectaccessreviews`, {
      body: { apiVersion: `${group('authorization')}/v1`, kind: 'SubjectAccessReview', spec },
    });
    if (res.status !== 201 && res.status !== 200)
      throw new Error(`subject access review failed with status ${res.status}`);
    const status = res.json<{ status?: { allowed?: boolean; reason?: string } }>().status;
    const d: Decision = status?.allowed ? { allowed: true } : { allowed: false, reason: status?.reason ?? '' };
    this.cache.set(key, d, d.allowed ? this.o.authorizedTtlMs : this.o.unauthorizedTtlMs);
    return d;
  }
}
