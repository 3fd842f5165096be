import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn, wideColumn } from '../../../table-columns.js';
import { NONE } from '../../../table-format.js';
import type { ApiObject } from '../../../types.js';
import { templateColumns } from '../../apps/v1/common.js';
import { replicaSetStatus } from '../../apps/v1/replica-set.js';
import { podTemplateSpec } from './pod.js';

interface ReplicationControllerView {
  spec?: { replicas?: number; selector?: Record<string, string> };
  status?: { replicas?: number; readyReplicas?: number };
}

const view = (o: ApiObject): ReplicationControllerView => o as ReplicationControllerView;

/** Kubernetes' labels.FormatLabels: `k=v` pairs sorted by key, `<none>` when empty. */
function selectorText(o: ApiObject): string {
  const pairs = Object.entries(view(o).spec?.selector ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join(',') || NONE;
}

/** core/v1 ReplicationController, with Kubernetes' Protobuf field numbers (those of ReplicaSet). */
export const replicationControllerSchema = objectSchema({
  spec: s.obj(
    {
      replicas: s.int32({ tag: 1 }),
      minReadySeconds: s.int32({ tag: 4 }),
      selector: s.map(s.str(), { tag: 2 }),
      template: { ...podTemplateSpec, tag: 3 },
    },
    { tag: 2 },
  ),
  status: replicaSetStatus,
});

/** core/v1 ReplicationController: short name rc, category all, `status` and `scale` (a plain-map selector). */
export const replicationController = (): ResourceType =>
  defineResource({
    group: '',
    version: 'v1',
    kind: 'ReplicationController',
    plural: 'replicationcontrollers',
    singular: 'replicationcontroller',
    shortNames: ['rc'],
    categories: ['all'],
    namespaced: true,
    subresources: ['status', 'scale'],
    scale: {
      specReplicasPath: 'spec.replicas',
      statusReplicasPath: 'status.replicas',
      labelSelectorPath: 'spec.selector',
      labelSelectorIsMap: true,
    },
    tableColumns: [
      nameColumn,
      {
        ...column('Desired', 'integer', (o) => view(o).spec?.replicas ?? 0),
        description:
          'Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1.',
      },
      {
        ...column('Current', 'integer', (o) => view(o).status?.replicas ?? 0),
        description: 'Replicas is the most recently observed number of replicas.',
      },
      {
        ...column('Ready', 'integer', (o) => view(o).status?.readyReplicas ?? 0),
        description: 'The number of ready replicas for this replication controller.',
      },
      ageColumn,
      ...templateColumns.slice(0, 2),
      { ...wideColumn('Selector', 'string', selectorText), description: 'Label selector for pods.' },
    ],
    schema: replicationControllerSchema,
  });
