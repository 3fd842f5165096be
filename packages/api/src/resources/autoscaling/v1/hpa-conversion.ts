import { naming } from '../../../names.js';
import type { ApiObject } from '../../../types.js';
import type {
  HorizontalPodAutoscaler,
  HorizontalPodAutoscalerBehavior,
  HorizontalPodAutoscalerCondition,
  HorizontalPodAutoscalerV1,
  HPAScalingRules,
  MetricSpec,
  MetricStatus,
  MetricIdentifier,
  MetricTarget,
} from '../../../wire/autoscaling.js';
import type { LabelSelectorObject } from '../../../wire/meta.js';

/**
 * autoscaling/v1 <-> autoscaling/v2 HorizontalPodAutoscaler, as Kubernetes 1.32's
 * pkg/apis/autoscaling/v1/conversion.go: v1 carries one CPU utilization target; what v2 has
 * beyond it travels in four annotations (`autoscaling.alpha.<prefix>/metrics`,
 * `current-metrics`, `conditions`, `behavior`) so a v1 read-modify-write keeps it. Metrics
 * and statuses in those annotations have v1's (v2beta1-like) shape; the behavior annotation
 * has the Go field names of Kubernetes' internal type, as Kubernetes writes it.
 */
export const DEFAULT_CPU_UTILIZATION = 80;

type Ann = 'metrics' | 'current-metrics' | 'conditions' | 'behavior';
const ANNOTATIONS: readonly Ann[] = ['metrics', 'current-metrics', 'conditions', 'behavior'];

export function hpaAnnotation(name: Ann): string {
  return `autoscaling.alpha.${naming().labelPrefix}/${name}`;
}

type Json = Record<string, unknown>;
type Quantity = string | number;

const isCpuUtilization = (m: MetricSpec): boolean =>
  m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource.target?.averageUtilization !== undefined;

