import { group, type Pod, type ResourceList, type RuntimeClass } from '@svc/api';
import { quantitiesEqual, quantitiesOf } from '@svc/machinery';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden } from './admission-errors.js';
import type { AdmissionContext } from './plugins.js';
import { mergeTolerations } from './tolerations.js';

export interface RuntimeClassOptions {
  /** The class, from the cache, else storage; undefined when it does not exist. */
  get(name: string): Promise<RuntimeClass | undefined>;
}

/** Kubernetes' semantic equality of two lists (nil and empty alike, quantities by value). */
function sameOverhead(a: ResourceList | undefined, b: ResourceList | undefined): boolean {
  return quantitiesEqual(quantitiesOf(a), quantitiesOf(b));
}

/**
 * Kubernetes' RuntimeClass admission, for pods being created. Mutating: the class named by
 * `runtimeClassName` must exist (403 `pod rejected: RuntimeClass "x" not found`); its
 * `overhead.podFixed` becomes `spec.overhead` (a different overhead already in the spec is
 * refused), its `scheduling.nodeSelector` is merged into the pod's (a conflicting value is
 * refused) and its tolerations are merged with the pod's. Validating: the pod's overhead must
 * be the class's, and a pod without such a class may not set one.
 */
export class RuntimeClassAdmission implements AdmissionPlugin {
  readonly name = 'RuntimeClass';

  constructor(private readonly o: RuntimeClassOptions) {}

  private podOf(a: AdmissionAttributes): Pod | undefined {
    if (a.subresource !== '' || a.resource.group !== '' || a.resource.plural !== 'pods') return undefined;
    if (a.operation !== 'CREATE' || !a.object) return undefined;
    const pod = a.object as Pod;
    pod.spec ??= { containers: [] };
    return pod;
  }

  private async classOf(a: AdmissionAttributes, pod: Pod): Promise<RuntimeClass | undefined> {
    const name = pod.spec.runtimeClassName;
    if (!name) return undefined;
    const rc = await this.o.get(name);
    if (!rc) throw admissionForbidden(a, `pod rejected: RuntimeClass "${name}" not found`);
    return rc;
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    const pod = this.podOf(a);
    if (!pod) return;
    const rc = await this.classOf(a, pod);
    if (!rc) return;
    const spec = pod.spec;
    if (rc.overhead) {
      if (spec.overhead !== undefined && !sameOverhead(rc.overhead.podFixed, spec.overhead)) {
        throw admissionForbidden(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
      }
      if (rc.overhead.podFixed) spec.overhead = { ...rc.overhead.podFixed };
      else delete spec.overhead;
    }
    const scheduling = rc.scheduling;
    if (!scheduling) return;
    const selector = scheduling.nodeSelector ?? {};
    if (spec.nodeSelector) {
      for (const [key, value] of Object.entries(selector)) {
        const podValue = spec.nodeSelector[key];
        if (podValue !== undefined && podValue !== value) {
          throw admissionForbidden(
            a,
            `conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${value}; pod.spec.nodeSelector[${key}] = ${podValue}`,
          );
        }
        spec.nodeSelector[key] = value;
      }
    } else if (scheduling.nodeSelector) {
      spec.nodeSelector = { ...scheduling.nodeSelector };
    }
    const tolerations = mergeTolerations(spec.tolerations ?? [], scheduling.tolerations ?? []);
    if (tolerations.length > 0) spec.tolerations = tolerations;
    else delete spec.tolerations;
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const pod = this.podOf(a);
    if (!pod) return;
    const rc = await this.classOf(a, pod);
    if (rc?.overhead) {
      if (!sameOverhead(rc.overhead.podFixed, pod.spec.overhead)) {
        throw admissionForbidden(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
      }
    } else if (pod.spec.overhead !== undefined) {
      throw admissionForbidden(a, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
    }
  }
}

/** RuntimeClass admission over the server's RuntimeClasses (watch cache first, then storage). */
export function newRuntimeClassAdmission(c: AdmissionContext): RuntimeClassAdmission {
  const ref = { group: group('node'), version: 'v1', resource: 'runtimeclasses' };
  return new RuntimeClassAdmission({
    get: async (name) => (await c.read(ref, { namespace: '', name })) as RuntimeClass | undefined,
  });
}
