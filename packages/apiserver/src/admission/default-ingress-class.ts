import { classAnnotationKey, group, isStatusError, type ApiObject, type Ingress } from '@svc/api';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden } from './admission-errors.js';
import { newestDefaultClass } from './default-class.js';

const isDefaultIngressClass = (c: ApiObject): boolean =>
  c.metadata.annotations?.[classAnnotationKey('ingress-class-is-default')] === 'true';

/**
 * Kubernetes' DefaultIngressClass: an Ingress created without `spec.ingressClassName` and
 * without the old class annotation gets the default IngressClass (annotated
 * `ingressclass.<prefix>/is-default-class: "true"`); with several, the newest.
 */
export class DefaultIngressClass implements AdmissionPlugin {
  readonly name = 'DefaultIngressClass';

  /** `listClasses`: every IngressClass, from the cache. */
  constructor(private readonly listClasses: () => Promise<ApiObject[]>) {}

  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || a.subresource !== '' || !a.object) return;
    if (a.resource.group !== group('networking') || a.resource.plural !== 'ingresses') return;
    const ingress = a.object as Ingress;
    if (ingress.spec?.ingressClassName !== undefined && ingress.spec.ingressClassName !== null) return;
    if (ingress.metadata.annotations?.[classAnnotationKey('ingress-class')] !== undefined) return;
    let classes: ApiObject[];
    try {
      classes = await this.listClasses();
    } catch (e) {
      throw admissionForbidden(a, isStatusError(e) ? e.message : String(e));
    }
    const chosen = newestDefaultClass(classes, isDefaultIngressClass);
    if (!chosen?.metadata.name) return;
    (ingress.spec ??= {}).ingressClassName = chosen.metadata.name;
  }
}