function defined(o: Json): Json {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

// ---- v2 metric shapes -> v1 (annotation) shapes ----

function specToV1(m: MetricSpec): Json {
  const out: Json = { type: m.type };
  if (m.resource)
    out.resource = defined({
      name: m.resource.name,
      targetAverageUtilization: m.resource.target?.averageUtilization,
      targetAverageValue: m.resource.target?.averageValue,
    });
  if (m.containerResource)
    out.containerResource = defined({
      name: m.containerResource.name,
      targetAverageUtilization: m.containerResource.target?.averageUtilization,
      targetAverageValue: m.containerResource.target?.averageValue,
      container: m.containerResource.container,
    });
  if (m.pods)
    out.pods = defined({
      metricName: m.pods.metric?.name,
      targetAverageValue: m.pods.target?.averageValue,
      selector: m.pods.metric?.selector,
    });
  if (m.object)
    out.object = defined({
      target: m.object.describedObject,
      metricName: m.object.metric?.name,
      targetValue: m.object.target?.value,
      selector: m.object.metric?.selector,
      averageValue: m.object.target?.averageValue,
    });
  if (m.external)
    out.external = defined({
      metricName: m.external.metric?.name,
      metricSelector: m.external.metric?.selector,
      targetValue: m.external.target?.value,
      targetAverageValue: m.external.target?.averageValue,
    });
  return out;
}

function statusToV1(m: MetricStatus): Json {
  const out: Json = { type: m.type };
  if (m.resource)
    out.resource = defined({
      name: m.resource.name,
      currentAverageUtilization: m.resource.current?.averageUtilization,
      currentAverageValue: m.resource.current?.averageValue ?? '0',
    });
  if (m.containerResource)
    out.containerResource = defined({
      name: m.containerResource.name,
      currentAverageUtilization: m.containerResource.current?.averageUtilization,
      currentAverageValue: m.containerResource.current?.averageValue ?? '0',
      container: m.containerResource.container,
    });
  if (m.pods)
    out.pods = defined({
      metricName: m.pods.metric?.name,
      currentAverageValue: m.pods.current?.averageValue ?? '0',
      selector: m.pods.metric?.selector,
    });
  if (m.object)
    out.object = defined({
      target: m.object.describedObject,
      metricName: m.object.metric?.name,
      currentValue: m.object.current?.value ?? '0',
      selector: m.object.metric?.selector,
      averageValue: m.object.current?.averageValue,
    });
  if (m.external)
    out.external = defined({
      metricName: m.external.metric?.name,
      metricSelector: m.external.metric?.selector,
      currentValue: m.external.current?.value ?? '0',
      currentAverageValue: m.external.current?.averageValue,
    });
  return out;
}

function rulesToGo(r: HPAScalingRules | undefined): Json | null {
  if (!r) return null;
  return {
    StabilizationWindowSeconds: r.stabilizationWindowSeconds ?? null,
    SelectPolicy: r.selectPolicy ?? null,
    Policies: r.policies?.map((p) => ({ Type: p.type, Value: p.value, PeriodSeconds: p.periodSeconds })) ?? null,
  };
}

// ---- v1 (annotation) shapes -> v2 ----

type V1Metric = Record<string, Json | undefined> & { type?: string };

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const qty = (v: unknown): Quantity | undefined => (typeof v === 'string' || typeof v === 'number' ? v : undefined);
const int = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const sel = (v: unknown): LabelSelectorObject | undefined => v as LabelSelectorObject | undefined;
const ident = (name: unknown, selector: unknown): MetricIdentifier =>
  defined({ name: str(name), selector: sel(selector) }) as unknown as MetricIdentifier;

function resourceTarget(r: Json): MetricTarget {
  const util = int(r.targetAverageUtilization);
  return defined({
    type: util === undefined ? 'AverageValue' : 'Utilization',
    averageUtilization: util,
    averageValue: qty(r.targetAverageValue),
  }) as unknown as MetricTarget;
}

function specFromV1(m: V1Metric): MetricSpec {
  const out: MetricSpec = { type: str(m.type) as MetricSpec['type'] };
  const { resource: r, containerResource: c, pods: p, object: o, external: e } = m;
  if (r) out.resource = { name: str(r.name), target: resourceTarget(r) };
  if (c) out.containerResource = { name: str(c.name), container: str(c.container), target: resourceTarget(c) };
  if (p)
    out.pods = {
      metric: ident(p.metricName, p.selector),
      target: { type: 'AverageValue', averageValue: qty(p.targetAverageValue) },
    };
  if (o)
    out.object = {
      describedObject: o.target as unknown as NonNullable<MetricSpec['object']>['describedObject'],
      metric: ident(o.metricName, o.selector),
      target: defined({
        type: o.averageValue !== undefined ? 'AverageValue' : 'Value',
        value: qty(o.targetValue),
        averageValue: qty(o.averageValue),
      }) as unknown as MetricTarget,
    };
  if (e)
    out.external = {
      metric: ident(e.metricName, e.metricSelector),
      target: defined({
        type: e.targetValue !== undefined ? 'Value' : 'AverageValue',
        value: qty(e.targetValue),
        averageValue: qty(e.targetAverageValue),
      }) as unknown as MetricTarget,
    };
  return out;
}

function statusFromV1(m: V1Metric): MetricStatus {
  const out: MetricStatus = { type: str(m.type) as MetricStatus['type'] };
  const { resource: r, containerResource: c, pods: p, object: o, external: e } = m;
  const current = (util: unknown, avg: unknown, value?: unknown) =>
    defined({ averageUtilization: int(util), averageValue: qty(avg), value: qty(value) });
  if (r) out.resource = { name: str(r.name), current: current(r.currentAverageUtilization, r.currentAverageValue) };
  if (c)
    out.containerResource = {
      name: str(c.name),
      container: str(c.container),
      current: current(c.currentAverageUtilization, c.currentAverageValue),
    };
  if (p)
    out.pods = {
      metric: ident(p.metricName, p.selector),
      current: current(undefined, p.currentAverageValue),
    };
  if (o)
    out.object = {
      describedObject: o.target as unknown as NonNullable<MetricStatus['object']>['describedObject'],
      metric: ident(o.metricName, o.selector),
      current: current(undefined, o.averageValue, o.currentValue),
    };
  if (e)
    out.external = {
      metric: ident(e.metricName, e.metricSelector),
      current: current(undefined, e.currentAverageValue, e.currentValue),
    };
  return out;
}

function rulesFromGo(r: unknown): HPAScalingRules | undefined {
  if (!r || typeof r !== 'object') return undefined;
  const g = r as Json;
  const policies = Array.isArray(g.Policies)
    ? (g.Policies as Json[]).map((p) => ({
        type: str(p.Type) as 'Pods' | 'Percent',
        value: int(p.Value) ?? 0,
        periodSeconds: int(p.PeriodSeconds) ?? 0,
      }))
    : undefined;
  return defined({
    stabilizationWindowSeconds: int(g.StabilizationWindowSeconds),
    selectPolicy: typeof g.SelectPolicy === 'string' ? g.SelectPolicy : undefined,
    policies,
  }) as HPAScalingRules;
}

function parse(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The annotations without the round-trip ones (Kubernetes' DropRoundTripHorizontalPodAutoscalerAnnotations). */
function withoutRoundTrip(a: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!a) return undefined;
  const keys = new Set(ANNOTATIONS.map(hpaAnnotation));
  const out = Object.fromEntries(Object.entries(a).filter(([k]) => !keys.has(k)));
  return Object.keys(out).length > 0 ? out : undefined;
}

function withMetadata(obj: ApiObject, annotations: Record<string, string> | undefined): ApiObject['metadata'] {
  const { annotations: _drop, ...meta } = obj.metadata;
  return annotations ? { ...meta, annotations } : meta;
}

/** An autoscaling/v1 object in its autoscaling/v2 (stored) form. */
export function hpaV1ToV2(obj: ApiObject): ApiObject {
  const v1 = obj as HorizontalPodAutoscalerV1;
  const ann = obj.metadata.annotations ?? {};
  const spec = v1.spec ?? ({} as HorizontalPodAutoscalerV1['spec']);
  const metrics: MetricSpec[] = [];
  if (spec.targetCPUUtilizationPercentage !== undefined)
    metrics.push({
      type: 'Resource',
      resource: {
        name: 'cpu',
        target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage },
      },
    });
  const others = parse(ann[hpaAnnotation('metrics')]);
  if (Array.isArray(others)) metrics.push(...(others as V1Metric[]).map(specFromV1));
  if (metrics.length === 0)
    metrics.push({
      type: 'Resource',
      resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } },
    });
  const behaviorGo = parse(ann[hpaAnnotation('behavior')]) as Json | undefined;
  const behavior: HorizontalPodAutoscalerBehavior | undefined =
    behaviorGo && typeof behaviorGo === 'object'
      ? (defined({
          scaleUp: rulesFromGo(behaviorGo.ScaleUp),
          scaleDown: rulesFromGo(behaviorGo.ScaleDown),
        }) as HorizontalPodAutoscalerBehavior)
      : undefined;
  const out: HorizontalPodAutoscaler = {
    ...obj,
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: withMetadata(obj, withoutRoundTrip(obj.metadata.annotations)),
    spec: defined({
      scaleTargetRef: spec.scaleTargetRef,
      minReplicas: spec.minReplicas,
      maxReplicas: spec.maxReplicas,
      metrics,
      behavior,
    }) as unknown as HorizontalPodAutoscaler['spec'],
  };
  const st = v1.status;
  if (st) {
    let currentMetrics: MetricStatus[] | undefined =
      st.currentCPUUtilizationPercentage !== undefined
        ? [
            {
              type: 'Resource',
              resource: { name: 'cpu', current: { averageUtilization: st.currentCPUUtilizationPercentage } },
            },
          ]
        : undefined;
    const current = parse(ann[hpaAnnotation('current-metrics')]);
    if (Array.isArray(current)) currentMetrics = (current as V1Metric[]).map(statusFromV1);
    const conditions = parse(ann[hpaAnnotation('conditions')]);
    out.status = defined({
      observedGeneration: st.observedGeneration,
      lastScaleTime: st.lastScaleTime,
      currentReplicas: st.currentReplicas,
      desiredReplicas: st.desiredReplicas ?? 0,
      currentMetrics,
      conditions: Array.isArray(conditions) ? (conditions as HorizontalPodAutoscalerCondition[]) : undefined,
    }) as unknown as HorizontalPodAutoscaler['status'];
  }
  return out as ApiObject;
}

