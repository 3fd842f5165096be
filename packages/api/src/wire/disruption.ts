import type { ApiObject, DeleteOptions } from '../types.js';
import type { ConditionStatus, IntOrString, LabelSelectorObject } from './meta.js';

/** policy/v1 PodDisruptionBudget and Eviction (the body of `pods/<name>/eviction`). */

export type UnhealthyPodEvictionPolicy = 'IfHealthyBudget' | 'AlwaysAllow';

export interface PodDisruptionBudgetSpec {
  /** At most one of minAvailable and maxUnavailable. */
  minAvailable?: IntOrString;
  /** `{}` selects every pod of the namespace; unset selects none. */
  selector?: LabelSelectorObject;
  maxUnavailable?: IntOrString;
  /** `IfHealthyBudget` when unset. */
  unhealthyPodEvictionPolicy?: UnhealthyPodEvictionPolicy;
}

/** `DisruptionAllowed` (reasons `SufficientPods`, `InsufficientPods`, `SyncFailed`). */
export interface PodDisruptionBudgetCondition {
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export interface PodDisruptionBudgetStatus {
  observedGeneration?: number;
  /** Pod name → when the eviction was allowed (the controller forgets entries after 2 minutes). */
  disruptedPods?: Record<string, string>;
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  conditions?: PodDisruptionBudgetCondition[];
}

export interface PodDisruptionBudget extends ApiObject {
  spec?: PodDisruptionBudgetSpec;
  status?: PodDisruptionBudgetStatus;
}

export interface Eviction extends ApiObject {
  deleteOptions?: DeleteOptions;
}
