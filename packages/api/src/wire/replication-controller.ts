import type { ApiObject } from '../types.js';
import type { ReplicaSetCondition, ReplicaSetStatus } from './apps.js';
import type { PodTemplateSpec } from './pod.js';

/** core/v1 ReplicationController: a ReplicaSet whose selector is a plain label map. */

/** `ReplicaFailure`, as a ReplicaSet's. */
export type ReplicationControllerCondition = ReplicaSetCondition;

export interface ReplicationControllerSpec {
  /** 1 when unset (the core/v1 default). */
  replicas?: number;
  minReadySeconds?: number;
  /** Defaulted from the template's labels when empty. */
  selector?: Record<string, string>;
  template?: PodTemplateSpec;
}

export type ReplicationControllerStatus = ReplicaSetStatus;

export interface ReplicationController extends ApiObject {
  spec: ReplicationControllerSpec;
  status?: ReplicationControllerStatus;
}
