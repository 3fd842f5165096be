import { badRequest, type ApiObject } from '@svc/api';
import type { TokenAuthenticator } from '@svc/component-base';
import type { CreateOnlyRequest } from '../registry/create-only.js';
import { AUTHENTICATED_GROUP, userInfoWire, type UserInfo } from '@svc/component-base';

/** SelfSubjectReview: the caller's own user information in `status.userInfo`. */
export function selfSubjectReview(body: ApiObject, user: UserInfo): object {
  return {
    apiVersion: body.apiVersion,
    kind: body.kind,
    metadata: { creationTimestamp: null },
    status: { userInfo: userInfoWire(user) },
  };
}

/**
 * TokenReview: `spec.token` through the server's token authenticators, for `spec.audiences`
 * (default the server's own). `status.error` says why a token was refused; a recognised token
 * answers the user (with `system:authenticated`, as a request would be) and the audiences it
 * is valid for.
 */
export async function tokenReview(
  req: Pick<CreateOnlyRequest, 'body' | 'notes'>,
  tokens: TokenAuthenticator,
  apiAudiences: readonly string[],
): Promise<object> {
  const { body } = req;
  const spec = (body.spec ?? {}) as { token?: string; audiences?: string[] };
  if (!spec.token) throw badRequest('token is required for TokenReview in authentication');
  const status: Record<string, unknown> = { authenticated: false };
  const wanted = spec.audiences?.length ? spec.audiences : apiAudiences;
  try {
    // As Kubernetes, on the review's own context: its caller gets the token's warnings
    // (a legacy auto-generated token) and its audit event the annotations.
    const r = await tokens.authenticateToken(spec.token, wanted, req.notes);
    if (r) {
      const groups = r.user.groups.includes(AUTHENTICATED_GROUP)
        ? r.user.groups
        : [...r.user.groups, AUTHENTICATED_GROUP];
      status.authenticated = true;
      status.user = userInfoWire({ ...r.user, groups });
      status.audiences = r.audiences;
    } else {
      status.error = 'invalid bearer token';
    }
  } catch (e) {
    status.error = e instanceof Error ? e.message : String(e);
  }
  return { apiVersion: body.apiVersion, kind: body.kind, metadata: { creationTimestamp: null }, spec, status };
}
