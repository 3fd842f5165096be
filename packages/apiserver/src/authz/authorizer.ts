import type { UserInfo } from '@svc/component-base';

/** The attributes an authorizer decides on (spec: Authorization, item 3). */
export interface AuthorizationAttributes {
  user: UserInfo;
  isResourceRequest: boolean;
  path: string;
  verb: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

export type Decision = 'allow' | 'deny' | 'noOpinion';

export interface Authorizer {
  authorize(attrs: AuthorizationAttributes): Promise<{ decision: Decision; reason?: string }>;
}

export const alwaysAllow: Authorizer = { authorize: async () => ({ decision: 'allow' }) };
export const alwaysDeny: Authorizer = {
  authorize: async () => ({ decision: 'deny', reason: 'Everything is forbidden.' }),
};

/** Kubernetes' privileged-group authorizer: `system:masters` may do anything; everyone else, no opinion. */
export const mastersAuthorizer: Authorizer = {
  authorize: async (a) => ({ decision: a.user.groups.includes('system:masters') ? 'allow' : 'noOpinion' }),
};

/**
 * Runs authorizers in order; the first allow or deny ends evaluation. All no-opinion answers
 * no opinion (with the reasons joined), which callers treat as a denial (as Kubernetes does).
 */
export class UnionAuthorizer implements Authorizer {
  constructor(private readonly authorizers: readonly Authorizer[]) {}
  async authorize(attrs: AuthorizationAttributes): Promise<{ decision: Decision; reason?: string }> {
    const reasons: string[] = [];
    for (const a of this.authorizers) {
      const r = await a.authorize(attrs);
      if (r.decision !== 'noOpinion') return r;
      if (r.reason) reasons.push(r.reason);
    }
    return { decision: 'noOpinion', reason: reasons.join(', ') || undefined };
  }
}

/** Kubernetes' 403 message: `User "alice" cannot list resource "pods" in API group "" in the namespace "default"`. */
export function forbiddenMessage(a: AuthorizationAttributes, reason?: string): string {
  let msg: string;
  if (!a.isResourceRequest) {
    msg = `User "${a.user.name}" cannot ${a.verb} path "${a.path}"`;
  } else {
    const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    // As Kubernetes' Forbidden status: the qualified resource (no subresource), then the name.
    const qualified = `${a.resource}${a.apiGroup ? '.' + a.apiGroup : ''}`;
    const named = a.name ? `${qualified} "${a.name}"` : qualified;
    msg = `${named} is forbidden: User "${a.user.name}" cannot ${a.verb} resource "${res}" in API group "${a.apiGroup}"`;
    msg += a.namespace
      ? ` in the namespace "${a.namespace}"`
      : a.resource === 'namespaces' || !a.namespace
        ? ' at the cluster scope'
        : '';
  }
  return reason ? `${msg}: ${reason}` : msg;
}

/** Records one allow or deny decision of a named authorizer (`apiserver_authorization_decisions_total`). */
export type DecisionRecorder = (labels: { type: string; name: string; decision: 'allowed' | 'denied' }) => void;

/**
 * `inner`, counting its allow and deny decisions (no-opinion answers are not decisions)
 * under its `type` and `name`; `inner` itself when there is no `record`.
 */
export function counting(
  inner: Authorizer,
  as: { type: string; name: string; record: DecisionRecorder | undefined },
): Authorizer {
  const { type, name, record } = as;
  if (!record) return inner;
  return {
    authorize: async (attrs) => {
      const r = await inner.authorize(attrs);
      if (r.decision !== 'noOpinion') record({ type, name, decision: r.decision === 'allow' ? 'allowed' : 'denied' });
      return r;
    },
  };
}
