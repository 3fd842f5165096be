import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload, decodeJwt } from 'jose';
import { fetchJson } from './fetch-json.js';
import { sleep } from '@svc/machinery';

/** Where an OpenID issuer's keys come from. */
export interface OidcProviderOptions {
  /** The issuer (`iss` of its tokens; the discovery document must name it). */
  issuerUrl: string;
  /** Replaces `<issuerUrl>/.well-known/openid-configuration`. */
  discoveryUrl?: string;
  /** PEM CA bundle for the issuer; default the host's roots. */
  caPem?: string;
}

export interface OidcRuntime {
  /** Stops the background discovery. */
  signal: AbortSignal;
  onError?: (message: string) => void;
  /** Least time between two JWKS fetches caused by tokens with an unknown key id. */
  refetchCooldownMs?: number;
  now?: () => number;
}

export interface VerifyOptions {
  /** The token's `aud` must contain at least one of these. */
  audience: string | readonly string[];
  algorithms: readonly string[];
}

/**
 * An OpenID issuer's discovery document and keys, shared by the `--oidc-*` flags and the
 * `jwt[]` authenticators of `--authentication-config`. Discovery and keys are fetched in the
 * background at start (retried until they arrive); after that the issuer is asked again only
 * when a token names a key id the set does not have, at most once per cooldown. No call to the
 * issuer is made per request otherwise.
 */
export class OidcProvider {
  private jwks?: ReturnType<typeof createLocalJWKSet>;
  private jwksUri?: string;
  private refetching?: Promise<void>;
  private lastRefetch = -Infinity;
  private readonly readyPromise: Promise<void>;

  constructor(
    private readonly o: OidcProviderOptions,
    private readonly rt: OidcRuntime,
  ) {
    this.readyPromise = this.discover();
    this.readyPromise.catch(() => undefined);
  }

  get issuerUrl(): string {
    return this.o.issuerUrl;
  }

  /** Resolves once the keys are loaded (rejects only when stopped first). */
  ready(): Promise<void> {
    return this.readyPromise;
  }

  private now(): number {
    return this.rt.now?.() ?? Date.now();
  }

  private async discover(): Promise<void> {
    const url = this.o.discoveryUrl ?? `${this.o.issuerUrl.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    for (let attempt = 0; ; attempt++) {
      if (this.rt.signal.aborted) throw new Error('stopped');
      try {
        const doc = (await fetchJson(url, { ca: this.o.caPem, signal: this.rt.signal })) as {
          issuer?: unknown;
          jwks_uri?: unknown;
        };
        if (doc.issuer !== this.o.issuerUrl)
          throw new Error(
            `oidc: issuer did not match the issuer returned by provider, expected ${JSON.stringify(this.o.issuerUrl)} got ${JSON.stringify(doc.issuer)}`,
          );
        if (typeof doc.jwks_uri !== 'string') throw new Error('oidc: the discovery document has no jwks_uri');
        this.jwksUri = doc.jwks_uri;
        await this.loadKeys();
        return;
      } catch (e) {
        if (this.rt.signal.aborted) throw new Error('stopped', { cause: e });
        this.rt.onError?.(`oidc discovery from ${url} failed (attempt ${attempt + 1}): ${(e as Error).message}`);
        await sleep(Math.min(100 * 2 ** attempt, 10_000), this.rt.signal);
      }
    }
  }

  private async loadKeys(): Promise<void> {
    const set = (await fetchJson(this.jwksUri ?? '', { ca: this.o.caPem, signal: this.rt.signal })) as JSONWebKeySet;
    if (!set || !Array.isArray(set.keys)) throw new Error(`oidc: ${this.jwksUri ?? ''} is not a JWK set`);
    this.jwks = createLocalJWKSet(set);
  }

  /** One JWKS fetch for tokens with unknown key ids, shared by concurrent callers, at most once per cooldown. */
  private refetchKeys(): Promise<void> | undefined {
    if (this.refetching) return this.refetching;
    const now = this.now();
    if (now - this.lastRefetch < (this.rt.refetchCooldownMs ?? 10_000)) return undefined;
    this.lastRefetch = now;
    this.refetching = this.loadKeys().finally(() => {
      this.refetching = undefined;
    });
    return this.refetching;
  }

  /** The verified payload: signed by the issuer's keys with an allowed algorithm, for the audience, with `exp`, unexpired. */
  async verify(token: string, v: VerifyOptions): Promise<JWTPayload> {
    const jwks = this.jwks;
    if (!jwks) throw new Error('oidc: the authenticator is not initialized yet');
    const opts = {
      issuer: this.o.issuerUrl,
      audience: typeof v.audience === 'string' ? v.audience : [...v.audience],
      algorithms: [...v.algorithms],
      requiredClaims: ['exp'],
      currentDate: new Date(this.now()),
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
}

/** The `iss` of a JWT, read without verifying it; undefined when the token is not a JWT. */
export function unverifiedIssuer(token: string): string | undefined {
  try {
    const iss = decodeJwt(token).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}
