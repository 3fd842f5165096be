import type { ApiObject } from '../types.js';
import type { ResourceList } from './meta.js';
import type { Toleration } from './pod.js';

/**
 * The objects admission reads to shape and limit pods: core/v1 LimitRange and ResourceQuota,
 * scheduling/v1 PriorityClass and node/v1 RuntimeClass, as the server stores them (quantities
 * in their canonical text).
 */

/** `Container`, `Pod`, `PersistentVolumeClaim`, or a qualified name. */
export interface LimitRangeItem {
  type: string;
  max?: ResourceList;
  min?: ResourceList;
  default?: ResourceList;
  defaultRequest?: ResourceList;
  maxLimitRequestRatio?: ResourceList;
}

export interface LimitRange extends ApiObject {
  spec?: { limits?: LimitRangeItem[] };
}

/** `In`, `NotIn`, `Exists` or `DoesNotExist` on a scope (`PriorityClass`, `BestEffort`, ...). */
export interface ScopedResourceSelectorRequirement {
  scopeName: string;
  operator: string;
  values?: string[];
}

export interface ResourceQuotaSpec {
  hard?: ResourceList;
  scopes?: string[];
  scopeSelector?: { matchExpressions?: ScopedResourceSelectorRequirement[] };
}

/** `hard` as enforced (the spec's, once the controller saw it) and `used` as counted. */
export interface ResourceQuotaStatus {
  hard?: ResourceList;
  used?: ResourceList;
}

export interface ResourceQuota extends ApiObject {
  spec?: ResourceQuotaSpec;
  status?: ResourceQuotaStatus;
}

/** `value` is what pods of the class get as `spec.priority`; `preemptionPolicy` defaults to `PreemptLowerPriority`. */
export interface PriorityClass extends ApiObject {
  value: number;
  globalDefault?: boolean;
  description?: string;
  preemptionPolicy?: string;
}

export interface RuntimeClass extends ApiObject {
  handler: string;
  overhead?: { podFixed?: ResourceList };
  scheduling?: { nodeSelector?: Record<string, string>; tolerations?: Toleration[] };
}
