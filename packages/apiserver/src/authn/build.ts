import { readFileSync } from 'node:fs';
import { group, tokenRequest, type ApiObject, type ObjectSchema, type ResourceType } from '@svc/api';
import { ConfigurationError, type ApiServerOptions } from '../options.js';
import type { Logger } from '@svc/component-base';
import { endpointKey, type CreateOnlyHandler } from '../registry/create-only.js';
import {
  audienceAgnostic,
  BearerTokenAuthenticator,
  UnionAuthenticator,
  UnionTokenAuthenticator,
  type Authenticator,
  type TokenAuthenticator,
  ClientCertAuthenticator,
  parseCertificateBundle,
} from '@svc/component-base';
import { BootstrapTokenAuthenticator } from './bootstrap-token.js';
import type { ObjectGetter } from './object-getter.js';
import { OidcAuthenticator } from './oidc.js';
import { AuthenticationConfigController, type ReloadMetrics } from './authentication-config-controller.js';
import { TokenWebhookAuthenticator } from './token-webhook.js';
import { loadWebhookKubeconfig } from '../webhook/kubeconfig.js';
import { selfSubjectReview, tokenReview } from './reviews.js';
import {
  isHttpsUrl,
  JWKS_PATH,
  jwks,
  OPENID_CONFIGURATION_PATH,
  openIdConfiguration,
} from './service-account/discovery.js';
import {
  ensureServiceAccountKey,
  parsePublicKeys,
  parseSigningKey,
  type SigningKey,
  type VerificationKey,
} from './service-account/keys.js';
import { ServiceAccountTokenAuthenticator } from './service-account/token-authenticator.js';
import {
  LegacyServiceAccountTokenAuthenticator,
  type LegacyServiceAccountTokenAuthenticatorOptions,
} from './service-account/legacy-token-authenticator.js';
import { createServiceAccountToken, ServiceAccountTokenSigner } from './service-account/token-request.js';
import { TokenFileAuthenticator } from './token-file.js';
import { CachedTokenAuthenticator } from './token-cache.js';
import { RequestHeaderAuthenticator } from './request-header.js';

export type AuthenticationOptions = Pick<
  ApiServerOptions,
  | 'anonymousAuth'
  | 'tokenAuthFile'
  | 'clientCaFile'
  | 'enableBootstrapTokenAuth'
  | 'serviceAccountKeyFiles'
  | 'serviceAccountSigningKeyFile'
  | 'serviceAccountIssuers'
  | 'serviceAccountJwksUri'
  | 'apiAudiences'
  | 'serviceAccountLookup'
  | 'oidc'
  | 'authenticationConfig'
  | 'authenticationTokenWebhookConfigFile'
  | 'authenticationTokenWebhookVersion'
  | 'authenticationTokenWebhookCacheTtlMs'
  | 'requestHeader'
  | 'tlsPrivateKeyFile'
  | 'certDir'
>;

export interface AuthenticationDeps {
  /** Reads Secrets, ServiceAccounts, Pods and Nodes through the server's store. */
  getObject: ObjectGetter;
  logger: Logger;
  /** Ends background work (OIDC discovery). */
  signal: AbortSignal;
  /** `https://<host>:<port>` clients reach this server at (known once it listens). */
  externalUrl: () => string;
  /** Counts `--authentication-config` reloads. */
  metrics?: ReloadMetrics;
  /** Labels a legacy token Secret with its last-used date (through the server's store); absent: not tracked. */
  labelSecret?: LegacyServiceAccountTokenAuthenticatorOptions['labelSecret'];
  /** Counts legacy token uses (`serviceaccount_legacy_*_token_uses_total`). */
  recordLegacyTokenUse?: LegacyServiceAccountTokenAuthenticatorOptions['recordUse'];
}

/** A document served outside the API (service-account issuer discovery). */
export interface AuthnDocument {
  path: string;
  contentType: string;
  body(): string;
}

/** Everything the server needs from authentication, built once from the flags. */
export interface Authentication {
  /** Every request goes through this (→ user, or `AuthenticationFailed`). */
  authenticator: UnionAuthenticator;
  /** The bearer-token authenticators alone (TokenReview). */
  tokens: TokenAuthenticator;
  apiAudiences: readonly string[];
  /** Create-only endpoints: SelfSubjectReview, TokenReview, and `serviceaccounts/token` when the server can sign. */
  createOnly: Map<string, CreateOnlyHandler>;
  /** Issuer discovery documents (for an https issuer). */
  documents: AuthnDocument[];
  /** `--authentication-config`, when given. */
  config?: AuthenticationConfigController;
}

function readFile(flag: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigurationError(`${flag}: ${(e as Error).message}`);
  }
}

