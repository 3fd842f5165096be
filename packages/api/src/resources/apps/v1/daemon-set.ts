import { defineResource, type ResourceType } from '../../../catalog.js';
import { labelSelector, objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import { NONE } from '../../../table-format.js';
import type { ApiObject } from '../../../types.js';
import { podTemplateSpec } from '../../core/v1/pod.js';
import { templateColumns, workloadConditions } from './common.js';

interface DaemonSetView {
  spec?: { template?: { spec?: { nodeSelector?: Record<string, string> } } };
  status?: Record<string, number | undefined>;
}

const view = (o: ApiObject): DaemonSetView => o as DaemonSetView;
const count =
  (field: string) =>
  (o: ApiObject): number =>
    view(o).status?.[field] ?? 0;

/** Kubernetes' labels.FormatLabels: `k=v` pairs sorted by key, `<none>` when empty. */
function nodeSelectorCell(o: ApiObject): string {
  const sel = view(o).spec?.template?.spec?.nodeSelector ?? {};
  return (
    Object.keys(sel)
      .sort()
      .map((k) => `${k}=${sel[k] ?? ''}`)
      .join(',') || NONE
  );
}

/** Field numbers follow Kubernetes' apps/v1 generated.proto. */
export const daemonSetSchema = objectSchema({
  spec: s.obj(
    {
      selector: { ...labelSelector, tag: 1 },
      template: { ...podTemplateSpec, tag: 2 },
      updateStrategy: s.obj(
        {
          type: s.str({ tag: 1 }),
          rollingUpdate: s.obj(
            { maxUnavailable: s.intOrString({ tag: 1 }), maxSurge: s.intOrString({ tag: 2 }) },
            { tag: 2 },
          ),
        },
        { tag: 3 },
      ),
      minReadySeconds: s.int32({ tag: 4 }),
      revisionHistoryLimit: s.int32({ tag: 6 }),
    },
    { tag: 2, required: ['selector'] },
  ),
  status: s.obj(
    {
      currentNumberScheduled: s.int32({ tag: 1 }),
      numberMisscheduled: s.int32({ tag: 2 }),
      desiredNumberScheduled: s.int32({ tag: 3 }),
      numberReady: s.int32({ tag: 4 }),
      observedGeneration: s.int64({ tag: 5 }),
      updatedNumberScheduled: s.int32({ tag: 6 }),
      numberAvailable: s.int32({ tag: 7 }),
      numberUnavailable: s.int32({ tag: 8 }),
      collisionCount: s.int32({ tag: 9 }),
      conditions: { ...workloadConditions, tag: 10 },
    },
    { tag: 3 },
  ),
});

export const daemonSet = (): ResourceType =>
  defineResource({
    group: 'apps',
    version: 'v1',
    kind: 'DaemonSet',
    plural: 'daemonsets',
    singular: 'daemonset',
    shortNames: ['ds'],
    categories: ['all'],
    namespaced: true,
    subresources: ['status'],
    tableColumns: [
      nameColumn,
      {
        ...column('Desired', 'integer', count('desiredNumberScheduled')),
        description: 'The total number of nodes that should be running the daemon pod.',
      },
      {
        ...column('Current', 'integer', count('currentNumberScheduled')),
        description:
          'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.',
      },
      {
        ...column('Ready', 'integer', count('numberReady')),
        description:
          'The number of nodes that should be running the daemon pod and have one or more of it running and ready.',
      },
      {
        ...column('Up-to-date', 'integer', count('updatedNumberScheduled')),
        description: 'The total number of nodes that are running updated daemon pod.',
      },
      {
        ...column('Available', 'integer', count('numberAvailable')),
        description:
          'The number of nodes that should be running the daemon pod and have one or more of it running and available (ready for at least spec.minReadySeconds).',
      },
      {
        ...column('Node Selector', 'string', nodeSelectorCell),
        description: 'NodeSelector is a selector which must be true for the pod to fit on a node.',
      },
      ageColumn,
      ...templateColumns,
    ],
    schema: daemonSetSchema,
  });
