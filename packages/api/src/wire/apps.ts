import type { ApiObject } from '../types.js';
import type { ConditionStatus, IntOrString, LabelSelectorObject } from './meta.js';
import type { PodTemplateSpec } from './pod.js';
import type { PersistentVolumeClaim } from './storage.js';

/** apps/v1 ReplicaSet and Deployment. The server defaults and validates `spec.template`. */

export interface ReplicaSetCondition {
  /** `ReplicaFailure`. */
  type: string;
  status: ConditionStatus;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface ReplicaSetSpec {
  /** 1 when unset (the apps/v1 default). */
  replicas?: number;
  minReadySeconds?: number;
  selector?: LabelSelectorObject;
  template: PodTemplateSpec;
}

export interface ReplicaSetStatus {
  replicas?: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  observedGeneration?: number;
  conditions?: ReplicaSetCondition[];
}

export interface ReplicaSet extends ApiObject {
  spec: ReplicaSetSpec;
  status?: ReplicaSetStatus;
}

export interface DeploymentStrategy {
  type?: 'Recreate' | 'RollingUpdate';
  rollingUpdate?: { maxUnavailable?: IntOrString; maxSurge?: IntOrString };
}

export interface DeploymentSpec {
  replicas?: number;
  selector?: LabelSelectorObject;
  template: PodTemplateSpec;
  strategy?: DeploymentStrategy;
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  paused?: boolean;
  progressDeadlineSeconds?: number;
}

/** `Available`, `Progressing`, `ReplicaFailure`; unlike ReplicaSets' it has `lastUpdateTime`. */
export interface DeploymentCondition {
  type: string;
  status: ConditionStatus;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  conditions?: DeploymentCondition[];
  collisionCount?: number;
}

export interface Deployment extends ApiObject {
  spec: DeploymentSpec;
  status?: DeploymentStatus;
}

/** apps/v1 DaemonSet. The server defaults `updateStrategy` (RollingUpdate, maxUnavailable 1, maxSurge 0) and `revisionHistoryLimit` (10). */
export interface DaemonSetUpdateStrategy {
  type?: 'RollingUpdate' | 'OnDelete';
  rollingUpdate?: { maxUnavailable?: IntOrString; maxSurge?: IntOrString };
}

export interface DaemonSetSpec {
  selector?: LabelSelectorObject;
  template: PodTemplateSpec;
  updateStrategy?: DaemonSetUpdateStrategy;
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
}

export interface DaemonSetCondition {
  type: string;
  status: ConditionStatus;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface DaemonSetStatus {
  currentNumberScheduled?: number;
  numberMisscheduled?: number;
  desiredNumberScheduled?: number;
  numberReady?: number;
  observedGeneration?: number;
  updatedNumberScheduled?: number;
  numberAvailable?: number;
  numberUnavailable?: number;
  collisionCount?: number;
  conditions?: DaemonSetCondition[];
}

export interface DaemonSet extends ApiObject {
  spec: DaemonSetSpec;
  status?: DaemonSetStatus;
}

/** apps/v1 ControllerRevision: an immutable snapshot (`data`, a patch for DaemonSets) of a controller's state. */
export interface ControllerRevision extends ApiObject {
  data?: unknown;
  revision: number;
}

/**
 * apps/v1 StatefulSet. The server defaults `replicas` (1), `podManagementPolicy` (OrderedReady),
 * `updateStrategy` (RollingUpdate, partition 0), `revisionHistoryLimit` (10) and
 * `persistentVolumeClaimRetentionPolicy` (Retain, Retain).
 */
export interface StatefulSetUpdateStrategy {
  type?: 'RollingUpdate' | 'OnDelete';
  rollingUpdate?: { partition?: number; maxUnavailable?: IntOrString };
}

export interface StatefulSetSpec {
  replicas?: number;
  selector?: LabelSelectorObject;
  template: PodTemplateSpec;
  volumeClaimTemplates?: PersistentVolumeClaim[];
  serviceName?: string;
  podManagementPolicy?: 'OrderedReady' | 'Parallel';
  updateStrategy?: StatefulSetUpdateStrategy;
  revisionHistoryLimit?: number;
  minReadySeconds?: number;
  persistentVolumeClaimRetentionPolicy?: { whenDeleted?: 'Retain' | 'Delete'; whenScaled?: 'Retain' | 'Delete' };
  ordinals?: { start?: number };
}

export interface StatefulSetCondition {
  type: string;
  status: ConditionStatus;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface StatefulSetStatus {
  observedGeneration?: number;
  replicas: number;
  readyReplicas?: number;
  currentReplicas?: number;
  updatedReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
  collisionCount?: number;
  conditions?: StatefulSetCondition[];
  availableReplicas?: number;
}

export interface StatefulSet extends ApiObject {
  spec: StatefulSetSpec;
  status?: StatefulSetStatus;
}
