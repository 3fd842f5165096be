import { group } from '@svc/api';
import type { UserInfo } from '@svc/component-base';
import type { AuthorizationAttributes, Authorizer, Decision } from '../authorizer.js';
import type { RoleRef, Subject } from '../../registry/strategies/rbac.js';
import type { StoreInformer } from './informer.js';
import { ruleAllows, type PolicyRule } from './rules.js';

export interface RbacInformers {
  roles: StoreInformer;
  clusterRoles: StoreInformer;
  roleBindings: StoreInformer;
  clusterRoleBindings: StoreInformer;
}

/** The rules a user holds in a namespace (`''` = cluster scope only), and what could not be resolved. */
export interface ResolvedRules {
  rules: PolicyRule[];
  errors: string[];
}

function appliesTo(s: Subject, user: UserInfo, bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return s.name === user.name;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || bindingNamespace;
      return !!ns && user.name === `system:serviceaccount:${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

/**
 * RBAC: allows what some binding of the user grants; otherwise no opinion (RBAC never
 * denies). Reads roles and bindings from informer caches, never from storage per request.
 */
export class RbacAuthorizer implements Authorizer {
  constructor(readonly informers: RbacInformers) {}

  /**
   * Kubernetes' VisitRulesFor: cluster role bindings, then the namespace's role bindings.
   * `stopped` when the visitor returned true; `errors` names the roles that could not be
   * resolved on the way.
   */
  private visit(
    user: UserInfo,
    namespace: string,
    visitor: (rule: PolicyRule) => boolean,
  ): { stopped: boolean; errors: string[] } {
    const errors: string[] = [];
    const rbac = group('rbac.authorization');
    for (const b of this.informers.clusterRoleBindings.list()) {
      if (!((b.subjects as Subject[] | undefined) ?? []).some((s) => appliesTo(s, user, ''))) continue;
      const ref = b.roleRef as RoleRef;
      const role = ref.kind === 'ClusterRole' ? this.informers.clusterRoles.get('', ref.name) : undefined;
      if (!role) {
        errors.push(`clusterrole.${rbac} "${ref.name}" not found`);
        continue;
      }
      for (const r of (role.rules as PolicyRule[] | undefined) ?? []) if (visitor(r)) return { stopped: true, errors };
    }
    if (!namespace) return { stopped: false, errors };
    for (const b of this.informers.roleBindings.list()) {
      if (b.metadata.namespace !== namespace) continue;
      if (!((b.subjects as Subject[] | undefined) ?? []).some((s) => appliesTo(s, user, namespace))) continue;
      const ref = b.roleRef as RoleRef;
      const role =
        ref.kind === 'ClusterRole'
          ? this.informers.clusterRoles.get('', ref.name)
          : ref.kind === 'Role'
            ? this.informers.roles.get(namespace, ref.name)
            : undefined;
      if (!role) {
        errors.push(`${ref.kind.toLowerCase()}.${rbac} "${ref.name}" not found`);
        continue;
      }
      for (const r of (role.rules as PolicyRule[] | undefined) ?? []) if (visitor(r)) return { stopped: true, errors };
    }
    return { stopped: false, errors };
  }

  async authorize(attrs: AuthorizationAttributes): Promise<{ decision: Decision; reason?: string }> {
    const { stopped, errors } = this.visit(attrs.user, attrs.namespace, (r) => ruleAllows(attrs, r));
    if (stopped) return { decision: 'allow' };
    // As Kubernetes: the reason names only what could not be resolved.
    return { decision: 'noOpinion', reason: errors.length ? `RBAC: ${errors.join(', ')}` : undefined };
  }

  /** Every rule the user holds in `namespace` (cluster-wide ones included). */
  rulesFor(user: UserInfo, namespace: string): ResolvedRules {
    const rules: PolicyRule[] = [];
    const { errors } = this.visit(user, namespace, (r) => {
      rules.push(r);
      return false;
    });
    return { rules, errors };
  }

  /** The rules a binding's roleRef names, or undefined when the role does not exist. */
  roleRefRules(ref: RoleRef, namespace: string): PolicyRule[] | undefined {
    const role =
      ref.kind === 'ClusterRole'
        ? this.informers.clusterRoles.get('', ref.name)
        : ref.kind === 'Role'
          ? this.informers.roles.get(namespace, ref.name)
          : undefined;
    return role ? ((role.rules as PolicyRule[] | undefined) ?? []) : undefined;
  }
}
