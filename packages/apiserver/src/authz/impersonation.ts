import type { IncomingMessage } from 'node:http';
import { badRequest, forbidden, group } from '@svc/api';
import { ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP, type UserInfo } from '@svc/component-base';
import { forbiddenMessage, type AuthorizationAttributes, type Authorizer } from './authorizer.js';

const SA_PREFIX = 'system:serviceaccount:';
const EXTRA_PREFIX = 'impersonate-extra-';

/**
 * Kubernetes' impersonation filter: `Impersonate-User`, `Impersonate-Group` (repeatable),
 * `Impersonate-Uid` and `Impersonate-Extra-<key>` each need the `impersonate` verb for the
 * requester (users / serviceaccounts / groups in the core group; uids and userextras/<key> in
 * the authentication group). Returns the user to run as, or the requester without headers.
 * Throws 403 when a check fails, 400 when groups, uid or extra come without a user.
 */
export async function impersonate(req: IncomingMessage, requester: UserInfo, authz: Authorizer): Promise<UserInfo> {
  const h = req.headersDistinct;
  const userName = h['impersonate-user']?.[0];
  const groups = h['impersonate-group'] ?? [];
  const uid = h['impersonate-uid']?.[0];
  const extra: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(h)) {
    if (!k.startsWith(EXTRA_PREFIX) || !v) continue;
    let key = k.slice(EXTRA_PREFIX.length);
    try {
      key = decodeURIComponent(key);
    } catch {
      /* keep the raw key */
    }
    extra[key.toLowerCase()] = [...(extra[key.toLowerCase()] ?? []), ...v];
  }
  if (userName === undefined) {
    if (groups.length || uid !== undefined || Object.keys(extra).length) {
      throw badRequest('requested impersonation of groups, uid or extra without impersonating a user');
    }
    return requester;
  }

  const check = async (a: Partial<AuthorizationAttributes> & { resource: string; name: string }): Promise<void> => {
    const attrs: AuthorizationAttributes = {
      user: requester,
      verb: 'impersonate',
      isResourceRequest: true,
      path: '',
      apiGroup: '',
      apiVersion: '',
      namespace: '',
      subresource: '',
      ...a,
    };
    const d = await authz.authorize(attrs);
    if (d.decision !== 'allow') throw forbidden(forbiddenMessage(attrs, d.reason));
  };

  let defaultGroups: string[] = [];
  if (userName.startsWith(SA_PREFIX)) {
    const [ns = '', name = ''] = userName.slice(SA_PREFIX.length).split(':');
    await check({ resource: 'serviceaccounts', namespace: ns, name });
    defaultGroups = ['system:serviceaccounts', `system:serviceaccounts:${ns}`];
  } else {
    await check({ resource: 'users', name: userName });
  }
  for (const g of groups) await check({ resource: 'groups', name: g });
  const authn = group('authentication');
  if (uid !== undefined) await check({ apiGroup: authn, resource: 'uids', name: uid });
  for (const [key, values] of Object.entries(extra)) {
    for (const v of values) await check({ apiGroup: authn, resource: 'userextras', subresource: key, name: v });
  }

  const out = groups.length ? [...groups] : defaultGroups;
  // As Kubernetes: impersonated users are authenticated (anonymous ones unauthenticated) unless a group says otherwise.
  if (!out.includes(AUTHENTICATED_GROUP) && !out.includes(UNAUTHENTICATED_GROUP)) {
    out.push(userName === ANONYMOUS_USER ? UNAUTHENTICATED_GROUP : AUTHENTICATED_GROUP);
  }
  const user: UserInfo = { name: userName, groups: out };
  if (uid !== undefined) user.uid = uid;
  if (Object.keys(extra).length) user.extra = extra;
  return user;
}
