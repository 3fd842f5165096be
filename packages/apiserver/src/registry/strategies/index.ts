import { group, type ResourceType } from '@svc/api';
import type { Strategy } from '../strategy.js';
import { crdStrategy } from '../../apiextensions/crd-strategy.js';
import { deploymentStrategy, replicaSetStrategy } from './apps.js';
import { cronJobStrategy, jobStrategy } from './batch.js';
import { controllerRevisionStrategy, daemonSetStrategy } from './daemon-set.js';
import { statefulSetStrategy } from './stateful-set.js';
import { podDisruptionBudgetStrategy } from './disruption-budget.js';
import { horizontalPodAutoscalerStrategy } from './horizontal-pod-autoscaler.js';
import { certificateSigningRequestStrategy } from './certificate-signing-request.js';
import { configMapStrategy } from './config-map.js';
import { eventStrategy, eventsV1EventStrategy } from './event.js';
import { namespaceStrategy } from './namespace.js';
import { nodeStrategy } from './node.js';
import { podStrategy } from './pod.js';
import { secretStrategy } from './secret.js';
import { serviceStrategy } from './service.js';
import { clusterRoleBindingStrategy, clusterRoleStrategy, roleBindingStrategy, roleStrategy } from './rbac.js';
import { webhookConfigurationStrategy } from './webhook-configuration.js';
import {
  validatingAdmissionPolicyBindingStrategy,
  validatingAdmissionPolicyStrategy,
} from './validating-admission-policy.js';
import { persistentVolumeStrategy } from './persistent-volume.js';
import { persistentVolumeClaimStrategy } from './persistent-volume-claim.js';
import { storageClassStrategy } from './storage-class.js';
import { csiDriverStrategy } from './csi-driver.js';
import { csiNodeStrategy } from './csi-node.js';
import { volumeAttachmentStrategy } from './volume-attachment.js';
import { csiStorageCapacityStrategy } from './csi-storage-capacity.js';
import { ingressClassStrategy, ingressStrategy } from './ingress.js';
import { networkPolicyStrategy } from './network-policy.js';
import { limitRangeStrategy } from './limit-range.js';
import { resourceQuotaStrategy } from './resource-quota.js';
import { priorityClassStrategy } from './priority-class.js';
import { runtimeClassStrategy } from './runtime-class.js';
import { flowSchemaStrategy, priorityLevelConfigurationStrategy } from './flowcontrol.js';
import { endpointsStrategy } from './endpoints.js';
import { replicationControllerStrategy } from './replication-controller.js';
import { podTemplateStrategy } from './pod-template.js';
import { endpointSliceStrategy } from './endpoint-slice.js';

const BY_KIND: Record<string, Strategy> = {
  '/Namespace': namespaceStrategy,
  '/Node': nodeStrategy,
  '/ConfigMap': configMapStrategy,
  '/Secret': secretStrategy,
  '/Pod': podStrategy,
  '/Service': serviceStrategy,
  '/Endpoints': endpointsStrategy,
  '/ReplicationController': replicationControllerStrategy,
  '/PodTemplate': podTemplateStrategy,
  '/Event': eventStrategy,
  'apps/Deployment': deploymentStrategy,
  'apps/ReplicaSet': replicaSetStrategy,
  'apps/DaemonSet': daemonSetStrategy,
  'apps/ControllerRevision': controllerRevisionStrategy,
  'apps/StatefulSet': statefulSetStrategy,
  'batch/Job': jobStrategy,
  'batch/CronJob': cronJobStrategy,
  'policy/PodDisruptionBudget': podDisruptionBudgetStrategy,
  'autoscaling/HorizontalPodAutoscaler': horizontalPodAutoscalerStrategy,
  '/LimitRange': limitRangeStrategy,
  '/ResourceQuota': resourceQuotaStrategy,
  '/PersistentVolume': persistentVolumeStrategy,
  '/PersistentVolumeClaim': persistentVolumeClaimStrategy,
};

const RBAC_BY_KIND: Record<string, Strategy> = {
  Role: roleStrategy,
  ClusterRole: clusterRoleStrategy,
  RoleBinding: roleBindingStrategy,
  ClusterRoleBinding: clusterRoleBindingStrategy,
};

/** The strategy of a type; types with no special behaviour get the default one. */
export function strategyFor(r: ResourceType): Strategy | undefined {
  if (r.group === group('apiextensions') && r.kind === 'CustomResourceDefinition') return crdStrategy;
  if (r.group === group('rbac.authorization')) return RBAC_BY_KIND[r.kind];
  if (r.group === group('certificates') && r.kind === 'CertificateSigningRequest')
    return certificateSigningRequestStrategy;
  if (r.group === group('events') && r.kind === 'Event') return eventsV1EventStrategy;
  if (r.group === group('admissionregistration') && r.kind === 'MutatingWebhookConfiguration')
    return webhookConfigurationStrategy('mutating');
  if (r.group === group('admissionregistration') && r.kind === 'ValidatingWebhookConfiguration')
    return webhookConfigurationStrategy('validating');
  if (r.group === group('admissionregistration') && r.kind === 'ValidatingAdmissionPolicy')
    return validatingAdmissionPolicyStrategy;
  if (r.group === group('admissionregistration') && r.kind === 'ValidatingAdmissionPolicyBinding')
    return validatingAdmissionPolicyBindingStrategy;
  if (r.group === group('storage') && r.kind === 'StorageClass') return storageClassStrategy;
  if (r.group === group('storage') && r.kind === 'CSIDriver') return csiDriverStrategy;
  if (r.group === group('storage') && r.kind === 'CSINode') return csiNodeStrategy;
  if (r.group === group('storage') && r.kind === 'VolumeAttachment') return volumeAttachmentStrategy;
  if (r.group === group('storage') && r.kind === 'CSIStorageCapacity') return csiStorageCapacityStrategy;
  if (r.group === group('networking') && r.kind === 'Ingress') return ingressStrategy;
  if (r.group === group('networking') && r.kind === 'NetworkPolicy') return networkPolicyStrategy;
  if (r.group === group('networking') && r.kind === 'IngressClass') return ingressClassStrategy;
  if (r.group === group('scheduling') && r.kind === 'PriorityClass') return priorityClassStrategy;
  if (r.group === group('node') && r.kind === 'RuntimeClass') return runtimeClassStrategy;
  if (r.group === group('flowcontrol.apiserver'))
    return r.kind === 'FlowSchema' ? flowSchemaStrategy : priorityLevelConfigurationStrategy;
  if (r.group === group('discovery') && r.kind === 'EndpointSlice') return endpointSliceStrategy;
  return BY_KIND[`${r.group}/${r.kind}`];
}
