import { setMaxListeners } from 'node:events';
import { builtinResources, Catalog, group, naming, useNaming } from '@svc/api';
import { isEnabled, sleep } from '@svc/machinery';
import { createLogger, ShutdownCheck, type Logger, type ServingCert } from '@svc/component-base';
import type { ApiServerOptions } from '../options.js';
import type { Authentication } from '../authn/build.js';
import type { Authorization } from '../authz/rbac/setup.js';
import { serveResource } from '../endpoints/resource-router.js';
import { ApiServerMetrics } from '../metrics/metrics.js';
import { resourcePrefix } from '../registry/keys.js';
import type { Handler } from './filters/chain.js';
import { buildHandlerChain } from './handler-chain.js';
import { buildAuditor } from '../audit/build.js';
import type { Auditor } from '../audit/request-audit.js';
import { healthChecks } from './health.js';
import { nonResourceHandler } from './non-resource.js';
import { postStartHooks, type PostStart } from './post-start.js';
import { listen, servingCertificate, ServingAddress } from './serve.js';
import { expressEdge } from './express-edge.js';
import { profilingEndpoints, type ProfilingHandler } from './profiling.js';
import { serveDebugSocket } from './debug-socket.js';
import { buildStorage, storedTypes, type BuiltStorage } from './storage.js';
import { encryptionAtRest, type EncryptionAtRest } from './encryption.js';
import { Stores } from './stores.js';
import { resourceRouter } from './resources.js';
import { admissionChain, buildAuthenticationStep, buildAuthorizationStep } from './security.js';
import type { Startup } from './startup.js';
import { SvcletClient } from './svclet-client.js';
import { CrdController } from '../apiextensions/crd-controller.js';
import { customResourceStrategy } from '../apiextensions/custom-resource-strategy.js';
import { strategyFor } from '../registry/strategies/index.js';
import { serviceAllocation } from '../registry/service-ranges.js';
import { setAllowPrivileged } from '../registry/strategies/capabilities.js';
import { startApiServerControllers, type ApiServerControllerHooks } from './apiserver-controllers.js';
import { FlowControl } from '../flowcontrol/flow-control.js';

export interface RunningApiServer {
  /** `https://<host>:<port>` reachable from this machine. */
  url: string;
  port: number;
  /** PEM of the CA that signed the serving certificate. */
  caPem: string;
  metrics: ApiServerMetrics;
  catalog: Catalog;
  /** Resolves once every post-start hook has finished (system namespaces exist). */
  started: Promise<void>;
  /** Graceful stop: readyz fails, serving goes on for the shutdown delay, in-flight requests finish. */
  shutdown(): Promise<void>;
}

interface Deps {
  logger?: Logger;
  /** Test hooks of the identity Lease and the `svc` Service's endpoints. */
  controllers?: ApiServerControllerHooks;
}

/**
 * Starts the API server: the storage stack and the stores (idle until started), then
 * security, admission and the handler chain from the flags and files; then storage starts,
 * the listener binds and the post-start hooks run. A bad configuration file rejects (the
 * binary exits 2) before anything talks to etcd or listens.
 */
export async function startApiServer(opts: ApiServerOptions, deps: Deps = {}): Promise<RunningApiServer> {
  useNaming(opts.naming);
  setAllowPrivileged(opts.allowPrivileged);
  const s = startup(opts, deps);
  const encryption = await orAbort(s, () =>
    encryptionAtRest(opts, { log: s.log, metrics: s.metrics, signal: s.stopping.signal }),
  );
  const redis = opts.storeServersOverrides.some((o) => o.kind === 'redis')
    ? (await import('../storage/redis/redis-storage.js')).RedisStorage
    : undefined;
  const storage = buildStorage(opts, {
    catalog: s.catalog,
    metrics: s.metrics,
    log: s.log,
    signal: s.stopping.signal,
    transformers: encryption?.transformers,
    redis,
  });
  const stores = new Stores({
    storage: storage.storage,
    storePrefix: opts.storePrefix,
    eventTtlSeconds: Math.floor(opts.eventTtlMs / 1000),
    deleteCollectionWorkers: opts.deleteCollectionWorkers,
    enableGarbageCollector: opts.enableGarbageCollector,
    serviceAllocation: serviceAllocation(opts, storage.storage),
    strategyFor: (r) =>
      r.custom
        ? customResourceStrategy(r, { ratcheting: opts.featureGates.enabled('CRDValidationRatcheting') })
        : strategyFor(r),
  });
  const served = await orStop(s, storage, () => buildServed(s, { storage, stores, encryption }));
  const debugSocket = opts.serving.debugSocketPath
    ? await orStop(s, storage, () =>
        serveDebugSocket(
          opts.serving.debugSocketPath as string,
          profilingEndpoints({ contention: opts.serving.contentionProfiling, cmdline: true }),
        ),
      )
    : undefined;
  storage.start();
  const listener = await orStop(s, storage, () =>
    listen(opts, { tls: served.tls, handler: expressEdge(served.chain), log: s.log }),
  );
  s.address.bound(listener.port);
  s.log.info('serving securely', { address: `${opts.bindAddress}:${listener.port}` });
  const started = Promise.all([served.postStart.run(), served.flowControl.start(s.stopping.signal)]).then(() =>
    listener.addAcceptHandles(),
  );
  encryption?.startReloading();
  const stopCounting = pollObjectCounts(s, { storage, started, flowControl: served.flowControl });
  const controllers = startApiServerControllers(s, {
    stores,
    storage,
    port: listener.port,
    started,
    hooks: deps.controllers,
  });
  const stop = async (): Promise<void> => {
    await controllers.stop(); // out of the svc Service's endpoints before anything stops
    s.stopping.abort(); // ends open watches, compaction, the post-start retries and reloads
    stopCounting();
    served.svclet.close();
    await listener.close();
    await debugSocket?.close();
    await served.audit?.shutdown(); // every event taken is written or counted as lost
    await started.catch(() => undefined);
    await storage.storage.close();
  };
  return {
    url: `https://${listener.host}:${listener.port}`,
    port: listener.port,
    caPem: served.tls.caPem,
    metrics: s.metrics,
    catalog: s.catalog,
    started,
    shutdown: gracefulShutdown(s, { check: served.shutdownCheck, stop }),
  };
}

