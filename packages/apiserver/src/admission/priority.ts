import { group, type Pod, type PriorityClass } from '@svc/api';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden } from './admission-errors.js';
import type { AdmissionContext } from './plugins.js';
import { StoreLister } from './store-lister.js';

/** The priority of pods without a class when no class is the global default. */
export const DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS = 0;

export interface PriorityOptions {
  /** Every PriorityClass, from the cache. */
  classes(): Promise<PriorityClass[]>;
  /** One class, from the cache, else storage (a class just created); undefined when it does not exist. */
  get(name: string): Promise<PriorityClass | undefined>;
}

/**
 * Kubernetes' Priority admission. Pods (mutating, create): the class named by
 * `priorityClassName` (else the global default, else none) gives `spec.priority` and
 * `spec.preemptionPolicy`; a missing class, or a priority or policy in the spec that differs
 * from the class's, is a 403 in Kubernetes' words. On update the stored priority and policy are
 * kept when the new spec leaves them out. PriorityClasses (validating): only one may be the
 * global default (`PriorityClass x is already marked as default. Only one default can exist`).
 * With several defaults (a race), the lowest value wins.
 */
export class Priority implements AdmissionPlugin {
  readonly name = 'Priority';

  constructor(private readonly o: PriorityOptions) {}

  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.subresource !== '' || a.resource.group !== '' || a.resource.plural !== 'pods' || !a.object) return;
    const pod = a.object as Pod;
    pod.spec ??= { containers: [] };
    const spec = pod.spec;
    if (a.operation === 'UPDATE') {
      const old = (a.oldObject as Pod | undefined)?.spec;
      if (spec.priority === undefined && old?.priority !== undefined) spec.priority = old.priority;
      if (spec.preemptionPolicy === undefined && old?.preemptionPolicy !== undefined)
        spec.preemptionPolicy = old.preemptionPolicy;
      return;
    }
    if (a.operation !== 'CREATE') return;
    let priority = DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS;
    let policy: string | undefined = 'PreemptLowerPriority';
    if (!spec.priorityClassName) {
      const def = await this.defaultClass();
      if (def) {
        spec.priorityClassName = def.metadata.name;
        priority = def.value ?? 0;
        policy = def.preemptionPolicy;
      }
    } else {
      const pc = await this.o.get(spec.priorityClassName);
      if (!pc) throw admissionForbidden(a, `no PriorityClass with name ${spec.priorityClassName} was found`);
      priority = pc.value ?? 0;
      policy = pc.preemptionPolicy;
    }
    if (spec.priority !== undefined && spec.priority !== priority) {
      throw admissionForbidden(
        a,
        `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
      );
    }
    spec.priority = priority;
    if (policy !== undefined) {
      if (spec.preemptionPolicy !== undefined && spec.preemptionPolicy !== policy) {
        throw admissionForbidden(
          a,
          `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`,
        );
      }
      spec.preemptionPolicy = policy;
    }
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.subresource !== '' || a.resource.group !== group('scheduling') || a.resource.plural !== 'priorityclasses')
      return;
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
    const pc = a.object as PriorityClass | undefined;
    if (!pc?.globalDefault) return;
    const def = await this.defaultClass();
    if (def && (a.operation === 'CREATE' || def.metadata.name !== pc.metadata.name)) {
      throw admissionForbidden(
        a,
        `PriorityClass ${def.metadata.name ?? ''} is already marked as default. Only one default can exist`,
      );
    }
  }

  private async defaultClass(): Promise<PriorityClass | undefined> {
    let def: PriorityClass | undefined;
    for (const pc of await this.o.classes()) {
      if (pc.globalDefault && (!def || (def.value ?? 0) > (pc.value ?? 0))) def = pc;
    }
    return def;
  }
}

/** Priority over the server's PriorityClasses (an informer over the watch cache; storage for a class it lacks). */
export function newPriority(c: AdmissionContext): Priority {
  const ref = { group: group('scheduling'), version: 'v1', resource: 'priorityclasses' };
  const lister = new StoreLister<PriorityClass>({
    store: () => {
      const t = c.catalog.lookup(ref.group, ref.version, ref.resource);
      return t ? c.storeFor(t) : undefined;
    },
    signal: c.signal,
    onError: (e) => c.log.warn('Priority informer failed; relisting', { error: (e as Error).message }),
  });
  return new Priority({
    classes: () => lister.list(''),
    get: async (name) =>
      (await lister.get('', name)) ?? ((await c.read(ref, { namespace: '', name })) as PriorityClass | undefined),
  });
}
