import { batchKey, isAlreadyExists, isNotFound, type CronJob, type Job, type ObjectReference } from '@svc/api';
import { NAMESPACE_INDEX, objectKey } from '@svc/client';
import { jsonEqual, parseCronSchedule, wallClock, type CronSchedule } from '@svc/machinery';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';
import { REAL_CLOCK, type Clock } from './clock.js';
import { controllerOf, newControllerRef, resolveControllerRef } from './controller-ref.js';
import { conditionOf, isJobFinished } from './job-util.js';
import { nowTime } from './workload-util.js';
import { namespacedApi, ownerScaffold } from './owner-scaffold.js';

const NAME = 'cronjob-controller';
/** Kubernetes' nextScheduleDelta: requeues land this long after the scheduled time (clock skew). */
const NEXT_SCHEDULE_DELTA_MS = 100;
/** More missed start times than this get the TooManyMissedTimes warning (Kubernetes' 100). */
const MANY_MISSED = 100;

/** The zone a CronJob's schedule runs in: `spec.timeZone`, else this process's own (as Kubernetes). */
const zoneOf = (cj: CronJob): string => cj.spec.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;

/**
 * The latest schedule time after the last one (or creation; or now − startingDeadlineSeconds
 * when later) and not after `nowMs` (Kubernetes' mostRecentScheduleTime), and how many were missed.
 */
export function mostRecentScheduleTime(
  cj: CronJob,
  { nowMs, schedule, withDeadline }: { nowMs: number; schedule: CronSchedule; withDeadline: boolean },
): { earliestMs: number; mostRecentMs?: number; missed: number } {
  let earliestMs = Date.parse(cj.status?.lastScheduleTime ?? cj.metadata.creationTimestamp ?? '') || nowMs;
  const deadline = cj.spec.startingDeadlineSeconds;
  if (withDeadline && deadline !== undefined) earliestMs = Math.max(earliestMs, nowMs - deadline * 1000);
  const zone = zoneOf(cj);
  const t1 = schedule.next(earliestMs, zone);
  if (t1 === undefined || nowMs < t1) return { earliestMs, missed: 0 };
  const t2 = schedule.next(t1, zone);
  if (t2 === undefined || nowMs < t2) return { earliestMs, mostRecentMs: t1, missed: 1 };
  // Count roughly by the interval, then walk only the last few (as Kubernetes).
  const interval = t2 - t1;
  const missed = Math.floor((nowMs - t1) / interval) + 1;
  let mostRecentMs: number | undefined;
  for (
    let t = schedule.next(t1 + (missed - 2) * interval, zone);
    t !== undefined && t <= nowMs;
    t = schedule.next(t, zone)
  )
    mostRecentMs = t;
  return { earliestMs, mostRecentMs, missed };
}

/** RFC 3339 of `ms` as the wall clock of `timeZone` reads it, with its offset (Go's Format(time.RFC3339)). */
export function rfc3339In(ms: number, timeZone: string): string {
  const whole = Math.floor(ms / 1000) * 1000;
  const offsetMin = Math.round((wallClock(whole, timeZone) - Math.floor(whole / 60_000) * 60_000) / 60_000);
  const local = new Date(whole + offsetMin * 60_000).toISOString().replace(/\.\d+Z$/, '');
  if (offsetMin === 0) return `${local}Z`;
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** The Job a CronJob starts for `scheduledMs` (Kubernetes' getJobFromTemplate2): named `<cronjob>-<minutes since the epoch>`. */
export function jobForSchedule(cj: CronJob, scheduledMs: number): Job {
  const t = cj.spec.jobTemplate;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: `${cj.metadata.name ?? ''}-${Math.floor(scheduledMs / 60_000)}`,
      labels: { ...(t.metadata?.labels ?? {}) },
      annotations: {
        ...(t.metadata?.annotations ?? {}),
        [batchKey('cronjob-scheduled-timestamp')]: rfc3339In(scheduledMs, cj.spec.timeZone ?? 'UTC'),
      },
      ownerReferences: [newControllerRef(cj, 'batch/v1', 'CronJob')],
    },
    spec: structuredClone(t.spec),
  };
}

const refTo = (job: Job): ObjectReference => ({
  kind: 'Job',
  namespace: job.metadata.namespace,
  name: job.metadata.name,
  uid: job.metadata.uid,
  apiVersion: 'batch/v1',
  resourceVersion: job.metadata.resourceVersion,
});

const startOf = (j: Job): number => Date.parse(j.status?.startTime ?? '') || Number.MAX_SAFE_INTEGER;

