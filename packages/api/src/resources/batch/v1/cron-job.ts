import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { s } from '../../../schema.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import { NONE, age } from '../../../table-format.js';
import type { ApiObject } from '../../../types.js';
import { templateColumns } from '../../apps/v1/common.js';
import { objectReference } from '../../core/v1/common.js';
import { jobTemplateSpec } from './job.js';

/** Field numbers follow Kubernetes' batch/v1 generated.proto. */
export const cronJobSchema = objectSchema({
  spec: s.obj(
    {
      schedule: s.str({ tag: 1 }),
      timeZone: s.str({ tag: 8 }),
      startingDeadlineSeconds: s.int64({ tag: 2 }),
      concurrencyPolicy: s.str({ tag: 3, enum: ['Allow', 'Forbid', 'Replace'] as const }),
      suspend: s.bool({ tag: 4 }),
      jobTemplate: { ...jobTemplateSpec, tag: 5 },
      successfulJobsHistoryLimit: s.int32({ tag: 6 }),
      failedJobsHistoryLimit: s.int32({ tag: 7 }),
    },
    { tag: 2, required: ['schedule', 'jobTemplate'] },
  ),
  status: s.obj(
    {
      active: s.atomic(objectReference, { tag: 1 }),
      lastScheduleTime: s.time({ tag: 4 }),
      lastSuccessfulTime: s.time({ tag: 5 }),
    },
    { tag: 3 },
  ),
});

interface CronJobView {
  metadata: ApiObject['metadata'];
  spec?: {
    schedule?: string;
    timeZone?: string;
    suspend?: boolean;
    jobTemplate?: { spec?: Record<string, unknown> };
  };
  status?: { active?: unknown[]; lastScheduleTime?: string };
}

const view = (o: ApiObject): CronJobView => o as CronJobView;

/** The Job template as an object of its own, so the pod-template workloads' wide columns read it. */
const jobTemplateOf = (o: ApiObject): ApiObject => ({
  metadata: o.metadata,
  spec: view(o).spec?.jobTemplate?.spec ?? {},
});

export const cronJob = (): ResourceType =>
  defineResource({
    group: 'batch',
    version: 'v1',
    kind: 'CronJob',
    plural: 'cronjobs',
    singular: 'cronjob',
    shortNames: ['cj'],
    categories: ['all'],
    namespaced: true,
    subresources: ['status'],
    tableColumns: [
      nameColumn,
      {
        ...column('Schedule', 'string', (o) => view(o).spec?.schedule ?? ''),
        description: 'The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.',
      },
      {
        ...column('Timezone', 'string', (o) => view(o).spec?.timeZone ?? NONE),
        description:
          'The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.',
      },
      {
        ...column('Suspend', 'boolean', (o) => {
          const suspend = view(o).spec?.suspend;
          return suspend === undefined ? '<unset>' : suspend ? 'True' : 'False';
        }),
        description:
          'This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.',
      },
      {
        ...column('Active', 'integer', (o) => (view(o).status?.active ?? []).length),
        description: 'A list of pointers to currently running jobs.',
      },
      {
        ...column('Last Schedule', 'string', (o, now) => {
          const t = view(o).status?.lastScheduleTime;
          return t ? age(t, now) : NONE;
        }),
        description: 'Information when was the last time the job was successfully scheduled.',
      },
      ageColumn,
      ...templateColumns.map((c) => ({ ...c, cell: (o: ApiObject, now: number) => c.cell(jobTemplateOf(o), now) })),
    ],
    schema: cronJobSchema,
  });
