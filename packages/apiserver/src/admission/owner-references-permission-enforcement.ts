import type { Catalog, OwnerReference } from '@svc/api';
import type { UserInfo } from '@svc/component-base';
import type { AuthorizationAttributes, Authorizer } from '../authz/authorizer.js';
import { deepEqual } from '../registry/object-utils.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden } from './admission-errors.js';
import type { AdmissionContext } from './plugins.js';

/** Go's `%v` of a nil error, as Kubernetes' messages print the authorizer's (always nil) error. */
const NIL_ERROR = '<nil>';

/**
 * Kubernetes' OwnerReferencesPermissionEnforcement: whoever changes an object's
 * `metadata.ownerReferences` (create or update; `pods/status` excepted) must be allowed to delete
 * the object (not asked on create: the creator could have left it out) — else a 403 `cannot set an
 * ownerRef on a resource you can't delete: <reason>, <nil>` — and whoever makes a reference
 * block its owner's deletion (`blockOwnerDeletion: true`, new or changed) must be allowed to
 * update the owner's `finalizers` subresource (asked once for every resource at once first) —
 * else `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set
 * finalizers on: <reason>, <nil>`; an owner kind the server does not serve is `cannot set
 * blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion <v> Kind <k>: ...`.
 */
export class OwnerReferencesPermissionEnforcement implements AdmissionPlugin {
  readonly name = 'OwnerReferencesPermissionEnforcement';

  constructor(private readonly o: { authorizer: Authorizer; catalog: Catalog }) {}

  async validate(a: AdmissionAttributes): Promise<void> {
    if ((a.operation !== 'CREATE' && a.operation !== 'UPDATE') || !a.object || !a.user) return;
    // Old node agents rewrite pod status wholesale; the pod status strategy keeps owner references.
    if (a.resource.group === '' && a.resource.plural === 'pods' && a.subresource === 'status') return;
    const now = a.object.metadata.ownerReferences ?? [];
    const before = a.operation === 'UPDATE' ? (a.oldObject?.metadata.ownerReferences ?? []) : undefined;
    if (!changes(now, before)) return;
    const user = a.user;
    if (a.operation !== 'CREATE') {
      const r = await this.ask(user, {
        verb: 'delete',
        namespace: a.namespace,
        apiGroup: a.resource.group,
        apiVersion: a.resource.version,
        resource: a.resource.plural,
        subresource: a.subresource,
        name: a.name,
      });
      if (r.decision !== 'allow') {
        throw admissionForbidden(
          a,
          `cannot set an ownerRef on a resource you can't delete: ${r.reason ?? ''}, ${NIL_ERROR}`,
        );
      }
    }
    const blocking = newlyBlocking(now, before);
    if (blocking.length === 0) return;
    // One question covering every owner first: may this user finalize anything at all?
    const anything = await this.ask(user, {
      verb: 'update',
      namespace: '',
      apiGroup: '*',
      apiVersion: '*',
      resource: '*',
      subresource: 'finalizers',
      name: '*',
    });
    if (anything.decision === 'allow') return;
    for (const ref of blocking) {
      const { group, version, error } = parseGroupVersion(ref.apiVersion);
      const types = error
        ? []
        : this.o.catalog.all().filter((t) => t.group === group && t.version === version && t.kind === ref.kind);
      if (types.length === 0) {
        const why =
          error ?? `no matches for kind ${JSON.stringify(ref.kind)} in version ${JSON.stringify(ref.apiVersion)}`;
        throw admissionForbidden(
          a,
          `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${ref.apiVersion} Kind ${ref.kind}: ${why}`,
        );
      }
      for (const t of types) {
        const r = await this.ask(user, {
          verb: 'update',
          // An owner in a namespace is in the dependent's.
          namespace: t.namespaced ? a.namespace : '',
          apiGroup: t.group,
          apiVersion: t.version,
          resource: t.plural,
          subresource: 'finalizers',
          name: ref.name,
        });
        if (r.decision !== 'allow') {
          throw admissionForbidden(
            a,
            `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: ${r.reason ?? ''}, ${NIL_ERROR}`,
          );
        }
      }
    }
  }

  private ask(
    user: UserInfo,
    r: Omit<AuthorizationAttributes, 'user' | 'isResourceRequest' | 'path'>,
  ): ReturnType<Authorizer['authorize']> {
    return this.o.authorizer.authorize({ ...r, user, isResourceRequest: true, path: '' });
  }
}

/** Whether the references change: any on create, else a different list (order counts). */
function changes(now: readonly OwnerReference[], before: readonly OwnerReference[] | undefined): boolean {
  if (before === undefined) return now.length > 0;
  return now.length !== before.length || now.some((r, i) => !deepEqual(r, before[i]));
}

/** References that block their owner's deletion and did not before (by uid), or all blocking ones on create. */
function newlyBlocking(
  now: readonly OwnerReference[],
  before: readonly OwnerReference[] | undefined,
): OwnerReference[] {
  const blocking = now.filter((r) => r.blockOwnerDeletion === true);
  if (before === undefined) return blocking;
  const old = new Map(before.map((r) => [r.uid, r]));
  return blocking.filter((r) => old.get(r.uid)?.blockOwnerDeletion !== true);
}

/** Kubernetes' ParseGroupVersion: `v1`, `group/version`; more slashes are an error. */
function parseGroupVersion(apiVersion: string): { group: string; version: string; error?: string } {
  const parts = apiVersion.split('/');
  if (apiVersion === '' || apiVersion === '/') return { group: '', version: '' };
  if (parts.length === 1) return { group: '', version: apiVersion };
  if (parts.length === 2) return { group: parts[0] ?? '', version: parts[1] ?? '' };
  return { group: '', version: '', error: `unexpected GroupVersion string: ${apiVersion}` };
}

export function newOwnerReferencesPermissionEnforcement(c: AdmissionContext): OwnerReferencesPermissionEnforcement {
  return new OwnerReferencesPermissionEnforcement({ authorizer: c.authorizer, catalog: c.catalog });
}
