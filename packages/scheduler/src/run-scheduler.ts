import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { useNaming } from '@svc/api';
import {
  EventRecorder,
  RestClient,
  SharedInformerFactory,
  componentClientConfig,
  runLeaderElected,
  svcconfigPath,
} from '@svc/client';
import {
  ComponentMetrics,
  ComponentRegistry,
  logCheck,
  pingCheck,
  startDelegatedSecureServer,
  type HealthCheck,
  type Logger,
  runningComponent,
  type RunningComponent,
} from '@svc/component-base';
import { collectDefaultMetrics } from 'prom-client';
import { SchedulerMetrics } from './metrics.js';
import { DEFAULT_SCHEDULER_NAME, type SchedulerOptions } from './options.js';
import { Scheduler } from './scheduler.js';

export type RunningScheduler = RunningComponent;

/** Test knobs that Kubernetes sets in its configuration file. */
export interface SchedulerTuning {
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * Starts svc-scheduler: the secure port with `/healthz` and `/metrics`, then (with
 * `--leader-elect`, once it holds the Lease) the scheduling loop over fresh informers.
 * Losing the Lease stops the loop and resolves `lostLease`.
 */
export async function startScheduler(
  o: SchedulerOptions,
  deps: { logger: Logger; tuning?: SchedulerTuning },
): Promise<RunningScheduler> {
  useNaming(o.naming);
  const logger = deps.logger;
  for (const warning of o.featureGates.warnings) logger.warn(warning);
  const registry = new ComponentRegistry(o.metrics);
  collectDefaultMetrics({ register: registry });
  const metrics = new ComponentMetrics(registry);
  const schedulerMetrics = new SchedulerMetrics(registry, DEFAULT_SCHEDULER_NAME);
  const config = componentClientConfig(svcconfigPath(o.svcconfig), { master: o.master, flag: '--svcconfig' });
  const client = new RestClient(config, {
    qps: o.apiQps,
    burst: o.apiBurst,
    userAgent: `svc-scheduler/${process.version}`,
    metrics: metrics.client(),
    contentType: o.apiContentType,
  });
  // As Kubernetes: leader election has a client (and rate limiter) of its own, so a burst of
  // scheduling requests cannot hold a lease renewal past its deadline.
  const leaderElectionClient = new RestClient(config, {
    qps: o.apiQps,
    burst: o.apiBurst,
    userAgent: `svc-scheduler/${process.version}/leader-election`,
    contentType: o.apiContentType,
  });
  const identity = `${hostname()}_${randomUUID()}`;
  /** The leader-election check, set once leader election runs (the server starts before it). */
  const leader: { check?: HealthCheck } = {};
  let current: Scheduler | undefined;
  // Kubernetes' sched-handler-sync: the leader's informers have delivered their first lists.
  const handlersSynced: HealthCheck = {
    name: 'sched-handler-sync',
    check: async () => {
      if (current && !current.hasSynced()) throw new Error("the scheduler's informers have not synced");
    },
  };
  const server = await startDelegatedSecureServer(o, {
    certBase: 'svc-scheduler',
    logger,
    metrics: registry,
    clientFor: (file, flag) => new RestClient(componentClientConfig(file, { flag })),
    healthChecks: () => [pingCheck, logCheck, ...(leader.check ? [leader.check] : []), handlersSynced],
  });
  const events = new EventRecorder(client, {
    component: DEFAULT_SCHEDULER_NAME,
    instance: `${DEFAULT_SCHEDULER_NAME}-${hostname()}`,
    logger,
  });

  const run = runLeaderElected({
    client: leaderElectionClient,
    settings: o,
    identity,
    logger,
    onLeading: (leading) => metrics.setLeader(o.leaseName, leading),
    run: async (signal) => {
      // The informers and the loop all listen on this one signal.
      setMaxListeners(0, signal);
      logger.info('starting scheduler', { identity });
      const scheduler = (current = new Scheduler({
        client,
        informers: new SharedInformerFactory(client, { logger }),
        logger,
        metrics: schedulerMetrics,
        events,
        schedulerName: DEFAULT_SCHEDULER_NAME,
        podMaxInUnschedulablePodsDurationMs: o.podMaxInUnschedulablePodsDurationMs,
        ...deps.tuning,
      }));
      try {
        await scheduler.run(signal);
      } finally {
        current = undefined;
      }
    },
  });
  leader.check = run.healthCheck;
  return runningComponent({
    server,
    identity,
    metrics: registry,
    run,
    close: () => {
      client.close();
      leaderElectionClient.close();
    },
  });
}
