import { authenticationExtraKey, serviceAccountClaimKey } from '@svc/api';
import type { UserInfo } from '@svc/component-base';

export const SERVICE_ACCOUNT_USER_PREFIX = 'system:serviceaccount:';
export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';

export interface ObjectClaim {
  name: string;
  uid: string;
}

/** The private claim of a service-account token (keyed by `serviceAccountClaimKey()`), as Kubernetes writes it. */
export interface PrivateClaims {
  namespace: string;
  serviceaccount: ObjectClaim;
  pod?: ObjectClaim;
  secret?: ObjectClaim;
  node?: ObjectClaim;
}

export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_USER_PREFIX}${namespace}:${name}`;
}

export function serviceAccountGroups(namespace: string): string[] {
  return [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${namespace}`];
}

function objectClaim(v: unknown, what: string, required: boolean): ObjectClaim | undefined {
  if (v === undefined && !required) return undefined;
  const o = v as Partial<ObjectClaim> | undefined;
  if (
    typeof o !== 'object' ||
    o === null ||
    typeof o.name !== 'string' ||
    o.name === '' ||
    typeof o.uid !== 'string' ||
    o.uid === ''
  ) {
    throw new Error(`service account token: claim ${serviceAccountClaimKey()}.${what} must have a name and a uid`);
  }
  return { name: o.name, uid: o.uid };
}

/** Reads and checks the private claim of a verified token; `sub` must name the same account. */
export function privateClaimsOf(payload: Record<string, unknown>): PrivateClaims {
  const raw = payload[serviceAccountClaimKey()];
  if (typeof raw !== 'object' || raw === null)
    throw new Error(`service account token: claim ${serviceAccountClaimKey()} is missing`);
  const c = raw as Record<string, unknown>;
  if (typeof c.namespace !== 'string' || c.namespace === '')
    throw new Error(`service account token: claim ${serviceAccountClaimKey()}.namespace is missing`);
  const out: PrivateClaims = {
    namespace: c.namespace,
    serviceaccount: objectClaim(c.serviceaccount, 'serviceaccount', true) as ObjectClaim,
  };
  const pod = objectClaim(c.pod, 'pod', false);
  const secret = objectClaim(c.secret, 'secret', false);
  const node = objectClaim(c.node, 'node', false);
  if (pod) out.pod = pod;
  if (secret) out.secret = secret;
  if (node) out.node = node;
  const sub = serviceAccountUsername(out.namespace, out.serviceaccount.name);
  if (payload.sub !== sub)
    throw new Error(`service account token: sub ${JSON.stringify(payload.sub)} does not match ${sub}`);
  return out;
}

/** `system:serviceaccount:<ns>:<name>` with the account's uid; bound pod and node (and the token id) in extra. */
export function serviceAccountUser(c: PrivateClaims, jti?: string): UserInfo {
  const extra: Record<string, string[]> = {};
  if (c.pod) {
    extra[authenticationExtraKey('pod-name')] = [c.pod.name];
    extra[authenticationExtraKey('pod-uid')] = [c.pod.uid];
  }
  if (c.node) {
    extra[authenticationExtraKey('node-name')] = [c.node.name];
    extra[authenticationExtraKey('node-uid')] = [c.node.uid];
  }
  if (jti) extra[authenticationExtraKey('credential-id')] = [`JTI=${jti}`];
  const user: UserInfo = {
    name: serviceAccountUsername(c.namespace, c.serviceaccount.name),
    uid: c.serviceaccount.uid,
    groups: serviceAccountGroups(c.namespace),
  };
  if (Object.keys(extra).length > 0) user.extra = extra;
  return user;
}
