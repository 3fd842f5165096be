import { isNotFound, type Node, type Pod, type PodCondition, type Taint, type Toleration } from '@svc/api';
import { ResourceClient, objectKey, splitKey } from '@svc/client';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';
import { nowTime, podsOnNode, toleratesTaint } from './node-taints.js';

const NAME = 'taint-eviction-controller';
/** Kubernetes' UpdateWorkerSize. */
const WORKERS = 8;

const noExecuteTaints = (node: Node | undefined): Taint[] =>
  (node?.spec?.taints ?? []).filter((t) => t.effect === 'NoExecute');

/**
 * How long `tolerations` let a pod stay on a node with `taints` (Kubernetes' GetMatchingTolerations
 * and getMinTolerationTime): 0 when a taint is not tolerated (by the first toleration matching
 * it) or a matching toleration has `tolerationSeconds` ≤ 0, the least `tolerationSeconds` of the
 * matching tolerations otherwise, undefined (forever) when none has one.
 */
export function tolerationMs(tolerations: readonly Toleration[], taints: readonly Taint[]): number | undefined {
  let least: number | undefined;
  for (const taint of taints) {
    const t = tolerations.find((x) => toleratesTaint(x, taint));
    if (!t) return 0;
    if (t.tolerationSeconds === undefined) continue;
    if (t.tolerationSeconds <= 0) return 0;
    least = Math.min(least ?? Infinity, t.tolerationSeconds * 1000);
  }
  return least;
}

/**
 * `taint-eviction-controller` (Kubernetes' SeparateTaintEvictionController, on by default in
 * v1.32): a pod bound to a node with NoExecute taints is deleted once it has been on the
 * tainted node, as seen by this controller, for the least `tolerationSeconds` of the
 * tolerations it uses; at once when it does not tolerate every NoExecute taint; never when
 * its tolerations have no `tolerationSeconds`. The clock starts when the controller first sees
 * the pod on a NoExecute-tainted node and stops when the taints go or the pod tolerates them
 * forever (as Kubernetes', not from `timeAdded`, which has only second precision). Before the
 * delete the pod gets the `DisruptionTarget` condition (reason `DeletionByTaintManager`).
 */
export const taintEvictionController: ControllerDefinition = {
  name: NAME,
  build(ctx) {
    const log = ctx.logger.with({ controller: NAME });
    const nodes = informer<Node>(ctx, R.nodes());
    const pods = informer<Pod>(ctx, R.pods());
    const podsOn = podsOnNode(pods);
    const podApi = new ResourceClient<Pod>(ctx.client, R.pods());
    /** Pod key → when it was first seen on its tainted node (the scheduled eviction's start). */
    const since = new Map<string, number>();

    async function evict(key: string, uid: string | undefined): Promise<void> {
      const { namespace = '', name } = splitKey(key);
      const api = podApi.namespace(namespace);
      let pod: Pod;
      try {
        pod = await api.get(name);
      } catch (e) {
        if (isNotFound(e)) return;
        throw e;
      }
      if (pod.metadata.uid !== uid) return;
      const conditions = pod.status?.conditions ?? [];
      const old = conditions.find((c) => c.type === 'DisruptionTarget');
      const reason = 'DeletionByTaintManager';
      if (old?.status !== 'True' || old.reason !== reason) {
        const condition: PodCondition = {
          type: 'DisruptionTarget',
          status: 'True',
          reason,
          message: 'Taint manager: deleting due to NoExecute taint',
          lastTransitionTime: old?.status === 'True' ? old.lastTransitionTime : nowTime(),
        };
        await api.update(
          { ...pod, status: { ...pod.status, conditions: [...conditions.filter((c) => c !== old), condition] } },
          { subresource: 'status' },
        );
      }
      log.info('deleting pod', { pod: key, node: pod.spec?.nodeName });
      try {
        await api.delete(name, { preconditions: { uid } });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }

    const controller = newController(ctx, {
      name: NAME,
      queueName: 'taint_eviction',
      workers: WORKERS,
      reconcile: async (key) => {
        const pod = pods.store.get(key);
        const nodeName = pod?.spec?.nodeName;
        const taints = nodeName ? noExecuteTaints(nodes.store.get(nodeName)) : [];
        const wait =
          pod && !pod.metadata.deletionTimestamp && taints.length > 0
            ? tolerationMs(pod.spec?.tolerations ?? [], taints)
            : undefined;
        if (!pod || wait === undefined) {
          since.delete(key);
          return;
        }
        const start = since.get(key) ?? Date.now();
        since.set(key, start);
        const left = start + wait - Date.now();
        if (left > 0) return { requeueAfter: left };
        await evict(key, pod.metadata.uid);
        since.delete(key);
        return undefined;
      },
    });
    controller.watch(pods);
    // Nodes are watched only so `run` waits for their cache; a change of NoExecute taints enqueues the node's pods.
    controller.watch(nodes, () => []);
    const enqueuePods = (node: Node): void => {
      for (const p of podsOn(node.metadata.name ?? '')) controller.enqueue(objectKey(p));
    };
    nodes.addEventHandler({
      onAdd: enqueuePods,
      onUpdate: (old, node) => {
        if (JSON.stringify(noExecuteTaints(old)) !== JSON.stringify(noExecuteTaints(node))) enqueuePods(node);
      },
      onDelete: enqueuePods,
    });
    return controller;
  },
};
