import { setMaxListeners } from 'node:events';
import { X509Certificate } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { naming, useNaming, type ApiObject } from '@svc/api';
import { RestClient, loadSvcconfig, type ClientConfig } from '@svc/client';
import {
  ComponentMetrics,
  ComponentRegistry,
  logCheck,
  pingCheck,
  type HealthCheck,
  type Logger,
  type SecureServer,
} from '@svc/component-base';
import { Gauge, collectDefaultMetrics } from 'prom-client';
import {
  CertificateStore,
  bootstrapClientCertificate,
  certificateValid,
  rotateClientCertificate,
  svcconfigUsable,
  type KeyPair,
} from './client-certificate.js';
import { hostIps, nodeNameOf } from './host-info.js';
import { NodeLeaseController } from './node-lease.js';
import { NodeStatusManager, hostMachine } from './node-status.js';
import { SVCLET_VERSION, type SvcletOptions } from './options.js';
import { NO_PODS, type PodSide, type RuntimeStatusService, type StartPodSide } from './pod-source.js';
import { RotatingRestClient } from './rotating-client.js';
import { startHealthzServer, startSvcletServer, type HealthzServer } from './server.js';
import { reportInapplicableSettings } from './inapplicable-settings.js';

export class SvcletConfigError extends Error {}

export interface SvcletDeps {
  logger: Logger;
  /** The container runtime's Version and Status (the Ready condition); absent: never Ready. */
  runtime?: RuntimeStatusService;
  /** The pod side; absent: no pods run. */
  startPods?: StartPodSide;
  /** How often CSRs are read back while waiting for a certificate (default 250 ms). */
  csrPollMs?: number;
}

export interface RunningSvclet {
  nodeName: string;
  /** API-server mode only. */
  client?: RestClient;
  /** The HTTPS API (absent with `enableServer: false`). */
  server?: SecureServer;
  /** The plain `/healthz` (absent with `healthzPort: 0`). */
  healthz?: HealthzServer;
  /** Settles when the Node is registered (API-server mode with `registerNode`). */
  registered: Promise<ApiObject>;
  /** The client certificate in use (API-server mode with a certificate). */
  clientCertificate(): X509Certificate | undefined;
  /** When the node Lease was last renewed (ms; 0 = never). */
  leaseRenewedAt(): number;
  shutdown(): Promise<void>;
}

/** Kubernetes' syncloop check: failing once the pod side's loop has not started an iteration for max(2 × syncFrequency, 5m). */
function syncLoopCheck(pods: () => PodSide | undefined, syncFrequencyMs: number): HealthCheck {
  const limit = Math.max(2 * syncFrequencyMs, 5 * 60_000);
  return {
    name: 'syncloop',
    check: async () => {
      const last = pods()?.lastSyncLoop?.() ?? 0;
      if (last > 0 && Date.now() - last > limit) throw new Error('sync Loop took longer than expected');
    },
  };
}

interface ApiAccess {
  client: RestClient;
  /** Set when the client authenticates with a certificate that is rotated. */
  rotation?: { client: RotatingRestClient; store: CertificateStore; current: KeyPair; obtainedAt: number };
  certificate?: X509Certificate;
}

/**
 * The API client of `--svcconfig`: first, when that file is missing or its certificate expired
 * and `--bootstrap-kubeconfig` is given, the TLS bootstrap; with `rotateCertificates` and a
 * client certificate, the store's current pair (when valid) is used and rotated.
 */
