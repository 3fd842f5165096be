import { classAnnotationKey, isStatusError, type ApiObject, type PersistentVolumeClaim } from '@svc/api';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden } from './admission-errors.js';
import { newestDefaultClass } from './default-class.js';

/** Either default-class annotation is `true` (Kubernetes' IsDefaultAnnotation). */
function isDefaultStorageClass(c: ApiObject): boolean {
  const a = c.metadata.annotations ?? {};
  return (
    a[classAnnotationKey('storage-class-is-default')] === 'true' ||
    a[classAnnotationKey('beta-storage-class-is-default')] === 'true'
  );
}

/**
 * Kubernetes' DefaultStorageClass: a claim created without a class (neither
 * `spec.storageClassName`, even empty, nor the old beta annotation) gets the default
 * StorageClass's name; with several defaults, the newest. No default: the claim is unchanged.
 */
export class DefaultStorageClass implements AdmissionPlugin {
  readonly name = 'DefaultStorageClass';

  /** `listClasses`: every StorageClass, from the cache. */
  constructor(private readonly listClasses: () => Promise<ApiObject[]>) {}

  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || a.subresource !== '') return;
    if (a.resource.group !== '' || a.resource.plural !== 'persistentvolumeclaims' || !a.object) return;
    const claim = a.object as PersistentVolumeClaim;
    if (claim.metadata.annotations?.[classAnnotationKey('beta-storage-class')] !== undefined) return;
    if (claim.spec?.storageClassName !== undefined && claim.spec.storageClassName !== null) return;
    let classes: ApiObject[];
    try {
      classes = await this.listClasses();
    } catch (e) {
      throw admissionForbidden(a, isStatusError(e) ? e.message : String(e));
    }
    const chosen = newestDefaultClass(classes, isDefaultStorageClass);
    if (!chosen?.metadata.name) return;
    (claim.spec ??= {}).storageClassName = chosen.metadata.name;
  }
}
