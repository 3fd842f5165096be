import { defineResource, type ResourceType } from '../../../catalog.js';
import { labelSelector, objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import type { ApiObject } from '../../../types.js';
import type { SubresourceKind } from '../../authentication/v1/token-request.js';

/** Field numbers follow Kubernetes' policy/v1 generated.proto. */
const condition = s.obj(
  {
    type: s.str({ tag: 1 }),
    status: s.str({ tag: 2, enum: ['True', 'False', 'Unknown'] as const }),
    observedGeneration: s.int64({ tag: 3 }),
    lastTransitionTime: s.time({ tag: 4 }),
    reason: s.str({ tag: 5 }),
    message: s.str({ tag: 6 }),
  },
  { required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'] },
);

export const podDisruptionBudgetSchema = objectSchema({
  spec: s.obj(
    {
      minAvailable: s.intOrString({ tag: 1 }),
      selector: { ...labelSelector, tag: 2, patchStrategy: 'replace' },
      maxUnavailable: s.intOrString({ tag: 3 }),
      unhealthyPodEvictionPolicy: s.str({ tag: 4, enum: ['IfHealthyBudget', 'AlwaysAllow'] as const }),
    },
    { tag: 2 },
  ),
  status: s.obj(
    {
      observedGeneration: s.int64({ tag: 1 }),
      disruptedPods: s.map(s.time(), { tag: 2 }),
      disruptionsAllowed: s.int32({ tag: 3 }),
      currentHealthy: s.int32({ tag: 4 }),
      desiredHealthy: s.int32({ tag: 5 }),
      expectedPods: s.int32({ tag: 6 }),
      conditions: s.keyed(condition, ['type'], { tag: 7 }),
    },
    { tag: 3, required: ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods'] },
  ),
});

interface BudgetView {
  spec?: { minAvailable?: number | string; maxUnavailable?: number | string };
  status?: { disruptionsAllowed?: number };
}

const view = (o: ApiObject): BudgetView => o as BudgetView;
const intOrStringCell = (v: number | string | undefined): string => (v === undefined ? 'N/A' : String(v));

/** policy/v1 PodDisruptionBudget: short name `pdb`, Table columns as kubectl 1.32 prints them. */
export const podDisruptionBudget = (): ResourceType =>
  defineResource({
    group: 'policy',
    version: 'v1',
    kind: 'PodDisruptionBudget',
    plural: 'poddisruptionbudgets',
    singular: 'poddisruptionbudget',
    shortNames: ['pdb'],
    namespaced: true,
    subresources: ['status'],
    tableColumns: [
      nameColumn,
      {
        ...column('Min Available', 'string', (o) => intOrStringCell(view(o).spec?.minAvailable)),
        description: 'The minimum number of pods that must be available.',
      },
      {
        ...column('Max Unavailable', 'string', (o) => intOrStringCell(view(o).spec?.maxUnavailable)),
        description: 'The maximum number of pods that may be unavailable.',
      },
      {
        ...column('Allowed Disruptions', 'integer', (o) => view(o).status?.disruptionsAllowed ?? 0),
        description: 'Calculated number of pods that may be disrupted at this time.',
      },
      ageColumn,
    ],
    schema: podDisruptionBudgetSchema,
  });

/** DeleteOptions as a field of another object (Eviction's `deleteOptions`), meta/v1 field numbers. */
const deleteOptions = s.obj({
  apiVersion: s.str(),
  kind: s.str(),
  gracePeriodSeconds: s.int64({ tag: 1 }),
  preconditions: s.obj({ uid: s.str({ tag: 1 }), resourceVersion: s.str({ tag: 2 }) }, { tag: 2 }),
  orphanDependents: s.bool({ tag: 3 }),
  propagationPolicy: s.str({ tag: 4 }),
  dryRun: s.atomic(s.str(), { tag: 5 }),
  ignoreStoreReadErrorWithClusterBreakingPotential: s.bool({ tag: 6 }),
});

/** Eviction (`policy/v1`, also read as `policy/v1beta1`): the body of `pods/<name>/eviction`. */
export const evictionKind = (version = 'v1'): SubresourceKind => ({
  group: 'policy',
  version,
  kind: 'Eviction',
  schema: objectSchema({ deleteOptions: { ...deleteOptions, tag: 2 } }),
});
