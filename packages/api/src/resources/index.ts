import { Catalog, type ResourceType } from '../catalog.js';
import { configMap } from './core/v1/config-map.js';
import { event } from './core/v1/event.js';
import { eventsEvent } from './events/v1/event.js';
import { namespace } from './core/v1/namespace.js';
import { node } from './core/v1/node.js';
import { pod } from './core/v1/pod.js';
import { binding } from './core/v1/binding.js';
import { secret } from './core/v1/secret.js';
import { service } from './core/v1/service.js';
import { serviceAccount } from './core/v1/service-account.js';
import { lease } from './coordination/v1/lease.js';
import { deployment } from './apps/v1/deployment.js';
import { replicaSet } from './apps/v1/replica-set.js';
import { daemonSet } from './apps/v1/daemon-set.js';
import { controllerRevision } from './apps/v1/controller-revision.js';
import { statefulSet } from './apps/v1/stateful-set.js';
import { job } from './batch/v1/job.js';
import { cronJob } from './batch/v1/cron-job.js';
import { podDisruptionBudget } from './policy/v1/pod-disruption-budget.js';
import { horizontalPodAutoscalerV2 } from './autoscaling/v2/horizontal-pod-autoscaler.js';
import { horizontalPodAutoscalerV1 } from './autoscaling/v1/horizontal-pod-autoscaler.js';
import { selfSubjectReview } from './authentication/v1/self-subject-review.js';
import { tokenReview } from './authentication/v1/token-review.js';
import { role } from './rbac/v1/role.js';
import { clusterRole } from './rbac/v1/cluster-role.js';
import { clusterRoleBinding, roleBinding } from './rbac/v1/role-binding.js';
import {
  localSubjectAccessReview,
  selfSubjectAccessReview,
  selfSubjectRulesReview,
  subjectAccessReview,
} from './authorization/v1/access-review.js';
import { certificateSigningRequest } from './certificates/v1/certificate-signing-request.js';
import { customResourceDefinition } from './apiextensions/v1/custom-resource-definition.js';
import { mutatingWebhookConfiguration } from './admissionregistration/v1/mutating-webhook-configuration.js';
import { validatingWebhookConfiguration } from './admissionregistration/v1/validating-webhook-configuration.js';
import { validatingAdmissionPolicy } from './admissionregistration/v1/validating-admission-policy.js';
import { validatingAdmissionPolicyBinding } from './admissionregistration/v1/validating-admission-policy-binding.js';
import { persistentVolume } from './core/v1/persistent-volume.js';
import { persistentVolumeClaim } from './core/v1/persistent-volume-claim.js';
import { storageClass } from './storage/v1/storage-class.js';
import { csiDriver } from './storage/v1/csi-driver.js';
import { csiNode } from './storage/v1/csi-node.js';
import { volumeAttachment } from './storage/v1/volume-attachment.js';
import { csiStorageCapacity } from './storage/v1/csi-storage-capacity.js';
import { ingressClass } from './networking/v1/ingress-class.js';
import { ingress } from './networking/v1/ingress.js';
import { networkPolicy } from './networking/v1/network-policy.js';
import { limitRange } from './core/v1/limit-range.js';
import { resourceQuota } from './core/v1/resource-quota.js';
import { priorityClass } from './scheduling/v1/priority-class.js';
import { runtimeClass } from './node/v1/runtime-class.js';
import { flowSchema } from './flowcontrol/v1/flow-schema.js';
import { priorityLevelConfiguration } from './flowcontrol/v1/priority-level-configuration.js';
import { endpoints } from './core/v1/endpoints.js';
import { replicationController } from './core/v1/replication-controller.js';
import { podTemplate } from './core/v1/pod-template.js';
import { componentStatus } from './core/v1/component-status.js';
import { endpointSlice } from './discovery/v1/endpoint-slice.js';

/** Every compiled-in type, in discovery order. Build after `useNaming`. */
export function builtinResources(): ResourceType[] {
  return [
    namespace(),
    configMap(),
    secret(),
    serviceAccount(),
    pod(),
    binding(),
    service(),
    endpoints(),
    replicationController(),
    podTemplate(),
    componentStatus(),
    node(),
    event(),
    lease(),
    tokenReview(),
    selfSubjectReview(),
    role(),
    clusterRole(),
    roleBinding(),
    clusterRoleBinding(),
    deployment(),
    replicaSet(),
    daemonSet(),
    controllerRevision(),
    statefulSet(),
    job(),
    cronJob(),
    podDisruptionBudget(),
    horizontalPodAutoscalerV2(),
    horizontalPodAutoscalerV1(),
    eventsEvent(),
    subjectAccessReview(),
    selfSubjectAccessReview(),
    localSubjectAccessReview(),
    selfSubjectRulesReview(),
    certificateSigningRequest(),
    customResourceDefinition(),
    mutatingWebhookConfiguration(),
    validatingWebhookConfiguration(),
    validatingAdmissionPolicy(),
    validatingAdmissionPolicyBinding(),
    persistentVolume(),
    persistentVolumeClaim(),
    storageClass(),
    csiDriver(),
    csiNode(),
    volumeAttachment(),
    csiStorageCapacity(),
    ingressClass(),
    ingress(),
    networkPolicy(),
    limitRange(),
    resourceQuota(),
    priorityClass(),
    runtimeClass(),
    flowSchema(),
    priorityLevelConfiguration(),
    endpointSlice(),
  ];
}

export function builtinCatalog(): Catalog {
  const c = new Catalog();
  for (const r of builtinResources()) c.add(r);
  return c;
}
