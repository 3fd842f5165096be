import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { naming, useNaming } from '@svc/api';
import { LeaderElector, RestClient, SharedInformerFactory, inClusterConfig, loadSvcconfig, svcconfigPath, type ClientConfig } from '@svc/client';
import { Registry, collectDefaultMetrics } from 'prom-client';
import {
  ClientCertAuthenticator, ComponentMetrics, SubjectAccessReviewAuthorizer, TokenReviewAuthenticator, parseCertificateBundle,
  startSecureServer, type Authenticator, type HealthCheck, type Logger, type SecureServer,
} from '@svc/component-base';
import type { ControllerManagerOptions } from './options.js';
import type { ControllerContext, ControllerDefinition } from './controller-context.js';
import { CONTROLLERS } from './controllers/index.js';

export class ControllerManagerConfigError extends Error {}

export interface RunningControllerManager {
  /** The secure port's server (absent with `--secure-port 0`). */
  server?: SecureServer;
  identity: string;
  isLeader(): boolean;
  /** Resolves when the lease was lost (the process should exit so a supervisor restarts it). */
  lostLease: Promise<void>;
  shutdown(): Promise<void>;
}

/** The svcconfig `file`, or (none given) the in-cluster configuration; `master` overrides the server. */
function clientConfig(file: string | undefined, master: string | undefined, what: string): ClientConfig {
  try {
    const c = file ? loadSvcconfig(file) : inClusterConfig();
    return master ? { ...c, server: master } : c;
  } catch (e) {
    throw new ControllerManagerConfigError(`${what}: ${(e as Error).message}`);
  }
}

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
export async function startControllerManager(o: ControllerManagerOptions, deps: { logger: Logger; controllers?: readonly ControllerDefinition[] }): Promise<RunningControllerManager> {
  useNaming(o.naming);
  const logger = deps.logger;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics = new ComponentMetrics(registry);
  const definitions = (deps.controllers ?? CONTROLLERS).filter((d) => o.controllers.enabled.has(d.name)
    && (d.name !== 'garbage-collector-controller' || o.enableGarbageCollector));
  for (const d of definitions) {
    try {
      await d.preflight?.(o);
    } catch (e) {
      throw new ControllerManagerConfigError(`${d.name}: ${(e as Error).message}`);
    }
  }
  const config = clientConfig(svcconfigPath(o.svcconfig), o.master, '--svcconfig');
  const userAgent = `svc-controller-manager/${process.version}`;
  const client = new RestClient(config, { qps: o.apiQps, burst: o.apiBurst, userAgent, metrics: metrics.client(), contentType: o.apiContentType });
  for (const name of o.controllers.notImplemented) logger.info('controller is enabled but not part of this controller manager; skipping', { controller: name });
  for (const flag of o.ignoredFlags) logger.info('flag has no effect: its controller does not run here', { flag });

  const health = definitions.map((d) => new ControllerHealth(d.name));
  const identity = `${hostname()}_${randomUUID()}`;
  let elector: LeaderElector | undefined;
  const leaderCheck: HealthCheck = {
    name: 'leaderElection',
    // Kubernetes' check: a leader that has not renewed for lease duration + 20 s is unhealthy.
    check: async () => {
      if (elector?.isLeader() && Date.now() - elector.lastRenewed > o.leaseDurationMs + 20_000) throw new Error('the lease has not been renewed in time');
    },
  };

  const server = o.securePort === 0 ? undefined : await startSecureServer({
    bindAddress: o.bindAddress, port: o.securePort, certDir: o.certDir || '/var/run/svc', certBase: 'svc-controller-manager',
    tlsCertFile: o.tlsCertFile, tlsPrivateKeyFile: o.tlsPrivateKeyFile,
    authenticators: await delegatedAuthenticators(o, logger),
    authorizer: new SubjectAccessReviewAuthorizer({
      client: o.authorizationKubeconfig ? new RestClient(clientConfig(o.authorizationKubeconfig, undefined, '--authorization-kubeconfig')) : undefined,
      alwaysAllowPaths: o.authorizationAlwaysAllowPaths,
      authorizedTtlMs: o.authorizationWebhookCacheAuthorizedTtlMs,
      unauthorizedTtlMs: o.authorizationWebhookCacheUnauthorizedTtlMs,
    }),
    healthChecks: () => (o.leaderElect ? [leaderCheck, ...health] : health),
    metrics: registry,
  });
  if (server) logger.info('serving securely', { url: server.url });

  /** Builds and runs the controllers until `signal`; a controller that fails is logged and marked unhealthy. */
  const runControllers = async (signal: AbortSignal): Promise<void> => {
    // Every informer, queue and worker listens on this one signal.
    setMaxListeners(0, signal);
    // As Kubernetes: each start picks a resync period between --min-resync-period and twice it.
    const informers = new SharedInformerFactory(client, { logger, resyncPeriodMs: o.minResyncPeriodMs * (1 + Math.random()) });
    const ctx: ControllerContext = { client, informers, options: o, logger, metrics };
    const built = await Promise.all(definitions.map(async (d) => ({ d, c: await d.build(ctx) })));
    informers.start(signal);
    await Promise.all(built.map(async ({ d, c }, i) => {
      logger.info('starting controller', { controller: d.name });
      try {
        await c.run(signal);
      } catch (e) {
        const h = health[i];
        if (h) h.failure = String(e);
        logger.error('controller stopped with an error', { controller: d.name, error: String(e) });
      }
    }));
    await informers.stopped();
  };

  const stop = new AbortController();
  let resolveLost: () => void = () => undefined;
  const lostLease = new Promise<void>((resolve) => { resolveLost = resolve; });
  let running: Promise<void>;
  if (o.leaderElect) {
    if (o.resourceLock !== 'leases') logger.warn('only the leases resource lock is implemented; using leases', { resourceLock: o.resourceLock });
    metrics.setLeader(o.leaseName, false);
    elector = new LeaderElector({
      client, namespace: o.leaseNamespace, name: o.leaseName, identity,
      leaseDurationMs: o.leaseDurationMs, renewDeadlineMs: o.renewDeadlineMs, retryPeriodMs: o.retryPeriodMs,
      logger,
      onStartedLeading: async (signal) => {
        metrics.setLeader(o.leaseName, true);
        await runControllers(signal);
      },
      onStoppedLeading: () => {
        metrics.setLeader(o.leaseName, false);
        if (!stop.signal.aborted) {
          logger.error('leaderelection lost', { identity });
          resolveLost();
        }
      },
      onNewLeader: (holder) => logger.info('new leader elected', { identity: holder }),
    });
    running = elector.run(stop.signal);
  } else {
    running = runControllers(stop.signal);
  }
  return {
    server, identity,
    isLeader: () => (elector ? elector.isLeader() : true),
    lostLease,
    shutdown: async () => {
      stop.abort();
      await running;
      await server?.close();
      client.close();
    },
  };
}

