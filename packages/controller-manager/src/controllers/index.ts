import type { ControllerDefinition } from '../controller-context.js';
import { bootstrapSigner } from './bootstrap-signer.js';
import { clusterRoleAggregationController } from './clusterrole-aggregation.js';
import { csrApprovingController } from './csr-approving.js';
import { csrSigningController } from './csr-signing.js';
import { daemonSetController } from './daemonset.js';
import { statefulSetController } from './statefulset.js';
import { deploymentController } from './deployment.js';
import { disruptionController } from './disruption.js';
import { horizontalPodAutoscalerController } from './horizontal-pod-autoscaler.js';
import { endpointsController } from './endpoints.js';
import { endpointSliceController } from './endpoint-slice.js';
import { endpointSliceMirroringController } from './endpointslice-mirroring.js';
import { garbageCollectorController } from './garbage-collector.js';
import { jobController } from './job.js';
import { legacyTokenCleaner } from './legacy-token-cleaner.js';
import { cronJobController } from './cronjob.js';
import { ttlAfterFinishedController } from './ttl-after-finished.js';
import { namespaceController } from './namespace.js';
import { nodeLifecycleController } from './node-lifecycle.js';
import { nodeIpamController } from './node-ipam.js';
import { ttlController } from './ttl.js';
import { replicaSetController } from './replica-set.js';
import { replicationControllerController } from './replication-controller.js';
import { podGcController } from './pod-gc.js';
import { resourceQuotaController } from './resource-quota.js';
import { rootCaCertPublisher } from './root-ca-cert-publisher.js';
import { serviceAccountController } from './service-account.js';
import { serviceAccountTokenController } from './serviceaccount-token.js';
import { taintEvictionController } from './taint-eviction.js';
import { tokenCleaner } from './token-cleaner.js';

/** Every controller this manager can run; `--controllers` picks among them. */
export const CONTROLLERS: readonly ControllerDefinition[] = [
  namespaceController,
  serviceAccountController,
  serviceAccountTokenController,
  legacyTokenCleaner,
  rootCaCertPublisher,
  tokenCleaner,
  bootstrapSigner,
  garbageCollectorController,
  clusterRoleAggregationController,
  nodeLifecycleController,
  nodeIpamController,
  ttlController,
  taintEvictionController,
  replicaSetController,
  replicationControllerController,
  podGcController,
  deploymentController,
  daemonSetController,
  statefulSetController,
  jobController,
  cronJobController,
  disruptionController,
  horizontalPodAutoscalerController,
  ttlAfterFinishedController,
  endpointsController,
  endpointSliceController,
  endpointSliceMirroringController,
  csrApprovingController,
  csrSigningController,
  resourceQuotaController,
];
