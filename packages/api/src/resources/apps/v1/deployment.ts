import { defineResource, type ResourceType } from '../../../catalog.js';
import { labelSelector, objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import type { ApiObject } from '../../../types.js';
import { podTemplateSpec } from '../../core/v1/pod.js';
import { templateColumns, workloadScale } from './common.js';

interface DeploymentCounts {
  spec?: { replicas?: number };
  status?: { readyReplicas?: number; updatedReplicas?: number; availableReplicas?: number };
}

const counts = (o: ApiObject): DeploymentCounts => o as DeploymentCounts;

export const deploymentSchema = objectSchema({
  spec: s.obj(
    {
      replicas: s.int32({ tag: 1 }),
      selector: { ...labelSelector, tag: 2 },
      template: { ...podTemplateSpec, tag: 3 },
      strategy: s.obj(
        {
          type: s.str({ tag: 1 }),
          rollingUpdate: s.obj(
            { maxUnavailable: s.intOrString({ tag: 1 }), maxSurge: s.intOrString({ tag: 2 }) },
            { tag: 2 },
          ),
        },
        { tag: 4 },
      ),
      minReadySeconds: s.int32({ tag: 5 }),
      revisionHistoryLimit: s.int32({ tag: 6 }),
      paused: s.bool({ tag: 7 }),
      progressDeadlineSeconds: s.int32({ tag: 9 }),
    },
    { tag: 2 },
  ),
  status: s.obj(
    {
      observedGeneration: s.int64({ tag: 1 }),
      replicas: s.int32({ tag: 2 }),
      updatedReplicas: s.int32({ tag: 3 }),
      readyReplicas: s.int32({ tag: 7 }),
      availableReplicas: s.int32({ tag: 4 }),
      unavailableReplicas: s.int32({ tag: 5 }),
      conditions: s.keyed(
        s.obj(
          {
            type: s.str({ tag: 1 }),
            status: s.str({ tag: 2 }),
            lastUpdateTime: s.time({ tag: 6 }),
            lastTransitionTime: s.time({ tag: 7 }),
            reason: s.str({ tag: 4 }),
            message: s.str({ tag: 5 }),
          },
          { required: ['type', 'status'] },
        ),
        ['type'],
        { tag: 6 },
      ),
      collisionCount: s.int32({ tag: 8 }),
    },
    { tag: 3 },
  ),
});

export const deployment = (): ResourceType =>
  defineResource({
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    plural: 'deployments',
    singular: 'deployment',
    shortNames: ['deploy'],
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
      {
        ...column('Up-to-date', 'string', (o) => counts(o).status?.updatedReplicas ?? 0),
        description:
          'Total number of non-terminated pods targeted by this deployment that have the desired template spec.',
      },
      {
        ...column('Available', 'string', (o) => counts(o).status?.availableReplicas ?? 0),
        description: 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.',
      },
      ageColumn,
      ...templateColumns,
    ],
    schema: deploymentSchema,
  });
