import type { IncomingMessage } from 'node:http';
import type { UserInfo } from './user.js';
import { ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP } from './user.js';

/**
 * One way of recognising a caller. Resolves the user, or null when the request carries no
 * credential of this kind; throws when it carries one that is invalid (→ 401).
 */
export interface Authenticator {
  authenticate(req: IncomingMessage): Promise<UserInfo | null>;
}

export class AuthenticationFailed extends Error {}

export function bearerToken(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S.*)$/i.exec(h.trim());
  return m?.[1]?.trim();
}

/**
 * Tries authenticators in order; the first that recognises the request decides. Adds
 * `system:authenticated`; falls back to the anonymous user when allowed.
 */
export class UnionAuthenticator {
  constructor(private readonly authenticators: readonly Authenticator[], private readonly anonymous: boolean) {}

  async authenticate(req: IncomingMessage): Promise<UserInfo> {
    let failure: unknown;
    for (const a of this.authenticators) {
      try {
        const u = await a.authenticate(req);
        if (u) return { ...u, groups: u.groups.includes(AUTHENTICATED_GROUP) ? u.groups : [...u.groups, AUTHENTICATED_GROUP] };
      } catch (e) {
        failure = e;
      }
    }
    if (failure || bearerToken(req) !== undefined || !this.anonymous) throw new AuthenticationFailed('Unauthorized');
    return { name: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] };
  }
}
