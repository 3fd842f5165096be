import type { IncomingMessage } from 'node:http';
import type { UserInfo } from './user.js';
import { ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP } from './user.js';

/**
 * One way of recognising a caller from the request (client certificate, bearer token).
 * Resolves the user, or null when the request carries no credential of this kind; throws
 * when it carries one that is invalid (→ 401).
 */
export interface Authenticator {
  authenticate(req: IncomingMessage, notes?: AuthenticationNotes): Promise<UserInfo | null>;
}

/**
 * What authenticators note about the request they authenticate, for the request's context
 * (Kubernetes adds them to it): `Warning` headers for the client and audit annotations. The
 * authentication stage makes one per request and passes it down the authenticators; it keeps
 * them also when authentication fails.
 */
export interface AuthenticationNotes {
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/** A warning for the request's client (none when there is no request: a TokenReview). */
export function addAuthenticationWarning(notes: AuthenticationNotes | undefined, text: string): void {
  notes?.warnings.push(text);
}

/** An audit annotation of the request; the first value of a key stays. */
export function addAuthenticationAuditAnnotation(
  notes: AuthenticationNotes | undefined,
  annotation: { key: string; value: string },
): void {
  if (notes && notes.auditAnnotations[annotation.key] === undefined)
    notes.auditAnnotations[annotation.key] = annotation.value;
}

/** A user recognised from a token, and the audiences the token is good for. */
export interface TokenAuthResult {
  user: UserInfo;
  /** The wanted audiences this token is valid for (never empty on success). */
  audiences: string[];
}

/**
 * One kind of bearer token. `audiences` are those the caller needs the token to be valid for
 * (the server's own `--api-audiences` for requests; a TokenReview's `spec.audiences`).
 * Resolves null when the token is not of this kind (another authenticator may know it);
 * throws when it is of this kind but invalid.
 */
export interface TokenAuthenticator {
  authenticateToken(
    token: string,
    audiences: readonly string[],
    notes?: AuthenticationNotes,
  ): Promise<TokenAuthResult | null>;
}

/** A token authenticator whose tokens carry no audience (static, bootstrap, OIDC tokens). */
export interface AudienceAgnosticTokenAuthenticator {
  authenticateToken(token: string, notes?: AuthenticationNotes): Promise<UserInfo | null>;
}

/** The request carries a credential that is not valid; the message is for the log only. */
export class AuthenticationFailed extends Error {}

/**
 * The token of the request's `Authorization: Bearer <token>` header, or undefined when there
 * is none or it is not a bearer token (`UnionAuthenticator` refuses malformed headers first).
 */
export function bearerToken(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  return BEARER.exec(h)?.[1];
}

const BEARER = /^[ \t]*bearer +([\x21-\x7e]+)[ \t]*$/i;

/**
 * Checks the shape of the `Authorization` header: absent is fine; one header of the form
 * `Bearer <token>` (printable ASCII, no spaces in the token) is fine; anything else (two
 * headers, `Bearer` without a token, other schemes, non-ASCII bytes) is a failed credential.
 */
export function checkAuthorizationHeader(req: IncomingMessage): void {
  let count = 0;
  let value = '';
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]?.toLowerCase() === 'authorization') {
      count++;
      value = req.rawHeaders[i + 1] ?? '';
    }
  }
  if (count === 0) return;
  if (count > 1) throw new AuthenticationFailed('more than one Authorization header');
  if (!/^[\x20-\x7e\t]*$/.test(value))
    throw new AuthenticationFailed('the Authorization header has non-ASCII characters');
  if (!BEARER.test(value))
    throw new AuthenticationFailed('the Authorization header is not of the form "Bearer <token>"');
}

/**
 * Wraps an audience-agnostic authenticator like Kubernetes does: its tokens are good for
 * the server's own audiences only, so a caller that needs none of those gets no answer.
 */
