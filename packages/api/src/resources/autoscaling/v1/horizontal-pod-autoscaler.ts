import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { crossVersionObjectReference, hpaColumns } from '../v2/horizontal-pod-autoscaler.js';
import { hpaV1ToV2, hpaV2ToV1 } from './hpa-conversion.js';

/** Field numbers follow Kubernetes' autoscaling/v1 generated.proto. */
export const horizontalPodAutoscalerV1Schema = objectSchema({
  spec: s.obj(
    {
      scaleTargetRef: { ...crossVersionObjectReference, tag: 1 },
      minReplicas: s.int32({ tag: 2 }),
      maxReplicas: s.int32({ tag: 3 }),
      targetCPUUtilizationPercentage: s.int32({ tag: 4 }),
    },
    { tag: 2, required: ['scaleTargetRef', 'maxReplicas'] },
  ),
  status: s.obj(
    {
      observedGeneration: s.int64({ tag: 1 }),
      lastScaleTime: s.time({ tag: 2 }),
      currentReplicas: s.int32({ tag: 3 }),
      desiredReplicas: s.int32({ tag: 4 }),
      currentCPUUtilizationPercentage: s.int32({ tag: 5 }),
    },
    { tag: 3, required: ['currentReplicas', 'desiredReplicas'] },
  ),
});

/**
 * autoscaling/v1 HorizontalPodAutoscaler: served, stored as autoscaling/v2 (Kubernetes 1.32's
 * storage version) and converted on the way in and out (hpa-conversion.ts).
 */
export const horizontalPodAutoscalerV1 = (): ResourceType =>
  defineResource({
    group: 'autoscaling',
    version: 'v1',
    kind: 'HorizontalPodAutoscaler',
    plural: 'horizontalpodautoscalers',
    singular: 'horizontalpodautoscaler',
    shortNames: ['hpa'],
    categories: ['all'],
    namespaced: true,
    subresources: ['status'],
    tableColumns: hpaColumns(hpaV1ToV2),
    schema: horizontalPodAutoscalerV1Schema,
    storedAs: { group: 'autoscaling', plural: 'horizontalpodautoscalers', toStored: hpaV1ToV2, fromStored: hpaV2ToV1 },
  });