function configured<T>(flag: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof ConfigurationError) throw e;
    throw new ConfigurationError(`${flag}: ${(e as Error).message}`);
  }
}

/**
 * Service-account keys. Verification: `--service-account-key-file`, else
 * `--tls-private-key-file`, else (without a signing key file either) a key generated in
 * `--cert-dir`; the signing key's public half is always accepted too. Signing:
 * `--service-account-signing-key-file`, else (when no key files are given) that same fallback
 * key. With key files but no signing key, the server verifies tokens and does not issue them.
 */
async function serviceAccountKeys(
  o: AuthenticationOptions,
): Promise<{ keys: VerificationKey[]; signing?: SigningKey }> {
  const sources: Array<{ flag: string; file: string }> = o.serviceAccountKeyFiles.map((file) => ({
    flag: '--service-account-key-file',
    file,
  }));
  let signingSource = o.serviceAccountSigningKeyFile
    ? { flag: '--service-account-signing-key-file', file: o.serviceAccountSigningKeyFile }
    : undefined;
  if (sources.length === 0) {
    let fallback: { flag: string; file: string } | undefined;
    if (o.tlsPrivateKeyFile) fallback = { flag: '--tls-private-key-file', file: o.tlsPrivateKeyFile };
    else if (!signingSource) {
      const file = await ensureServiceAccountKey(o.certDir).catch((e: Error) => {
        throw new ConfigurationError(`--cert-dir: ${e.message}`);
      });
      fallback = { flag: '--cert-dir', file };
    }
    if (fallback) sources.push(fallback);
    signingSource ??= fallback;
  }
  const keys: VerificationKey[] = [];
  for (const { flag, file } of sources) {
    const pem = readFile(flag, file);
    keys.push(...configured(flag, () => parsePublicKeys(pem, file)));
  }
  let signing: SigningKey | undefined;
  if (signingSource) {
    const { flag, file } = signingSource;
    const pem = readFile(flag, file);
    signing = configured(flag, () => parseSigningKey(pem, file));
    const { key, kid, alg } = signing;
    if (!keys.some((k) => k.kid === kid)) keys.push({ key, kid, alg });
  }
  return { keys, signing };
}

/**
 * Builds authentication from the flags, in Kubernetes' order: the authenticating proxy's
 * request headers, client certificates, then bearer tokens (static file, bootstrap tokens,
 * service-account tokens, OIDC or the `--authentication-config` JWT authenticators, the
 * token webhook), whose successes are cached for 10 s (`CachedTokenAuthenticator`). Bad
 * files are a `ConfigurationError`. Resource types come from the served catalog (`lookup`).
 */