async function apiAccess(
  o: SvcletOptions,
  {
    nodeName,
    metrics,
    deps,
    signal,
  }: { nodeName: string; metrics: ComponentMetrics; deps: SvcletDeps; signal: AbortSignal },
): Promise<ApiAccess> {
  const file = o.svcconfig ?? '';
  const store = new CertificateStore(o.certDir, `${naming().nodeAgentName}-client`);
  const clientOptions = {
    qps: o.config.svcAPIQPS,
    burst: o.config.svcAPIBurst,
    contentType: o.config.contentType,
    metrics: metrics.client(),
    userAgent: `${naming().nodeAgentName}/${SVCLET_VERSION}`,
  };
  let obtainedAt = 0;
  if (!svcconfigUsable(file)) {
    if (!o.bootstrapKubeconfig)
      throw new SvcletConfigError(
        `--svcconfig: ${file} does not exist or holds an expired certificate, and no --bootstrap-kubeconfig is given`,
      );
    let bootstrap: ClientConfig;
    try {
      bootstrap = loadSvcconfig(o.bootstrapKubeconfig);
    } catch (e) {
      throw new SvcletConfigError(`--bootstrap-kubeconfig: ${(e as Error).message}`);
    }
    deps.logger.info('requesting a client certificate with the bootstrap credential', {
      svcconfig: file,
      certDir: o.certDir,
    });
    const client = new RestClient(bootstrap, clientOptions);
    try {
      await bootstrapClientCertificate({
        client,
        nodeName,
        store,
        svcconfigPath: file,
        signal,
        pollMs: deps.csrPollMs,
      });
    } finally {
      client.close();
    }
    obtainedAt = Date.now();
    deps.logger.info('client certificate issued; svcconfig written', { svcconfig: file });
  }
  let config: ClientConfig;
  try {
    config = loadSvcconfig(file);
  } catch (e) {
    throw new SvcletConfigError(`--svcconfig: ${(e as Error).message}`);
  }
  const u = config.user;
  if (!u.clientCertPem || !u.clientKeyPem) return { client: new RestClient(config, clientOptions) };
  let current: KeyPair = { certPem: u.clientCertPem, keyPem: u.clientKeyPem };
  const stored = store.current();
  if (o.config.rotateCertificates && stored && certificateValid(stored.cert)) {
    // As Kubernetes: the store's pair (possibly rotated since the svcconfig was written) wins.
    current = { certPem: stored.certPem, keyPem: stored.keyPem };
    obtainedAt ||= stored.storedAt;
  }
  const certificate = new X509Certificate(current.certPem);
  if (!o.config.rotateCertificates || u.token || u.tokenFile || u.exec)
    return { client: new RestClient(config, clientOptions), certificate };
  const client = new RotatingRestClient(
    { ...config, user: { clientCertPem: current.certPem, clientKeyPem: current.keyPem } },
    clientOptions,
  );
  return { client, certificate, rotation: { client, store, current, obtainedAt: obtainedAt || Date.now() } };
}

/**
 * Starts the svclet. Standalone mode (no `--svcconfig`): the servers and the pod side only.
 * API-server mode: first the client (TLS bootstrap when needed), then the servers and the pod
 * side, and in the background registration, the node Lease, status updates and client
 * certificate rotation. `shutdown` stops every loop and server (containers keep running).
 */
