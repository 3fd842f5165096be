import { nativeResourcePrefix, type Pod, type Toleration } from '@svc/api';
import { isQualifiedName } from '@svc/machinery';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

/** The prefix ResourceQuota puts before request names (Kubernetes' `requests.`). */
const REQUESTS_PREFIX = 'requests.';

/**
 * Kubernetes' IsExtendedResourceName: a name with a domain other than the project's (`<prefix>/`),
 * not starting with `requests.`, that stays a qualified name with `requests.` in front.
 */
export function isExtendedResourceName(name: string): boolean {
  const native = !name.includes('/') || name.includes(nativeResourcePrefix());
  if (native || name.startsWith(REQUESTS_PREFIX)) return false;
  return isQualifiedName(`${REQUESTS_PREFIX}${name}`).length === 0;
}

const sameToleration = (x: Toleration, y: Toleration): boolean =>
  (x.key ?? '') === (y.key ?? '') &&
  (x.operator ?? '') === (y.operator ?? '') &&
  (x.value ?? '') === (y.value ?? '') &&
  (x.effect ?? '') === (y.effect ?? '');

/**
 * Kubernetes' ExtendedResourceToleration: a pod created or updated whose containers or init
 * containers request extended resources gets, for each such resource in name order, the toleration
 * `{key: <resource>, operator: Exists, effect: NoSchedule}` (replacing one with the same key,
 * operator, value and effect), so it may run on nodes tainted for those resources.
 */
export class ExtendedResourceToleration implements AdmissionPlugin {
  readonly name = 'ExtendedResourceToleration';

  async admit(a: AdmissionAttributes): Promise<void> {
    if ((a.operation !== 'CREATE' && a.operation !== 'UPDATE') || !a.object || a.subresource !== '') return;
    if (a.resource.group !== '' || a.resource.plural !== 'pods') return;
    const spec = (a.object as Pod).spec ?? { containers: [] };
    const names = new Set<string>();
    for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
      for (const r of Object.keys(c.resources?.requests ?? {})) if (isExtendedResourceName(r)) names.add(r);
    }
    for (const key of [...names].sort()) {
      const wanted: Toleration = { key, operator: 'Exists', effect: 'NoSchedule' };
      const tolerations = spec.tolerations ?? [];
      if (tolerations.some((t) => sameToleration(t, wanted))) {
        // Kubernetes replaces a matching toleration that differs (say, in tolerationSeconds).
        spec.tolerations = tolerations.map((t) => (sameToleration(t, wanted) ? wanted : t));
      } else {
        spec.tolerations = [...tolerations, wanted];
      }
    }
    if (names.size > 0) (a.object as Pod).spec = spec;
  }
}