export function audienceAgnostic(
  a: AudienceAgnosticTokenAuthenticator,
  apiAudiences: readonly string[],
): TokenAuthenticator {
  return {
    async authenticateToken(token, audiences, notes) {
      const matched = audiences.filter((x) => apiAudiences.includes(x));
      if (matched.length === 0) return null;
      const user = await a.authenticateToken(token, notes);
      return user ? { user, audiences: matched } : null;
    },
  };
}

/** Tries token authenticators in order; the first that recognises the token decides. */
export class UnionTokenAuthenticator implements TokenAuthenticator {
  constructor(private readonly authenticators: readonly TokenAuthenticator[]) {}

  get empty(): boolean {
    return this.authenticators.length === 0;
  }

  async authenticateToken(
    token: string,
    audiences: readonly string[],
    notes?: AuthenticationNotes,
  ): Promise<TokenAuthResult | null> {
    const errors: string[] = [];
    for (const a of this.authenticators) {
      try {
        const r = await a.authenticateToken(token, audiences, notes);
        if (r) return r;
      } catch (e) {
        errors.push(e instanceof Error ? e.message : String(e));
      }
    }
    if (errors.length > 0)
      throw new AuthenticationFailed(errors.length === 1 ? (errors[0] ?? '') : `[${errors.join(', ')}]`);
    return null;
  }
}

/** The request's bearer token through the token authenticators, for the server's own audiences. */
export class BearerTokenAuthenticator implements Authenticator {
  constructor(
    private readonly tokens: TokenAuthenticator,
    private readonly apiAudiences: readonly string[],
  ) {}

  async authenticate(req: IncomingMessage, notes?: AuthenticationNotes): Promise<UserInfo | null> {
    const token = bearerToken(req);
    if (token === undefined) return null;
    const r = await this.tokens.authenticateToken(token, this.apiAudiences, notes);
    if (!r) throw new AuthenticationFailed('invalid bearer token');
    return r.user;
  }
}

export interface UnionAuthenticatorOptions {
  authenticators: readonly Authenticator[];
  /**
   * `--anonymous-auth`: requests without any credential run as `system:anonymous`. A function
   * decides per request (the anonymous section of `--authentication-config`).
   */
  anonymous: boolean | ((req: IncomingMessage) => boolean);
  /** Told why a request was refused (for the log). */
  onFailure?: (reason: string) => void;
}

/**
 * Tries authenticators in order; the first that recognises the request decides. Adds
 * `system:authenticated`; a request with no credential at all is anonymous when allowed;
 * any credential that no authenticator accepts, and any malformed `Authorization` header,
 * is an `AuthenticationFailed` (→ 401).
 */
export class UnionAuthenticator {
  private readonly o: UnionAuthenticatorOptions;

  constructor(o: UnionAuthenticatorOptions) {
    this.o = o;
  }

  async authenticate(req: IncomingMessage, notes?: AuthenticationNotes): Promise<UserInfo> {
    try {
      checkAuthorizationHeader(req);
      const failures: string[] = [];
      for (const a of this.o.authenticators) {
        try {
          const u = await a.authenticate(req, notes);
          if (u)
            return {
              ...u,
              groups: u.groups.includes(AUTHENTICATED_GROUP) ? u.groups : [...u.groups, AUTHENTICATED_GROUP],
            };
        } catch (e) {
          failures.push(e instanceof Error ? e.message : String(e));
        }
      }
      if (failures.length > 0) throw new AuthenticationFailed(failures.join('; '));
      if (req.headers.authorization !== undefined)
        throw new AuthenticationFailed('no authenticator accepts bearer tokens');
      const anonymous = typeof this.o.anonymous === 'function' ? this.o.anonymous(req) : this.o.anonymous;
      if (!anonymous) throw new AuthenticationFailed('anonymous requests are not allowed');
      return { name: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] };
    } catch (e) {
      if (e instanceof AuthenticationFailed) this.o.onFailure?.(e.message);
      throw e;
    }
  }
}