/** Kubernetes' ConfigMap through which the API server publishes its client CA to delegating components. */
const AUTHENTICATION_INFO = 'extension-apiserver-authentication';

/**
 * Delegated authentication of the secure port: client certificates against `--client-ca-file`
 * (or, unless `--authentication-skip-lookup`, the client CA the API server publishes), bearer
 * tokens through TokenReview with `--authentication-kubeconfig` (without it, tokens are not
 * accepted). A failed lookup stops start-up unless `--authentication-tolerate-lookup-failure`.
 */
async function delegatedAuthenticators(o: ControllerManagerOptions, logger: Logger): Promise<Authenticator[]> {
  const out: Authenticator[] = [];
  let caPem: string | undefined;
  let caSource = o.clientCaFile ?? '';
  if (o.clientCaFile) {
    try {
      caPem = readFileSync(o.clientCaFile, 'utf8');
    } catch (e) {
      throw new ControllerManagerConfigError(`--client-ca-file: ${(e as Error).message}`);
    }
  }
  let reviewer: RestClient | undefined;
  if (o.authenticationKubeconfig) {
    reviewer = new RestClient(clientConfig(o.authenticationKubeconfig, undefined, '--authentication-kubeconfig'));
    if (!caPem && !o.authenticationSkipLookup) {
      caSource = `configmap ${naming().systemNamespace}/${AUTHENTICATION_INFO}`;
      try {
        const r = await reviewer.request('GET', `/api/v1/namespaces/${naming().systemNamespace}/configmaps/${AUTHENTICATION_INFO}`);
        if (r.status === 200) caPem = r.json<{ data?: Record<string, string> }>().data?.['client-ca-file'];
        else if (r.status === 404) logger.warn('the API server publishes no client CA; client certificates are not accepted', { configmap: caSource });
        else throw new Error(`HTTP ${r.status}: ${r.body.toString().slice(0, 200)}`);
      } catch (e) {
        if (!o.authenticationTolerateLookupFailure) {
          throw new ControllerManagerConfigError(`looking up the client CA in ${caSource} failed (--authentication-tolerate-lookup-failure=true continues without it): ${(e as Error).message}`);
        }
        logger.warn('looking up the client CA failed; continuing without it', { configmap: caSource, error: (e as Error).message });
      }
    }
  } else {
    logger.warn('no --authentication-kubeconfig: bearer tokens on the secure port are not accepted');
  }
  if (caPem) out.push(new ClientCertAuthenticator(parseCertificateBundle(caPem, caSource)));
  if (reviewer) out.push(new TokenReviewAuthenticator(reviewer, o.authenticationTokenWebhookCacheTtlMs));
  return out;
}
