import { unauthorized } from '@svc/api';
import { AuthenticationFailed, type AuthenticationNotes, type UserInfo } from '@svc/component-base';
import type { IncomingMessage } from 'node:http';
import type { ApiRequest, Filter } from './chain.js';

/** Recognises the caller; `system:anonymous` when allowed and no credential is given. */
export interface RequestAuthenticator {
  authenticate(req: IncomingMessage, notes?: AuthenticationNotes): Promise<UserInfo>;
}

/**
 * Who is calling (Kubernetes' WithAuthentication): the user the authenticators recognise
 * becomes the request's user; an invalid credential is a 401 before anything else runs. The
 * warnings and audit annotations authenticators note go into the request's context (also on a 401).
 */
export function withAuthentication(authenticator: RequestAuthenticator): Filter {
  return (next) => async (r) => {
    let user: UserInfo;
    const notes: AuthenticationNotes = { warnings: [], auditAnnotations: {} };
    try {
      user = await authenticator.authenticate(r.req, notes);
    } catch (e) {
      if (e instanceof AuthenticationFailed) throw unauthorized();
      throw e;
    } finally {
      if (notes.warnings.length > 0) (r.ctx.warnings ??= []).push(...notes.warnings);
      for (const [k, v] of Object.entries(notes.auditAnnotations)) (r.ctx.annotations ??= {})[k] ??= v;
    }
    r.requester = user;
    r.ctx.user = user;
    return next(r);
  };
}

/** The user a request acts as; only stages after authentication may ask. */
export function requestUser(r: ApiRequest): UserInfo {
  if (!r.ctx.user) throw new Error('the request has no user: the authentication stage did not run');
  return r.ctx.user;
}
