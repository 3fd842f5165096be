import { batchKey, isNotFound, type Job, type JobStatus, type Pod } from '@svc/api';
import { NAMESPACE_INDEX, objectKey } from '@svc/client';
import { jsonEqual, labelSelectorFromObject } from '@svc/machinery';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';
import { claimObjects, controllerOf, newControllerRef, recheckOwner, resolveControllerRef } from './controller-ref.js';
import { podForJob } from './job-pod.js';
import { ControllerExpectations } from './expectations.js';
import {
  DEFAULT_POD_FAILURE_BACKOFF_MS,
  MAX_POD_FAILURE_BACKOFF_MS,
  completionIndexOf,
  conditionOf,
  formatIndexes,
  hasTrackingFinalizer,
  isFinishedPod,
  isJobFinished,
  isPodFailed,
  parseIndexes,
  podFailurePolicyAction,
  remainingBackoffMs,
  setCondition,
  type BackoffRecord,
} from './job-util.js';
import {
  failedIndexesFailure,
  failedIndexesOf,
  failureCountAnnotations,
  hasBackoffLimitPerIndex,
  indexesPastBackoff,
  lastFailedPodPerIndex,
} from './job-index-failures.js';
import { matchSuccessPolicy } from './job-success-policy.js';
import { isPodActive, isPodReady } from './pod-util.js';
import { slowStartBatch } from './replica-set.js';
import { nowTime } from './workload-util.js';
import { namespacedApi, ownerScaffold, selectorOrSkip } from './owner-scaffold.js';

const NAME = 'job-controller';
const BURST = 500;

