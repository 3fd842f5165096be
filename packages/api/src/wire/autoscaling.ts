import type { ApiObject } from '../types.js';
import type { ConditionStatus, LabelSelectorObject } from './meta.js';

/** autoscaling/v2 HorizontalPodAutoscaler (the stored version) and autoscaling/v1 (served, converted). */

export interface CrossVersionObjectReference {
  kind: string;
  name: string;
  apiVersion?: string;
}

export type MetricTargetType = 'Utilization' | 'Value' | 'AverageValue';

export interface MetricTarget {
  type: MetricTargetType;
  /** Quantities. */
  value?: string | number;
  averageValue?: string | number;
  averageUtilization?: number;
}

export interface MetricIdentifier {
  name: string;
  selector?: LabelSelectorObject;
}

export interface ResourceMetricSource {
  name: string;
  target: MetricTarget;
}

export interface ContainerResourceMetricSource extends ResourceMetricSource {
  container: string;
}

export interface PodsMetricSource {
  metric: MetricIdentifier;
  target: MetricTarget;
}

export interface ObjectMetricSource {
  describedObject: CrossVersionObjectReference;
  target: MetricTarget;
  metric: MetricIdentifier;
}

export interface ExternalMetricSource {
  metric: MetricIdentifier;
  target: MetricTarget;
}

export type MetricSourceType = 'Object' | 'Pods' | 'Resource' | 'ContainerResource' | 'External';

export interface MetricSpec {
  type: MetricSourceType;
  object?: ObjectMetricSource;
  pods?: PodsMetricSource;
  resource?: ResourceMetricSource;
  containerResource?: ContainerResourceMetricSource;
  external?: ExternalMetricSource;
}

export interface HPAScalingPolicy {
  type: 'Pods' | 'Percent';
  value: number;
  periodSeconds: number;
}

export interface HPAScalingRules {
  stabilizationWindowSeconds?: number;
  selectPolicy?: 'Max' | 'Min' | 'Disabled';
  policies?: HPAScalingPolicy[];
}

export interface HorizontalPodAutoscalerBehavior {
  scaleUp?: HPAScalingRules;
  scaleDown?: HPAScalingRules;
}

export interface HorizontalPodAutoscalerSpec {
  scaleTargetRef: CrossVersionObjectReference;
  minReplicas?: number;
  maxReplicas: number;
  metrics?: MetricSpec[];
  behavior?: HorizontalPodAutoscalerBehavior;
}

export interface MetricValueStatus {
  value?: string | number;
  averageValue?: string | number;
  averageUtilization?: number;
}

export interface ResourceMetricStatus {
  name: string;
  current: MetricValueStatus;
}

export interface ContainerResourceMetricStatus extends ResourceMetricStatus {
  container: string;
}

export interface PodsMetricStatus {
  metric: MetricIdentifier;
  current: MetricValueStatus;
}

export interface ObjectMetricStatus {
  metric: MetricIdentifier;
  current: MetricValueStatus;
  describedObject: CrossVersionObjectReference;
}

export interface ExternalMetricStatus {
  metric: MetricIdentifier;
  current: MetricValueStatus;
}

export interface MetricStatus {
  type: MetricSourceType;
  object?: ObjectMetricStatus;
  pods?: PodsMetricStatus;
  resource?: ResourceMetricStatus;
  containerResource?: ContainerResourceMetricStatus;
  external?: ExternalMetricStatus;
}

/** `AbleToScale`, `ScalingActive`, `ScalingLimited`. */
export interface HorizontalPodAutoscalerCondition {
  type: string;
  status: ConditionStatus;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface HorizontalPodAutoscalerStatus {
  observedGeneration?: number;
  lastScaleTime?: string;
  currentReplicas?: number;
  desiredReplicas: number;
  currentMetrics?: MetricStatus[];
  conditions?: HorizontalPodAutoscalerCondition[];
}

export interface HorizontalPodAutoscaler extends ApiObject {
  spec: HorizontalPodAutoscalerSpec;
  status?: HorizontalPodAutoscalerStatus;
}

/** autoscaling/v1: one CPU target; the rest of v2 travels in `autoscaling.alpha.<prefix>/*` annotations. */
export interface HorizontalPodAutoscalerV1 extends ApiObject {
  spec: {
    scaleTargetRef: CrossVersionObjectReference;
    minReplicas?: number;
    maxReplicas: number;
    targetCPUUtilizationPercentage?: number;
  };
  status?: {
    observedGeneration?: number;
    lastScaleTime?: string;
    currentReplicas?: number;
    desiredReplicas: number;
    currentCPUUtilizationPercentage?: number;
  };
}
