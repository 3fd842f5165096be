import type { ApiObject, ObjectMeta } from '../types.js';
import type { Container, EphemeralContainer } from './container.js';
import type { ConditionStatus, LocalObjectReference, ResourceList } from './meta.js';
import type { PodSecurityContext, Volume } from './security.js';

/** core/v1 Pod: spec, status and the parts components read and write. */

export interface Toleration {
  key?: string;
  /** `Exists` or `Equal` (empty: `Equal`). */
  operator?: string;
  value?: string;
  /** Any effect when empty. */
  effect?: string;
  tolerationSeconds?: number;
}

export interface NodeSelectorRequirement {
  key: string;
  /** `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`. */
  operator: string;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface NodeAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] };
  preferredDuringSchedulingIgnoredDuringExecution?: Array<{ weight: number; preference: NodeSelectorTerm }>;
}

/** Only node affinity is typed; pod (anti-)affinity is left to the schema. */
export interface Affinity {
  nodeAffinity?: NodeAffinity;
}

export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  ephemeralContainers?: EphemeralContainer[];
  volumes?: Volume[];
  restartPolicy?: RestartPolicy;
  terminationGracePeriodSeconds?: number;
  activeDeadlineSeconds?: number;
  dnsPolicy?: string;
  nodeSelector?: Record<string, string>;
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  nodeName?: string;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  securityContext?: PodSecurityContext;
  runtimeClassName?: string;
  os?: { name: string };
  hostUsers?: boolean;
  imagePullSecrets?: LocalObjectReference[];
  hostname?: string;
  subdomain?: string;
  affinity?: Affinity;
  schedulerName?: string;
  tolerations?: Toleration[];
  priorityClassName?: string;
  priority?: number;
  /** `PreemptLowerPriority` (default) or `Never`. */
  preemptionPolicy?: string;
  enableServiceLinks?: boolean;
  overhead?: ResourceList;
  schedulingGates?: Array<{ name: string }>;
}

export interface ContainerStateWaiting {
  reason?: string;
  message?: string;
}

export interface ContainerStateRunning {
  startedAt?: string;
}

export interface ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  containerID?: string;
}

/** Exactly one member set, or none (`{}`: no state, as Kubernetes writes an empty lastState). */
export interface ContainerState {
  waiting?: ContainerStateWaiting;
  running?: ContainerStateRunning;
  terminated?: ContainerStateTerminated;
}

/** `state` and `lastState` are always written (Kubernetes' non-pointer structs), `{}` when there is none. */
export interface ContainerStatus {
  name: string;
  state: ContainerState;
  lastState: ContainerState;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  started?: boolean;
}

export interface PodCondition {
  type: string;
  status: ConditionStatus;
  /** Kubernetes writes `null` when never probed. */
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export interface PodIP {
  ip: string;
}

export interface PodStatus {
  phase?: PodPhase;
  conditions?: PodCondition[];
  message?: string;
  reason?: string;
  nominatedNodeName?: string;
  hostIP?: string;
  hostIPs?: PodIP[];
  podIP?: string;
  podIPs?: PodIP[];
  startTime?: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
  ephemeralContainerStatuses?: ContainerStatus[];
  qosClass?: 'BestEffort' | 'Burstable' | 'Guaranteed';
}

/** A Pod as the API serves it: the server validated `spec.containers` in. */
export interface Pod extends ApiObject {
  spec: PodSpec;
  status?: PodStatus;
}

/** The pod a workload (ReplicaSet, Deployment) creates; the server defaults and validates `spec`. */
export interface PodTemplateSpec {
  metadata?: ObjectMeta;
  spec: PodSpec;
}
