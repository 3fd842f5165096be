import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { useNaming } from '@svc/api';
import { RestClient, SharedInformerFactory, componentClientConfig, runLeaderElected, svcconfigPath } from '@svc/client';
import { collectDefaultMetrics } from 'prom-client';
import {
  ComponentConfigError,
  ComponentMetrics,
  ComponentRegistry,
  startDelegatedSecureServer,
  type HealthCheck,
  type Logger,
  runningComponent,
  type RunningComponent,
} from '@svc/component-base';
import type { ControllerManagerOptions } from './options.js';
import type { ControllerContext, ControllerDefinition } from './controller-context.js';
import { CONTROLLERS } from './controllers/index.js';
import { ControllerClients } from './service-account-credentials.js';

export class ControllerManagerConfigError extends ComponentConfigError {}

export type RunningControllerManager = RunningComponent;

/** Health of one controller: failing once its loop ended with an error. */
class ControllerHealth implements HealthCheck {
  failure?: string;
  constructor(readonly name: string) {}
  async check(): Promise<void> {
    if (this.failure) throw new Error(this.failure);
  }
}

/**
 * Starts svc-controller-manager: the secure port with `/healthz` and `/metrics`, then
 * (with `--leader-elect`, once it holds the Lease) the enabled controllers over shared
 * informers. Losing the Lease stops every loop and resolves `lostLease`.
 */
export async function startControllerManager(
  o: ControllerManagerOptions,
  deps: { logger: Logger; controllers?: readonly ControllerDefinition[] },
): Promise<RunningControllerManager> {
  useNaming(o.naming);
  const logger = deps.logger;
  for (const warning of o.featureGates.warnings) logger.warn(warning);
  const registry = new ComponentRegistry(o.metrics);
  collectDefaultMetrics({ register: registry });
  const metrics = new ComponentMetrics(registry);
  const definitions = (deps.controllers ?? CONTROLLERS).filter(
    (d) => o.controllers.enabled.has(d.name) && (d.name !== 'garbage-collector-controller' || o.enableGarbageCollector),
  );
  for (const d of definitions) {
    try {
      await d.preflight?.(o);
    } catch (e) {
      throw new ControllerManagerConfigError(`${d.name}: ${(e as Error).message}`);
    }
  }
  const config = componentClientConfig(svcconfigPath(o.svcconfig), { master: o.master, flag: '--svcconfig' });
  const userAgent = `svc-controller-manager/${process.version}`;
  const clientOptions = {
    qps: o.apiQps,
    burst: o.apiBurst,
    userAgent,
    metrics: metrics.client(),
    contentType: o.apiContentType,
  };
  const client = new RestClient(config, clientOptions);
  // As Kubernetes' controller manager: the shared informers and the service-account token
  // requests ("controller-discovery") each have a client and rate limiter of their own, so
  // the informers' first lists and the controllers' first tokens do not queue behind each
  // other (at --kube-api-qps 20 one limiter made the first tokens wait seconds).
  const informerClient = new RestClient(config, { ...clientOptions, userAgent: `${userAgent}/shared-informers` });
  const tokenClient = new RestClient(config, { ...clientOptions, userAgent: `${userAgent}/controller-discovery` });
  const controllerClients = new ControllerClients({
    root: client,
    tokens: tokenClient,
    config,
    options: clientOptions,
    useServiceAccountCredentials: o.useServiceAccountCredentials,
  });
  // As Kubernetes: leader election has a client (and rate limiter) of its own, so the burst of
  // lists and watches the controllers start with cannot hold a lease renewal past its deadline.
  const leaderElectionClient = new RestClient(config, {
    qps: o.apiQps,
    burst: o.apiBurst,
    userAgent: `${userAgent}/leader-election`,
    contentType: o.apiContentType,
  });
  for (const name of o.controllers.notImplemented)
    logger.info('controller is enabled but not part of this controller manager; skipping', { controller: name });
  for (const flag of o.ignoredFlags) logger.info('flag has no effect: its controller does not run here', { flag });

  const health = definitions.map((d) => new ControllerHealth(d.name));
  const identity = `${hostname()}_${randomUUID()}`;
  /** The leader-election check, set once leader election runs (the server starts before it). */
  const leader: { check?: HealthCheck } = {};
  const server = await startDelegatedSecureServer(o, {
    certBase: 'svc-controller-manager',
    logger,
    metrics: registry,
    clientFor: (file, flag) => new RestClient(componentClientConfig(file, { flag })),
    healthChecks: () => (leader.check ? [leader.check, ...health] : health),
  });

  /** Builds and runs the controllers until `signal`; a controller that fails is logged and marked unhealthy. */
  const runControllers = async (signal: AbortSignal): Promise<void> => {
    // Every informer, queue and worker listens on this one signal.
    setMaxListeners(0, signal);
    // As Kubernetes: each start picks a resync period between --min-resync-period and twice it.
    const informers = new SharedInformerFactory(informerClient, {
      logger,
      resyncPeriodMs: o.minResyncPeriodMs * (1 + Math.random()),
    });
    const ctx: ControllerContext = { client, informers, options: o, logger, metrics };
    const built = await Promise.all(
      definitions.map(async (d) => ({ d, c: await d.build({ ...ctx, client: controllerClients.clientFor(d.name) }) })),
    );
    informers.start(signal);
    await Promise.all(
      built.map(async ({ d, c }, i) => {
        logger.info('starting controller', { controller: d.name });
        try {
          await c.run(signal);
        } catch (e) {
          const h = health[i];
          if (h) h.failure = String(e);
          logger.error('controller stopped with an error', { controller: d.name, error: String(e) });
        }
      }),
    );
    await informers.stopped();
  };

  const run = runLeaderElected({
    client: leaderElectionClient,
    settings: o,
    identity,
    logger,
    run: runControllers,
    onLeading: (leading) => metrics.setLeader(o.leaseName, leading),
  });
  leader.check = run.healthCheck;
  return runningComponent({
    server,
    identity,
    metrics: registry,
    run,
    close: () => {
      client.close();
      informerClient.close();
      tokenClient.close();
      controllerClients.close();
      leaderElectionClient.close();
    },
  });
}
