import type { JWTPayload } from 'jose';
import type { AudienceAgnosticTokenAuthenticator, UserInfo } from '@svc/component-base';
import type { ClaimOrExpression, JwtAuthenticatorConfig } from './authentication-config.js';
import { OIDC_SIGNING_ALGS } from './oidc.js';
import { OidcProvider, type OidcRuntime, unverifiedIssuer } from './oidc-provider.js';

/** `iat` may be this far in the future (clock skew). */
const IAT_LEEWAY_SECONDS = 60;

/**
 * One `jwt[]` authenticator of `--authentication-config`: tokens whose `iss` is the issuer URL,
 * verified with the issuer's keys (`OidcProvider`, discovery from `discoveryURL` when given),
 * with at least one of the audiences; then the claim rules, the claim mappings (claim + prefix
 * or CEL over `claims`), and the user rules (CEL over `user`). Any failure after the issuer
 * matched is an error (the token is this authenticator's and invalid).
 */
export class JwtAuthenticator implements AudienceAgnosticTokenAuthenticator {
  private readonly provider: OidcProvider;

  constructor(
    private readonly c: JwtAuthenticatorConfig,
    private readonly rt: OidcRuntime,
  ) {
    this.provider = new OidcProvider(
      { issuerUrl: c.issuer.url, discoveryUrl: c.issuer.discoveryURL, caPem: c.issuer.certificateAuthority },
      rt,
    );
  }

  get issuerUrl(): string {
    return this.c.issuer.url;
  }

  /** Resolves once the issuer's keys are loaded (rejects only when stopped first). */
  ready(): Promise<void> {
    return this.provider.ready();
  }

  async authenticateToken(token: string): Promise<UserInfo | null> {
    if (unverifiedIssuer(token) !== this.c.issuer.url) return null; // another issuer's token, or not a JWT
    let claims: JWTPayload;
    try {
      claims = await this.provider.verify(token, { audience: this.c.issuer.audiences, algorithms: OIDC_SIGNING_ALGS });
    } catch (e) {
      throw new Error(`jwt: verify token: ${(e as Error).message}`, { cause: e });
    }
    const nowSeconds = Math.floor((this.rt.now?.() ?? Date.now()) / 1000);
    if (typeof claims.iat === 'number' && claims.iat > nowSeconds + IAT_LEEWAY_SECONDS)
      throw new Error('jwt: the token is issued in the future (iat)');

    for (const r of this.c.claimValidationRules) {
      if (r.claim !== undefined) {
        if (!(r.claim in claims)) throw new Error(`jwt: required claim ${r.claim} not present in the token`);
        const v = claims[r.claim];
        // Kubernetes: without requiredValue the claim must be the empty string.
        if (v !== r.requiredValue)
          throw new Error(`jwt: required claim ${r.claim} does not have the value ${JSON.stringify(r.requiredValue)}`);
      } else if (r.program) {
        const ok = r.program.evaluate({ claims });
        if (typeof ok !== 'boolean')
          throw new Error(`jwt: claim validation expression ${JSON.stringify(r.expression)} must return a boolean`);
        if (!ok) throw new Error(`jwt: claim validation rule failed: ${r.message || r.expression || ''}`);
      }
    }

    const m = this.c.claimMappings;
    const name = this.username(m.username, claims);
    const user: UserInfo = { name, groups: [] };
    if (m.groups) user.groups = this.groups(m.groups, claims);
    if (m.uid) {
      const uid = m.uid.program ? m.uid.program.evaluate({ claims }) : claims[m.uid.claim ?? ''];
      if (m.uid.program || (m.uid.claim ?? '') in claims) {
        if (typeof uid !== 'string')
          throw new Error(`jwt: uid mapping ${m.uid.expression ?? `claim ${m.uid.claim ?? ''}`} must be a string`);
        if (uid !== '') user.uid = uid;
      }
    }
    for (const x of m.extra) {
      const v = x.program.evaluate({ claims });
      const values = stringOrList(v, `extra ${x.key}`);
      if (values.length > 0) (user.extra ??= {})[x.key] = values;
    }

    const celUser = { username: user.name, uid: user.uid ?? '', groups: user.groups, extra: user.extra ?? {} };
    for (const r of this.c.userValidationRules) {
      const ok = r.program.evaluate({ user: celUser });
      if (typeof ok !== 'boolean')
        throw new Error(`jwt: user validation expression ${JSON.stringify(r.expression)} must return a boolean`);
      if (!ok) throw new Error(`jwt: user validation rule failed: ${r.message || r.expression}`);
    }
    return user;
  }

  private username(u: ClaimOrExpression, claims: JWTPayload): string {
    if (u.program) {
      const v = u.program.evaluate({ claims });
      if (typeof v !== 'string')
        throw new Error(`jwt: username expression ${JSON.stringify(u.expression)} must return a string`);
      if (v === '') throw new Error('jwt: username expression returned an empty string');
      return v;
    }
    const claim = u.claim ?? '';
    const v = claims[claim];
    if (typeof v !== 'string' || v === '') throw new Error(`jwt: claim ${claim} is missing or not a non-empty string`);
    // Kubernetes: the email claim needs email_verified to be true when present.
    if (claim === 'email' && 'email_verified' in claims && claims.email_verified !== true)
      throw new Error(`jwt: email ${JSON.stringify(v)} not verified`);
    return `${u.prefix ?? ''}${v}`;
  }

  private groups(g: ClaimOrExpression, claims: JWTPayload): string[] {
    if (g.program) return stringOrList(g.program.evaluate({ claims }), 'groups expression');
    const claim = g.claim ?? '';
    if (!(claim in claims)) return [];
    return stringOrList(claims[claim], `claim ${claim}`).map((x) => `${g.prefix ?? ''}${x}`);
  }
}

/** A string (one value; empty = none) or a list of strings. */
function stringOrList(v: unknown, what: string): string[] {
  if (typeof v === 'string') return v === '' ? [] : [v];
  if (Array.isArray(v) && v.every((x): x is string => typeof x === 'string')) return v;
  if (v === null || v === undefined) return [];
  throw new Error(`jwt: ${what} must be a string or a list of strings`);
}
