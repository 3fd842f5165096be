import { forbidden, group, type ApiObject } from '@svc/api';
import type { UserInfo } from '@svc/component-base';
import type { Authorizer } from '../authz/authorizer.js';
import { deepEqual } from '../registry/object-utils.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

interface Csr {
  spec?: { signerName?: string };
  status?: { conditions?: unknown; certificate?: string };
}

/**
 * Kubernetes' IsAuthorizedForSignerName: `verb` on the `signers` resource named by the
 * signer name, or by its domain with a wildcard path (`example.com/*`).
 */
export async function authorizedForSigner(
  authz: Authorizer,
  ask: { user: UserInfo; verb: string; signerName: string },
): Promise<boolean> {
  const { user, verb, signerName } = ask;
  const [domain] = signerName.split('/');
  for (const name of [signerName, `${domain ?? ''}/*`]) {
    const r = await authz.authorize({
      user,
      verb,
      name,
      resource: 'signers',
      apiGroup: group('certificates'),
      apiVersion: '*',
      isResourceRequest: true,
      namespace: '',
      subresource: '',
      path: '',
    });
    if (r.decision === 'allow') return true;
  }
  return false;
}

/** An UPDATE of a CSR subresource by a user (the server's own writes pass). */
function csrUpdate(
  a: AdmissionAttributes,
  subresource: string,
): { user: UserInfo; old: ApiObject; obj: ApiObject } | undefined {
  const r = a.resource;
  if (
    a.operation !== 'UPDATE' ||
    a.subresource !== subresource ||
    r.group !== group('certificates') ||
    r.plural !== 'certificatesigningrequests'
  )
    return undefined;
  return a.user && a.oldObject && a.object ? { user: a.user, old: a.oldObject, obj: a.object } : undefined;
}

function denied(a: AdmissionAttributes, why: string): Error {
  return forbidden(`${a.resource.plural}.${a.resource.group} ${JSON.stringify(a.name)} is forbidden: ${why}`);
}

const signerOf = (o: ApiObject): string => (o as Csr).spec?.signerName ?? '';

/** Writes to `/approval` need `approve` on the stored request's signer (Kubernetes' CertificateApproval). */
export class CertificateApproval implements AdmissionPlugin {
  readonly name = 'CertificateApproval';
  constructor(private readonly authz: Authorizer) {}

  async validate(a: AdmissionAttributes): Promise<void> {
    const w = csrUpdate(a, 'approval');
    // The stored signer decides, in case the write tries to change it.
    if (!w || (await authorizedForSigner(this.authz, { user: w.user, verb: 'approve', signerName: signerOf(w.old) })))
      return;
    throw denied(a, `user not permitted to approve requests with signerName ${JSON.stringify(signerOf(w.old))}`);
  }
}

/**
 * Writes to `/status` that change the certificate or the conditions need `sign` on the
 * stored request's signer (Kubernetes' CertificateSigning).
 */
export class CertificateSigning implements AdmissionPlugin {
  readonly name = 'CertificateSigning';
  constructor(private readonly authz: Authorizer) {}

  async validate(a: AdmissionAttributes): Promise<void> {
    const w = csrUpdate(a, 'status');
    if (!w) return;
    const [now, before] = [(w.obj as Csr).status, (w.old as Csr).status];
    if ((now?.certificate ?? '') === (before?.certificate ?? '') && deepEqual(now?.conditions, before?.conditions))
      return;
    if (await authorizedForSigner(this.authz, { user: w.user, verb: 'sign', signerName: signerOf(w.old) })) return;
    throw denied(a, `user not permitted to sign requests with signerName ${JSON.stringify(signerOf(w.old))}`);
  }
}
