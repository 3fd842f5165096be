import { readFileSync } from 'node:fs';
import type { Registry } from 'prom-client';
import { naming } from '@svc/api';
import type { Authenticator } from './authenticator.js';
import { SubjectAccessReviewAuthorizer, TokenReviewAuthenticator, type ReviewPoster } from './delegated-auth.js';
import type { DelegatedServingOptions } from './component-flags.js';
import type { HealthCheck } from './health/checks.js';
import type { Logger } from './logger.js';
import { startSecureServer, type SecureServer } from './secure-serving.js';
import { ClientCertAuthenticator, parseCertificateBundle } from './x509.js';

/** A component's configuration cannot work (a file that cannot be read, a failed lookup): exit 2. */
export class ComponentConfigError extends Error {}

/** What delegation needs of an API client (a `RestClient` is one): reviews, and one GET for the client CA. */
export interface DelegationClient extends ReviewPoster {
  request(
    method: string,
    path: string,
    opts?: { body?: object },
  ): Promise<{ status: number; body: Buffer; json<T = unknown>(): T }>;
}

export interface DelegatedServingDeps {
  /** The file stem of a self-signed serving certificate in the cert dir (`svc-scheduler` → `svc-scheduler.crt`). */
  certBase: string;
  /** The API client of `--authentication-kubeconfig` / `--authorization-kubeconfig` (`flag` names it in errors). */
  clientFor(file: string, flag: string): DelegationClient;
  healthChecks: () => readonly HealthCheck[];
  metrics: Registry;
  logger: Logger;
}

/** Kubernetes' ConfigMap through which the API server publishes its client CA to delegating components. */
const AUTHENTICATION_INFO = 'extension-apiserver-authentication';

/**
 * A control-plane component's secure port (undefined with `--secure-port 0`): `/healthz` and
 * `/metrics` behind delegated authentication (client certificates, TokenReview) and
 * authorization (SubjectAccessReview); the always-allowed paths skip both.
 */
export async function startDelegatedSecureServer(
  o: DelegatedServingOptions,
  deps: DelegatedServingDeps,
): Promise<SecureServer | undefined> {
  if (o.securePort === 0) return undefined;
  const server = await startSecureServer({
    bindAddress: o.bindAddress,
    port: o.securePort,
    certDir: o.certDir || '/var/run/svc',
    certBase: deps.certBase,
    tlsCertFile: o.tlsCertFile,
    tlsPrivateKeyFile: o.tlsPrivateKeyFile,
    authenticators: await delegatedAuthenticators(o, deps),
    authorizer: new SubjectAccessReviewAuthorizer({
      client: o.authorizationKubeconfig
        ? deps.clientFor(o.authorizationKubeconfig, '--authorization-kubeconfig')
        : undefined,
      alwaysAllowPaths: o.authorizationAlwaysAllowPaths,
      authorizedTtlMs: o.authorizationWebhookCacheAuthorizedTtlMs,
      unauthorizedTtlMs: o.authorizationWebhookCacheUnauthorizedTtlMs,
    }),
    healthChecks: deps.healthChecks,
    metrics: deps.metrics,
  });
  deps.logger.info('serving securely', { url: server.url });
  return server;
}

/**
 * Delegated authentication of the secure port: client certificates against `--client-ca-file`
 * (or, unless `--authentication-skip-lookup`, the client CA the API server publishes), bearer
 * tokens through TokenReview with `--authentication-kubeconfig` (without it, tokens are not
 * accepted). A failed lookup stops start-up unless `--authentication-tolerate-lookup-failure`.
 */
async function delegatedAuthenticators(
  o: DelegatedServingOptions,
  deps: Pick<DelegatedServingDeps, 'clientFor' | 'logger'>,
): Promise<Authenticator[]> {
  const logger = deps.logger;
  const out: Authenticator[] = [];
  let caPem: string | undefined;
  let caSource = o.clientCaFile ?? '';
  if (o.clientCaFile) {
    try {
      caPem = readFileSync(o.clientCaFile, 'utf8');
    } catch (e) {
      throw new ComponentConfigError(`--client-ca-file: ${(e as Error).message}`);
    }
  }
  let reviewer: DelegationClient | undefined;
  if (o.authenticationKubeconfig) {
    reviewer = deps.clientFor(o.authenticationKubeconfig, '--authentication-kubeconfig');
    if (!caPem && !o.authenticationSkipLookup) {
      caSource = `configmap ${naming().systemNamespace}/${AUTHENTICATION_INFO}`;
      try {
        const r = await reviewer.request(
          'GET',
          `/api/v1/namespaces/${naming().systemNamespace}/configmaps/${AUTHENTICATION_INFO}`,
        );
        if (r.status === 200) caPem = r.json<{ data?: Record<string, string> }>().data?.['client-ca-file'];
        else if (r.status === 404)
          logger.warn('the API server publishes no client CA; client certificates are not accepted', {
            configmap: caSource,
          });
        else throw new Error(`HTTP ${r.status}: ${r.body.toString().slice(0, 200)}`);
      } catch (e) {
        if (!o.authenticationTolerateLookupFailure) {
          throw new ComponentConfigError(
            `looking up the client CA in ${caSource} failed (--authentication-tolerate-lookup-failure=true continues without it): ${(e as Error).message}`,
          );
        }
        logger.warn('looking up the client CA failed; continuing without it', {
          configmap: caSource,
          error: (e as Error).message,
        });
      }
    }
  } else {
    logger.warn('no --authentication-kubeconfig: bearer tokens on the secure port are not accepted');
  }
  if (caPem) out.push(new ClientCertAuthenticator(parseCertificateBundle(caPem, caSource)));
  if (reviewer) out.push(new TokenReviewAuthenticator(reviewer, o.authenticationTokenWebhookCacheTtlMs));
  return out;
}
