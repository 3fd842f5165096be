import type { JWTPayload } from 'jose';
import type { AudienceAgnosticTokenAuthenticator, UserInfo } from '@svc/component-base';
import { OidcProvider, type OidcRuntime, unverifiedIssuer } from './oidc-provider.js';

export type { OidcRuntime } from './oidc-provider.js';

export const OIDC_SIGNING_ALGS = [
  'RS256',
  'RS384',
  'RS512',
  'ES256',
  'ES384',
  'ES512',
  'PS256',
  'PS384',
  'PS512',
] as const;

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

/** `iat` may be this far in the future (clock skew). */
const IAT_LEEWAY_SECONDS = 60;

/**
 * OpenID Connect ID tokens (the `--oidc-*` flags), verified with the issuer's keys
 * (`OidcProvider`). Tokens of another issuer are not this authenticator's; tokens of this
 * issuer must be signed by its keys with an allowed algorithm, for the client id, unexpired,
 * with the required claims.
 */
export class OidcAuthenticator implements AudienceAgnosticTokenAuthenticator {
  private readonly provider: OidcProvider;
  private readonly prefix: string;

  constructor(
    private readonly o: OidcOptions,
    private readonly rt: OidcRuntime,
  ) {
    const p = o.usernamePrefix;
    this.prefix =
      p === '-' ? '' : p !== undefined && p !== '' ? p : o.usernameClaim === 'email' ? '' : `${o.issuerUrl}#`;
    this.provider = new OidcProvider({ issuerUrl: o.issuerUrl, caPem: o.caPem }, rt);
  }

  /** Resolves once the keys are loaded (rejects only when stopped first). */
  ready(): Promise<void> {
    return this.provider.ready();
  }

  private verify(token: string): Promise<JWTPayload> {
    return this.provider.verify(token, { audience: this.o.clientId, algorithms: this.o.signingAlgs });
  }

  async authenticateToken(token: string): Promise<UserInfo | null> {
    if (unverifiedIssuer(token) !== this.o.issuerUrl) return null; // another issuer's token, or not a JWT
    let payload: JWTPayload;
    try {
      payload = await this.verify(token);
    } catch (e) {
      throw new Error(`oidc: verify token: ${(e as Error).message}`, { cause: e });
    }
    const nowSeconds = Math.floor((this.rt.now?.() ?? Date.now()) / 1000);
    if (typeof payload.iat === 'number' && payload.iat > nowSeconds + IAT_LEEWAY_SECONDS)
      throw new Error('oidc: the token is issued in the future (iat)');
    for (const [k, v] of Object.entries(this.o.requiredClaims)) {
      if (!(k in payload)) throw new Error(`oidc: required claim ${k} not present in the token`);
      if (payload[k] !== v) throw new Error(`oidc: required claim ${k} does not have the value ${JSON.stringify(v)}`);
    }
    const name = payload[this.o.usernameClaim];
    if (typeof name !== 'string' || name === '')
      throw new Error(`oidc: claim ${this.o.usernameClaim} is missing or not a string`);
    if (this.o.usernameClaim === 'email' && 'email_verified' in payload && payload.email_verified !== true) {
      throw new Error(`oidc: email ${JSON.stringify(name)} not verified`);
    }
    const user: UserInfo = { name: `${this.prefix}${name}`, groups: [] };
    if (this.o.groupsClaim && this.o.groupsClaim in payload) {
      const g = payload[this.o.groupsClaim];
      if (!Array.isArray(g) || !g.every((x): x is string => typeof x === 'string'))
        throw new Error(`oidc: claim ${this.o.groupsClaim} is not an array of strings`);
      user.groups = g.map((x) => `${this.o.groupsPrefix ?? ''}${x}`);
    }
    return user;
  }
}
