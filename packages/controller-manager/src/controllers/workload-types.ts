import type { ApiObject } from '@svc/api';
import type { LabelSelectorObject } from '@svc/machinery';

/** The parts of core/v1 and apps/v1 workload objects the replica-set and deployment controllers read (wire JSON). */

export interface PodCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface Pod extends ApiObject {
  spec?: { nodeName?: string; [field: string]: unknown };
  status?: { phase?: string; conditions?: PodCondition[]; containerStatuses?: Array<{ restartCount?: number }> };
}

export interface PodTemplate {
  metadata?: {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    [field: string]: unknown;
  };
  spec?: Record<string, unknown>;
}

/** `ReplicaFailure` on ReplicaSets; `Available`, `Progressing`, `ReplicaFailure` on Deployments. */
export interface WorkloadCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastUpdateTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface ReplicaSetStatus {
  replicas?: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  observedGeneration?: number;
  conditions?: WorkloadCondition[];
}

export interface ReplicaSet extends ApiObject {
  spec: { replicas?: number; minReadySeconds?: number; selector?: LabelSelectorObject; template?: PodTemplate };
  status?: ReplicaSetStatus;
}

export type IntOrPercent = number | string;

export interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  conditions?: WorkloadCondition[];
  collisionCount?: number;
}

export interface Deployment extends ApiObject {
  spec: {
    replicas?: number;
    selector?: LabelSelectorObject;
    template?: PodTemplate;
    strategy?: { type?: string; rollingUpdate?: { maxSurge?: IntOrPercent; maxUnavailable?: IntOrPercent } };
    minReadySeconds?: number;
    revisionHistoryLimit?: number;
    paused?: boolean;
    progressDeadlineSeconds?: number;
  };
  status?: DeploymentStatus;
}

/** `spec.replicas`, 1 when unset (the apps/v1 default). */
export function replicasOf(o: ReplicaSet | Deployment): number {
  return o.spec.replicas ?? 1;
}

/** RFC 3339 at whole seconds, as Kubernetes' metav1.Time is written. */
export function nowTime(ms = Date.now()): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}
