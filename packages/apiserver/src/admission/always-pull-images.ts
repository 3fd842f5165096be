import { fieldErrorMessage, fieldErrors, type Container, type Pod } from '@svc/api';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admissionForbidden, aggregateMessage, plainError } from './admission-errors.js';

/** Every container of a pod spec with its field path, as Kubernetes' VisitContainersWithPath walks them. */
function containersWithPath(pod: Pod): Array<{ c: Container; path: string }> {
  const spec = pod.spec ?? { containers: [] };
  return [
    ...(spec.initContainers ?? []).map((c, i) => ({ c, path: `spec.initContainers[${i}]` })),
    ...(spec.containers ?? []).map((c, i) => ({ c, path: `spec.containers[${i}]` })),
    ...(spec.ephemeralContainers ?? []).map((c, i) => ({ c, path: `spec.ephemeralContainers[${i}]` })),
  ];
}

/**
 * Kubernetes' AlwaysPullImages: every container (init, regular, ephemeral) of a pod created or
 * updated gets `imagePullPolicy: Always`, so a node pulls (and checks the pull credentials)
 * before it runs an image another pod pulled; validation refuses a pod where one is not Always
 * (a later mutating webhook's doing) with Kubernetes' aggregate of `Unsupported value` errors,
 * which it answers as a plain 500. Updates that bring no new image, and subresources, are left alone.
 */
export class AlwaysPullImages implements AdmissionPlugin {
  readonly name = 'AlwaysPullImages';

  async admit(a: AdmissionAttributes): Promise<void> {
    const pod = podOf(a);
    if (!pod) return;
    for (const { c } of containersWithPath(pod)) c.imagePullPolicy = 'Always';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const pod = podOf(a);
    if (!pod) return;
    const messages = containersWithPath(pod)
      .filter(({ c }) => c.imagePullPolicy !== 'Always')
      .map(
        ({ c, path }) =>
          admissionForbidden(
            a,
            fieldErrorMessage(fieldErrors.notSupported(`${path}.imagePullPolicy`, c.imagePullPolicy ?? '', ['Always'])),
          ).message,
      );
    // Kubernetes returns the refusals as one aggregate error, not a Status: the server answers it
    // as a plain 500 with the aggregate's text.
    if (messages.length > 0) throw plainError(aggregateMessage(messages));
  }
}

/** The pod of a create, or of an update that brings an image its old version did not have. */
function podOf(a: AdmissionAttributes): Pod | undefined {
  if (a.resource.group !== '' || a.resource.plural !== 'pods' || a.subresource !== '') return undefined;
  if ((a.operation !== 'CREATE' && a.operation !== 'UPDATE') || !a.object) return undefined;
  const pod = a.object as Pod;
  if (a.operation === 'UPDATE' && a.oldObject) {
    const old = new Set(containersWithPath(a.oldObject as Pod).map(({ c }) => c.image));
    if (containersWithPath(pod).every(({ c }) => old.has(c.image))) return undefined;
  }
  return pod;
}
