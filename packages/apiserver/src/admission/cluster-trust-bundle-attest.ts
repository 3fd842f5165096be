import { group, type ApiObject } from '@svc/api';
import type { Authorizer } from '../authz/authorizer.js';
import { deepEqual } from '../registry/object-utils.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden } from './admission-errors.js';
import { authorizedForSigner } from './certificate-signers.js';

/**
 * Kubernetes' ClusterTrustBundleAttest: creating or updating a ClusterTrustBundle
 * (`certificates.<suffix>` `clustertrustbundles`) that names a `spec.signerName` needs `attest` on
 * that signer (403 `user not permitted to attest for signerName "<signer>"`), except an update that
 * changes only what the garbage collector changes. Kubernetes runs the check only while its
 * ClusterTrustBundle alpha API is enabled and does nothing otherwise; svc does not serve that
 * API, so no request ever names the resource and the plugin admits everything, by construction,
 * as Kubernetes does with the API off.
 */
export class ClusterTrustBundleAttest implements AdmissionPlugin {
  readonly name = 'ClusterTrustBundleAttest';

  constructor(private readonly authz: Authorizer) {}

  async validate(a: AdmissionAttributes): Promise<void> {
    if ((a.operation !== 'CREATE' && a.operation !== 'UPDATE') || !a.object || !a.user) return;
    if (a.resource.group !== group('certificates') || a.resource.plural !== 'clustertrustbundles') return;
    const signerName = (a.object.spec as { signerName?: string } | undefined)?.signerName ?? '';
    if (signerName === '') return;
    // Storage migration and the garbage collector may rewrite a bundle they cannot attest for.
    if (a.operation === 'UPDATE' && a.oldObject && onlyGcFieldsChange(a.object, a.oldObject)) return;
    if (await authorizedForSigner(this.authz, { user: a.user, verb: 'attest', signerName })) return;
    throw admissionForbidden(a, `user not permitted to attest for signerName ${JSON.stringify(signerName)}`);
  }
}

/** Kubernetes' IsOnlyMutatingGCFields: equal once owner references, finalizers and managed fields are the old ones. */
export function onlyGcFieldsChange(obj: ApiObject, old: ApiObject): boolean {
  const strip = (o: ApiObject): ApiObject => {
    const { ownerReferences: _o, finalizers: _f, managedFields: _m, resourceVersion: _r, ...metadata } = o.metadata;
    return { ...o, metadata };
  };
  return deepEqual(strip(obj), strip(old));
}
