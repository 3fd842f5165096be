import { setMaxListeners } from 'node:events';
import { createServer, type Server } from 'node:https';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { AddressInfo, Socket } from 'node:net';
import express, { type Request, type Response, type NextFunction } from 'express';
import {
  builtinResources,
  Catalog,
  isAlreadyExists,
  isNotFound,
  naming,
  statusError,
  systemNamespaces,
  useNaming,
  forbidden,
  unauthorized,
  tooManyRequests,
  type ApiObject,
  type ResourceType,
} from '@svc/api';
import { isEnabled } from '@svc/machinery';
import type { ApiServerOptions } from '../options.js';
import { AUTHENTICATION_INFO_CONFIGMAP, authenticationInfoData } from './authentication-info.js';
import {
  createLogger,
  type Logger,
  AuthenticationFailed,
  ensureServingCert,
  type ServingCert,
  healthHandler,
  logCheck,
  pingCheck,
  PostStartHook,
  ShutdownCheck,
  storeCheck,
  withGracePeriod,
  type HealthCheck,
} from '@svc/component-base';
import { Etcd3Storage } from '../storage/etcd3/etcd3-storage.js';
import type { Storage } from '../storage/interface.js';
import { CachedStorage } from '../storage/cacher/cached-storage.js';
import { runCompactor } from '../storage/compactor.js';
import { handleWatch, type WatchSettings } from '../endpoints/handlers/watch.js';
import type { HandlerScope } from '../endpoints/handlers/scope.js';
import { InstrumentedStorage } from '../metrics/instrumented-storage.js';
import { ApiServerMetrics, metricVerb } from '../metrics/metrics.js';
import { GenericStore, type RequestContext } from '../registry/store.js';
import { strategyFor } from '../registry/strategies/index.js';
import { ConvertingStorage } from '../storage/converting-storage.js';
import { resourcePrefix } from '../registry/keys.js';
import { Admission } from '../admission/admission.js';
import { NamespaceLifecycle } from '../admission/namespace-lifecycle.js';
import { buildAuthentication } from '../authn/build.js';
import type { ObjectGetter } from '../authn/object-getter.js';
import type { UserInfo } from '@svc/component-base';
import { forbiddenMessage } from '../authz/authorizer.js';
import { impersonate } from '../authz/impersonation.js';
import { accessReviewHandlers, buildAuthorization } from '../authz/rbac/setup.js';
import { RbacEscalation } from '../admission/rbac-escalation.js';
import { NodeRestriction } from '../admission/node-restriction.js';
import { CertificateApproval, CertificateSigning } from '../admission/certificate-signers.js';
import { DefaultTolerationSeconds } from '../admission/default-toleration-seconds.js';
import { parseRequestInfo, type RequestInfo } from '../endpoints/request-info.js';
import { serveResource, type ConnectHandler } from '../endpoints/resource-router.js';
import { createOnlyKey } from '../endpoints/create-only.js';
import { servePodLog } from '../endpoints/handlers/pod-log.js';
import { podBindingHandlers } from '../registry/pod-binding.js';
import { SvcletClient } from './svclet-client.js';
import { sendError } from '../endpoints/handlers/respond.js';
import {
  aggregatedDiscovery,
  apiGroupDoc,
  apiGroupList,
  apiResourceList,
  apiVersions,
} from '../endpoints/discovery.js';
import { parseAccept } from '../endpoints/media-types.js';
import { openApiV2Answer, openApiV3Document, openApiV3Root } from '../endpoints/openapi.js';
import { versionInfo } from './version.js';

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
}

/** Wraps a handler so thrown errors become Status answers. */
function route(f: (req: Request, res: Response) => Promise<void> | void) {
  return (req: Request, res: Response): void => {
    Promise.resolve()
      .then(() => f(req, res))
      .catch((e: unknown) => sendError(res, e));
  };
}

function servedCatalog(opts: ApiServerOptions): Catalog {
  const c = new Catalog();
  for (const r of builtinResources()) {
    if (isEnabled(opts.runtimeConfig, { group: r.group, version: r.version, resource: r.plural, defaultEnabled: true }))
      c.add(r);
  }
  return c;
}