export async function buildAuthentication(
  o: AuthenticationOptions,
  deps: AuthenticationDeps,
  lookup: (group: string, version: string, plural: string) => ResourceType | undefined,
): Promise<Authentication> {
  const log = deps.logger;
  const apiAudiences = [...o.apiAudiences];
  const requestAuthenticators: Authenticator[] = [];
  const rh = o.requestHeader;
  if (rh.clientCaFile) {
    const file = rh.clientCaFile;
    const pem = readFile('--requestheader-client-ca-file', file);
    requestAuthenticators.push(
      new RequestHeaderAuthenticator({
        roots: configured('--requestheader-client-ca-file', () => parseCertificateBundle(pem, file)),
        allowedNames: rh.allowedNames,
        usernameHeaders: rh.usernameHeaders,
        uidHeaders: rh.uidHeaders,
        groupHeaders: rh.groupHeaders,
        extraHeaderPrefixes: rh.extraHeadersPrefix,
      }),
    );
  }
  if (o.clientCaFile) {
    const file = o.clientCaFile;
    const pem = readFile('--client-ca-file', file);
    requestAuthenticators.push(configured('--client-ca-file', () => ClientCertAuthenticator.fromPem(pem, file)));
  }

  const tokenAuthenticators: TokenAuthenticator[] = [];
  if (o.tokenAuthFile) {
    const file = o.tokenAuthFile;
    tokenAuthenticators.push(
      audienceAgnostic(
        configured('--token-auth-file', () => TokenFileAuthenticator.fromFile(file)),
        apiAudiences,
      ),
    );
  }
  if (o.enableBootstrapTokenAuth)
    tokenAuthenticators.push(audienceAgnostic(new BootstrapTokenAuthenticator(deps.getObject), apiAudiences));
  const sa = await serviceAccountKeys(o);
  tokenAuthenticators.push(
    new ServiceAccountTokenAuthenticator({
      issuers: o.serviceAccountIssuers,
      keys: sa.keys,
      lookup: o.serviceAccountLookup,
      getObject: deps.getObject,
    }),
  );
  // Legacy tokens in Secrets (serviceaccount-token-controller), verified with the same keys, as Kubernetes.
  tokenAuthenticators.push(
    audienceAgnostic(
      new LegacyServiceAccountTokenAuthenticator({
        keys: sa.keys,
        lookup: o.serviceAccountLookup,
        getObject: deps.getObject,
        labelSecret: deps.labelSecret,
        recordUse: deps.recordLegacyTokenUse,
      }),
      apiAudiences,
    ),
  );
  if (o.oidc) {
    const { caFile, ...flags } = o.oidc;
    const caPem = caFile ? readFile('--oidc-ca-file', caFile) : undefined;
    const oidc = new OidcAuthenticator(
      { ...flags, caPem },
      {
        signal: deps.signal,
        onError: (message) => log.warn('OIDC authenticator not ready', { error: message }),
      },
    );
    tokenAuthenticators.push(audienceAgnostic(oidc, apiAudiences));
  }
  let config: AuthenticationConfigController | undefined;
  if (o.authenticationConfig) {
    const { file, text, config: initial, context } = o.authenticationConfig;
    config = new AuthenticationConfigController({
      file,
      initial,
      initialText: text,
      context,
      logger: log,
      signal: deps.signal,
      metrics: deps.metrics,
      // A reloaded file takes effect at once, not after the cached answers' 10 s.
      onReloaded: () => tokens.forget(),
    });
    tokenAuthenticators.push(audienceAgnostic(config, apiAudiences));
  }
  if (o.authenticationTokenWebhookConfigFile) {
    const file = o.authenticationTokenWebhookConfigFile;
    const target = configured('--authentication-token-webhook-config-file', () => loadWebhookKubeconfig(file));
    tokenAuthenticators.push(
      new TokenWebhookAuthenticator({
        target,
        version: o.authenticationTokenWebhookVersion,
        cacheTtlMs: o.authenticationTokenWebhookCacheTtlMs,
        apiAudiences,
      }),
    );
  }
  // Kubernetes caches every token authenticator's successes together, for requests and TokenReviews.
  const tokens = new CachedTokenAuthenticator(new UnionTokenAuthenticator(tokenAuthenticators));
  requestAuthenticators.push(new BearerTokenAuthenticator(tokens, apiAudiences));

  const authenticator = new UnionAuthenticator({
    authenticators: requestAuthenticators,
    anonymous: config ? (req) => config.anonymousAllowed(req) ?? o.anonymousAuth : o.anonymousAuth,
    onFailure: (reason) => log.v(2).info('unable to authenticate the request', { error: reason }),
  });

  const createOnly = new Map<string, CreateOnlyHandler>();
  const kindOf = (r: ResourceType): CreateOnlyHandler['kind'] => ({
    group: r.group,
    version: r.version,
    kind: r.kind,
    schema: r.schema as ObjectSchema,
  });
  const authnGroup = group('authentication');
  const ssr = lookup(authnGroup, 'v1', 'selfsubjectreviews');
  if (ssr)
    createOnly.set(endpointKey(ssr), {
      kind: kindOf(ssr),
      create: async (req) => selfSubjectReview(req.body, req.user),
    });
  const tr = lookup(authnGroup, 'v1', 'tokenreviews');
  if (tr)
    createOnly.set(endpointKey(tr), {
      kind: kindOf(tr),
      create: (req) => tokenReview(req, tokens, apiAudiences),
    });
  const serviceAccounts = lookup('', 'v1', 'serviceaccounts');
  const issuer = o.serviceAccountIssuers[0] ?? '';
  if (sa.signing && serviceAccounts) {
    const signer = new ServiceAccountTokenSigner(sa.signing, issuer);
    createOnly.set(endpointKey(serviceAccounts, 'token'), {
      kind: tokenRequest(),
      create: (req): Promise<ApiObject> =>
        createServiceAccountToken({ signer, apiAudiences, getObject: deps.getObject }, req),
    });
  }

  const documents: AuthnDocument[] = [];
  if (isHttpsUrl(issuer)) {
    const jwksUri = (): string => o.serviceAccountJwksUri ?? `${deps.externalUrl()}${JWKS_PATH}`;
    documents.push(
      {
        path: OPENID_CONFIGURATION_PATH,
        contentType: 'application/json',
        body: () => JSON.stringify(openIdConfiguration(issuer, jwksUri(), sa.keys)),
      },
      { path: JWKS_PATH, contentType: 'application/jwk-set+json', body: () => JSON.stringify(jwks(sa.keys)) },
    );
  }
  return { authenticator, tokens, apiAudiences, createOnly, documents, config };
}
