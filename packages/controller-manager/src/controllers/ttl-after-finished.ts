import { isConflict, isNotFound, type Job } from '@svc/api';
import { ResourceClient, objectKey } from '@svc/client';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';
import { REAL_CLOCK, type Clock } from './clock.js';
import { isJobFinished } from './job-util.js';

const NAME = 'ttl-after-finished-controller';

/** When a finished Job may go: its finish time (completionTime, else the Complete/Failed transition) plus the TTL. */
export function expiresAt(job: Job): number | undefined {
  const ttl = job.spec.ttlSecondsAfterFinished;
  if (ttl === undefined || !isJobFinished(job)) return undefined;
  const finished = (job.status?.conditions ?? []).find(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
  const at = Date.parse(job.status?.completionTime ?? finished?.lastTransitionTime ?? '');
  return Number.isNaN(at) ? undefined : at + ttl * 1000;
}

/**
 * `ttl-after-finished-controller`: deletes each finished Job with `ttlSecondsAfterFinished` once
 * that many seconds passed since it finished, as Kubernetes does: foreground propagation (its
 * pods go first), after checking a fresh read still finished and expired, with its
 * resourceVersion as precondition (a Job changed meanwhile is looked at again).
 */
export function makeTtlAfterFinishedController({ clock = REAL_CLOCK }: { clock?: Clock } = {}): ControllerDefinition {
  return {
    name: NAME,
    build(ctx) {
      const jobs = informer<Job>(ctx, R.jobs());
      const log = ctx.logger.with({ controller: NAME });
      const jobApi = (ns: string): ResourceClient<Job> => new ResourceClient<Job>(ctx.client, R.jobs()).namespace(ns);
      const controller = newController(ctx, {
        name: NAME,
        queueName: 'ttl_jobs_to_delete',
        workers: ctx.options.concurrentSyncs['ttl-after-finished'],
        reconcile: async (key) => {
          const cached = jobs.store.get(key);
          if (!cached || cached.metadata.deletionTimestamp) return undefined;
          const cachedExpiry = expiresAt(cached);
          if (cachedExpiry === undefined) return undefined;
          if (cachedExpiry > clock.now()) return { requeueAfter: cachedExpiry - clock.now() };
          const api = jobApi(cached.metadata.namespace ?? '');
          let fresh: Job;
          try {
            fresh = await api.get(cached.metadata.name ?? '');
          } catch (e) {
            if (isNotFound(e)) return undefined;
            throw e;
          }
          const expiry = expiresAt(fresh);
          if (expiry === undefined || fresh.metadata.deletionTimestamp) return undefined;
          if (expiry > clock.now()) return { requeueAfter: expiry - clock.now() };
          log.v(2).info('cleaning up a finished job', { key });
          try {
            await api.delete(fresh.metadata.name ?? '', {
              propagationPolicy: 'Foreground',
              preconditions: { uid: fresh.metadata.uid, resourceVersion: fresh.metadata.resourceVersion },
            });
          } catch (e) {
            if (isNotFound(e)) return undefined;
            if (isConflict(e)) return { requeueAfter: 0 };
            throw e;
          }
          return undefined;
        },
      });
      controller.watch(jobs);
      clock.onJump?.(() => {
        for (const j of jobs.store.list()) if (expiresAt(j) !== undefined) controller.enqueue(objectKey(j));
      });
      return controller;
    },
  };
}

export const ttlAfterFinishedController = makeTtlAfterFinishedController();
