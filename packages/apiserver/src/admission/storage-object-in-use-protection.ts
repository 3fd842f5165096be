import { storageProtectionFinalizer } from '@svc/api';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

/**
 * Kubernetes' StorageObjectInUseProtection: every PersistentVolume and PersistentVolumeClaim
 * is created with the `<prefix>/pv-protection` / `<prefix>/pvc-protection` finalizer, which the
 * protection controllers remove once nothing uses the object.
 */
export class StorageObjectInUseProtection implements AdmissionPlugin {
  readonly name = 'StorageObjectInUseProtection';

  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || a.subresource !== '' || a.resource.group !== '' || !a.object) return;
    const kind =
      a.resource.plural === 'persistentvolumes' ? 'pv' : a.resource.plural === 'persistentvolumeclaims' ? 'pvc' : '';
    if (!kind) return;
    const finalizer = storageProtectionFinalizer(kind);
    const m = a.object.metadata;
    if (!(m.finalizers ?? []).includes(finalizer)) m.finalizers = [...(m.finalizers ?? []), finalizer];
  }
}