export async function startSvclet(o: SvcletOptions, deps: SvcletDeps): Promise<RunningSvclet> {
  useNaming(o.naming);
  const logger = deps.logger;
  for (const w of o.warnings) logger.warn(w);
  reportInapplicableSettings(o.config, logger);
  const nodeName = nodeNameOf(o.hostnameOverride);
  const ips = hostIps(o.nodeIps);
  const c = o.config;
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  await mkdir(o.rootDir, { recursive: true });

  const registry = new ComponentRegistry(o.metrics);
  collectDefaultMetrics({ register: registry });
  const metrics = new ComponentMetrics(registry);
  const agent = naming().nodeAgentName;
  new Gauge({
    name: `${agent}_node_name`,
    help: "The node's name. The count is always 1.",
    labelNames: ['node'],
    registers: [registry],
  }).set({ node: nodeName }, 1);
  const ttl = new Gauge({
    name: `${agent}_certificate_manager_client_ttl_seconds`,
    help: 'Gauge of the TTL (time-to-live) of the client certificate. The value is in seconds until certificate expiry (negative if already expired).',
    registers: [registry],
  });

  let access: ApiAccess | undefined;
  if (o.svcconfig) {
    access = await apiAccess(o, { nodeName, metrics, deps, signal: stop.signal });
    logger.info('API server mode', { node: nodeName, server: access.client.config.server });
  } else {
    logger.info('standalone mode: no --svcconfig, running static pods only', { node: nodeName });
  }
  let certificate = access?.certificate;
  if (certificate) ttl.set((Date.parse(certificate.validTo) - Date.now()) / 1000);

  let pods: PodSide | undefined;
  const checks: HealthCheck[] = [pingCheck, logCheck, syncLoopCheck(() => pods, c.syncFrequency)];
  const tasks: Array<Promise<void>> = [];
  let resolveNode: (n: ApiObject) => void = () => undefined;
  const registered = new Promise<ApiObject>((resolve) => {
    resolveNode = resolve;
  });
  let lease: NodeLeaseController | undefined;

  let healthz: HealthzServer | undefined;
  let server: SecureServer | undefined;
  const closeAll = async (): Promise<void> => {
    stop.abort();
    await Promise.allSettled(tasks);
    await pods?.stopped;
    await server?.close();
    await healthz?.close();
    access?.client.close();
  };
  try {
    if (c.healthzPort > 0)
      healthz = await startHealthzServer({
        bindAddress: c.healthzBindAddress,
        port: c.healthzPort,
        checks: () => checks,
      });
    pods = deps.startPods
      ? await deps.startPods({
          nodeName,
          hostIps: ips,
          config: c,
          rootDir: o.rootDir,
          client: access?.client,
          registeredNode: registered,
          logger,
          metrics: registry,
          signal: stop.signal,
        })
      : NO_PODS;
    const source = pods;
    if (c.enableServer) {
      server = await startSvcletServer({
        config: c,
        nodeName,
        certDir: o.certDir,
        hosts: [nodeName, ...ips],
        source,
        reviewer: access?.client,
        healthChecks: () => checks,
        metrics: registry,
      });
      logger.info('serving the svclet API', { url: server.url });
    }
  } catch (e) {
    await closeAll();
    throw e instanceof SvcletConfigError ? e : new SvcletConfigError((e as Error).message);
  }

  const rotation = access?.rotation;
  if (rotation) {
    tasks.push(
      rotateClientCertificate({
        client: rotation.client,
        nodeName,
        store: rotation.store,
        current: rotation.current,
        obtainedAt: rotation.obtainedAt,
        signal: stop.signal,
        pollMs: deps.csrPollMs,
        onCertificate: (cert) => {
          certificate = cert;
          ttl.set((Date.parse(cert.validTo) - Date.now()) / 1000);
          logger.info('client certificate in use', { notAfter: new Date(cert.validTo).toISOString() });
        },
        onError: (e) => logger.error('client certificate rotation failed, will retry', { error: String(e) }),
      }),
    );
  }
  if (access && c.registerNode) {
    const client = access.client;
    const status = new NodeStatusManager({
      client,
      nodeName,
      hostname: nodeName,
      hostIps: ips,
      config: c,
      nodeLabels: o.nodeLabels,
      machine: hostMachine({ rootDir: o.rootDir, config: c, version: SVCLET_VERSION, runtime: deps.runtime }),
      logger,
    });
    tasks.push(
      (async () => {
        let node: ApiObject;
        try {
          node = await status.register(stop.signal);
        } catch {
          return;
        }
        resolveNode(node);
        lease = new NodeLeaseController({
          client,
          nodeName,
          leaseDurationSeconds: c.nodeLeaseDurationSeconds,
          nodeUid: node.metadata.uid,
          logger,
        });
        await Promise.all([lease.run(stop.signal), status.run(stop.signal)]);
      })(),
    );
  }

  return {
    nodeName,
    client: access?.client,
    server,
    healthz,
    registered,
    clientCertificate: () => certificate,
    leaseRenewedAt: () => lease?.lastRenewed ?? 0,
    shutdown: closeAll,
  };
}
