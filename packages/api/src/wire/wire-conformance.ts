import type { objectMeta } from '../meta-schema.js';
import type { deploymentSchema } from '../resources/apps/v1/deployment.js';
import type { replicaSetSchema } from '../resources/apps/v1/replica-set.js';
import type { daemonSetSchema } from '../resources/apps/v1/daemon-set.js';
import type { controllerRevisionSchema } from '../resources/apps/v1/controller-revision.js';
import type { statefulSetSchema } from '../resources/apps/v1/stateful-set.js';
import type { cronJobSchema } from '../resources/batch/v1/cron-job.js';
import type { jobSchema } from '../resources/batch/v1/job.js';
import type { horizontalPodAutoscalerSchema } from '../resources/autoscaling/v2/horizontal-pod-autoscaler.js';
import type { horizontalPodAutoscalerV1Schema } from '../resources/autoscaling/v1/horizontal-pod-autoscaler.js';
import type { podDisruptionBudgetSchema } from '../resources/policy/v1/pod-disruption-budget.js';
import type { subjectAccessReviewSchema } from '../resources/authorization/v1/access-review.js';
import type { certificateSigningRequestSchema } from '../resources/certificates/v1/certificate-signing-request.js';
import type { leaseSchema } from '../resources/coordination/v1/lease.js';
import type { configMapSchema } from '../resources/core/v1/config-map.js';
import type { eventSchema } from '../resources/core/v1/event.js';
import type { namespaceSchema } from '../resources/core/v1/namespace.js';
import type { nodeSchema } from '../resources/core/v1/node.js';
import type { podSchema } from '../resources/core/v1/pod.js';
import type { secretSchema } from '../resources/core/v1/secret.js';
import type { serviceAccountSchema } from '../resources/core/v1/service-account.js';
import type { validatingAdmissionPolicySchema } from '../resources/admissionregistration/v1/validating-admission-policy.js';
import type { validatingAdmissionPolicyBindingSchema } from '../resources/admissionregistration/v1/validating-admission-policy-binding.js';
import type { mutatingWebhookConfigurationSchema } from '../resources/admissionregistration/v1/mutating-webhook-configuration.js';
import type { validatingWebhookConfigurationSchema } from '../resources/admissionregistration/v1/validating-webhook-configuration.js';
import type { persistentVolumeSchema } from '../resources/core/v1/persistent-volume.js';
import type { persistentVolumeClaimSchema } from '../resources/core/v1/persistent-volume-claim.js';
import type { storageClassSchema } from '../resources/storage/v1/storage-class.js';
import type { csiDriverSchema } from '../resources/storage/v1/csi-driver.js';
import type { csiNodeSchema } from '../resources/storage/v1/csi-node.js';
import type { volumeAttachmentSchema } from '../resources/storage/v1/volume-attachment.js';
import type { csiStorageCapacitySchema } from '../resources/storage/v1/csi-storage-capacity.js';
import type { ingressSchema } from '../resources/networking/v1/ingress.js';
import type { ingressClassSchema } from '../resources/networking/v1/ingress-class.js';
import type { limitRangeSchema } from '../resources/core/v1/limit-range.js';
import type { resourceQuotaSchema } from '../resources/core/v1/resource-quota.js';
import type { priorityClassSchema } from '../resources/scheduling/v1/priority-class.js';
import type { runtimeClassSchema } from '../resources/node/v1/runtime-class.js';
import type { endpointsSchema } from '../resources/core/v1/endpoints.js';
import type { replicationControllerSchema } from '../resources/core/v1/replication-controller.js';
import type { podTemplateSchema } from '../resources/core/v1/pod-template.js';
import type { componentStatusSchema } from '../resources/core/v1/component-status.js';
import type { networkPolicySchema } from '../resources/networking/v1/network-policy.js';
import type { endpointSliceSchema } from '../resources/discovery/v1/endpoint-slice.js';
import type { ObjectMeta } from '../types.js';
import type { Conforms, Mismatches } from './conformance.js';
import type { HorizontalPodAutoscaler, HorizontalPodAutoscalerV1 } from './autoscaling.js';
import type {
  CertificateSigningRequest,
  ConfigMap,
  Deployment,
  Event,
  Lease,
  MutatingWebhookConfiguration,
  Namespace,
  Node,
  Pod,
  ReplicaSet,
  DaemonSet,
  ControllerRevision,
  StatefulSet,
  Job,
  CronJob,
  PodDisruptionBudget,
  Secret,
  ServiceAccount,
  SubjectAccessReview,
  ValidatingWebhookConfiguration,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
  PersistentVolume,
  PersistentVolumeClaim,
  StorageClass,
  CSIDriver,
  CSINode,
  VolumeAttachment,
  CSIStorageCapacity,
  Ingress,
  IngressClass,
  LimitRange,
  ResourceQuota,
  PriorityClass,
  RuntimeClass,
  Endpoints,
  EndpointSlice,
  ReplicationController,
  PodTemplate,
  ComponentStatus,
  NetworkPolicy,
} from './index.js';

