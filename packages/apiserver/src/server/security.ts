import type { ResourceType } from '@svc/api';
import type { Admission } from '../admission/admission.js';
import { readAdmissionConfig } from '../admission/admission-config.js';
import { buildAdmission, configLookup } from '../admission/plugins.js';
import { buildAuthentication, type Authentication } from '../authn/build.js';
import { buildAuthorization, type Authorization } from '../authz/rbac/setup.js';
import type { Startup } from './startup.js';
import type { Stores } from './stores.js';
import { labelLegacyTokenSecret } from './legacy-token-tracking.js';

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
      labelSecret: (l) => labelLegacyTokenSecret(s, stores, l),
      recordLegacyTokenUse: (kind) => s.metrics.recordLegacyTokenUse(kind),
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

/**
 * The admission chain of `--enable-admission-plugins` / `--disable-admission-plugins`, in
 * Kubernetes' order, configured from `--admission-control-config-file` (a bad file throws).
 * Enabled plugins this server does not have yet are logged once.
 */
export function admissionChain(s: Startup, authorization: Authorization, stores: Stores): Admission {
  const configs = readAdmissionConfig(s.opts.admissionControlConfigFile);
  const { admission, missing } = buildAdmission(
    {
      catalog: s.catalog,
      storeFor: (r) => stores.storeFor(r),
      read: (r, ref) => stores.readCachedFirst(s.catalog.lookup(r.group, r.version, r.resource), ref),
      authorizer: authorization.authorizer,
      authorization,
      opts: s.opts,
      metrics: s.metrics,
      log: s.log,
      signal: s.stopping.signal,
      config: configLookup(configs),
    },
    s.opts.admissionPlugins,
  );
  if (missing.length > 0)
    s.log.warn('admission plugins enabled but not built yet; they admit everything', { plugins: missing });
  return admission;
}
