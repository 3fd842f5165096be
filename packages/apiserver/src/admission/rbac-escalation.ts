import { forbidden, group } from '@svc/api';
import { MASTERS_GROUP, type UserInfo } from '@svc/component-base';
import type { Authorizer } from '../authz/authorizer.js';
import type { RbacAuthorizer } from '../authz/rbac/rbac-authorizer.js';
import { compactRuleString, uncoveredRules, type PolicyRule } from '../authz/rbac/rules.js';
import type { RoleRef } from '../registry/strategies/rbac.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

/**
 * RBAC escalation prevention (Kubernetes' policy-based RBAC storage): a Role or ClusterRole
 * may be written only by a user who holds every permission in it at the same scope, or may
 * `escalate` it; a binding only by one who holds the referenced role's permissions, or may
 * `bind` it. `system:masters` and the server itself (no user) are exempt.
 */
export class RbacEscalation implements AdmissionPlugin {
  readonly name = 'RBACEscalation';

  constructor(
    private readonly authz: Authorizer,
    private readonly rbac: RbacAuthorizer,
  ) {}

  async validate(a: AdmissionAttributes): Promise<void> {
    const user = a.user;
    if (!user || user.groups.includes(MASTERS_GROUP) || !a.object) return;
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
    const rbacGroup = group('rbac.authorization');
    if (a.resource.group !== rbacGroup || a.subresource) return;
    const obj = a.object;
    const kind = a.resource.kind;
    const ns = a.resource.namespaced ? a.namespace : '';
    const what = `${a.resource.plural}.${rbacGroup} "${a.name}"`;
    if (kind === 'Role' || kind === 'ClusterRole') {
      if (await this.may(user, 'escalate', { resource: a.resource.plural, namespace: ns, name: a.name })) return;
      if (kind === 'ClusterRole' && (obj.aggregationRule || a.oldObject?.aggregationRule)) {
        if (
          uncoveredRules(this.rbac.rulesFor(user, '').rules, [
            { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
            { verbs: ['*'], nonResourceURLs: ['*'] },
          ]).length
        ) {
          throw forbidden(`${what} is forbidden: must have cluster-admin privileges to use the aggregationRule`);
        }
        return;
      }
      this.confirmNoEscalation(user, { namespace: ns, rules: (obj.rules as PolicyRule[] | undefined) ?? [] }, what);
      return;
    }
    if (kind === 'RoleBinding' || kind === 'ClusterRoleBinding') {
      const ref = obj.roleRef as RoleRef;
      const refPlural = ref.kind === 'Role' ? 'roles' : 'clusterroles';
      if (await this.may(user, 'bind', { resource: refPlural, namespace: ns, name: ref.name })) return;
      const rules = this.rbac.roleRefRules(ref, ns);
      if (!rules)
        throw forbidden(`${what} is forbidden: ${ref.kind.toLowerCase()}.${rbacGroup} "${ref.name}" not found`);
      this.confirmNoEscalation(user, { namespace: ns, rules }, what);
    }
  }

  /** Whether `user` may `verb` the named RBAC object. */
  private async may(
    user: UserInfo,
    verb: string,
    object: { resource: string; namespace: string; name: string },
  ): Promise<boolean> {
    const r = await this.authz.authorize({
      user,
      verb,
      resource: object.resource,
      namespace: object.namespace,
      name: object.name,
      isResourceRequest: true,
      apiGroup: group('rbac.authorization'),
      apiVersion: 'v1',
      subresource: '',
      path: '',
    });
    return r.decision === 'allow';
  }

  /** Throws Forbidden, naming `what`, unless `user` holds every rule of `grant` in its namespace. */
  private confirmNoEscalation(user: UserInfo, grant: { namespace: string; rules: PolicyRule[] }, what: string): void {
    const owner = this.rbac.rulesFor(user, grant.namespace);
    const missing = uncoveredRules(owner.rules, grant.rules);
    if (missing.length === 0) return;
    let msg = `${what} is forbidden: user ${JSON.stringify(user.name)} (groups=${JSON.stringify(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${missing.map(compactRuleString).join('\n')}`;
    if (owner.errors.length) msg += `; resolution errors: [${owner.errors.join(' ')}]`;
    throw forbidden(msg);
  }
}