/**
 * Each wire type against its kind's schema (see conformance.ts). Nested types (PodSpec,
 * Container, Taint, ...) are checked through the objects that hold them. A failure reads
 * e.g. `Type '"Pod.spec.containers[].imag: not in the schema"' does not satisfy the
 * constraint 'never'`.
 */
export type WireConformance = [
  Conforms<Mismatches<ObjectMeta, typeof objectMeta, 'ObjectMeta'>>,
  Conforms<Mismatches<Pod, typeof podSchema, 'Pod'>>,
  Conforms<Mismatches<Node, typeof nodeSchema, 'Node'>>,
  Conforms<Mismatches<ReplicaSet, typeof replicaSetSchema, 'ReplicaSet'>>,
  Conforms<Mismatches<Deployment, typeof deploymentSchema, 'Deployment'>>,
  Conforms<Mismatches<DaemonSet, typeof daemonSetSchema, 'DaemonSet'>>,
  Conforms<Mismatches<ControllerRevision, typeof controllerRevisionSchema, 'ControllerRevision'>>,
  Conforms<Mismatches<StatefulSet, typeof statefulSetSchema, 'StatefulSet'>>,
  Conforms<Mismatches<Job, typeof jobSchema, 'Job'>>,
  Conforms<Mismatches<CronJob, typeof cronJobSchema, 'CronJob'>>,
  Conforms<Mismatches<PodDisruptionBudget, typeof podDisruptionBudgetSchema, 'PodDisruptionBudget'>>,
  Conforms<Mismatches<HorizontalPodAutoscaler, typeof horizontalPodAutoscalerSchema, 'HorizontalPodAutoscaler'>>,
  Conforms<Mismatches<HorizontalPodAutoscalerV1, typeof horizontalPodAutoscalerV1Schema, 'HorizontalPodAutoscalerV1'>>,
  Conforms<Mismatches<Lease, typeof leaseSchema, 'Lease'>>,
  Conforms<Mismatches<Event, typeof eventSchema, 'Event'>>,
  Conforms<Mismatches<Namespace, typeof namespaceSchema, 'Namespace'>>,
  Conforms<Mismatches<ServiceAccount, typeof serviceAccountSchema, 'ServiceAccount'>>,
  Conforms<Mismatches<Secret, typeof secretSchema, 'Secret'>>,
  Conforms<Mismatches<ConfigMap, typeof configMapSchema, 'ConfigMap'>>,
  Conforms<Mismatches<CertificateSigningRequest, typeof certificateSigningRequestSchema, 'CertificateSigningRequest'>>,
  Conforms<Mismatches<SubjectAccessReview, typeof subjectAccessReviewSchema, 'SubjectAccessReview'>>,
  Conforms<
    Mismatches<MutatingWebhookConfiguration, typeof mutatingWebhookConfigurationSchema, 'MutatingWebhookConfiguration'>
  >,
  Conforms<
    Mismatches<
      ValidatingWebhookConfiguration,
      typeof validatingWebhookConfigurationSchema,
      'ValidatingWebhookConfiguration'
    >
  >,
  Conforms<Mismatches<ValidatingAdmissionPolicy, typeof validatingAdmissionPolicySchema, 'ValidatingAdmissionPolicy'>>,
  Conforms<
    Mismatches<
      ValidatingAdmissionPolicyBinding,
      typeof validatingAdmissionPolicyBindingSchema,
      'ValidatingAdmissionPolicyBinding'
    >
  >,
  Conforms<Mismatches<PersistentVolume, typeof persistentVolumeSchema, 'PersistentVolume'>>,
  Conforms<Mismatches<PersistentVolumeClaim, typeof persistentVolumeClaimSchema, 'PersistentVolumeClaim'>>,
  Conforms<Mismatches<StorageClass, typeof storageClassSchema, 'StorageClass'>>,
  Conforms<Mismatches<CSIDriver, typeof csiDriverSchema, 'CSIDriver'>>,
  Conforms<Mismatches<CSINode, typeof csiNodeSchema, 'CSINode'>>,
  Conforms<Mismatches<VolumeAttachment, typeof volumeAttachmentSchema, 'VolumeAttachment'>>,
  Conforms<Mismatches<CSIStorageCapacity, typeof csiStorageCapacitySchema, 'CSIStorageCapacity'>>,
  Conforms<Mismatches<Ingress, typeof ingressSchema, 'Ingress'>>,
  Conforms<Mismatches<IngressClass, typeof ingressClassSchema, 'IngressClass'>>,
  Conforms<Mismatches<LimitRange, typeof limitRangeSchema, 'LimitRange'>>,
  Conforms<Mismatches<ResourceQuota, typeof resourceQuotaSchema, 'ResourceQuota'>>,
  Conforms<Mismatches<PriorityClass, typeof priorityClassSchema, 'PriorityClass'>>,
  Conforms<Mismatches<RuntimeClass, typeof runtimeClassSchema, 'RuntimeClass'>>,
  Conforms<Mismatches<Endpoints, typeof endpointsSchema, 'Endpoints'>>,
  Conforms<Mismatches<EndpointSlice, typeof endpointSliceSchema, 'EndpointSlice'>>,
  Conforms<Mismatches<ReplicationController, typeof replicationControllerSchema, 'ReplicationController'>>,
  Conforms<Mismatches<PodTemplate, typeof podTemplateSchema, 'PodTemplate'>>,
  Conforms<Mismatches<ComponentStatus, typeof componentStatusSchema, 'ComponentStatus'>>,
  Conforms<Mismatches<NetworkPolicy, typeof networkPolicySchema, 'NetworkPolicy'>>,
];

/** The check itself is checked: each kind of drift is caught (an unused `@ts-expect-error` fails the build). */
export type WireConformanceSelfTest = [
  // @ts-expect-error a field the schema does not have
  Conforms<Mismatches<{ spec: { containers: Array<{ name: string; imag: string }> } }, typeof podSchema, 'Pod'>>,
  // @ts-expect-error a number where the schema has a string
  Conforms<Mismatches<{ spec: { nodeName: number } }, typeof podSchema, 'Pod'>>,
  // @ts-expect-error an enum value the schema does not allow
  Conforms<Mismatches<{ status: { phase: 'Sleeping' } }, typeof podSchema, 'Pod'>>,
  // @ts-expect-error an object where the schema has a list
  Conforms<Mismatches<{ spec: { tolerations: { key: string } } }, typeof podSchema, 'Pod'>>,
  // @ts-expect-error a wrong map value
  Conforms<Mismatches<{ metadata: { labels: Record<string, number> } }, typeof podSchema, 'Pod'>>,
  // @ts-expect-error a nested object field the schema does not have
  Conforms<Mismatches<{ spec: { taints: Array<{ key: string; efect: string }> } }, typeof nodeSchema, 'Node'>>,
];
