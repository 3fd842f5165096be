import { classAnnotationKey, type ApiObject, type PersistentVolumeClaim, type StorageClass } from '@svc/api';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden } from './admission-errors.js';
import { compareQuantities } from '../registry/strategies/storage-quantity.js';

/** The class of a claim: the old beta annotation first, then `spec.storageClassName` (Kubernetes' GetPersistentVolumeClaimClass). */
function claimClass(c: PersistentVolumeClaim): string {
  return c.metadata.annotations?.[classAnnotationKey('beta-storage-class')] ?? c.spec?.storageClassName ?? '';
}

/**
 * Kubernetes' PersistentVolumeClaimResize (validating): a claim's storage request may grow only
 * when the claim is bound and its class, unchanged, sets `allowVolumeExpansion: true`.
 * Shrinking is left to validation (never below `status.capacity`).
 */
export class PersistentVolumeClaimResize implements AdmissionPlugin {
  readonly name = 'PersistentVolumeClaimResize';

  /** `getClass`: a StorageClass by name, undefined when there is none. */
  constructor(private readonly getClass: (name: string) => Promise<ApiObject | undefined>) {}

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'UPDATE' || a.subresource !== '') return;
    if (a.resource.group !== '' || a.resource.plural !== 'persistentvolumeclaims') return;
    const claim = a.object as PersistentVolumeClaim | undefined;
    const old = a.oldObject as PersistentVolumeClaim | undefined;
    if (!claim || !old) return;
    const grows =
      compareQuantities(claim.spec?.resources?.requests?.storage, old.spec?.resources?.requests?.storage) > 0;
    if (!grows) return;
    if (old.status?.phase !== 'Bound')
      throw admissionForbidden(a, 'Only bound persistent volume claims can be expanded');
    if (!(await this.allowsResize(claim, old)))
      throw admissionForbidden(
        a,
        'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
      );
  }

  private async allowsResize(claim: PersistentVolumeClaim, old: PersistentVolumeClaim): Promise<boolean> {
    const name = claimClass(claim);
    if (name === '' || name !== claimClass(old)) return false;
    const sc = (await this.getClass(name).catch(() => undefined)) as StorageClass | undefined;
    return sc?.allowVolumeExpansion === true;
  }
}
