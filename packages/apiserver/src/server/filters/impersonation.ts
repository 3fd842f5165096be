import type { Authorizer } from '../../authz/authorizer.js';
import { impersonate } from '../../authz/impersonation.js';
import { requestUser } from './authentication.js';
import type { Filter } from './chain.js';

/**
 * `Impersonate-*` headers (Kubernetes' WithImpersonation): when the requester may impersonate
 * the named user, groups, uid and extras, the request acts as them from here on; 403 otherwise.
 */
export function withImpersonation(authorizer: Authorizer): Filter {
  return (next) => async (r) => {
    r.ctx.user = await impersonate(r.req, requestUser(r), authorizer);
    return next(r);
  };
}
