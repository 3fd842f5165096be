import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import express, { type Request, type Response, type Router } from 'express';
import type { Registry } from 'prom-client';
import { AuthenticationFailed, UnionAuthenticator, type Authenticator } from './authenticator.js';
import { healthHandler } from './health/handler.js';
import type { HealthCheck } from './health/checks.js';
import { ensureServingCert } from './self-signed.js';
import { acceptUpgrades } from './upgrade.js';
import type { PathAuthorizer } from './delegated-auth.js';
import { listenBacklog } from './listen-backlog.js';

export interface SecureServingOptions {
  bindAddress: string;
  /** 0 picks a free port. */
  port: number;
  /** `--tls-cert-file` / `--tls-private-key-file`; else a self-signed pair kept in `certDir` as `<certBase>.crt/.key`. */
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  certDir: string;
  certBase: string;
  /** Client certificates and delegated tokens, tried in order; requests without credentials get 401. */
  authenticators: readonly Authenticator[];
  authorizer: PathAuthorizer & { alwaysAllowed(path: string): boolean };
  /** The checks of `/healthz` (and `/healthz/<name>`). */
  healthChecks: () => readonly HealthCheck[];
  metrics: Registry;
  /** Requests without any credential run as `system:anonymous` (the svclet's `--anonymous-auth`); default false (401). */
  anonymous?: boolean;
  /**
   * More handlers (the svclet's API), installed after `/healthz` and `/metrics` and before the
   * 404 answer; like those, they run only after authentication and authorization passed.
   */
  routes?: (app: Router) => void;
}

export interface SecureServer {
  /** `https://<bind address>:<port>`. */
  url: string;
  port: number;
  /** PEM of the CA that signs the serving certificate (self-signed case), else the certificate file. */
  caPem: string;
  close(): Promise<void>;
}

/** Kubernetes' verbs for non-resource requests. */
const VERBS: Record<string, string> = {
  GET: 'get',
  HEAD: 'get',
  POST: 'create',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
};

/** Sends a failure `Status` with this code, reason and message. */
function sendStatus(res: Response, { code, reason, message }: { code: number; reason: string; message: string }): void {
  res.status(code).json({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}

/**
 * A component's HTTPS port (controller manager, scheduler, svclet): `/healthz`, `/metrics` and
 * the given `routes` behind delegated authentication and authorization; always-allowed paths
 * skip both.
 */
export async function startSecureServer(o: SecureServingOptions): Promise<SecureServer> {
  const tls =
    o.tlsCertFile && o.tlsPrivateKeyFile
      ? { certPem: await readFile(o.tlsCertFile, 'utf8'), keyPem: await readFile(o.tlsPrivateKeyFile, 'utf8') }
      : await ensureServingCert(
          o.certDir,
          ['localhost', '127.0.0.1', ...(o.bindAddress !== '0.0.0.0' ? [o.bindAddress] : [])],
          o.certBase,
        );
  const authn = new UnionAuthenticator({ authenticators: o.authenticators, anonymous: o.anonymous ?? false });
  const app = express();
  app.disable('x-powered-by');
  app.use(async (req: Request, res: Response, next: () => void) => {
    const path = req.path;
    if (o.authorizer.alwaysAllowed(path)) return next();
    let user;
    try {
      user = await authn.authenticate(req);
    } catch (e) {
      if (e instanceof AuthenticationFailed)
        return sendStatus(res, { code: 401, reason: 'Unauthorized', message: 'Unauthorized' });
      return sendStatus(res, {
        code: 500,
        reason: 'InternalError',
        message: `authentication failed: ${(e as Error).message}`,
      });
    }
    const verb = VERBS[req.method] ?? req.method.toLowerCase();
    try {
      const d = await o.authorizer.authorize({ user, verb, path });
      if (!d.allowed) {
        return sendStatus(res, {
          code: 403,
          reason: 'Forbidden',
          message: `forbidden: User ${JSON.stringify(user.name)} cannot ${verb} path ${JSON.stringify(path)}${d.reason ? `: ${d.reason}` : ''}`,
        });
      }
    } catch (e) {
      return sendStatus(res, {
        code: 500,
        reason: 'InternalError',
        message: `authorization failed: ${(e as Error).message}`,
      });
    }
    next();
  });
  const health = healthHandler(o.healthChecks);
  app.get('/healthz', (req, res) => health(req, res));
  app.get('/healthz/{*check}', (req, res) => health(req, res, req.path.slice('/healthz/'.length)));
  app.get('/metrics', async (_req, res) => {
    res.type(o.metrics.contentType).send(await o.metrics.metrics());
  });
  o.routes?.(app);
  app.use((_req: Request, res: Response) =>
    sendStatus(res, { code: 404, reason: 'NotFound', message: 'the server could not find the requested resource' }),
  );

  const server: Server = createServer(
    { cert: tls.certPem, key: tls.keyPem, requestCert: true, rejectUnauthorized: false },
    app,
  );
  const upgraded = acceptUpgrades(server, app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: o.port, host: o.bindAddress, backlog: listenBacklog() }, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.bindAddress === '0.0.0.0' ? '127.0.0.1' : o.bindAddress;
  return {
    url: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    caPem: 'caPem' in tls ? tls.caPem : tls.certPem,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        upgraded.destroyAll();
        server.close(() => resolve());
      }),
  };
}
