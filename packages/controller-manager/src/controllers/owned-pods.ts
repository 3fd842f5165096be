import type { ApiObject, LabelSelectorObject, Pod } from '@svc/api';
import { NAMESPACE_INDEX, objectKey, type Controller, type Informer } from '@svc/client';
import { jsonEqual, labelSelectorFromObject, type LabelSelector } from '@svc/machinery';
import { controllerOf, resolveControllerRef } from './controller-ref.js';
import type { ControllerExpectations } from './expectations.js';
import { isPodReady } from './pod-util.js';

/** A workload that owns pods through a selector: a ReplicaSet, a DaemonSet, a ReplicationController. */
export type PodOwner = ApiObject & { spec: { minReadySeconds?: number } };

/** `spec.selector` as a label selector object (apps/v1 workloads). */
const specSelector = (owner: PodOwner): LabelSelector =>
  labelSelectorFromObject((owner.spec as { selector?: LabelSelectorObject }).selector);

export interface OwnedPodsOptions<O extends PodOwner> {
  controller: Controller;
  owners: Informer<O>;
  pods: Informer<Pod>;
  /** The owners' API group and kind, as their pods' controller references name them. */
  owner: { group: string; kind: string };
  expectations: ControllerExpectations;
  /** The owner's pod selector; `spec.selector` as a label selector object unless given (a ReplicationController's is a map). */
  selectorOf?: (owner: O) => LabelSelector;
}

export interface OwnedPods<O extends PodOwner> {
  /** The owner an object's controller reference names (undefined when it is gone or replaced). */
  ownerOf(o: ApiObject, ref?: ReturnType<typeof controllerOf>): O | undefined;
  /** Owners in the object's namespace whose selector matches it (candidates to adopt an orphan). */
  matching(o: ApiObject): O[];
}

/**
 * Wires a pod-owning controller to its owners and their pods, as Kubernetes' ReplicaSet and
 * DaemonSet controllers do: an owner replaced under its name (or deleted) starts its
 * expectations afresh; a pod created, changed or deleted queues its controller (or, for an
 * orphan, every owner that could adopt it) and settles the creations and deletions expected; a
 * pod turning ready queues its owner again once `minReadySeconds` (+1 s for skew) have passed.
 */
export function watchOwnedPods<O extends PodOwner>(o: OwnedPodsOptions<O>): OwnedPods<O> {
  const { controller, owners, pods, expectations, selectorOf = specSelector } = o;
  const enqueue = (owner: O): void => controller.enqueue(objectKey(owner));
  const ownerOf = (obj: ApiObject, ref = controllerOf(obj)): O | undefined =>
    resolveControllerRef(ref, o.owner, (name) => owners.store.get(`${obj.metadata.namespace ?? ''}/${name}`));
  const matching = (obj: ApiObject): O[] =>
    owners.store.byIndex(NAMESPACE_INDEX, obj.metadata.namespace ?? '').filter((owner) => {
      try {
        return selectorOf(owner).matches(obj.metadata.labels);
      } catch {
        return false;
      }
    });
  const podGone = (pod: Pod): void => {
    const owner = ownerOf(pod);
    if (!owner) return;
    expectations.deletionObserved(objectKey(owner), objectKey(pod));
    enqueue(owner);
  };

  controller.watch(owners);
  owners.addEventHandler({
    onUpdate: (old, cur) => {
      if (old.metadata.uid !== cur.metadata.uid) expectations.delete(objectKey(old));
    },
    onDelete: (owner) => expectations.delete(objectKey(owner)),
  });
  // Registered so `run` waits for the pod cache; the handlers below do the work.
  controller.watch(pods, () => []);
  pods.addEventHandler({
    onAdd: (pod) => {
      // A pod already being deleted (seen after a restart) is no creation to observe.
      if (pod.metadata.deletionTimestamp) return podGone(pod);
      const ref = controllerOf(pod);
      if (ref) {
        const owner = ownerOf(pod, ref);
        if (!owner) return;
        expectations.creationObserved(objectKey(owner));
        return enqueue(owner);
      }
      for (const owner of matching(pod)) enqueue(owner);
    },
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      const labelsChanged = !jsonEqual(old.metadata.labels ?? {}, cur.metadata.labels ?? {});
      if (cur.metadata.deletionTimestamp) {
        // A graceful deletion: the owner replaces the pod now rather than when it is gone.
        podGone(cur);
        if (labelsChanged) podGone(old);
        return;
      }
      const curRef = controllerOf(cur);
      const oldRef = controllerOf(old);
      const refChanged = !jsonEqual(curRef ?? null, oldRef ?? null);
      if (refChanged && oldRef) {
        const owner = ownerOf(old, oldRef);
        if (owner) enqueue(owner);
      }
      if (curRef) {
        const owner = ownerOf(cur, curRef);
        if (!owner) return;
        enqueue(owner);
        const minReady = owner.spec.minReadySeconds ?? 0;
        // Becoming available is no event of its own: look again once minReadySeconds (+1 s for skew) passed.
        if (!isPodReady(old) && isPodReady(cur) && minReady > 0)
          controller.queue.addAfter(objectKey(owner), minReady * 1000 + 1000);
        return;
      }
      if (labelsChanged || refChanged) for (const owner of matching(cur)) enqueue(owner);
    },
    onDelete: podGone,
  });
  return { ownerOf, matching };
}
