import { defineResource, type ResourceType } from '../../../catalog.js';
import { labelSelector, objectMeta, objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import { humanDuration } from '../../../table-format.js';
import type { ApiObject } from '../../../types.js';
import { podTemplateSpec } from '../../core/v1/pod.js';
import { templateColumns } from '../../apps/v1/common.js';

/** Field numbers follow Kubernetes' batch/v1 generated.proto. */
const podFailurePolicy = s.obj(
  {
    rules: s.atomic(
      s.obj(
        {
          action: s.str({ tag: 1, enum: ['FailJob', 'FailIndex', 'Ignore', 'Count'] as const }),
          onExitCodes: s.obj(
            {
              containerName: s.str({ tag: 1 }),
              operator: s.str({ tag: 2, enum: ['In', 'NotIn'] as const }),
              values: s.set(s.int32(), { tag: 3 }),
            },
            { tag: 2, required: ['operator', 'values'] },
          ),
          onPodConditions: s.atomic(
            s.obj(
              { type: s.str({ tag: 1 }), status: s.str({ tag: 2, enum: ['True', 'False', 'Unknown'] as const }) },
              { required: ['type'] },
            ),
            { tag: 3 },
          ),
        },
        { required: ['action'] },
      ),
      { tag: 1 },
    ),
  },
  { required: ['rules'] },
);

const successPolicy = s.obj(
  {
    rules: s.atomic(s.obj({ succeededIndexes: s.str({ tag: 1 }), succeededCount: s.int32({ tag: 2 }) }), { tag: 1 }),
  },
  { required: ['rules'] },
);

export const jobSpec = s.obj(
  {
    parallelism: s.int32({ tag: 1 }),
    completions: s.int32({ tag: 2 }),
    activeDeadlineSeconds: s.int64({ tag: 3 }),
    podFailurePolicy: { ...podFailurePolicy, tag: 11 },
    successPolicy: { ...successPolicy, tag: 16 },
    backoffLimit: s.int32({ tag: 7 }),
    backoffLimitPerIndex: s.int32({ tag: 12 }),
    maxFailedIndexes: s.int32({ tag: 13 }),
    selector: { ...labelSelector, tag: 4 },
    manualSelector: s.bool({ tag: 5 }),
    template: { ...podTemplateSpec, tag: 6 },
    ttlSecondsAfterFinished: s.int32({ tag: 8 }),
    completionMode: s.str({ tag: 9, enum: ['NonIndexed', 'Indexed'] as const }),
    suspend: s.bool({ tag: 10 }),
    podReplacementPolicy: s.str({ tag: 14, enum: ['TerminatingOrFailed', 'Failed'] as const }),
    managedBy: s.str({ tag: 15 }),
  },
  { required: ['template'] },
);

/** JobTemplateSpec (CronJob's `spec.jobTemplate`). */
export const jobTemplateSpec = s.obj({ metadata: { ...objectMeta, tag: 1 }, spec: { ...jobSpec, tag: 2 } });

export const jobSchema = objectSchema({
  spec: { ...jobSpec, tag: 2 },
  status: s.obj(
    {
      conditions: s.atomic(
        s.obj(
          {
            type: s.str({ tag: 1 }),
            status: s.str({ tag: 2, enum: ['True', 'False', 'Unknown'] as const }),
            lastProbeTime: s.time({ tag: 3 }),
            lastTransitionTime: s.time({ tag: 4 }),
            reason: s.str({ tag: 5 }),
            message: s.str({ tag: 6 }),
          },
          { required: ['type', 'status'] },
        ),
        { tag: 1 },
      ),
      startTime: s.time({ tag: 2 }),
      completionTime: s.time({ tag: 3 }),
      active: s.int32({ tag: 4 }),
      succeeded: s.int32({ tag: 5 }),
      failed: s.int32({ tag: 6 }),
      terminating: s.int32({ tag: 11 }),
      completedIndexes: s.str({ tag: 7 }),
      failedIndexes: s.str({ tag: 10 }),
      uncountedTerminatedPods: s.obj(
        { succeeded: s.set(s.str(), { tag: 1 }), failed: s.set(s.str(), { tag: 2 }) },
        { tag: 8 },
      ),
      ready: s.int32({ tag: 9 }),
    },
    { tag: 3 },
  ),
});

interface JobView {
  metadata: { deletionTimestamp?: string };
  spec?: { completions?: number; parallelism?: number };
  status?: {
    succeeded?: number;
    startTime?: string;
    completionTime?: string;
    conditions?: Array<{ type: string; status: string }>;
  };
}

const view = (o: ApiObject): JobView => o as JobView;

/** Kubernetes' printJob status: the first true condition in its order of precedence, else `Running`. */
function jobStatusCell(o: ApiObject): string {
  const j = view(o);
  const is = (type: string): boolean =>
    (j.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
  if (is('Complete')) return 'Complete';
  if (is('Failed')) return 'Failed';
  if (j.metadata.deletionTimestamp) return 'Terminating';
  for (const type of ['Suspended', 'FailureTarget', 'SuccessCriteriaMet']) if (is(type)) return type;
  return 'Running';
}

function completionsCell(o: ApiObject): string {
  const j = view(o);
  const succeeded = j.status?.succeeded ?? 0;
  if (j.spec?.completions !== undefined) return `${succeeded}/${j.spec.completions}`;
  const parallelism = j.spec?.parallelism ?? 0;
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

function durationCell(o: ApiObject, now: number): string {
  const st = view(o).status ?? {};
  if (!st.startTime) return '';
  const end = st.completionTime ? Date.parse(st.completionTime) : now;
  return humanDuration(end - Date.parse(st.startTime));
}

export const job = (): ResourceType =>
  defineResource({
    group: 'batch',
    version: 'v1',
    kind: 'Job',
    plural: 'jobs',
    singular: 'job',
    categories: ['all'],
    namespaced: true,
    subresources: ['status'],
    tableColumns: [
      nameColumn,
      { ...column('Status', 'string', jobStatusCell), description: 'Status of the job.' },
      {
        ...column('Completions', 'string', completionsCell),
        description: 'The desired number of successfully finished pods the job should be run with.',
      },
      { ...column('Duration', 'string', durationCell), description: 'Time required to complete the job.' },
      ageColumn,
      ...templateColumns,
    ],
    schema: jobSchema,
  });
