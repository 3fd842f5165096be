import {
  fieldErrors,
  group,
  invalid,
  type ApiObject,
  type Catalog,
  type ParamKind,
  type ValidatingAdmissionPolicy,
  type ValidatingAdmissionPolicyBinding,
} from '@svc/api';
import { MASTERS_GROUP, type UserInfo } from '@svc/component-base';
import type { Authorizer } from '../../authz/authorizer.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission.js';

/** Go's `%v` of a user (`&{alice 42 [devs system:authenticated] map[]}`), as Kubernetes' messages print it. */
function goUser(u: UserInfo): string {
  const extra = Object.keys(u.extra ?? {})
    .sort()
    .map((k) => `${k}:[${(u.extra?.[k] ?? []).join(' ')}]`)
    .join(' ');
  return `&{${u.name} ${u.uid ?? ''} [${u.groups.join(' ')}] map[${extra}]}`;
}

const same = (x: unknown, y: unknown): boolean => JSON.stringify(x ?? null) === JSON.stringify(y ?? null);

/**
 * Kubernetes' param read check on policy writes (its registry strategies): whoever writes a
 * ValidatingAdmissionPolicy with a paramKind must be allowed to `get` every object of that
 * kind, and whoever writes a binding with a paramRef must be allowed to `get` the object it
 * refers to; unchanged paramKinds (paramRefs and policy names) are not checked again.
 * `system:masters` and the server itself are exempt. Run as admission, after the strategy's
 * validation, as the RBAC escalation check is.
 */
export class PolicyParamAuthorization implements AdmissionPlugin {
  readonly name = 'ValidatingAdmissionPolicyParamAuthorization';

  constructor(
    private readonly d: {
      authorizer: Authorizer;
      catalog: Catalog;
      /** The named policy, when it exists. */
      policy(name: string): Promise<ApiObject | undefined>;
    },
  ) {}

  async validate(a: AdmissionAttributes): Promise<void> {
    const user = a.user;
    if (!user || user.groups.includes(MASTERS_GROUP) || !a.object || a.subresource !== '') return;
    if ((a.operation !== 'CREATE' && a.operation !== 'UPDATE') || a.resource.group !== group('admissionregistration'))
      return;
    if (a.resource.kind === 'ValidatingAdmissionPolicy') await this.policy(a, user);
    else if (a.resource.kind === 'ValidatingAdmissionPolicyBinding') await this.binding(a, user);
  }

  /** The group, version and resource of a paramKind (`*` for what cannot be resolved). */
  private resolve(pk: ParamKind | undefined): { apiGroup: string; apiVersion: string; resource: string } {
    const apiVersion = pk?.apiVersion ?? '';
    const parts = apiVersion.split('/');
    if (!pk || parts.length > 2) return { apiGroup: '*', apiVersion: '*', resource: '*' };
    const [g, v] = parts.length === 1 ? ['', parts[0] ?? ''] : [parts[0] ?? '', parts[1] ?? ''];
    const t = this.d.catalog.byKind(g, v, pk.kind ?? '');
    return { apiGroup: g, apiVersion: v, resource: t?.plural ?? '*' };
  }

  private async allowed(
    user: UserInfo,
    o: { apiGroup: string; apiVersion: string; resource: string; namespace: string; name: string },
  ): Promise<boolean> {
    const attrs = { user, isResourceRequest: true, path: '', verb: 'get', subresource: '', ...o };
    return (await this.d.authorizer.authorize(attrs)).decision === 'allow';
  }

  private async policy(a: AdmissionAttributes, user: UserInfo): Promise<void> {
    const pk = (a.object as ValidatingAdmissionPolicy).spec?.paramKind;
    if (!pk) return;
    const old = (a.oldObject as ValidatingAdmissionPolicy | undefined)?.spec?.paramKind;
    if (old && same(old, pk)) return;
    if (await this.allowed(user, { ...this.resolve(pk), namespace: '*', name: '*' })) return;
    const detail = `user ${goUser(user)} must have "get" permission on all objects of the referenced paramKind (kind=${pk.kind ?? ''}, apiVersion=${pk.apiVersion ?? ''})`;
    throw invalid({ group: a.resource.group, kind: a.resource.kind }, a.name, [
      fieldErrors.forbidden('spec.paramKind', detail),
    ]);
  }

  private async binding(a: AdmissionAttributes, user: UserInfo): Promise<void> {
    const spec = (a.object as ValidatingAdmissionPolicyBinding).spec;
    const ref = spec?.paramRef;
    if (!ref) return;
    const oldSpec = (a.oldObject as ValidatingAdmissionPolicyBinding | undefined)?.spec;
    if (oldSpec?.paramRef && same(oldSpec.paramRef, ref) && oldSpec.policyName === spec.policyName) return;
    const policy = (await this.d.policy(spec.policyName ?? '')) as ValidatingAdmissionPolicy | undefined;
    const pk = policy?.spec?.paramKind;
    const target = pk ? this.resolve(pk) : { apiGroup: '*', apiVersion: '*', resource: '*' };
    if (await this.allowed(user, { ...target, namespace: ref.namespace ?? '', name: ref.name ?? '' })) return;
    const detail = `user ${goUser(user)} does not have "get" permission on the object referenced by paramRef`;
    throw invalid({ group: a.resource.group, kind: a.resource.kind }, a.name, [
      fieldErrors.forbidden('spec.paramRef', detail),
    ]);
  }
}
