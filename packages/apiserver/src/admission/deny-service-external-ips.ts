import type { ApiObject } from '@svc/api';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden } from './admission-errors.js';

const externalIps = (svc: ApiObject | undefined): string[] =>
  (svc?.spec as { externalIPs?: string[] } | undefined)?.externalIPs ?? [];

/**
 * Kubernetes' DenyServiceExternalIPs: no new `spec.externalIPs` on Services. A create with any,
 * or an update adding one the stored Service did not have, is a 403 `Use of external IPs is
 * denied by admission control`; keeping or removing existing ones is allowed.
 */
export class DenyServiceExternalIPs implements AdmissionPlugin {
  readonly name = 'DenyServiceExternalIPs';

  async validate(a: AdmissionAttributes): Promise<void> {
    if ((a.operation !== 'CREATE' && a.operation !== 'UPDATE') || !a.object || a.subresource !== '') return;
    if (a.resource.group !== '' || a.resource.plural !== 'services') return;
    const wanted = externalIps(a.object);
    if (wanted.length === 0) return;
    const had = new Set(a.operation === 'UPDATE' ? externalIps(a.oldObject) : []);
    if (a.operation === 'UPDATE' && a.oldObject && wanted.every((ip) => had.has(ip))) return;
    throw admissionForbidden(a, 'Use of external IPs is denied by admission control');
  }
}