/** `step`'s result; when it fails, the background work (KMS probes) stops first. */
async function orAbort<T>(s: Startup, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (e) {
    s.stopping.abort();
    throw e;
  }
}

/** `step`'s result; when it fails, the background work stops and storage closes first. */
async function orStop<T>(s: Startup, storage: BuiltStorage, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (e) {
    s.stopping.abort();
    await storage.storage.close().catch(() => undefined);
    throw e;
  }
}

function startup(opts: ApiServerOptions, deps: Deps): Startup {
  const log =
    deps.logger ??
    createLogger({ format: opts.loggingFormat, verbosity: opts.verbosity }, { component: naming().apiserverName });
  for (const warning of opts.featureGates.warnings) log.warn(warning);
  const stopping = new AbortController();
  // Every open watch listens for the server stopping.
  setMaxListeners(0, stopping.signal);
  return {
    opts,
    log,
    startedAt: Date.now(),
    metrics: new ApiServerMetrics(opts.metrics),
    catalog: servedCatalog(opts),
    address: new ServingAddress(opts),
    stopping,
  };
}

/** What serves requests, built before anything runs. */
interface Served {
  tls: ServingCert;
  chain: ReturnType<typeof buildHandlerChain>;
  postStart: PostStart;
  shutdownCheck: ShutdownCheck;
  svclet: SvcletClient;
  audit?: Auditor;
  /** Priority and fairness's configuration (its filter runs only with `--enable-priority-and-fairness`). */
  flowControl: FlowControl;
}

/** Security and admission from the flags and files, the routers and the handler chain over them. */
async function buildServed(
  s: Startup,
  d: { storage: BuiltStorage; stores: Stores; encryption?: EncryptionAtRest },
): Promise<Served> {
  const { opts, catalog } = s;
  const { stores } = d;
  // The serving certificate (made in --cert-dir when missing) is made while the authenticators
  // are built: key generation waits on the thread pool either way.
  const tls = servingCertificate(opts);
  tls.catch(() => undefined); // awaited below; a failure building security first must not go unhandled
  const authentication = await buildAuthenticationStep(s, stores);
  const authorization = buildAuthorizationStep(s, stores);
  stores.admitWith(admissionChain(s, authorization, stores));
  const crds = crdController(s, d);
  const postStart = postStartHooks({
    opts,
    catalog,
    stores,
    authorization,
    crds,
    log: s.log,
    signal: s.stopping.signal,
  });
  const shutdownCheck = new ShutdownCheck();
  // The configuration objects are kept whether or not the filter runs (as Kubernetes does).
  const flowControl = new FlowControl({
    catalog,
    storeFor: (r) => stores.storeFor(r),
    log: s.log,
    registry: s.metrics.registry,
    serverSeats: opts.maxRequestsInflight + opts.maxMutatingRequestsInflight,
    watchList: opts.featureGates.enabled('WatchList'),
    consistentListFromCache: opts.watchCache && opts.featureGates.enabled('ConsistentListFromCache'),
  });
  const health = healthChecks({
    opts,
    storage: d.storage,
    hooks: [...postStart.hooks, ...flowControl.hooks, ...(d.encryption?.hooks ?? [])],
    shutdown: shutdownCheck,
    startedAt: s.startedAt,
    notLivez: d.encryption?.healthChecks,
    healthzOnly: d.encryption?.healthzChecks,
  });
  const svclet = new SvcletClient(opts.svclet);
  const resources = resourceRouter(s, { stores, authentication, authorization, svclet });
  const nonResource = nonResourceHandler({
    catalog,
    metrics: s.metrics,
    health,
    documents: authentication.documents,
    address: s.address,
    profiling: profilingOf(opts),
  });
  const dispatch: Handler = (r) => (r.info.isResourceRequest ? serveResource(resources, r) : nonResource(r));
  const audit = buildAuditor(opts.audit, { registry: s.metrics.registry, log: s.log });
  const chain = buildChain(s, {
    authentication,
    authorization,
    dispatch,
    audit,
    flowControl: opts.enablePriorityAndFairness ? flowControl : undefined,
  });
  return { tls: await tls, chain, postStart, shutdownCheck, svclet, audit, flowControl };
}

