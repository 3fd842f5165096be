import { nodeLabelKey, type Pod } from '@svc/api';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden } from './admission-errors.js';

interface PodAntiAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: Array<{ topologyKey?: string }>;
}

/**
 * Kubernetes' LimitPodHardAntiAffinityTopology: a pod created or updated whose required pod
 * anti-affinity terms use a topology key other than the node host name label (`<prefix>/hostname`)
 * is a 403 `affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey <key> but only key
 * <prefix>/hostname is allowed`, so one pod cannot keep others off a whole zone.
 */
export class LimitPodHardAntiAffinityTopology implements AdmissionPlugin {
  readonly name = 'LimitPodHardAntiAffinityTopology';

  async validate(a: AdmissionAttributes): Promise<void> {
    if ((a.operation !== 'CREATE' && a.operation !== 'UPDATE') || !a.object || a.subresource !== '') return;
    if (a.resource.group !== '' || a.resource.plural !== 'pods') return;
    const affinity = (a.object as Pod).spec?.affinity as { podAntiAffinity?: PodAntiAffinity } | undefined;
    const hostname = nodeLabelKey('hostname');
    for (const term of affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) {
      const key = term.topologyKey ?? '';
      if (key !== hostname) {
        throw admissionForbidden(
          a,
          `affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey ${key} but only key ${hostname} is allowed`,
        );
      }
    }
  }
}
