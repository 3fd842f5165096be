import { defineResource, type ResourceType } from '../../../catalog.js';
import { labelSelector, objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import type { ApiObject } from '../../../types.js';
import { podTemplateSpec } from '../../core/v1/pod.js';
import { templateColumns, workloadConditions, workloadScale } from './common.js';

interface ReplicaSetCounts {
  spec?: { replicas?: number };
  status?: { replicas?: number; readyReplicas?: number };
}

const counts = (o: ApiObject): ReplicaSetCounts => o as ReplicaSetCounts;

/** ReplicaSet's status, field for field and number for number also ReplicationController's. */
export const replicaSetStatus = s.obj(
  {
    replicas: s.int32({ tag: 1 }),
    fullyLabeledReplicas: s.int32({ tag: 2 }),
    readyReplicas: s.int32({ tag: 4 }),
    availableReplicas: s.int32({ tag: 5 }),
    observedGeneration: s.int64({ tag: 3 }),
    conditions: { ...workloadConditions, tag: 6 },
  },
  { tag: 3 },
);

export const replicaSetSchema = objectSchema({
  spec: s.obj(
    {
      replicas: s.int32({ tag: 1 }),
      minReadySeconds: s.int32({ tag: 4 }),
      selector: { ...labelSelector, tag: 2 },
      template: { ...podTemplateSpec, tag: 3 },
    },
    { tag: 2 },
  ),
  status: replicaSetStatus,
});

export const replicaSet = (): ResourceType =>
  defineResource({
    group: 'apps',
    version: 'v1',
    kind: 'ReplicaSet',
    plural: 'replicasets',
    singular: 'replicaset',
    shortNames: ['rs'],
    categories: ['all'],
    namespaced: true,
    subresources: ['status', 'scale'],
    scale: workloadScale,
    tableColumns: [
      nameColumn,
      {
        ...column('Desired', 'integer', (o) => counts(o).spec?.replicas ?? 0),
        description: 'Replicas is the number of desired replicas.',
      },
      {
        ...column('Current', 'integer', (o) => counts(o).status?.replicas ?? 0),
        description: 'Replicas is the most recently observed number of replicas.',
      },
      {
        ...column('Ready', 'integer', (o) => counts(o).status?.readyReplicas ?? 0),
        description: 'The number of ready replicas for this replica set.',
      },
      ageColumn,
      ...templateColumns,
    ],
    schema: replicaSetSchema,
  });
