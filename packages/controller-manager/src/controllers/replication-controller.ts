import type { ReplicaSet, ReplicationController } from '@svc/api';
import type { GroupVersionResource } from '@svc/client';
import type { ControllerDefinition } from '../controller-context.js';
import { replicaKindController } from './replica-set.js';

/** core/v1 `replicationcontrollers`. */
export const replicationControllers = (): GroupVersionResource => ({
  group: '',
  version: 'v1',
  resource: 'replicationcontrollers',
});

/**
 * Kubernetes' conversion of a ReplicationController to a ReplicaSet: the same object with its
 * map selector as `matchLabels` (the status and conditions have the same shape).
 */
export function replicationControllerAsReplicaSet(rc: ReplicationController): ReplicaSet {
  const { selector, template, ...rest } = rc.spec;
  return {
    ...rc,
    spec: {
      ...rest,
      selector: { matchLabels: { ...(selector ?? {}) } },
      template: template ?? { spec: { containers: [] } },
    },
  };
}

/**
 * `replicationcontroller-controller`: the ReplicaSet controller's logic on core/v1
 * ReplicationControllers, as Kubernetes v1.32 runs it; pods are controlled by
 * `v1/ReplicationController`; `--concurrent-rc-syncs` workers.
 */
export const replicationControllerController: ControllerDefinition = replicaKindController<ReplicationController>({
  name: 'replicationcontroller-controller',
  queueName: 'replicationmanager',
  workers: (ctx) => ctx.options.concurrentSyncs.rc,
  resource: replicationControllers,
  apiVersion: 'v1',
  group: '',
  kind: 'ReplicationController',
  asReplicaSet: replicationControllerAsReplicaSet,
});
