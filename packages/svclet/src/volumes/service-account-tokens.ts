import { group, type Pod } from '@svc/api';
import type { RestClient } from '@svc/client';
import { MountError, type TokenProjection } from './volume-sources.js';

/** Kubernetes' default `expirationSeconds` of a projected token (1 h). */
const DEFAULT_EXPIRATION_SECONDS = 3600;
/** A token older than this is renewed however long it has left (Kubernetes: 24 h). */
const MAX_TTL_MS = 24 * 3600 * 1000;

interface Cached {
  token: string;
  issuedAtMs: number;
  expiresAtMs: number;
}

interface TokenRequestStatus {
  status?: { token?: string; expirationTimestamp?: string };
  message?: string;
}

/**
 * Service-account tokens for projected volumes, from the TokenRequest API
 * (`serviceaccounts/<name>/token`, bound to the pod), cached per pod, account, audience and
 * lifetime, and renewed once 80% of the lifetime has passed (or after 24 h), as Kubernetes'
 * token manager does. The volume's resync writes the renewed token.
 */
export class ServiceAccountTokens {
  private readonly cache = new Map<string, Cached>();

  constructor(private readonly client: RestClient) {}

  async token(pod: Pod, p: TokenProjection): Promise<string> {
    const m = pod.metadata;
    const account = pod.spec.serviceAccountName || 'default';
    const seconds = p.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
    const key = `${m.uid ?? ''}/${account}/${p.audience ?? ''}/${seconds}`;
    const cached = this.cache.get(key);
    if (cached && !needsRefresh(cached, Date.now())) return cached.token;
    const body = {
      apiVersion: `${group('authentication')}/v1`,
      kind: 'TokenRequest',
      spec: {
        audiences: p.audience ? [p.audience] : [],
        expirationSeconds: seconds,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: m.name ?? '', uid: m.uid ?? '' },
      },
    };
    const path = `/api/v1/namespaces/${encodeURIComponent(m.namespace ?? '')}/serviceaccounts/${encodeURIComponent(account)}/token`;
    const res = await this.client.request('POST', path, { body });
    let answer: TokenRequestStatus = {};
    try {
      answer = res.json<TokenRequestStatus>();
    } catch {
      // not JSON: reported below
    }
    const token = answer.status?.token;
    if (res.status !== 201 && res.status !== 200) {
      // A token still valid serves while the API refuses a renewal.
      if (cached && cached.expiresAtMs > Date.now()) return cached.token;
      throw new MountError(
        `failed to fetch token: ${answer.message ?? `the server answered ${res.status} to the TokenRequest`}`,
      );
    }
    if (!token) throw new MountError('failed to fetch token: the TokenRequest answer has no token');
    const now = Date.now();
    const exp = Date.parse(answer.status?.expirationTimestamp ?? '');
    this.cache.set(key, { token, issuedAtMs: now, expiresAtMs: Number.isFinite(exp) ? exp : now + seconds * 1000 });
    return token;
  }

  /** Forgets the tokens of a pod that is gone. */
  forget(podUid: string): void {
    for (const k of this.cache.keys()) if (k.startsWith(`${podUid}/`)) this.cache.delete(k);
  }

  /** The earliest time a cached token of `podUid` is due for renewal (ms), or undefined. */
  nextRefreshMs(podUid: string): number | undefined {
    let next: number | undefined;
    for (const [k, c] of this.cache) {
      if (!k.startsWith(`${podUid}/`)) continue;
      const at = refreshAt(c);
      next = next === undefined ? at : Math.min(next, at);
    }
    return next;
  }
}

/** When a token issued at `issuedAtMs` and expiring at `expiresAtMs` is renewed: at 80% of its life, at most 24 h after issue. */
export function refreshAt(c: { issuedAtMs: number; expiresAtMs: number }): number {
  return Math.min(c.issuedAtMs + 0.8 * (c.expiresAtMs - c.issuedAtMs), c.issuedAtMs + MAX_TTL_MS);
}

function needsRefresh(c: Cached, now: number): boolean {
  return now >= refreshAt(c);
}
