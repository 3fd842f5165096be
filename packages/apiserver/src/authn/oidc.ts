import { createLocalJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import type { AudienceAgnosticTokenAuthenticator } from './authenticator.js';
import { fetchJson } from './fetch-json.js';
import type { UserInfo } from './user.js';

export const OIDC_SIGNING_ALGS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'] as const;

/** The `--oidc-*` flags. */
export interface OidcOptions {
  issuerUrl: string;
  clientId: string;
  usernameClaim: string;
  /** Unset: `<issuer>#` for claims other than `email`; `-`: no prefix. */
  usernamePrefix?: string;
  groupsClaim?: string;
  groupsPrefix?: string;
  requiredClaims: Readonly<Record<string, string>>;
  /** PEM CA bundle for the issuer; default the host's roots. */
  caPem?: string;
  signingAlgs: readonly string[];
}

export interface OidcRuntime {
  /** Stops the background discovery. */
  signal: AbortSignal;
  onError?: (message: string) => void;
  /** Least time between two JWKS fetches caused by tokens with an unknown key id. */
  refetchCooldownMs?: number;
  now?: () => number;
}

/** `iat` may be this far in the future (clock skew). */
const IAT_LEEWAY_SECONDS = 60;

/**
 * OpenID Connect ID tokens (the `--oidc-*` flags). Discovery and keys come from the issuer
 * in the background at start (retried until they arrive); after that the issuer is asked
 * again only when a token names a key id the set does not have, at most once per cooldown.
 * Tokens of another issuer are not this authenticator's; tokens of this issuer must be signed
 * by its keys with an allowed algorithm, for the client id, unexpired, with the required claims.
 */
export class OidcAuthenticator implements AudienceAgnosticTokenAuthenticator {
  private jwks?: ReturnType<typeof createLocalJWKSet>;
  private jwksUri?: string;
  private refetching?: Promise<void>;
  private lastRefetch = -Infinity;
  private readonly prefix: string;
  private readonly readyPromise: Promise<void>;

  constructor(private readonly o: OidcOptions, private readonly rt: OidcRuntime) {
    const p = o.usernamePrefix;
    this.prefix = p === '-' ? '' : p !== undefined && p !== '' ? p : o.usernameClaim === 'email' ? '' : `${o.issuerUrl}#`;
    this.readyPromise = this.discover();
    this.readyPromise.catch(() => undefined);
  }

  /** Resolves once the keys are loaded (rejects only when stopped first). */
  ready(): Promise<void> {
    return this.readyPromise;
  }

  private async discover(): Promise<void> {
    const url = `${this.o.issuerUrl.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    for (let attempt = 0; ; attempt++) {
      if (this.rt.signal.aborted) throw new Error('stopped');
      try {
        const doc = await fetchJson(url, { ca: this.o.caPem, signal: this.rt.signal }) as { issuer?: unknown; jwks_uri?: unknown };
        if (doc.issuer !== this.o.issuerUrl) throw new Error(`oidc: issuer did not match the issuer returned by provider, expected ${JSON.stringify(this.o.issuerUrl)} got ${JSON.stringify(doc.issuer)}`);
        if (typeof doc.jwks_uri !== 'string') throw new Error('oidc: the discovery document has no jwks_uri');
        this.jwksUri = doc.jwks_uri;
        await this.loadKeys();
        return;
      } catch (e) {
        if (this.rt.signal.aborted) throw new Error('stopped');
        this.rt.onError?.(`oidc discovery from ${url} failed (attempt ${attempt + 1}): ${(e as Error).message}`);
        await sleep(Math.min(100 * 2 ** attempt, 10_000), this.rt.signal);
      }
    }
  }

  private async loadKeys(): Promise<void> {
    const set = await fetchJson(this.jwksUri ?? '', { ca: this.o.caPem, signal: this.rt.signal }) as JSONWebKeySet;
    if (!set || !Array.isArray(set.keys)) throw new Error(`oidc: ${this.jwksUri ?? ''} is not a JWK set`);
    this.jwks = createLocalJWKSet(set);
  }

  /** One JWKS fetch for tokens with unknown key ids, shared by concurrent callers, at most once per cooldown. */
  private refetchKeys(): Promise<void> | undefined {
    if (this.refetching) return this.refetching;
    const now = this.rt.now?.() ?? Date.now();
    if (now - this.lastRefetch < (this.rt.refetchCooldownMs ?? 10_000)) return undefined;
    this.lastRefetch = now;
    this.refetching = this.loadKeys().finally(() => { this.refetching = undefined; });
    return this.refetching;
  }

  private async verify(token: string): Promise<JWTPayload> {
    const jwks = this.jwks;
    if (!jwks) throw new Error('oidc: the authenticator is not initialized yet');
    const opts = {
      issuer: this.o.issuerUrl, audience: this.o.clientId, algorithms: [...this.o.signingAlgs], requiredClaims: ['exp'],
      currentDate: new Date(this.rt.now?.() ?? Date.now()),
    };
    try {
      return (await jwtVerify(token, jwks, opts)).payload;
    } catch (e) {
      if ((e as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw e;
      const refetch = this.refetchKeys();
      if (!refetch) throw e;
      await refetch;
      return (await jwtVerify(token, this.jwks ?? jwks, opts)).payload;
    }
  }

  async authenticateToken(token: string): Promise<UserInfo | null> {
    let unverified: JWTPayload;
    try {
      unverified = decodeJwt(token);
    } catch {
      return null; // not a JWT
    }
    if (unverified.iss !== this.o.issuerUrl) return null;
    let payload: JWTPayload;
    try {
      payload = await this.verify(token);
    } catch (e) {
      throw new Error(`oidc: verify token: ${(e as Error).message}`);
    }
    const nowSeconds = Math.floor((this.rt.now?.() ?? Date.now()) / 1000);
    if (typeof payload.iat === 'number' && payload.iat > nowSeconds + IAT_LEEWAY_SECONDS) throw new Error('oidc: the token is issued in the future (iat)');
    for (const [k, v] of Object.entries(this.o.requiredClaims)) {
      if (!(k in payload)) throw new Error(`oidc: required claim ${k} not present in the token`);
      if (payload[k] !== v) throw new Error(`oidc: required claim ${k} does not have the value ${JSON.stringify(v)}`);
    }
    const name = payload[this.o.usernameClaim];
    if (typeof name !== 'string' || name === '') throw new Error(`oidc: claim ${this.o.usernameClaim} is missing or not a string`);
    if (this.o.usernameClaim === 'email' && 'email_verified' in payload && payload.email_verified !== true) {
      throw new Error(`oidc: email ${JSON.stringify(name)} not verified`);
    }
    const user: UserInfo = { name: `${this.prefix}${name}`, groups: [] };
    if (this.o.groupsClaim && this.o.groupsClaim in payload) {
      const g = payload[this.o.groupsClaim];
      if (!Array.isArray(g) || !g.every((x): x is string => typeof x === 'string')) throw new Error(`oidc: claim ${this.o.groupsClaim} is not an array of strings`);
      user.groups = g.map((x) => `${this.o.groupsPrefix ?? ''}${x}`);
    }
    return user;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) { resolve(); return; }
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}
