import { defineResource, type ResourceType, type TableColumn } from '../../../catalog.js';
import { labelSelector, objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import type { ApiObject } from '../../../types.js';
import type {
  HorizontalPodAutoscaler,
  MetricSpec,
  MetricStatus,
  MetricValueStatus,
} from '../../../wire/autoscaling.js';

/** Field numbers follow Kubernetes' autoscaling/v2 generated.proto. */
export const crossVersionObjectReference = s.obj(
  { kind: s.str({ tag: 1 }), name: s.str({ tag: 2 }), apiVersion: s.str({ tag: 3 }) },
  { required: ['kind', 'name'] },
);

const metricIdentifier = s.obj(
  { name: s.str({ tag: 1 }), selector: { ...labelSelector, tag: 2 } },
  { required: ['name'] },
);

const metricTarget = s.obj(
  {
    type: s.str({ tag: 1 }),
    value: s.quantity({ tag: 2 }),
    averageValue: s.quantity({ tag: 3 }),
    averageUtilization: s.int32({ tag: 4 }),
  },
  { required: ['type'] },
);

const metricValueStatus = s.obj({
  value: s.quantity({ tag: 1 }),
  averageValue: s.quantity({ tag: 2 }),
  averageUtilization: s.int32({ tag: 3 }),
});

const metricSpec = s.obj(
  {
    type: s.str({ tag: 1 }),
    object: s.obj(
      {
        describedObject: { ...crossVersionObjectReference, tag: 1 },
        target: { ...metricTarget, tag: 2 },
        metric: { ...metricIdentifier, tag: 3 },
      },
      { tag: 2 },
    ),
    pods: s.obj({ metric: { ...metricIdentifier, tag: 1 }, target: { ...metricTarget, tag: 2 } }, { tag: 3 }),
    resource: s.obj({ name: s.str({ tag: 1 }), target: { ...metricTarget, tag: 2 } }, { tag: 4 }),
    external: s.obj({ metric: { ...metricIdentifier, tag: 1 }, target: { ...metricTarget, tag: 2 } }, { tag: 5 }),
    containerResource: s.obj(
      { name: s.str({ tag: 1 }), target: { ...metricTarget, tag: 2 }, container: s.str({ tag: 3 }) },
      { tag: 7 },
    ),
  },
  { required: ['type'] },
);

const metricStatus = s.obj(
  {
    type: s.str({ tag: 1 }),
    object: s.obj(
      {
        metric: { ...metricIdentifier, tag: 1 },
        current: { ...metricValueStatus, tag: 2 },
        describedObject: { ...crossVersionObjectReference, tag: 3 },
      },
      { tag: 2 },
    ),
    pods: s.obj({ metric: { ...metricIdentifier, tag: 1 }, current: { ...metricValueStatus, tag: 2 } }, { tag: 3 }),
    resource: s.obj({ name: s.str({ tag: 1 }), current: { ...metricValueStatus, tag: 2 } }, { tag: 4 }),
    external: s.obj({ metric: { ...metricIdentifier, tag: 1 }, current: { ...metricValueStatus, tag: 2 } }, { tag: 5 }),
    containerResource: s.obj(
      { name: s.str({ tag: 1 }), current: { ...metricValueStatus, tag: 2 }, container: s.str({ tag: 3 }) },
      { tag: 7 },
    ),
  },
  { required: ['type'] },
);

const scalingRules = s.obj({
  selectPolicy: s.str({ tag: 1 }),
  policies: s.atomic(
    s.obj(
      { type: s.str({ tag: 1 }), value: s.int32({ tag: 2 }), periodSeconds: s.int32({ tag: 3 }) },
      { required: ['type', 'value', 'periodSeconds'] },
    ),
    { tag: 2 },
  ),
  stabilizationWindowSeconds: s.int32({ tag: 3 }),
});

const condition = s.obj(
  {
    type: s.str({ tag: 1 }),
    status: s.str({ tag: 2 }),
    lastTransitionTime: s.time({ tag: 3 }),
    reason: s.str({ tag: 4 }),
    message: s.str({ tag: 5 }),
  },
  { required: ['type', 'status'] },
);

export const horizontalPodAutoscalerSchema = objectSchema({
  spec: s.obj(
    {
      scaleTargetRef: { ...crossVersionObjectReference, tag: 1 },
      minReplicas: s.int32({ tag: 2 }),
      maxReplicas: s.int32({ tag: 3 }),
      metrics: s.atomic(metricSpec, { tag: 4 }),
      behavior: s.obj({ scaleUp: { ...scalingRules, tag: 1 }, scaleDown: { ...scalingRules, tag: 2 } }, { tag: 5 }),
    },
    { tag: 2, required: ['scaleTargetRef', 'maxReplicas'] },
  ),
  status: s.obj(
    {
      observedGeneration: s.int64({ tag: 1 }),
      lastScaleTime: s.time({ tag: 2 }),
      currentReplicas: s.int32({ tag: 3 }),
      desiredReplicas: s.int32({ tag: 4 }),
      currentMetrics: s.atomic(metricStatus, { tag: 5 }),
      conditions: s.keyed(condition, ['type'], { tag: 6 }),
    },
    { tag: 3, required: ['desiredReplicas'] },
  ),
});

const q = (v: string | number | undefined): string => (v === undefined ? '0' : String(v));

function resourceTarget(name: string, target: MetricSpec['resource'], current: MetricValueStatus | undefined): string {
  const t = target?.target;
  if (t?.averageValue !== undefined)
    return `${name}: ${current ? q(current.averageValue) : '<unknown>'}/${q(t.averageValue)}`;
  const cur = current?.averageUtilization !== undefined ? `${current.averageUtilization}%` : '<unknown>';
  const want = t?.averageUtilization !== undefined ? `${t.averageUtilization}%` : '<auto>';
  return `${name}: ${cur}/${want}`;
}

function valueTarget(
  spec: { target?: { value?: string | number; averageValue?: string | number } } | undefined,
  current: MetricValueStatus | undefined,
): string {
  if (spec?.target?.averageValue !== undefined)
    return `${current?.averageValue !== undefined ? q(current.averageValue) : '<unknown>'}/${q(spec.target.averageValue)} (avg)`;
  return `${current ? q(current.value) : '<unknown>'}/${q(spec?.target?.value)}`;
}

function oneTarget(spec: MetricSpec, status: MetricStatus | undefined): string {
  switch (spec.type) {
    case 'External':
      return valueTarget(spec.external, status?.external?.current);
    case 'Object':
      return valueTarget(spec.object, status?.object?.current);
    case 'Pods':
      return `${status?.pods ? q(status.pods.current.averageValue) : '<unknown>'}/${q(spec.pods?.target.averageValue)}`;
    case 'Resource':
      return resourceTarget(spec.resource?.name ?? '', spec.resource, status?.resource?.current);
    case 'ContainerResource':
      return resourceTarget(
        `${spec.containerResource?.name ?? ''} (container ${spec.containerResource?.container ?? ''})`,
        spec.containerResource,
        status?.containerResource?.current,
      );
    default:
      return '<unknown type>';
  }
}

/** kubectl 1.32's formatHPAMetrics: two targets, then `+ N more...`. */
export function hpaTargetsCell(hpa: HorizontalPodAutoscaler): string {
  const specs = hpa.spec?.metrics ?? [];
  if (specs.length === 0) return '<none>';
  const statuses = hpa.status?.currentMetrics ?? [];
  const list = specs.map((m, i) => oneTarget(m, statuses[i]));
  const shown = list.slice(0, 2).join(', ');
  return list.length > 2 ? `${shown} + ${list.length - 2} more...` : shown;
}

/** The columns kubectl 1.32 prints for HorizontalPodAutoscalers, of the v2 form of an object. */
export function hpaColumns(toV2: (o: ApiObject) => ApiObject): TableColumn[] {
  const v = (o: ApiObject): HorizontalPodAutoscaler => toV2(o) as HorizontalPodAutoscaler;
  return [
    nameColumn,
    {
      ...column(
        'Reference',
        'string',
        (o) => `${v(o).spec?.scaleTargetRef?.kind ?? ''}/${v(o).spec?.scaleTargetRef?.name ?? ''}`,
      ),
      description:
        'scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.',
    },
    {
      ...column('Targets', 'string', (o) => hpaTargetsCell(v(o))),
      description: 'metrics contains the specifications for which to use to calculate the desired replica count.',
    },
    {
      ...column('MinPods', 'string', (o) => {
        const m = v(o).spec?.minReplicas;
        return m === undefined ? '<unset>' : String(m);
      }),
      description: 'minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.',
    },
    {
      ...column('MaxPods', 'string', (o) => v(o).spec?.maxReplicas ?? 0),
      description: 'maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up.',
    },
    {
      ...column('Replicas', 'string', (o) => v(o).status?.currentReplicas ?? 0),
      description: 'currentReplicas is current number of replicas of pods managed by this autoscaler.',
    },
    ageColumn,
  ];
}

/** autoscaling/v2 HorizontalPodAutoscaler: the storage version; short name `hpa`, category `all`. */
export const horizontalPodAutoscalerV2 = (): ResourceType =>
  defineResource({
    group: 'autoscaling',
    version: 'v2',
    kind: 'HorizontalPodAutoscaler',
    plural: 'horizontalpodautoscalers',
    singular: 'horizontalpodautoscaler',
    shortNames: ['hpa'],
    categories: ['all'],
    namespaced: true,
    subresources: ['status'],
    tableColumns: hpaColumns((o) => o),
    schema: horizontalPodAutoscalerSchema,
  });