export interface JobControllerOptions {
  /** The clock (epoch ms); Date.now unless a test drives time. */
  now?: () => number;
  /** First delay after a pod failure, doubled per further failure (Kubernetes: 10 s, at most 10 min). */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * `job-controller`: runs each Job's pods to completion as Kubernetes v1.32 does. Pods carry the
 * `job-tracking` finalizer until their end is counted: a finished pod goes first into
 * `status.uncountedTerminatedPods`, then loses the finalizer, then moves into
 * `succeeded`/`failed` (and `completedIndexes`), so nothing is counted twice or lost. Up to
 * `parallelism` pods run (fewer when fewer completions remain); Indexed Jobs run one pod per
 * index with the completion-index annotation, label and `JOB_COMPLETION_INDEX`. New pods wait
 * an exponential back-off after failures. A Job fails (`FailureTarget`, then `Failed` once its
 * pods are gone) past `backoffLimit`, `activeDeadlineSeconds` or a `FailJob` rule of
 * `podFailurePolicy`; it completes (`SuccessCriteriaMet`, then `Complete` with
 * `completionTime`) when enough pods succeeded or a `successPolicy` rule is met (the pods still
 * running are then deleted). Indexed Jobs with `backoffLimitPerIndex` count failures per index
 * (job-index-failures.ts) and fail with `MaxFailedIndexesExceeded` or `FailedIndexes`. `suspend`
 * deletes its active pods.
 */
export function makeJobController(o: JobControllerOptions = {}): ControllerDefinition {
  const now = o.now ?? Date.now;
  const backoff = {
    baseMs: o.backoffBaseMs ?? DEFAULT_POD_FAILURE_BACKOFF_MS,
    maxMs: o.backoffMaxMs ?? MAX_POD_FAILURE_BACKOFF_MS,
  };
  return {
    name: NAME,
    build(ctx) {
      const jobs = informer<Job>(ctx, R.jobs());
      const pods = informer<Pod>(ctx, R.pods());
      const expectations = new ControllerExpectations(now);
      /** Pods whose finalizer this controller removed and whose removal the cache has not shown yet, by pod uid. */
      const finalizerRemoved = new Set<string>();
      const backoffs = new Map<string, BackoffRecord>();
      /** The resourceVersion of each Job's last status write by this controller. */
      const written = new Map<string, { uid: string; rv: number }>();
      const { log, record } = ownerScaffold<Job>(ctx, { name: NAME, apiVersion: 'batch/v1', kind: 'Job' });
      const jobApi = namespacedApi<Job>(ctx, R.jobs());
      const podApi = namespacedApi<Pod>(ctx, R.pods());

      async function removeFinalizer(p: Pod): Promise<void> {
        const i = (p.metadata.finalizers ?? []).indexOf(batchKey('job-tracking'));
        if (i < 0 || finalizerRemoved.has(p.metadata.uid ?? '')) return;
        try {
          await podApi(p.metadata.namespace ?? '').patch(
            p.metadata.name ?? '',
            [
              { op: 'test', path: '/metadata/uid', value: p.metadata.uid },
              { op: 'test', path: `/metadata/finalizers/${i}`, value: batchKey('job-tracking') },
              { op: 'remove', path: `/metadata/finalizers/${i}` },
            ],
            { type: 'json' },
          );
          finalizerRemoved.add(p.metadata.uid ?? '');
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
      }

      async function writeStatus(job: Job, next: JobStatus): Promise<Job> {
        // Zero counts and no conditions are left out, as Kubernetes' omitempty fields are.
        const status: JobStatus = { ...next };
        for (const k of ['active', 'succeeded', 'failed'] as const) if (status[k] === 0) delete status[k];
        if (status.conditions?.length === 0) delete status.conditions;
        if (jsonEqual(job.status ?? {}, status)) return job;
        // The cached resourceVersion guards against a stale cache: a conflict requeues the Job.
        const stored = await jobApi(job.metadata.namespace ?? '').update(
          { ...structuredClone(job), status },
          { subresource: 'status' },
        );
        written.set(objectKey(stored), { uid: stored.metadata.uid ?? '', rv: Number(stored.metadata.resourceVersion) });
        return stored;
      }

      async function deletePods(key: string, job: Job, victims: readonly Pod[]): Promise<void> {
        if (victims.length === 0) return;
        expectations.expectDeletions(key, victims.map(objectKey));
        const results = await Promise.allSettled(
          victims.map(async (p) => {
            try {
              await podApi(job.metadata.namespace ?? '').delete(p.metadata.name ?? '');
              record(job, {
                type: 'Normal',
                reason: 'SuccessfulDelete',
                message: `Deleted pod: ${p.metadata.name ?? ''}`,
              });
            } catch (e) {
              expectations.deletionObserved(key, objectKey(p));
              if (isNotFound(e)) return;
              record(job, { type: 'Warning', reason: 'FailedDelete', message: `Error deleting: ${errorText(e)}` });
              throw e;
            }
          }),
        );
        const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
      }

      async function createPods(key: string, job: Job, newPods: readonly Pod[]): Promise<void> {
        if (newPods.length === 0) return;
        const ns = job.metadata.namespace ?? '';
        expectations.expectCreations(key, newPods.length);
        let next = 0;
        const { successes, error } = await slowStartBatch(newPods.length, 1, async () => {
          const pod = newPods[next++];
          try {
            const created = await podApi(ns).create(pod ?? podForJob(job));
            record(job, {
              type: 'Normal',
              reason: 'SuccessfulCreate',
              message: `Created pod: ${created.metadata.name ?? ''}`,
            });
          } catch (e) {
            record(job, { type: 'Warning', reason: 'FailedCreate', message: `Error creating: ${errorText(e)}` });
            throw e;
          }
        });
        for (let i = successes; i < newPods.length; i++) expectations.creationObserved(key);
        if (error !== undefined) throw error;
      }

      const controller = newController(ctx, {
        name: NAME,
        queueName: 'job',
        workers: ctx.options.concurrentSyncs.job,
        reconcile: async (key) => {
          const cached = jobs.store.get(key);
          if (!cached) {
            expectations.delete(key);
            backoffs.delete(key);
            written.delete(key);
            return undefined;
          }
          // Until the cache shows this controller's last status write, its counts are stale: wait for that event.
          const last = written.get(key);
          if (
            last !== undefined &&
            cached.metadata.uid === last.uid &&
            Number(cached.metadata.resourceVersion) < last.rv
          )
            return undefined;
          const ns = cached.metadata.namespace ?? '';
          const selector = selectorOrSkip(cached.spec.selector, { log, key });
          if (!selector) return undefined;
          const inNs = pods.store.byIndex(NAMESPACE_INDEX, ns);
          if (isJobFinished(cached)) {
            // Only the finalizers of its pods are left to clean up.
            for (const p of inNs)
              if (controllerOf(p)?.uid === cached.metadata.uid && hasTrackingFinalizer(p)) await removeFinalizer(p);
            return undefined;
          }
          const claimed = await claimObjects<Pod>({
            owner: cached,
            ownerRef: newControllerRef(cached, 'batch/v1', 'Job'),
            selector,
            objects: inNs,
            client: podApi(ns),
            canAdopt: recheckOwner(cached, () => jobApi(ns).get(cached.metadata.name ?? '')),
          });
          return sync(key, cached, claimed);
        },
      });

      async function sync(
        key: string,
        cached: Job,
        claimed: readonly Pod[],
      ): Promise<{ requeueAfter: number } | undefined> {
        const nowMs = now();
        let job = cached;
        const spec = job.spec;
        const indexed = spec.completionMode === 'Indexed';
        const completions = spec.completions;
        const status: JobStatus = structuredClone(job.status ?? {});
        const conditions = (status.conditions ??= []);
        const uncounted = {
          succeeded: new Set(status.uncountedTerminatedPods?.succeeded ?? []),
          failed: new Set(status.uncountedTerminatedPods?.failed ?? []),
        };
        const completed = indexed ? parseIndexes(status.completedIndexes, completions ?? 0) : new Set<number>();
        // Counted (or being counted) successes hold their index whatever the status says.
        if (indexed)
          for (const p of claimed) {
            const uid = p.metadata.uid ?? '';
            const counted = !hasTrackingFinalizer(p) || finalizerRemoved.has(uid) || uncounted.succeeded.has(uid);
            const index = completionIndexOf(p, completions ?? 0);
            if (p.status?.phase === 'Succeeded' && counted && index !== undefined) completed.add(index);
          }
        const active = claimed.filter(isPodActive);
        // backoffLimitPerIndex: failed indexes, and the last failed pod of each index awaiting its replacement.
        const perIndex = hasBackoffLimitPerIndex(job);
        const failedIdx = perIndex ? failedIndexesOf(job, claimed) : new Set<number>();
        const pending = claimed.filter((p) => {
          const uid = p.metadata.uid ?? '';
          return hasTrackingFinalizer(p) && !finalizerRemoved.has(uid) && !uncounted.failed.has(uid);
        });
        const busy = new Set(completed);
        for (const p of active) busy.add(completionIndexOf(p, completions ?? 0) ?? -1);
        const wasFinishing = !!conditionOf(job, 'FailureTarget') || !!conditionOf(job, 'SuccessCriteriaMet');
        const lastFailed =
          perIndex && !wasFinishing
            ? lastFailedPodPerIndex(job, { pods: pending, busy, failed: failedIdx })
            : new Map<number, Pod>();
        const awaitingReplacement = new Set([...lastFailed.values()].map((p) => p.metadata.uid ?? ''));
        let uncountedFailures = 0;

        // 1. Newly finished pods (still holding the finalizer) join the uncounted ones.
        let failureMessage: { reason: string; message: string } | undefined;
        const bo = backoffs.get(key) ?? { failuresAfterLastSuccess: 0, lastFailureMs: 0 };
        for (const p of claimed) {
          const uid = p.metadata.uid ?? '';
          if (!hasTrackingFinalizer(p) || finalizerRemoved.has(uid)) continue;
          if (uncounted.succeeded.has(uid) || uncounted.failed.has(uid)) continue;
          if (p.status?.phase === 'Succeeded') {
            const index = indexed ? completionIndexOf(p, completions ?? 0) : undefined;
            // An Indexed Job's duplicate success for an index counts once.
            if (indexed && (index === undefined || completed.has(index))) {
              await removeFinalizer(p);
              continue;
            }
            uncounted.succeeded.add(uid);
            if (index !== undefined) completed.add(index);
            bo.failuresAfterLastSuccess = 0;
          } else if (isPodFailed(p, job)) {
            const decision = spec.podFailurePolicy ? podFailurePolicyAction(job, p) : { action: 'Count' as const };
            if (decision.action === 'FailJob')
              failureMessage ??= { reason: 'PodFailurePolicy', message: decision.message ?? '' };
            // Its replacement inherits its failure count: counted once the replacement exists.
            if (awaitingReplacement.has(uid)) {
              if (decision.action !== 'Ignore') uncountedFailures++;
              continue;
            }
            if (decision.action === 'Ignore') {
              await removeFinalizer(p);
              continue;
            }
            uncounted.failed.add(uid);
            bo.failuresAfterLastSuccess++;
            bo.lastFailureMs = nowMs;
          } else if (wasFinishing && p.metadata.deletionTimestamp) {
            // A finishing Job's deleted pods (even those podReplacementPolicy Failed waits for) lose the
            // finalizer: counted as failed when the Job fails, left uncounted when it succeeded (as Kubernetes).
            if (conditionOf(job, 'FailureTarget')) uncounted.failed.add(uid);
            else await removeFinalizer(p);
          }
        }
        backoffs.set(key, bo);

        const terminating = claimed.filter(
          (p) => !!p.metadata.deletionTimestamp && !isFinishedPod(p) && hasTrackingFinalizer(p),
        );
        const succeeded = (status.succeeded ?? 0) + uncounted.succeeded.size;
        const failed = (status.failed ?? 0) + uncounted.failed.size;

        // 2. Failure and success criteria (Kubernetes 1.32: FailureTarget / SuccessCriteriaMet first).
        const failureTarget = conditionOf(job, 'FailureTarget');
        const successMet = conditionOf(job, 'SuccessCriteriaMet');
        const restartsOnFailure =
          spec.template.spec.restartPolicy === 'OnFailure'
            ? active.reduce(
                (n, p) => n + (p.status?.containerStatuses ?? []).reduce((m, cs) => m + (cs.restartCount ?? 0), 0),
                0,
              )
            : 0;
        if (!failureTarget && !successMet) {
          const backoffLimit = spec.backoffLimit ?? 6;
          if (
            !failureMessage &&
            (failed + uncountedFailures > backoffLimit || (restartsOnFailure > 0 && restartsOnFailure >= backoffLimit))
          )
            failureMessage = { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' };
          const startMs = status.startTime ? Date.parse(status.startTime) : undefined;
          if (
            !failureMessage &&
            spec.activeDeadlineSeconds !== undefined &&
            startMs !== undefined &&
            nowMs - startMs >= spec.activeDeadlineSeconds * 1000
          )
            failureMessage = { reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' };
          if (!failureMessage && perIndex)
            failureMessage = failedIndexesFailure(job, { failed: failedIdx.size, succeeded: completed.size });
          if (failureMessage) {
            setCondition(conditions, { type: 'FailureTarget', status: 'True', ...failureMessage, nowMs });
            record(job, { type: 'Warning', reason: failureMessage.reason, message: failureMessage.message });
          } else {
            const policyMet = indexed
              ? matchSuccessPolicy(spec.successPolicy, { completions: completions ?? 0, succeeded: completed })
              : undefined;
            const done = indexed
              ? completed.size >= (completions ?? 0)
              : completions !== undefined
                ? succeeded >= completions
                : succeeded > 0 && active.length === 0;
            if (policyMet !== undefined)
              setCondition(conditions, {
                type: 'SuccessCriteriaMet',
                status: 'True',
                reason: 'SuccessPolicy',
                message: policyMet,
                nowMs,
              });
            else if (done)
              setCondition(conditions, {
                type: 'SuccessCriteriaMet',
                status: 'True',
                reason: 'CompletionsReached',
                message: 'Reached expected number of succeeded pods',
                nowMs,
              });
          }
        }
        const finishing =
          !!conditionOf({ ...job, status }, 'FailureTarget') || !!conditionOf({ ...job, status }, 'SuccessCriteriaMet');

        // 3. Suspension.
        const wasSuspended = !!conditionOf(job, 'Suspended');
        if (!finishing && spec.suspend) {
          if (
            setCondition(conditions, {
              type: 'Suspended',
              status: 'True',
              reason: 'JobSuspended',
              message: 'Job suspended',
              nowMs,
            })
          )
            record(job, { type: 'Normal', reason: 'Suspended', message: 'Job suspended' });
        } else if (!finishing && wasSuspended) {
          setCondition(conditions, {
            type: 'Suspended',
            status: 'False',
            reason: 'JobResumed',
            message: 'Job resumed',
            nowMs,
          });
          record(job, { type: 'Normal', reason: 'Resumed', message: 'Job resumed' });
          // The active deadline counts from the resumption (as Kubernetes).
          status.startTime = nowTime(nowMs);
        }
        if (!spec.suspend && !status.startTime) status.startTime = nowTime(nowMs);

        // 4. Pods: delete all when finishing or suspended, else create or delete toward the wanted count.
        let requeueAfter: number | undefined;
        const satisfied = expectations.satisfied(key);
        if (finishing || spec.suspend) {
          if (satisfied) await deletePods(key, job, active);
        } else if (satisfied && !cached.metadata.deletionTimestamp) {
          const parallelism = spec.parallelism ?? 1;
          // With podReplacementPolicy Failed, a terminating pod still holds its place.
          const occupying = spec.podReplacementPolicy === 'Failed' ? active.length + terminating.length : active.length;
          if (indexed) {
            const total = completions ?? 0;
            const byIndex = new Map<number, Pod[]>();
            const extra: Pod[] = [];
            for (const p of active) {
              const i = completionIndexOf(p, total);
              if (i === undefined || completed.has(i) || failedIdx.has(i)) extra.push(p);
              else byIndex.set(i, [...(byIndex.get(i) ?? []), p]);
            }
            for (const ps of byIndex.values()) extra.push(...ps.slice(1));
            const busy = new Set(byIndex.keys());
            if (spec.podReplacementPolicy === 'Failed')
              for (const p of terminating) {
                const i = completionIndexOf(p, total);
                if (i !== undefined) busy.add(i);
              }
            const missing: number[] = [];
            for (let i = 0; i < total && missing.length < BURST; i++)
              if (!completed.has(i) && !busy.has(i) && !failedIdx.has(i)) missing.push(i);
            const room = Math.max(0, parallelism - (occupying - extra.length));
            const toCreate = missing.slice(0, room);
            if (extra.length > 0) await deletePods(key, job, extra);
            else if (toCreate.length > 0 && perIndex) {
              // Each index waits out its own back-off; its new pod carries the index's failure counts.
              const { ready, waitMs } = indexesPastBackoff(toCreate, { lastFailed, nowMs, ...backoff });
              if (waitMs > 0) requeueAfter = waitMs;
              const newPods = ready.map((i) => {
                const pod = podForJob(job, i);
                Object.assign((pod.metadata.annotations ??= {}), failureCountAnnotations(job, lastFailed.get(i)));
                return pod;
              });
              await createPods(key, job, newPods);
            } else if (toCreate.length > 0) {
              const wait = remainingBackoffMs(bo, { nowMs, ...backoff });
              if (wait > 0) requeueAfter = wait;
              else
                await createPods(
                  key,
                  job,
                  toCreate.map((i) => podForJob(job, i)),
                );
            }
          } else {
            let want = parallelism;
            if (completions !== undefined) want = Math.min(parallelism, Math.max(0, completions - succeeded));
            else if (succeeded > 0) want = active.length;
            const diff = want - occupying;
            if (diff < 0) {
              const victims = [...active]
                .sort((a, b) => Number(isPodReady(a)) - Number(isPodReady(b)))
                .slice(0, Math.min(-diff, active.length));
              await deletePods(key, job, victims);
            } else if (diff > 0) {
              const wait = remainingBackoffMs(bo, { nowMs, ...backoff });
              if (wait > 0) requeueAfter = wait;
              else
                await createPods(
                  key,
                  job,
                  Array.from({ length: Math.min(diff, BURST) }, () => podForJob(job)),
                );
            }
          }
        }

        // 5. Counts, then the uncounted pods: recorded, finalizers removed, then moved into the counts.
        const counts = {
          active: active.length,
          ready: active.filter(isPodReady).length,
          terminating: terminating.length,
        };
        status.active = counts.active;
        status.ready = counts.ready;
        status.terminating = counts.terminating;
        // An empty list is left out (the server does not keep an empty string).
        if (perIndex && failedIdx.size > 0) status.failedIndexes = formatIndexes(failedIdx);
        status.uncountedTerminatedPods = {
          ...(uncounted.succeeded.size > 0 ? { succeeded: [...uncounted.succeeded].sort() } : {}),
          ...(uncounted.failed.size > 0 ? { failed: [...uncounted.failed].sort() } : {}),
        };
        job = await writeStatus(job, status);
        const toUncount = claimed.filter((p) => {
          const uid = p.metadata.uid ?? '';
          return uncounted.succeeded.has(uid) || uncounted.failed.has(uid);
        });
        for (const p of toUncount) await removeFinalizer(p);
        if (uncounted.succeeded.size + uncounted.failed.size > 0) {
          const moved = structuredClone(job.status ?? {});
          moved.succeeded = succeeded;
          moved.failed = failed;
          if (indexed) moved.completedIndexes = formatIndexes(completed);
          moved.uncountedTerminatedPods = {};
          job = await writeStatus(job, moved);
        }

        // 6. The terminal condition once no pod of the Job runs or terminates any more.
        const after = structuredClone(job.status ?? {});
        const left = active.length - (finishing || spec.suspend ? active.length : 0) + terminating.length;
        const podsGone = claimed.every(
          (p) => !hasTrackingFinalizer(p) || toUncount.includes(p) || finalizerRemoved.has(p.metadata.uid ?? ''),
        );
        if (finishing && left === 0 && podsGone && !isJobFinished(job)) {
          const target = conditionOf(job, 'FailureTarget');
          const conds = (after.conditions ??= []);
          if (target) {
            setCondition(conds, {
              type: 'Failed',
              status: 'True',
              reason: target.reason ?? '',
              message: target.message ?? '',
              nowMs,
            });
          } else {
            // Complete repeats SuccessCriteriaMet's reason and message (CompletionsReached or SuccessPolicy).
            const met = conditionOf(job, 'SuccessCriteriaMet');
            setCondition(conds, {
              type: 'Complete',
              status: 'True',
              reason: met?.reason ?? 'CompletionsReached',
              message: met?.message ?? 'Reached expected number of succeeded pods',
              nowMs,
            });
            after.completionTime = nowTime(nowMs);
            record(job, { type: 'Normal', reason: 'Completed', message: 'Job completed' });
          }
          after.active = 0;
          after.ready = 0;
          after.terminating = 0;
          job = await writeStatus(job, after);
        }

        if (requeueAfter !== undefined) return { requeueAfter };
        // Wake up at the active deadline.
        const startMs = job.status?.startTime ? Date.parse(job.status.startTime) : undefined;
        if (!isJobFinished(job) && !spec.suspend && spec.activeDeadlineSeconds !== undefined && startMs !== undefined) {
          return { requeueAfter: Math.max(0, startMs + spec.activeDeadlineSeconds * 1000 - now()) };
        }
        return undefined;
      }

      const enqueue = (job: Job): void => controller.enqueue(objectKey(job));
      const jobOf = (pod: Pod, ref = controllerOf(pod)): Job | undefined =>
        resolveControllerRef(ref, { group: 'batch', kind: 'Job' }, (name) =>
          jobs.store.get(`${pod.metadata.namespace ?? ''}/${name}`),
        );
      const matchingJobs = (pod: Pod): Job[] =>
        jobs.store.byIndex(NAMESPACE_INDEX, pod.metadata.namespace ?? '').filter((j) => {
          try {
            return labelSelectorFromObject(j.spec.selector).matches(pod.metadata.labels);
          } catch {
            return false;
          }
        });
      /** A pod of a Job that no longer exists keeps no tracking finalizer (Kubernetes removes it from orphans). */
      const releaseOrphan = (pod: Pod): void => {
        const ref = controllerOf(pod);
        if (!hasTrackingFinalizer(pod) || !ref || ref.kind !== 'Job') return;
        if (jobs.store.get(`${pod.metadata.namespace ?? ''}/${ref.name}`)?.metadata.uid === ref.uid) return;
        removeFinalizer(pod).catch((e: unknown) =>
          log.error('removing the finalizer of an orphan pod', { error: errorText(e) }),
        );
      };
      const podChanged = (pod: Pod): void => {
        if (!hasTrackingFinalizer(pod)) finalizerRemoved.delete(pod.metadata.uid ?? '');
        const job = jobOf(pod);
        if (job) return enqueue(job);
        if (!controllerOf(pod)) for (const j of matchingJobs(pod)) enqueue(j);
        else releaseOrphan(pod);
      };

      controller.watch(jobs);
      jobs.addEventHandler({
        onUpdate: (old, cur) => {
          if (old.metadata.uid !== cur.metadata.uid) expectations.delete(objectKey(old));
        },
        onDelete: (job) => {
          expectations.delete(objectKey(job));
          backoffs.delete(objectKey(job));
          written.delete(objectKey(job));
        },
      });
      controller.watch(pods, () => []);
      pods.addEventHandler({
        onAdd: (pod) => {
          const job = jobOf(pod);
          if (job && !pod.metadata.deletionTimestamp) expectations.creationObserved(objectKey(job));
          podChanged(pod);
        },
        onUpdate: (old, cur) => {
          if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
          const job = jobOf(cur);
          if (job && cur.metadata.deletionTimestamp && !old.metadata.deletionTimestamp)
            expectations.deletionObserved(objectKey(job), objectKey(cur));
          podChanged(cur);
        },
        onDelete: (pod) => {
          finalizerRemoved.delete(pod.metadata.uid ?? '');
          const job = jobOf(pod);
          if (!job) return;
          expectations.deletionObserved(objectKey(job), objectKey(pod));
          enqueue(job);
        },
      });
      return controller;
    },
  };
}

export const jobController = makeJobController();