/** The apiextensions controllers over the CRD store; a deleted CRD's watch cache and stores go with it. */
function crdController(s: Startup, d: { storage: BuiltStorage; stores: Stores }): CrdController {
  const crdType = s.catalog.lookup(group('apiextensions'), 'v1', 'customresourcedefinitions');
  return new CrdController({
    catalog: s.catalog,
    crds: () => {
      if (!crdType) throw new Error('customresourcedefinitions are not served');
      return d.stores.storeFor(crdType);
    },
    storeFor: (r) => d.stores.storeFor(r),
    onReplaced: (r) => d.stores.forget(r),
    onRemoved: (r) => d.storage.cache?.stop(resourcePrefix(s.opts.storePrefix, r)),
    log: s.log,
  });
}

/** Graceful stop, once: readyz fails at once, serving goes on for `--shutdown-delay-duration`, then `stop`. */
function gracefulShutdown(s: Startup, o: { check: ShutdownCheck; stop: () => Promise<void> }): () => Promise<void> {
  let shuttingDown: Promise<void> | undefined;
  return () => {
    shuttingDown ??= (async () => {
      o.check.begin();
      s.log.info('shutdown requested; readyz now fails', { delay: s.opts.shutdownDelayDurationMs });
      await sleep(s.opts.shutdownDelayDurationMs);
      await o.stop();
      s.log.info('shutdown complete');
    })();
    return shuttingDown;
  };
}

/** The built-in types `--runtime-config` serves. */
function servedCatalog(opts: ApiServerOptions): Catalog {
  const c = new Catalog();
  for (const r of builtinResources()) {
    if (isEnabled(opts.runtimeConfig, { group: r.group, version: r.version, resource: r.plural, defaultEnabled: true }))
      c.add(r);
  }
  return c;
}

/** The handler chain over `dispatch` (see handler-chain.ts for the stages). */
function buildChain(
  s: Startup,
  d: {
    authentication: Authentication;
    authorization: Authorization;
    dispatch: Handler;
    audit?: Auditor;
    flowControl?: FlowControl;
  },
): ReturnType<typeof buildHandlerChain> {
  return buildHandlerChain({
    log: s.log,
    metrics: s.metrics,
    requestTimeoutMs: s.opts.requestTimeoutMs,
    authenticator: d.authentication.authenticator,
    authorizer: d.authorization.authorizer,
    inFlight: { readonly: s.opts.maxRequestsInflight, mutating: s.opts.maxMutatingRequestsInflight },
    flowControl: d.flowControl,
    corsAllowedOrigins: s.opts.serving.corsAllowedOrigins,
    goawayChance: s.opts.serving.goawayChance,
    audit: d.audit,
    handler: d.dispatch,
  });
}

/** `--profiling`: the `/debug/pprof/` endpoints on the secure port (`--contention-profiling` samples finer). */
function profilingOf(opts: ApiServerOptions): ProfilingHandler | undefined {
  return opts.serving.profiling ? profilingEndpoints({ contention: opts.serving.contentionProfiling }) : undefined;
}

/**
 * `apiserver_storage_objects`, every `--store-count-metric-poll-period` once started, and the
 * same counts for priority and fairness's work estimator; returns the stop.
 */
function pollObjectCounts(
  s: Startup,
  o: { storage: BuiltStorage; started: Promise<void>; flowControl: FlowControl },
): () => void {
  const { storage, started } = o;
  const poll = async (): Promise<void> => {
    for (const r of storedTypes(s.catalog)) {
      const label = r.group ? `${r.plural}.${r.group}` : r.plural;
      let count = -1;
      try {
        count = await storage.storage.count(resourcePrefix(s.opts.storePrefix, r));
      } catch {
        // -1: the metric says the count failed; the estimator keeps the last one until it is stale
      }
      s.metrics.storageObjects.set({ resource: label }, count);
      o.flowControl.objectCounts.set(label, count);
    }
  };
  const period = s.opts.storeCountMetricPollPeriodMs;
  const timer = period > 0 ? setInterval(() => void poll(), period) : undefined;
  timer?.unref();
  void started.then(poll);
  return () => clearInterval(timer);
}