const MUTATING = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export async function startApiServer(opts: ApiServerOptions, deps: Deps = {}): Promise<RunningApiServer> {
  useNaming(opts.naming);
  const log =
    deps.logger ??
    createLogger({ format: opts.loggingFormat, verbosity: opts.verbosity }, { component: naming().apiserverName });
  const startedAt = Date.now();
  const metrics = new ApiServerMetrics();
  const catalog = servedCatalog(opts);
  const svclet = new SvcletClient(opts.svclet);
  const stopping = new AbortController();
  // Every open watch listens for the server stopping.
  setMaxListeners(0, stopping.signal);
  const getObject: ObjectGetter = (ref, o = {}) =>
    readCachedFirst(catalog.lookup('', 'v1', ref.resource), ref.namespace, ref.name, o.fresh);
  const authentication = await buildAuthentication(
    opts,
    {
      getObject,
      logger: log,
      signal: stopping.signal,
      externalUrl: () => `https://${opts.advertiseAddress ?? host}:${port}`,
      metrics: { recordReload: (status, at) => metrics.recordAuthenticationConfigReload(status, at) },
    },
    (g, v, p) => catalog.lookup(g, v, p),
  );

  const etcd = new Etcd3Storage({
    endpoints: opts.storeServers,
    tls:
      opts.storeCaFile || opts.storeCertFile
        ? { caFile: opts.storeCaFile, certFile: opts.storeCertFile, keyFile: opts.storeKeyFile }
        : undefined,
    leaseReuseDurationSeconds: opts.leaseReuseDurationSeconds,
  });
  const instrumented = new InstrumentedStorage(etcd, metrics, opts.storePrefix);
  const cached = new CachedStorage(instrumented, {
    storePrefix: opts.storePrefix,
    consistentListFromCache: opts.featureGates.enabled('ConsistentListFromCache'),
    cacher: {
      onError: (e) => log.warn('watch cache: store watch failed; restarting', { error: (e as Error).message }),
    },
  });
  const storage: Storage = opts.watchCache ? cached : instrumented;
  // Types stored as another type (events/v1 Events) are served from that type's cache.
  if (opts.watchCache)
    cached.start(
      catalog
        .all()
        .filter((r) => !r.virtual && !r.storedAs)
        .map((r) => resourcePrefix(opts.storePrefix, r)),
    );
  runCompactor(
    etcd,
    opts.storeCompactionIntervalMs,
    stopping.signal,
    (e) => log.warn('compaction failed', { error: (e as Error).message }),
    (rev, seconds) => {
      metrics.etcdRequestDuration.observe({ operation: 'compact', type: 'compact' }, seconds);
      log.v(2).info('compacted the store', { revision: rev });
    },
  );

  const stores = new Map<ResourceType, GenericStore>();
  const namespaceType = catalog.lookup('', 'v1', 'namespaces');
  const podType = catalog.lookup('', 'v1', 'pods');
  const nodeType = catalog.lookup('', 'v1', 'nodes');
  // Like Kubernetes' listers: the cached object first (resourceVersion 0), a live read only
  // when the cache does not have it (it may have just been created) or `fresh` is asked.
  async function readCachedFirst(
    r: ResourceType | undefined,
    namespace: string,
    name: string,
    fresh = false,
  ): Promise<ApiObject | undefined> {
    if (!r) return undefined;
    for (const rv of fresh ? [undefined] : ['0', undefined]) {
      try {
        return await storeFor(r).get(namespace, name, rv);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    return undefined;
  }
  const getNamespace = (name: string): Promise<ApiObject | undefined> => readCachedFirst(namespaceType, '', name);
  // A bad authorization file ends start-up (exit 2) before anything runs.
  const authorization = buildAuthorizationOrStop(opts.authorizationMode, {
    lookup: (g, v, p) => catalog.lookup(g, v, p),
    storeFor,
    logger: log,
    settings: {
      configFile: opts.authorizationConfig,
      policyFile: opts.authorizationPolicyFile,
      webhook:
        opts.authorizationWebhookConfigFile === undefined
          ? undefined
          : {
              configFile: opts.authorizationWebhookConfigFile,
              version: opts.authorizationWebhookVersion,
              authorizedTtlMs: opts.authorizationWebhookCacheAuthorizedTtlMs,
              unauthorizedTtlMs: opts.authorizationWebhookCacheUnauthorizedTtlMs,
            },
      recordDecision: (labels) => metrics.authorizationDecisions.inc(labels),
    },
  });
  const authz = authorization.authorizer;
  const admission = new Admission([
    new NamespaceLifecycle(getNamespace),
    ...(authorization.node ? [new NodeRestriction()] : []),
    ...(authorization.rbac ? [new RbacEscalation(authz, authorization.rbac)] : []),
    new CertificateApproval(authz),
    new CertificateSigning(authz),
    new DefaultTolerationSeconds({
      notReady: opts.defaultNotReadyTolerationSeconds,
      unreachable: opts.defaultUnreachableTolerationSeconds,
    }),
  ]);
  function buildAuthorizationOrStop(
    ...a: Parameters<typeof buildAuthorization>
  ): ReturnType<typeof buildAuthorization> {
    try {
      return buildAuthorization(...a);
    } catch (e) {
      stopping.abort();
      etcd.close().catch(() => undefined);
      throw e;
    }
  }
  function storeFor(r: ResourceType): GenericStore {
    let s = stores.get(r);
    if (!s) {
      const stored = r.storedAs ?? r;
      s = new GenericStore({
        resource: r,
        storePrefix: opts.storePrefix,
        strategy: strategyFor(r),
        admission,
        storage: r.storedAs
          ? new ConvertingStorage(storage, {
              servedPrefix: resourcePrefix(opts.storePrefix, r),
              storedPrefix: resourcePrefix(opts.storePrefix, r.storedAs),
              toStored: r.storedAs.toStored,
              fromStored: r.storedAs.fromStored,
            })
          : storage,
        // As Kubernetes: Events (of either API) expire `--event-ttl` (whole seconds) after their last write.
        ttlSeconds:
          stored.group === '' && stored.plural === 'events'
            ? Math.floor(opts.eventTtlMs / 1000) || undefined
            : undefined,
      });
      stores.set(r, s);
    }
    return s;
  }

  const authn = authentication.authenticator;

  // Health checks.
  const bootstrapHook = new PostStartHook('bootstrap-controller');
  const startInformersHook = new PostStartHook('generic-apiserver-start-informers');
  startInformersHook.done();
  const rbacHook = new PostStartHook('rbac/bootstrap-roles');
  const authInfoHook = new PostStartHook('start-cluster-authentication-info-controller');
  const hooks = [startInformersHook, bootstrapHook, rbacHook, authInfoHook];
  const shutdownCheck = new ShutdownCheck();
  const store = (timeoutMs: number): HealthCheck => storeCheck('store', () => storage.healthCheck(timeoutMs));
  const livez = (): HealthCheck[] => [
    pingCheck,
    logCheck,
    store(opts.storeHealthcheckTimeoutMs),
    ...hooks.map((h) => withGracePeriod(h, startedAt, opts.livezGracePeriodMs)),
  ];
  const watchCache: HealthCheck = {
    name: 'watch-cache',
    check: async () => {
      if (!cached.synced) throw new Error('watch cache not synced');
    },
  };
  const readyz = (): HealthCheck[] => [
    pingCheck,
    logCheck,
    store(opts.storeReadycheckTimeoutMs),
    ...(opts.watchCache ? [watchCache] : []),
    ...hooks,
    shutdownCheck,
  ];
  const healthz = (): HealthCheck[] => [pingCheck, logCheck, store(opts.storeHealthcheckTimeoutMs), ...hooks];

  // TLS.
  let tls: ServingCert;
  if (opts.tlsCertFile && opts.tlsPrivateKeyFile) {
    const certPem = readFileSync(opts.tlsCertFile, 'utf8');
    tls = { certPem, keyPem: readFileSync(opts.tlsPrivateKeyFile, 'utf8'), caPem: certPem };
  } else {
    const hosts = ['localhost', '127.0.0.1', hostname()];
    if (opts.advertiseAddress) hosts.push(opts.advertiseAddress);
    if (opts.bindAddress !== '0.0.0.0' && opts.bindAddress !== '::') hosts.push(opts.bindAddress);
    tls = await ensureServingCert(opts.certDir, hosts);
  }

  const watchSettings: WatchSettings = {
    minRequestTimeoutSeconds: opts.minRequestTimeoutSeconds,
    watchListEnabled: opts.featureGates.enabled('WatchList'),
    stopping: stopping.signal,
  };

  const resources = {
    catalog,
    storeFor,
    extraHandlers: { watch: (scope: HandlerScope) => handleWatch(scope, watchSettings) },
    createOnly: new Map([
      ...authentication.createOnly,
      ...accessReviewHandlers((g, v, p) => catalog.lookup(g, v, p), authz, authorization.rules),
      ...(podType
        ? podBindingHandlers({
            pod: podType,
            binding: catalog.lookup('', 'v1', 'bindings'),
            pods: () => storeFor(podType),
          })
        : []),
    ]),
    responseCompression: opts.featureGates.enabled('APIResponseCompression'),
    connect: new Map<string, ConnectHandler>(
      podType && nodeType
        ? [
            [
              createOnlyKey(podType, 'log'),
              (_req, res, info) =>
                servePodLog(
                  {
                    pods: () => storeFor(podType),
                    nodes: () => storeFor(nodeType),
                    svclet,
                  },
                  res,
                  info,
                ),
            ],
          ]
        : [],
    ),
  };

  let inflight = 0;
  let inflightMutating = 0;

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');

  // Request info, authentication, authorization, max in-flight, metrics: one chain for every request.
  app.use((req: Request, res: Response, next: NextFunction) => {
    const query = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
    const info = parseRequestInfo(req.method, req.originalUrl, query);
    res.locals.info = info;
    const end = metrics.requestDuration.startTimer();
    const mutating = MUTATING.has(info.verb);
    // As Kubernetes: watches and log streams are long-running (no in-flight limit).
    const longRunning = info.verb === 'watch' || info.subresource === 'log';
    let counted = false;
    if (!longRunning) {
      const limit = mutating ? opts.maxMutatingRequestsInflight : opts.maxRequestsInflight;
      const current = mutating ? inflightMutating : inflight;
      if (limit > 0 && current >= limit) {
        sendError(res, tooManyRequests('Too many requests, please try again later.', 1));
        res.setHeader('Retry-After', '1');
        return;
      }
      if (mutating) inflightMutating++;
      else inflight++;
      counted = true;
    }
    res.on('close', () => {
      if (counted) {
        if (mutating) inflightMutating--;
        else inflight--;
      }
      if (!info.isResourceRequest) return;
      const scope = info.name ? 'resource' : info.namespace ? 'namespace' : 'cluster';
      const labels = {
        verb: metricVerb(info.verb, req.method),
        dry_run: res.locals.dryRun ? 'All' : '',
        group: info.apiGroup,
        version: info.apiVersion,
        resource: info.resource,
        subresource: info.subresource,
        scope,
        component: 'apiserver',
      };
      metrics.requestTotal.inc({ ...labels, code: String(res.statusCode) });
      end(labels);
    });
    authn
      .authenticate(req)
      .then(async (authenticated) => {
        const user = await impersonate(req, authenticated, authz);
        res.locals.user = user;
        const decision = await authz.authorize({ user, ...info });
        if (decision.decision !== 'allow' && !user.groups.includes('system:masters')) {
          throw statusErrorForbidden(info, user, decision.reason);
        }
        if (!info.isResourceRequest) {
          next();
          return;
        }
        // Resource requests go straight to their handler (no walk through the route list).
        const ctx: RequestContext = { user };
        await serveResource(resources, req, res, info, ctx);
        res.locals.dryRun = ctx.dryRun;
      })
      .catch((e: unknown) => {
        if (e instanceof AuthenticationFailed) sendError(res, unauthorized());
        else sendError(res, e);
      });
  });

  const health = (endpoint: string, checks: () => readonly HealthCheck[]): void => {
    const h = healthHandler(checks);
    app.get(
      `/${endpoint}`,
      route((req, res) => h(req, res)),
    );
    app.get(
      `/${endpoint}/*check`,
      route((req, res) => h(req, res, (req.params as { check: string[] }).check.join('/'))),
    );
  };
  health('livez', livez);
  health('readyz', readyz);
  health('healthz', healthz);

  app.get(
    '/version',
    route((_req, res) => {
      res.json(versionInfo());
    }),
  );
  for (const d of authentication.documents)
    app.get(
      d.path,
      route((_req, res) => {
        res.type(d.contentType).send(d.body());
      }),
    );
  app.get(
    '/metrics',
    route(async (_req, res) => {
      res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    }),
  );

  const discovery = (core: boolean) =>
    route((req, res) => {
      const wanted = parseAccept(req.headers.accept)[0];
      const ag =
        wanted?.params.as === 'APIGroupDiscoveryList' &&
        wanted.params.v === 'v2' &&
        /^apidiscovery\.(svc\.io|k8s\.io)$/.test(wanted.params.g ?? '');
      if (ag) {
        const g = wanted.params.g ?? '';
        res.setHeader('Content-Type', `application/json;g=${g};v=v2;as=APIGroupDiscoveryList`);
        res.send(JSON.stringify(aggregatedDiscovery(catalog, core, g)));
        return;
      }
      const addr = `${opts.advertiseAddress ?? (req.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:/, '')}:${port}`;
      res.json(core ? apiVersions(addr) : apiGroupList(catalog));
    });
  app.get(
    '/openapi/v2',
    route((req, res) => {
      res.json(openApiV2Answer(catalog, req.headers.accept));
    }),
  );
  app.get(
    '/openapi/v3',
    route((_req, res) => {
      res.json(openApiV3Root(catalog));
    }),
  );
  app.get(
    '/openapi/v3/*gv',
    route((req, res) => {
      const parts = (req.params as { gv: string[] }).gv;
      const [prefix, a, b] = parts;
      const doc =
        prefix === 'api' && parts.length === 2
          ? openApiV3Document(catalog, '', a ?? '')
          : prefix === 'apis' && parts.length === 3
            ? openApiV3Document(catalog, a ?? '', b ?? '')
            : undefined;
      if (!doc) throw notFoundPath();
      res.setHeader('Cache-Control', 'public, immutable');
      res.json(doc);
    }),
  );
  app.get('/api', discovery(true));
  app.get('/apis', discovery(false));
  app.get(
    '/api/v1',
    route((_req, res) => {
      const doc = apiResourceList(catalog, '', 'v1');
      if (!doc) throw notFoundPath();
      res.json(doc);
    }),
  );
  app.get(
    '/apis/:group',
    route((req, res) => {
      const doc = apiGroupDoc(catalog, String(req.params.group));
      if (!doc) throw notFoundPath();
      res.json(doc);
    }),
  );
  app.get(
    '/apis/:group/:version',
    route((req, res) => {
      const doc = apiResourceList(catalog, String(req.params.group), String(req.params.version));
      if (!doc) throw notFoundPath();
      res.json(doc);
    }),
  );

  app.all(
    '/*path',
    route(() => {
      throw notFoundPath();
    }),
  );

  const server: Server = createServer(
    { cert: tls.certPem, key: tls.keyPem, requestCert: true, rejectUnauthorized: false },
    app,
  );
  server.keepAliveTimeout = 65_000;
  const sockets = new Set<Socket>();
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.securePort, opts.bindAddress, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.bindAddress === '0.0.0.0' || opts.bindAddress === '::' ? '127.0.0.1' : opts.bindAddress;
  log.info('serving securely', { address: `${opts.bindAddress}:${port}` });

  // Post-start: the system namespaces, retried until the store answers.
  const namespacesBootstrapped = (async () => {
    const nsStore = namespaceType ? storeFor(namespaceType) : undefined;
    for (let attempt = 0; nsStore && !stopping.signal.aborted; attempt++) {
      try {
        for (const name of systemNamespaces()) {
          try {
            await nsStore.create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, {});
          } catch (e) {
            if (!isAlreadyExists(e)) throw e;
          }
        }
        break;
      } catch (e) {
        log.warn('bootstrapping system namespaces failed; retrying', { error: (e as Error).message, attempt });
        await delay(Math.min(100 * 2 ** attempt, 2000), stopping.signal);
      }
    }
    bootstrapHook.done();
  })();
  // Post-start: RBAC's caches and the default policy, retried until the store answers.
  const rbacBootstrapped = (async () => {
    for (let attempt = 0; !stopping.signal.aborted; attempt++) {
      try {
        await authorization.bootstrap(stopping.signal);
        break;
      } catch (e) {
        log.warn('bootstrapping RBAC policy failed; retrying', { error: (e as Error).message, attempt });
        await delay(Math.min(100 * 2 ** attempt, 2000), stopping.signal);
      }
    }
    rbacHook.done();
  })();
  // Post-start: the client-CA and request-header settings for delegating components, after the namespaces.
  const authInfoPublished = (async () => {
    await namespacesBootstrapped;
    const cmType = catalog.lookup('', 'v1', 'configmaps');
    const data = authenticationInfoData(opts);
    const ns = naming().systemNamespace;
    for (let attempt = 0; cmType && !stopping.signal.aborted; attempt++) {
      const cms = storeFor(cmType);
      try {
        try {
          await cms.update(ns, AUTHENTICATION_INFO_CONFIGMAP, (current) => ({ ...current, data }), {});
        } catch (e) {
          if (!isNotFound(e)) throw e;
          await cms.create(
            ns,
            {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: AUTHENTICATION_INFO_CONFIGMAP, namespace: ns },
              data,
            },
            {},
          );
        }
        break;
      } catch (e) {
        log.warn('publishing the authentication info failed; retrying', { error: (e as Error).message, attempt });
        await delay(Math.min(100 * 2 ** attempt, 2000), stopping.signal);
      }
    }
    authInfoHook.done();
  })();
  const started = Promise.all([namespacesBootstrapped, rbacBootstrapped, authInfoPublished]).then(() => undefined);

  // apiserver_storage_objects, polled.
  const pollCounts = async (): Promise<void> => {
    for (const r of catalog.all().filter((x) => !x.virtual && !x.storedAs)) {
      const label = r.group ? `${r.plural}.${r.group}` : r.plural;
      try {
        metrics.storageObjects.set({ resource: label }, await storage.count(resourcePrefix(opts.storePrefix, r)));
      } catch {
        metrics.storageObjects.set({ resource: label }, -1);
      }
    }
  };
  const countTimer =
    opts.storeCountMetricPollPeriodMs > 0
      ? setInterval(() => {
          void pollCounts();
        }, opts.storeCountMetricPollPeriodMs)
      : undefined;
  countTimer?.unref();
  void started.then(pollCounts);

  let shuttingDown: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    shuttingDown ??= (async () => {
      shutdownCheck.begin();
      log.info('shutdown requested; readyz now fails', { delay: opts.shutdownDelayDurationMs });
      await delay(opts.shutdownDelayDurationMs);
      stopping.abort(); // ends open watches, compaction and the bootstrap retries
      if (countTimer) clearInterval(countTimer);
      svclet.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        const idle = setInterval(() => server.closeIdleConnections(), 50);
        server.once('close', () => clearInterval(idle));
      });
      await started.catch(() => undefined);
      await storage.close();
      log.info('shutdown complete');
    })();
    return shuttingDown;
  };

  return { url: `https://${host}:${port}`, port, caPem: tls.caPem, metrics, catalog, started, shutdown };
}

function statusErrorForbidden(info: RequestInfo, user: UserInfo, reason?: string): Error {
  const e = forbidden(forbiddenMessage({ user, ...info }, reason));
  if (info.isResourceRequest) {
    e.status.details = { name: info.name || undefined, group: info.apiGroup || undefined, kind: info.resource };
  }
  return e;
}

function notFoundPath(): Error {
  return statusError('NotFound', 'the server could not find the requested resource');
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) {
      resolve();
      return;
    }
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}
