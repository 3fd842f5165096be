import { auditAnnotationKey, forbidden } from '@svc/api';
import { MASTERS_GROUP, type UserInfo } from '@svc/component-base';
import { forbiddenMessage, type Authorizer } from '../../authz/authorizer.js';
import type { RequestInfo } from '../../endpoints/request-info.js';
import { requestUser } from './authentication.js';
import type { Filter } from './chain.js';

/**
 * May this user do this (Kubernetes' WithAuthorization): the authorizers decide on the request
 * info; anything but allow is a 403 naming the user, verb and resource (`system:masters` may
 * do everything).
 */
export function withAuthorization(authorizer: Authorizer): Filter {
  return (next) => async (r) => {
    const user = requestUser(r);
    const decision = await authorizer.authorize({ user, ...r.info });
    const allowed = decision.decision === 'allow' || user.groups.includes(MASTERS_GROUP);
    // The decision goes into the audit event, as Kubernetes records it.
    const annotations = (r.ctx.annotations ??= {});
    annotations[auditAnnotationKey('decision')] = allowed ? 'allow' : 'forbid';
    annotations[auditAnnotationKey('reason')] = decision.reason ?? '';
    if (!allowed) throw forbiddenError(r.info, user, decision.reason);
    return next(r);
  };
}

function forbiddenError(info: RequestInfo, user: UserInfo, reason?: string): Error {
  const e = forbidden(forbiddenMessage({ user, ...info }, reason));
  if (info.isResourceRequest) {
    e.status.details = { name: info.name || undefined, group: info.apiGroup || undefined, kind: info.resource };
  }
  return e;
}
