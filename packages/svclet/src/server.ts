import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import express, { type Request, type Response, type Router } from 'express';
import type { Registry } from 'prom-client';
import { naming, type Pod } from '@svc/api';
import {
  ClientCertAuthenticator,
  SubjectAccessReviewAuthorizer,
  TokenReviewAuthenticator,
  generateServingCert,
  healthHandler,
  listenBacklog,
  isUpgrade,
  parseCertificateBundle,
  proxyUpgrade,
  startSecureServer,
  type Authenticator,
  type HealthCheck,
  type PathAttributes,
  type PathAuthorizer,
  type ResourceAttributes,
  type ReviewPoster,
  type SecureServer,
} from '@svc/component-base';
import { readCriLog } from './container-logs.js';
import type { SvcletConfiguration } from './configuration.js';
import { StreamRequestError, type PodSource, type StreamRequest } from './pod-source.js';
import { nodeUsage, renderResourceMetrics } from './resource-metrics.js';
import { StatsSummarySource } from './stats-summary.js';

/** True when `path` is `prefix` or below it (Kubernetes' isSubpath). */
function isSubpath(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * Kubernetes' kubelet authorizer attributes: every request is on `nodes/<node>`, subresource
 * `stats`, `metrics`, `log` (`/logs`), `checkpoint` by path, `proxy` for everything else
 * (`/pods`, `/containerLogs`, `/healthz`); the verb is the request's (get, create, ...).
 */
export function nodeRequestAttributes(nodeName: string, a: Pick<PathAttributes, 'verb' | 'path'>): ResourceAttributes {
  const p = a.path;
  const subresource = isSubpath(p, '/stats')
    ? 'stats'
    : isSubpath(p, '/metrics')
      ? 'metrics'
      : isSubpath(p, '/logs')
        ? 'log'
        : isSubpath(p, '/checkpoint')
          ? 'checkpoint'
          : 'proxy';
  return { verb: a.verb, group: '', version: 'v1', resource: 'nodes', subresource, name: nodeName };
}

type ServerAuthorizer = PathAuthorizer & { alwaysAllowed(path: string): boolean };

/** The authenticators and authorizer of the svclet's API, from `authentication` and `authorization`; throws for an impossible setup. */
export async function serverAuth(
  c: SvcletConfiguration,
  o: { nodeName: string; reviewer?: ReviewPoster },
): Promise<{ authenticators: Authenticator[]; authorizer: ServerAuthorizer }> {
  const authenticators: Authenticator[] = [];
  const caFile = c.authentication.x509.clientCAFile;
  if (caFile)
    authenticators.push(new ClientCertAuthenticator(parseCertificateBundle(await readFile(caFile, 'utf8'), caFile)));
  if (c.authentication.webhook.enabled) {
    if (!o.reviewer) throw new Error('no client provided, cannot use webhook authentication');
    authenticators.push(new TokenReviewAuthenticator(o.reviewer, c.authentication.webhook.cacheTTL));
  }
  if (c.authorization.mode === 'AlwaysAllow') {
    return { authenticators, authorizer: { alwaysAllowed: () => false, authorize: async () => ({ allowed: true }) } };
  }
  if (!o.reviewer) throw new Error('no client provided, cannot use webhook authorization');
  const authorizer = new SubjectAccessReviewAuthorizer({
    client: o.reviewer,
    alwaysAllowPaths: [],
    authorizedTtlMs: c.authorization.webhook.cacheAuthorizedTTL,
    unauthorizedTtlMs: c.authorization.webhook.cacheUnauthorizedTTL,
    resourceAttributes: (a) => nodeRequestAttributes(o.nodeName, a),
  });
  return { authenticators, authorizer };
}

/**
 * The serving pair: `tlsCertFile`/`tlsPrivateKeyFile`, else `<agent>.crt`/`.key` in `certDir`,
 * made once (a self-signed CA and a certificate for the node's names and IPs) and reused.
 */
export async function servingFiles(
  c: SvcletConfiguration,
  certDir: string,
  hosts: string[],
): Promise<{ certFile: string; keyFile: string }> {
  if (c.tlsCertFile) return { certFile: c.tlsCertFile, keyFile: c.tlsPrivateKeyFile };
  const base = naming().nodeAgentName;
  const certFile = join(certDir, `${base}.crt`);
  const keyFile = join(certDir, `${base}.key`);
  if (!existsSync(certFile) || !existsSync(keyFile)) {
    const made = await generateServingCert([...new Set([...hosts, 'localhost', '127.0.0.1'])]);
    await mkdir(certDir, { recursive: true, mode: 0o700 });
    await writeFile(keyFile, made.keyPem, { mode: 0o600 });
    await writeFile(certFile, made.certPem);
  }
  return { certFile, keyFile };
}

function nonNegativeInt(q: URLSearchParams, name: string, min: number): number | undefined | Error {
  const v = q.get(name);
  if (v === null) return undefined;
  if (!/^-?\d+$/.test(v)) return new Error(`${name}: invalid value ${JSON.stringify(v)}`);
  const n = Number(v);
  return n < min ? new Error(`${name}: must be ${min === 0 ? 'greater than or equal to 0' : 'greater than 0'}`) : n;
}

const flag = (q: URLSearchParams, name: string): boolean => {
  const v = q.get(name);
  return v !== null && v !== 'false' && v !== '0';
};

/**
 * `GET /containerLogs/<namespace>/<pod>/<container>` (Kubernetes' query: follow, previous,
 * tailLines, limitBytes, sinceSeconds, sinceTime, timestamps): the container's output from its
 * CRI log file as plain text; follow streams until the container stops or the client goes.
 */
async function containerLogs(source: PodSource, req: Request, res: Response): Promise<void> {
  const { namespace = '', pod = '', container = '' } = req.params as Record<string, string>;
  const plain = (code: number, msg: string): void => {
    res.status(code).type('text/plain; charset=utf-8').send(`${msg}\n`);
  };
  const q = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
  const tailLines = nonNegativeInt(q, 'tailLines', 0);
  const limitBytes = nonNegativeInt(q, 'limitBytes', 1);
  const sinceSeconds = nonNegativeInt(q, 'sinceSeconds', 1);
  for (const v of [tailLines, limitBytes, sinceSeconds]) if (v instanceof Error) return plain(400, v.message);
  const sinceTimeRaw = q.get('sinceTime');
  if (sinceTimeRaw !== null && sinceSeconds !== undefined)
    return plain(400, 'at most one of sinceTime or sinceSeconds may be specified');
  const sinceTime =
    sinceTimeRaw !== null
      ? Date.parse(sinceTimeRaw)
      : typeof sinceSeconds === 'number'
        ? Date.now() - sinceSeconds * 1000
        : undefined;
  if (sinceTime !== undefined && Number.isNaN(sinceTime))
    return plain(400, `sinceTime: invalid value ${JSON.stringify(sinceTimeRaw)}`);

  const p = source.pods().find((x) => x.metadata.namespace === namespace && x.metadata.name === pod);
  if (!p) return plain(404, `pod ${JSON.stringify(pod)} does not exist`);
  const files = source.containerLogFiles(namespace, pod, container);
  if (!files) return plain(404, `container ${JSON.stringify(container)} not found in pod ${JSON.stringify(pod)}`);
  const previous = flag(q, 'previous');
  const path = previous ? files.previous : files.current;
  if (!path) {
    return plain(
      400,
      previous
        ? `previous terminated container ${JSON.stringify(container)} in pod ${JSON.stringify(pod)} not found`
        : `container ${JSON.stringify(container)} in pod ${JSON.stringify(pod)} is waiting to start`,
    );
  }
  const follow = flag(q, 'follow') && !previous;
  const stop = new AbortController();
  res.on('close', () => stop.abort());
  const running = (): boolean => {
    const now = source.containerLogFiles(namespace, pod, container);
    return now !== undefined && now.current === path && now.running !== false;
  };
  let gen: AsyncGenerator<Buffer>;
  try {
    gen = readCriLog(path, {
      tailLines: typeof tailLines === 'number' ? tailLines : undefined,
      sinceTime,
      timestamps: flag(q, 'timestamps'),
      follow,
      running,
      signal: stop.signal,
    });
    res.status(200).type('text/plain; charset=utf-8');
    if (follow) res.flushHeaders();
    let left = typeof limitBytes === 'number' ? limitBytes : Infinity;
    for await (const chunk of gen) {
      const out = chunk.length > left ? chunk.subarray(0, left) : chunk;
      left -= out.length;
      if (!res.write(out))
        await new Promise<void>((resolve) => {
          res.once('drain', resolve);
          res.once('close', resolve);
        });
      if (left <= 0 || stop.signal.aborted) break;
    }
  } catch (e) {
    if (!res.headersSent)
      return plain(500, `failed to read the log of container ${JSON.stringify(container)}: ${(e as Error).message}`);
  }
  res.end();
}

const one = (q: URLSearchParams, name: string): boolean => q.get(name) === '1' || q.get(name) === 'true';

/**
 * `/exec/<ns>/<pod>/<container>`, `/attach/...` and `/portForward/<ns>/<pod>` (GET or POST,
 * upgrade requests only; Kubernetes' query `command`, `input`, `output`, `error`, `tty` as
 * `1`): asks the runtime for a streaming URL and joins the client's connection to it, so the
 * client and the runtime negotiate WebSocket or SPDY between them.
 */
async function streamHandler(
  o: { source: PodSource; kind: StreamRequest['kind'] },
  req: Request,
  res: Response,
): Promise<void> {
  const plain = (code: number, msg: string): void => {
    res.status(code).type('text/plain; charset=utf-8').send(`${msg}\n`);
  };
  if (!isUpgrade(req)) return plain(400, 'Upgrade request required');
  if (!o.source.streamUrl) return plain(501, 'streaming is not supported by this node');
  const { namespace = '', pod = '', container = '' } = req.params as Record<string, string>;
  const q = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
  const r: StreamRequest =
    o.kind === 'portforward'
      ? { kind: 'portforward', namespace, pod, ports: q.getAll('port').map(Number) }
      : {
          kind: o.kind,
          namespace,
          pod,
          container,
          command: q.getAll('command'),
          stdin: one(q, 'input'),
          stdout: one(q, 'output'),
          stderr: one(q, 'error'),
          tty: one(q, 'tty'),
        };
  if (r.kind === 'exec' && r.command.length === 0)
    return plain(400, 'you must specify at least one command for the container');
  let url: string;
  try {
    url = await o.source.streamUrl(r);
  } catch (e) {
    return plain(e instanceof StreamRequestError ? e.code : 500, (e as Error).message);
  }
  try {
    const out = await proxyUpgrade({ req, res, url: new URL(url) });
    if (!out.upgraded) {
      res.status(out.response.statusCode ?? 500).type('text/plain; charset=utf-8');
      out.response.pipe(res);
    }
  } catch (e) {
    if (!res.headersSent) plain(500, `error connecting to the runtime's streaming server: ${(e as Error).message}`);
  }
}

/** `/metrics/resource`: the containers' usage from the pod side, the node's from /proc. */
async function resourceMetricsText(source: PodSource): Promise<string> {
  const timestampMs = Date.now();
  const [own, node] = await Promise.all([
    source.containerUsage?.() ?? Promise.resolve({ containers: [], scrapeError: false }),
    nodeUsage().catch(() => ({ cpuSeconds: 0, memoryBytes: 0 })),
  ]);
  return renderResourceMetrics({ node, containers: own.containers, scrapeError: own.scrapeError, timestampMs });
}

/** The svclet's API handlers beside `/healthz` and `/metrics` (Kubernetes' default and debugging handlers). */
export function svcletRoutes(
  source: PodSource,
  o: { config: SvcletConfiguration; nodeName: string },
): (app: Router) => void {
  const c = o.config;
  const summary = new StatsSummarySource({
    nodeName: o.nodeName,
    pods: () => source.pods() as Pod[],
    containerUsage: source.containerUsage?.bind(source),
  });
  return (app) => {
    app.get('/pods', (_req, res) => {
      res.json({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: source.pods() });
    });
    app.get('/metrics/resource', async (_req, res) => {
      res.type('text/plain; version=0.0.4; charset=utf-8').send(await resourceMetricsText(source));
    });
    // The Summary API (`only_cpu_and_memory=true` answers the same: CPU and memory is all there is).
    app.get('/stats/summary', async (_req, res) => {
      res.json(await summary.summary());
    });
    if (c.enableDebuggingHandlers) {
      app.get('/containerLogs/:namespace/:pod/:container', (req, res) => containerLogs(source, req, res));
      for (const kind of ['exec', 'attach'] as const) {
        const serve = (req: Request, res: Response): Promise<void> => streamHandler({ source, kind }, req, res);
        app.get(`/${kind}/:namespace/:pod/:container`, serve);
        app.post(`/${kind}/:namespace/:pod/:container`, serve);
      }
      const forward = (req: Request, res: Response): Promise<void> =>
        streamHandler({ source, kind: 'portforward' }, req, res);
      app.get('/portForward/:namespace/:pod', forward);
      app.post('/portForward/:namespace/:pod', forward);
    } else {
      app.all('/containerLogs/{*rest}', (_req, res) => {
        res.status(405).type('text/plain; charset=utf-8').send('Debug endpoints are disabled.\n');
      });
    }
  };
}

export interface SvcletServerOptions {
  config: SvcletConfiguration;
  nodeName: string;
  certDir: string;
  hosts: string[];
  source: PodSource;
  reviewer?: ReviewPoster;
  healthChecks: () => readonly HealthCheck[];
  metrics: Registry;
}

/** The HTTPS API on `address`:`port`: authentication and authorization as configured, then `/healthz`, `/metrics`, `/pods`, `/containerLogs`. */
export async function startSvcletServer(o: SvcletServerOptions): Promise<SecureServer> {
  const c = o.config;
  const { authenticators, authorizer } = await serverAuth(c, { nodeName: o.nodeName, reviewer: o.reviewer });
  const { certFile, keyFile } = await servingFiles(c, o.certDir, o.hosts);
  return startSecureServer({
    bindAddress: c.address,
    port: c.port,
    tlsCertFile: certFile,
    tlsPrivateKeyFile: keyFile,
    certDir: o.certDir,
    certBase: naming().nodeAgentName,
    authenticators,
    authorizer,
    anonymous: c.authentication.anonymous.enabled,
    healthChecks: o.healthChecks,
    metrics: o.metrics,
    routes: svcletRoutes(o.source, { config: c, nodeName: o.nodeName }),
  });
}

export interface HealthzServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The plain-HTTP `/healthz` (and `/healthz/<check>`) on `healthzBindAddress`:`healthzPort`, without authentication. */
export async function startHealthzServer(o: {
  bindAddress: string;
  port: number;
  checks: () => readonly HealthCheck[];
}): Promise<HealthzServer> {
  const app = express();
  app.disable('x-powered-by');
  const health = healthHandler(o.checks);
  app.get('/healthz', (req, res) => health(req, res));
  app.get('/healthz/{*check}', (req, res) => health(req, res, req.path.slice('/healthz/'.length)));
  app.use((_req, res) => {
    res.status(404).type('text/plain; charset=utf-8').send('404 page not found\n');
  });
  const server: Server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: o.port, host: o.bindAddress, backlog: listenBacklog() }, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.bindAddress === '0.0.0.0' || o.bindAddress === '' ? '127.0.0.1' : o.bindAddress;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
