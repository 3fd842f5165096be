import type { ResourceType } from '@svc/api';
import { Admission } from '../admission/admission.js';
import { CertificateApproval, CertificateSigning } from '../admission/certificate-signers.js';
import { DefaultTolerationSeconds } from '../admission/default-toleration-seconds.js';
import { NamespaceLifecycle } from '../admission/namespace-lifecycle.js';
import { NodeRestriction } from '../admission/node-restriction.js';
import { RbacEscalation } from '../admission/rbac-escalation.js';
import { buildAuthentication, type Authentication } from '../authn/build.js';
import { buildAuthorization, type Authorization } from '../authz/rbac/setup.js';
import type { Startup } from './startup.js';
import type { Stores } from './stores.js';

/** Authentication from its flags and files (a bad file rejects); it reads objects through the stores. */
export function buildAuthenticationStep(s: Startup, stores: Stores): Promise<Authentication> {
  const lookup = (g: string, v: string, p: string): ResourceType | undefined => s.catalog.lookup(g, v, p);
  return buildAuthentication(
    s.opts,
    {
      getObject: (ref, o = {}) =>
        stores.readCachedFirst(lookup('', 'v1', ref.resource), {
          namespace: ref.namespace,
          name: ref.name,
          fresh: o.fresh,
        }),
      logger: s.log,
      signal: s.stopping.signal,
      externalUrl: () => s.address.externalUrl(),
      metrics: { recordReload: (status, at) => s.metrics.recordAuthenticationConfigReload(status, at) },
    },
    lookup,
  );
}

/** Authorization from `--authorization-mode` and its files (a bad file throws). */
export function buildAuthorizationStep(s: Startup, stores: Stores): Authorization {
  const { opts, catalog, metrics } = s;
  return buildAuthorization(opts.authorizationMode, {
    lookup: (g, v, p) => catalog.lookup(g, v, p),
    storeFor: (r) => stores.storeFor(r),
    logger: s.log,
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
}

/** The admission plugins every write runs, in Kubernetes' order. */
export function admissionChain(s: Startup, authorization: Authorization, stores: Stores): Admission {
  const authz = authorization.authorizer;
  const namespaces = s.catalog.lookup('', 'v1', 'namespaces');
  return new Admission([
    new NamespaceLifecycle((name) => stores.readCachedFirst(namespaces, { namespace: '', name })),
    ...(authorization.node ? [new NodeRestriction()] : []),
    ...(authorization.rbac ? [new RbacEscalation(authz, authorization.rbac)] : []),
    new CertificateApproval(authz),
    new CertificateSigning(authz),
    new DefaultTolerationSeconds({
      notReady: s.opts.defaultNotReadyTolerationSeconds,
      unreachable: s.opts.defaultUnreachableTolerationSeconds,
    }),
  ]);
}
