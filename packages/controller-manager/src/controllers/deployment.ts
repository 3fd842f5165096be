import { EventRecorder, NAMESPACE_INDEX, objectKey } from '@svc/client';
import { jsonEqual, labelSelectorFromObject } from '@svc/machinery';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';
import { controllerOf, resolveControllerRef } from './controller-ref.js';
import { DeploymentSyncer } from './deployment-sync.js';
import type { Deployment, Pod, ReplicaSet } from '@svc/api';

const NAME = 'deployment-controller';

/**
 * `deployment-controller`: rolls each Deployment out through ReplicaSets named
 * `<deployment>-<pod-template-hash>`, as Kubernetes v1.32's deployment controller does
 * (RollingUpdate within maxSurge/maxUnavailable, Recreate, proportional scaling, pause,
 * revision history, Available/Progressing conditions and the progress deadline); see
 * `DeploymentSyncer`. A Deployment is synced when it changes, when a ReplicaSet it controls
 * (or could adopt) changes, and for Recreate when its last pod is gone.
 */
export const deploymentController: ControllerDefinition = {
  name: NAME,
  build(ctx) {
    const deployments = informer<Deployment>(ctx, R.deployments());
    const replicaSets = informer<ReplicaSet>(ctx, R.replicaSets());
    const pods = informer<Pod>(ctx, R.pods());
    const logger = ctx.logger.with({ controller: NAME });
    const events = new EventRecorder(ctx.client, { component: NAME, logger });
    const syncer = new DeploymentSyncer({ client: ctx.client, events, replicaSets, pods, logger });
    const controller = newController(ctx, {
      name: NAME,
      queueName: 'deployment',
      workers: ctx.options.concurrentSyncs.deployment,
      reconcile: async (key) => {
        const d = deployments.store.get(key);
        if (!d) return;
        return syncer.sync(d);
      },
    });

    const enqueue = (d: Deployment | undefined): void => {
      if (d) controller.enqueue(objectKey(d));
    };
    const deploymentOf = (rs: ReplicaSet, ref = controllerOf(rs)): Deployment | undefined =>
      resolveControllerRef(ref, { group: 'apps', kind: 'Deployment' }, (name) =>
        deployments.store.get(`${rs.metadata.namespace ?? ''}/${name}`),
      );
    /** Deployments in the ReplicaSet's namespace whose (non-empty) selector matches it: who may adopt an orphan. */
    const matching = (rs: ReplicaSet): Deployment[] =>
      deployments.store.byIndex(NAMESPACE_INDEX, rs.metadata.namespace ?? '').filter((d) => {
        try {
          const sel = labelSelectorFromObject(d.spec.selector);
          return !sel.isEmpty() && sel.matches(rs.metadata.labels);
        } catch {
          return false;
        }
      });
    const rsDeleted = (rs: ReplicaSet): void => enqueue(deploymentOf(rs));

    controller.watch(deployments);
    // Registered so `run` waits for these caches; the handlers below do the work.
    controller.watch(replicaSets, () => []);
    controller.watch(pods, () => []);
    replicaSets.addEventHandler({
      onAdd: (rs) => {
        if (rs.metadata.deletionTimestamp) return rsDeleted(rs);
        const ref = controllerOf(rs);
        if (ref) return enqueue(deploymentOf(rs, ref));
        for (const d of matching(rs)) enqueue(d);
      },
      onUpdate: (old, cur) => {
        if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
        const curRef = controllerOf(cur);
        const oldRef = controllerOf(old);
        const refChanged = !jsonEqual(curRef ?? null, oldRef ?? null);
        if (refChanged && oldRef) enqueue(deploymentOf(old, oldRef));
        if (curRef) return enqueue(deploymentOf(cur, curRef));
        if (refChanged || !jsonEqual(old.metadata.labels ?? {}, cur.metadata.labels ?? {}))
          for (const d of matching(cur)) enqueue(d);
      },
      onDelete: rsDeleted,
    });
    pods.addEventHandler({
      // A Recreate rollout waits for the last old pod to go.
      onDelete: (pod) => {
        const ns = pod.metadata.namespace ?? '';
        const rs = resolveControllerRef(controllerOf(pod), { group: 'apps', kind: 'ReplicaSet' }, (name) =>
          replicaSets.store.get(`${ns}/${name}`),
        );
        const d = rs && deploymentOf(rs);
        if (!d || d.spec.strategy?.type !== 'Recreate') return;
        const owned = new Set(
          replicaSets.store
            .byIndex(NAMESPACE_INDEX, ns)
            .filter((r) => controllerOf(r)?.uid === d.metadata.uid)
            .map((r) => r.metadata.uid),
        );
        if (!pods.store.byIndex(NAMESPACE_INDEX, ns).some((p) => owned.has(controllerOf(p)?.uid))) enqueue(d);
      },
    });
    return controller;
  },
};