/**
 * `cronjob-controller`: starts a Job for each CronJob schedule time as Kubernetes v1.32's
 * CronJob controller (v2) does: the most recent missed time not older than
 * `startingDeadlineSeconds`, in `spec.timeZone` (else this process's zone); `concurrencyPolicy`
 * Allow, Forbid (skip while one runs) or Replace (delete the running ones); nothing while
 * suspended. `status.active` follows the Jobs it owns; `lastScheduleTime` and
 * `lastSuccessfulTime` are kept; finished Jobs beyond `successfulJobsHistoryLimit` and
 * `failedJobsHistoryLimit` are deleted, oldest first. Time comes from `clock`.
 */
export function makeCronJobController({ clock = REAL_CLOCK }: { clock?: Clock } = {}): ControllerDefinition {
  return {
    name: NAME,
    build(ctx) {
      const cronJobs = informer<CronJob>(ctx, R.cronJobs());
      const jobs = informer<Job>(ctx, R.jobs());
      const { record } = ownerScaffold<CronJob>(ctx, { name: NAME, apiVersion: 'batch/v1', kind: 'CronJob' });
      const cjApi = namespacedApi<CronJob>(ctx, R.cronJobs());
      const jobApi = namespacedApi<Job>(ctx, R.jobs());

      async function deleteJob(cj: CronJob, job: Job, reason: string): Promise<boolean> {
        try {
          await jobApi(job.metadata.namespace ?? '').delete(job.metadata.name ?? '', {
            propagationPolicy: 'Background',
          });
          record(cj, { type: 'Normal', reason, message: `Deleted job ${job.metadata.name ?? ''}` });
          return true;
        } catch (e) {
          if (isNotFound(e)) return true;
          record(cj, {
            type: 'Warning',
            reason: 'FailedDelete',
            message: `Deleted job: ${e instanceof Error ? e.message : String(e)}`,
          });
          return false;
        }
      }

      const controller = newController(ctx, {
        name: NAME,
        queueName: 'cronjob',
        workers: ctx.options.concurrentSyncs['cron-job'],
        reconcile: async (key) => {
          const cached = cronJobs.store.get(key);
          if (!cached || cached.metadata.deletionTimestamp) return undefined;
          const ns = cached.metadata.namespace ?? '';
          const owned = jobs.store
            .byIndex(NAMESPACE_INDEX, ns)
            .filter((j) => controllerOf(j)?.uid === cached.metadata.uid);
          const status = structuredClone(cached.status ?? {});
          let active = [...(status.active ?? [])];

          // Active list and last success from the Jobs it owns.
          for (const j of owned) {
            const listed = active.some((a) => a.uid === j.metadata.uid);
            if (!isJobFinished(j)) {
              if (!listed && !j.metadata.deletionTimestamp) active.push(refTo(j));
              continue;
            }
            if (listed) {
              active = active.filter((a) => a.uid !== j.metadata.uid);
              record(cached, {
                type: 'Normal',
                reason: 'SawCompletedJob',
                message: `Saw completed job: ${j.metadata.name ?? ''}, condition: ${conditionOf(j, 'Complete') ? 'Complete' : 'Failed'}`,
              });
            }
            const done = j.status?.completionTime;
            if (
              conditionOf(j, 'Complete') &&
              done &&
              (!status.lastSuccessfulTime || Date.parse(done) > Date.parse(status.lastSuccessfulTime))
            )
              status.lastSuccessfulTime = done;
          }
          // References to Jobs that are gone.
          active = active.filter((a) => {
            const there = owned.some((j) => j.metadata.uid === a.uid);
            if (!there)
              record(cached, {
                type: 'Normal',
                reason: 'MissingJob',
                message: `Active job went missing: ${a.name ?? ''}`,
              });
            return there;
          });

          let requeueAfter: number | undefined;
          let schedule: CronSchedule | undefined;
          try {
            schedule = parseCronSchedule(cached.spec.schedule);
          } catch (e) {
            record(cached, {
              type: 'Warning',
              reason: 'UnparseableSchedule',
              message: `unparseable schedule: ${JSON.stringify(cached.spec.schedule)} : ${e instanceof Error ? e.message : String(e)}`,
            });
          }
          if (schedule && !cached.spec.suspend) {
            const nowMs = clock.now();
            const zone = zoneOf(cached);
            const { mostRecentMs, missed } = mostRecentScheduleTime(
              { ...cached, status },
              { nowMs, schedule, withDeadline: true },
            );
            if (missed > MANY_MISSED)
              record(cached, {
                type: 'Warning',
                reason: 'TooManyMissedTimes',
                message:
                  'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew',
              });
            if (mostRecentMs !== undefined) {
              const job = jobForSchedule(cached, mostRecentMs);
              const already =
                active.some((a) => a.name === job.metadata.name) ||
                owned.some((j) => j.metadata.name === job.metadata.name);
              const policy = cached.spec.concurrencyPolicy ?? 'Allow';
              if (already) {
                // This time was handled (the status write may have been lost).
                status.lastScheduleTime = nowTime(mostRecentMs);
              } else if (policy === 'Forbid' && active.length > 0) {
                record(cached, {
                  type: 'Normal',
                  reason: 'JobAlreadyActive',
                  message: 'Not starting job because prior execution is running and concurrency policy is Forbid',
                });
              } else {
                if (policy === 'Replace') {
                  for (const a of active) {
                    const j = owned.find((x) => x.metadata.uid === a.uid);
                    if (j && (await deleteJob(cached, j, 'SuccessfulDelete')))
                      active = active.filter((x) => x.uid !== a.uid);
                  }
                }
                try {
                  const created = await jobApi(ns).create(job);
                  record(cached, {
                    type: 'Normal',
                    reason: 'SuccessfulCreate',
                    message: `Created job ${created.metadata.name ?? ''}`,
                  });
                  active.push(refTo(created));
                } catch (e) {
                  if (!isAlreadyExists(e)) {
                    record(cached, {
                      type: 'Warning',
                      reason: 'FailedCreate',
                      message: `Error creating job: ${e instanceof Error ? e.message : String(e)}`,
                    });
                    throw e;
                  }
                }
                status.lastScheduleTime = nowTime(mostRecentMs);
              }
            }
            // Next wake-up: the schedule time after the latest handled one (Kubernetes' nextScheduleTimeDuration).
            const from = Math.max(
              mostRecentMs ?? 0,
              Date.parse(status.lastScheduleTime ?? cached.metadata.creationTimestamp ?? '') || 0,
              missed > 0 ? nowMs : 0,
            );
            const next = schedule.next(from, zone);
            if (next !== undefined) requeueAfter = Math.max(0, next + NEXT_SCHEDULE_DELTA_MS - nowMs);
          }

          if (active.length > 0) status.active = active;
          else delete status.active;
          let cj = cached;
          if (!jsonEqual(cached.status ?? {}, status)) {
            cj = await cjApi(ns).update({ ...structuredClone(cached), status }, { subresource: 'status' });
          }
          await cleanupFinishedJobs(cj, owned);
          return requeueAfter === undefined ? undefined : { requeueAfter };
        },
      });

      /** Deletes finished Jobs beyond the history limits, oldest start first. */
      async function cleanupFinishedJobs(cj: CronJob, owned: readonly Job[]): Promise<void> {
        const finished = owned.filter((j) => isJobFinished(j) && !j.metadata.deletionTimestamp);
        const limits: Array<[Job[], number | undefined]> = [
          [finished.filter((j) => !!conditionOf(j, 'Complete')), cj.spec.successfulJobsHistoryLimit],
          [finished.filter((j) => !!conditionOf(j, 'Failed')), cj.spec.failedJobsHistoryLimit],
        ];
        for (const [list, limit] of limits) {
          if (limit === undefined || list.length <= limit) continue;
          const sorted = [...list].sort(
            (a, b) => startOf(a) - startOf(b) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
          );
          for (const j of sorted.slice(0, list.length - limit)) await deleteJob(cj, j, 'SuccessfulDelete');
        }
      }

      const cronJobOf = (job: Job): CronJob | undefined =>
        resolveControllerRef(controllerOf(job), { group: 'batch', kind: 'CronJob' }, (name) =>
          cronJobs.store.get(`${job.metadata.namespace ?? ''}/${name}`),
        );
      const jobChanged = (job: Job): void => {
        const cj = cronJobOf(job);
        if (cj) controller.enqueue(objectKey(cj));
      };
      controller.watch(cronJobs);
      controller.watch(jobs, () => []);
      jobs.addEventHandler({ onAdd: jobChanged, onUpdate: (_old, cur) => jobChanged(cur), onDelete: jobChanged });
      clock.onJump?.(() => {
        for (const cj of cronJobs.store.list()) controller.enqueue(objectKey(cj));
      });
      return controller;
    },
  };
}

export const cronJobController = makeCronJobController();
