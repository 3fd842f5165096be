import { defineResource, type ResourceType } from '../../../catalog.js';
import { labelSelector, objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import type { ApiObject } from '../../../types.js';
import { persistentVolumeClaimSchema } from '../../core/v1/persistent-volume-claim.js';
import { podTemplateSpec } from '../../core/v1/pod.js';
import { templateColumns, workloadConditions, workloadScale } from './common.js';

interface StatefulSetCounts {
  spec?: { replicas?: number };
  status?: { readyReplicas?: number };
}

const counts = (o: ApiObject): StatefulSetCounts => o as StatefulSetCounts;

/** Field numbers follow Kubernetes' apps/v1 generated.proto (StatefulSetSpec, StatefulSetStatus). */
export const statefulSetSchema = objectSchema({
  spec: s.obj(
    {
      replicas: s.int32({ tag: 1 }),
      selector: { ...labelSelector, tag: 2 },
      template: { ...podTemplateSpec, tag: 3 },
      volumeClaimTemplates: s.atomic(persistentVolumeClaimSchema, { tag: 4 }),
      serviceName: s.str({ tag: 5 }),
      podManagementPolicy: s.str({ tag: 6 }),
      updateStrategy: s.obj(
        {
          type: s.str({ tag: 1 }),
          rollingUpdate: s.obj(
            { partition: s.int32({ tag: 1 }), maxUnavailable: s.intOrString({ tag: 2 }) },
            { tag: 2 },
          ),
        },
        { tag: 7 },
      ),
      revisionHistoryLimit: s.int32({ tag: 8 }),
      minReadySeconds: s.int32({ tag: 9 }),
      persistentVolumeClaimRetentionPolicy: s.obj(
        { whenDeleted: s.str({ tag: 1 }), whenScaled: s.str({ tag: 2 }) },
        { tag: 10 },
      ),
      ordinals: s.obj({ start: s.int32({ tag: 1 }) }, { tag: 11 }),
    },
    { tag: 2 },
  ),
  status: s.obj(
    {
      observedGeneration: s.int64({ tag: 1 }),
      replicas: s.int32({ tag: 2 }),
      readyReplicas: s.int32({ tag: 3 }),
      currentReplicas: s.int32({ tag: 4 }),
      updatedReplicas: s.int32({ tag: 5 }),
      currentRevision: s.str({ tag: 6 }),
      updateRevision: s.str({ tag: 7 }),
      collisionCount: s.int32({ tag: 9 }),
      conditions: { ...workloadConditions, tag: 10 },
      availableReplicas: s.int32({ tag: 11 }),
    },
    { tag: 3 },
  ),
});

/** Kubernetes' printStatefulSet: `Ready` is `<readyReplicas>/<spec.replicas>`; wide adds Containers and Images (no Selector). */
export const statefulSet = (): ResourceType =>
  defineResource({
    group: 'apps',
    version: 'v1',
    kind: 'StatefulSet',
    plural: 'statefulsets',
    singular: 'statefulset',
    shortNames: ['sts'],
    categories: ['all'],
    namespaced: true,
    subresources: ['status', 'scale'],
    scale: workloadScale,
    tableColumns: [
      nameColumn,
      {
        ...column('Ready', 'string', (o) => `${counts(o).status?.readyReplicas ?? 0}/${counts(o).spec?.replicas ?? 0}`),
        description: 'Number of the pod with ready state',
      },
      ageColumn,
      ...templateColumns.slice(0, 2),
    ],
    schema: statefulSetSchema,
  });