/** A stored autoscaling/v2 object in its autoscaling/v1 form. */
export function hpaV2ToV1(obj: ApiObject): ApiObject {
  const v2 = obj as HorizontalPodAutoscaler;
  const spec = v2.spec ?? ({} as HorizontalPodAutoscaler['spec']);
  const metrics = spec.metrics ?? [];
  const annotations: Record<string, string> = { ...withoutRoundTrip(obj.metadata.annotations) };
  const others = metrics.filter((m) => !isCpuUtilization(m));
  if (others.length > 0) annotations[hpaAnnotation('metrics')] = JSON.stringify(others.map(specToV1));
  const st = v2.status;
  if (st?.currentMetrics?.length)
    annotations[hpaAnnotation('current-metrics')] = JSON.stringify(st.currentMetrics.map(statusToV1));
  if (spec.behavior)
    annotations[hpaAnnotation('behavior')] = JSON.stringify({
      ScaleUp: rulesToGo(spec.behavior.scaleUp),
      ScaleDown: rulesToGo(spec.behavior.scaleDown),
    });
  if (st?.conditions?.length) annotations[hpaAnnotation('conditions')] = JSON.stringify(st.conditions);
  const cpu = metrics.find((m) => m.type === 'Resource' && m.resource?.name === 'cpu');
  let currentCpu: number | undefined;
  for (const m of st?.currentMetrics ?? [])
    if (m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource.current?.averageUtilization !== undefined)
      currentCpu = m.resource.current.averageUtilization;
  const out: HorizontalPodAutoscalerV1 = {
    ...obj,
    apiVersion: 'autoscaling/v1',
    kind: 'HorizontalPodAutoscaler',
    metadata: withMetadata(obj, Object.keys(annotations).length > 0 ? annotations : undefined),
    spec: defined({
      scaleTargetRef: spec.scaleTargetRef,
      minReplicas: spec.minReplicas,
      maxReplicas: spec.maxReplicas,
      targetCPUUtilizationPercentage: cpu?.resource?.target?.averageUtilization,
    }) as unknown as HorizontalPodAutoscalerV1['spec'],
  };
  if (st)
    out.status = defined({
      observedGeneration: st.observedGeneration,
      lastScaleTime: st.lastScaleTime,
      currentReplicas: st.currentReplicas ?? 0,
      desiredReplicas: st.desiredReplicas ?? 0,
      currentCPUUtilizationPercentage: currentCpu,
    }) as unknown as HorizontalPodAutoscalerV1['status'];
  return out as ApiObject;
}
