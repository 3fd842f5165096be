import {
  DEFAULT_ENABLED_ADMISSION_PLUGINS,
  enabledAdmissionPlugins,
  ORDERED_ADMISSION_PLUGINS,
  type AdmissionPluginName,
} from './admission/plugin-names.js';
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import {
  boolOption,
  durationOption,
  intArg,
  listOption,
  metricsPolicy,
  namingOption,
  parseFlags,
  portArg,
  repeatable,
  featureOptions,
  withFeatureFlags,
  withLoggingFlags,
  withMetricsFlags,
  type MetricsPolicy,
} from '@svc/component-base';
import {
  builtinResources,
  defaultServiceAccountIssuer,
  isNamingScheme,
  naming,
  NAMINGS,
  useNaming,
  type NamingScheme,
  type ResourceType,
} from '@svc/api';
import {
  type FeatureGates,
  parseRuntimeConfig,
  groupVersionKey,
  resourceKey,
  type RuntimeConfig,
} from '@svc/machinery';
import type { LogFormat } from '@svc/component-base';
import { OIDC_SIGNING_ALGS, type OidcOptions } from './authn/oidc.js';
import { auditOptions, withAuditFlags, type AuditOptions } from './audit/options.js';
import { serverFlags, withServerFlags, type ServerFlags } from './server-flags.js';
import { parseStoreOverrides, type StoreOverride } from './store-overrides.js';
import { parseWatchCacheSizes, type WatchCacheSizes } from './watch-cache-sizes.js';
import { serviceRangeFlags, withServiceRangeFlags, type ServiceRangeFlags } from './service-range-flags.js';
import { servingOptions, withServingFlags, type ServingOptions } from './server/serving-options.js';
import {
  parseAuthenticationConfig,
  type AuthenticationConfig,
  type AuthenticationConfigContext,
} from './authn/authentication-config.js';

/** The `--oidc-*` flags, when `--oidc-issuer-url` is given. */
export type OidcFlags = Omit<OidcOptions, 'caPem'> & { caFile?: string };

/** The `--requestheader-*` flags (authenticating proxy). */
export interface RequestHeaderFlags {
  clientCaFile?: string;
  allowedNames: string[];
  usernameHeaders: string[];
  uidHeaders: string[];
  groupHeaders: string[];
  extraHeadersPrefix: string[];
}

/** The `--svclet-*` flags: how the server reaches node agents (`pods/log`). */
export interface SvcletClientFlags {
  clientCertificate?: string;
  clientKey?: string;
  /** Absent: the agents' serving certificates are not verified (as Kubernetes). */
  certificateAuthority?: string;
  /** Bounds connecting and the TLS handshake; 0: no bound. */
  timeoutMs: number;
  preferredAddressTypes: string[];
}

/** `--authentication-config`, read and validated at start (reloaded by the server later). */
export interface AuthenticationConfigFile {
  file: string;
  text: string;
  config: AuthenticationConfig;
  /** What reloads are validated against. */
  context: AuthenticationConfigContext;
}

/**
 * A configuration the flags allow but the server cannot use (a file that does not read or
 * parse): start-up ends with exit code 2 and this one line, like a bad flag.
 */
export class ConfigurationError extends Error {}

/** Every svc-apiserver setting, parsed and validated. Durations are milliseconds. */
export interface ApiServerOptions extends ServerFlags, ServiceRangeFlags {
  storeServers: string[];
  /** `--store-servers-overrides`: resources kept in stores of their own. */
  storeServersOverrides: StoreOverride[];
  storePrefix: string;
  storeCaFile?: string;
  storeCertFile?: string;
  storeKeyFile?: string;
  storeHealthcheckTimeoutMs: number;
  storeReadycheckTimeoutMs: number;
  storeCountMetricPollPeriodMs: number;
  storeCompactionIntervalMs: number;
  /** `--event-ttl`: how long Events are kept after their last write. */
  eventTtlMs: number;
  /** `--lease-reuse-duration-seconds`: how long one etcd lease serves Events written meanwhile. */
  leaseReuseDurationSeconds: number;
  watchCache: boolean;
  /** `--watch-cache-sizes` as given (Kubernetes' defaults turn Events' cache off; see watch-cache-sizes.ts). */
  watchCacheSizes: WatchCacheSizes;
  bindAddress: string;
  securePort: number;
  certDir: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  advertiseAddress?: string;
  tokenAuthFile?: string;
  anonymousAuth: boolean;
  clientCaFile?: string;
  enableBootstrapTokenAuth: boolean;
  serviceAccountKeyFiles: string[];
  serviceAccountSigningKeyFile?: string;
  /** The first signs new tokens; all are accepted. */
  serviceAccountIssuers: string[];
  serviceAccountJwksUri?: string;
  /** Defaults to the service-account issuers. */
  apiAudiences: string[];
  serviceAccountLookup: boolean;
  oidc?: OidcFlags;
  authenticationConfig?: AuthenticationConfigFile;
  authenticationTokenWebhookConfigFile?: string;
  authenticationTokenWebhookVersion: 'v1' | 'v1beta1';
  authenticationTokenWebhookCacheTtlMs: number;
  requestHeader: RequestHeaderFlags;
  /** Empty when `authorizationConfig` is given (the file lists the authorizers). */
  authorizationMode: string[];
  /** `--authorization-config`: a structured AuthorizationConfiguration file. */
  authorizationConfig?: string;
  /** `--authorization-policy-file` (ABAC). */
  authorizationPolicyFile?: string;
  authorizationWebhookConfigFile?: string;
  authorizationWebhookVersion: 'v1' | 'v1beta1';
  authorizationWebhookCacheAuthorizedTtlMs: number;
  authorizationWebhookCacheUnauthorizedTtlMs: number;
  featureGates: FeatureGates;
  /** `--emulated-version` (`svc=1.31`): the release whose gate defaults and APIs the server has; unset: 1.32. */
  emulatedVersion?: string;
  /** `--disabled-metrics`, `--show-hidden-metrics-for-version`, `--allow-metric-labels*`. */
  metrics: MetricsPolicy;
  runtimeConfig: RuntimeConfig;
  livezGracePeriodMs: number;
  shutdownDelayDurationMs: number;
  maxRequestsInflight: number;
  maxMutatingRequestsInflight: number;
  /** `--enable-priority-and-fairness` (true): the APF filter instead of max in-flight; its seats are the two caps summed. */
  enablePriorityAndFairness: boolean;
  minRequestTimeoutSeconds: number;
  /** The admission plugins that run (`--enable-admission-plugins` / `--disable-admission-plugins`), in Kubernetes' order. */
  admissionPlugins: AdmissionPluginName[];
  /** `--admission-control-config-file`: per-plugin configuration, read at start (a bad file exits 2). */
  admissionControlConfigFile?: string;
  /** `--request-timeout` (Kubernetes' generic server flag, 1m0s): requests that are not long-running get 504 after it. */
  requestTimeoutMs: number;
  /** `--encryption-provider-config`: EncryptionConfiguration for encryption at rest, read at start (a bad file exits 2). */
  encryptionProviderConfig?: string;
  /** `--encryption-provider-config-automatic-reload`: the file is watched and reloaded. */
  encryptionProviderConfigAutomaticReload: boolean;
  /** DefaultTolerationSeconds admission: seconds of the not-ready / unreachable tolerations pods get. */
  defaultNotReadyTolerationSeconds: number;
  defaultUnreachableTolerationSeconds: number;
  svclet: SvcletClientFlags;
  naming: NamingScheme;
  loggingFormat: LogFormat;
  verbosity: number;
  /** The `--audit-*` flags (policy read and checked). */
  audit: AuditOptions;
  /** The listener's flags: HTTP/2, GOAWAY, CORS, throttling, profiling (`server/serving-options.ts`). */
  serving: ServingOptions;
}

/** Node address types (`--svclet-preferred-address-types`), in the default order. */
const NODE_ADDRESS_TYPES = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'];

const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'];

/** The compiled-in types under a naming (the current naming is restored afterwards). */
function builtinResourcesFor(scheme: NamingScheme): ResourceType[] {
  const previous = naming().scheme;
  useNaming(scheme);
  try {
    return builtinResources();
  } finally {
    useNaming(previous);
  }
}

export function apiServerCommand(): Command {
  const cmd = new Command(naming().apiserverName)
    .description(
      'The API server validates and configures data for the API objects and is the front end to the shared cluster state.',
    )
    .allowExcessArguments(false)
    .addOption(
      listOption(
        '--store-servers <urls>',
        'List of store servers to connect with (scheme://ip:port), comma separated.',
        ['http://127.0.0.1:2379'],
      ),
    )
    .addOption(
      listOption(
        '--store-servers-overrides <overrides>',
        'Per-resource store servers, comma separated: group/resource#servers, where servers are URLs, semicolon separated (etcd http/https URLs, or one redis://host:port).',
      ),
    )
    .addOption(
      new Option('--store-prefix <prefix>', 'The prefix to prepend to all resource paths in the store.').default(
        '/registry',
      ),
    )
    .addOption(
      new Option('--store-cafile <file>', 'SSL Certificate Authority file used to secure store communication.'),
    )
    .addOption(new Option('--store-certfile <file>', 'SSL certification file used to secure store communication.'))
    .addOption(new Option('--store-keyfile <file>', 'SSL key file used to secure store communication.'))
    .addOption(durationOption('--store-healthcheck-timeout', 'The timeout to use when checking store health.', 2000))
    .addOption(durationOption('--store-readycheck-timeout', 'The timeout to use when checking store readiness.', 2000))
    .addOption(
      durationOption(
        '--store-count-metric-poll-period',
        'Frequency of polling the store for the number of resources per type. 0 disables.',
        60_000,
      ),
    )
    .addOption(
      durationOption(
        '--store-compaction-interval',
        'The interval of compaction requests. 0 disables compaction from the API server.',
        300_000,
      ),
    )
    .addOption(durationOption('--event-ttl', 'How long to keep Events after their last change.', 3_600_000))
    .addOption(
      new Option(
        '--lease-reuse-duration-seconds <seconds>',
        'How many seconds one store lease is reused for the Events written meanwhile. Lower values put fewer objects on one lease; very low values load the store with lease grants.',
      )
        .default(60)
        .argParser(intArg),
    )
    .addOption(boolOption('--watch-cache', 'Enable watch caching in the apiserver.', true))
    .addOption(
      listOption(
        '--watch-cache-sizes <sizes>',
        'Watch cache size settings for some resources (pods, nodes, etc.), comma separated. The individual setting format: resource[.group]#size, where resource is lowercase plural (no version), group is omitted for resources of apiVersion v1 (the legacy core API) and included for others, and size is a number. This option is only meaningful for resources built into the apiserver, not ones defined by CRDs, and is only consulted if the watch-cache is enabled. The only meaningful size setting to supply here is zero, which means to disable watch caching for the associated resource; all non-zero values are equivalent and mean to not disable watch caching for that resource. By default Events (core and events/v1) are not cached: events#100 caches them.',
      ),
    )
    .addOption(
      new Option('--bind-address <ip>', 'The IP address on which to listen for the --secure-port port.').default(
        '0.0.0.0',
      ),
    )
    .addOption(
      new Option(
        '--secure-port <port>',
        'The port on which to serve HTTPS with authentication and authorization. 0 picks a free port.',
      )
        .default(6443)
        .argParser(portArg),
    )
    .addOption(
      new Option(
        '--cert-dir <dir>',
        'The directory where the TLS certs are located. Ignored if --tls-cert-file and --tls-private-key-file are provided.',
      ).default('/var/run/svc'),
    )
    .addOption(
      new Option(
        '--tls-cert-file <file>',
        'File containing the default x509 certificate for HTTPS (CA cert, if any, concatenated after server cert).',
      ),
    )
    .addOption(
      new Option(
        '--tls-private-key-file <file>',
        'File containing the default x509 private key matching --tls-cert-file.',
      ),
    )
    .addOption(
      new Option(
        '--advertise-address <ip>',
        'The IP address on which to advertise the apiserver to members of the cluster.',
      ),
    )
    .addOption(
      new Option(
        '--token-auth-file <file>',
        'If set, the file that will be used to secure the secure port of the API server via token authentication (CSV: token,user,uid,"group1,group2").',
      ),
    )
    .addOption(boolOption('--anonymous-auth', 'Enables anonymous requests to the secure port of the API server.', true))
    .addOption(
      new Option(
        '--client-ca-file <file>',
        'If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate (and its Organizations as groups).',
      ),
    )
    .addOption(
      boolOption(
        '--enable-bootstrap-token-auth',
        'Enable to allow secrets of the bootstrap token type in the system namespace to be used for TLS bootstrapping authentication.',
        false,
      ),
    )
    .addOption(
      new Option(
        '--service-account-key-file <file>',
        'File containing PEM-encoded x509 RSA or ECDSA private or public keys, used to verify service-account tokens (repeatable). Defaults to --tls-private-key-file, else to a key generated in --cert-dir.',
      )
        .default([], '')
        .argParser(repeatable),
    )
    .addOption(
      new Option(
        '--service-account-signing-key-file <file>',
        'Path to the file that contains the current private key of the service-account token issuer (used by TokenRequest). Defaults to --tls-private-key-file when no --service-account-key-file is given, else to a key generated in --cert-dir.',
      ),
    )
    .addOption(
      new Option(
        '--service-account-issuer <issuer>',
        'Identifier of the service-account token issuer, in the iss claim of issued tokens (repeatable; the first issues, all are accepted).',
      )
        .default(
          [],
          `"${defaultServiceAccountIssuer(NAMINGS.svc)}"; "${defaultServiceAccountIssuer(NAMINGS.kubernetes)}" with --naming=kubernetes`,
        )
        .argParser(repeatable),
    )
    .addOption(
      new Option(
        '--service-account-jwks-uri <uri>',
        'Overrides the URI for the JSON Web Key Set in the discovery doc served at /.well-known/openid-configuration (default: https://<advertise address>:<port>/openid/v1/jwks).',
      ),
    )
    .addOption(
      listOption(
        '--api-audiences <audiences>',
        'Identifiers of the API. The service-account token authenticator validates that tokens used against the API are bound to at least one of these audiences. Defaults to the --service-account-issuer values.',
      ),
    )
    .addOption(
      boolOption(
        '--service-account-lookup',
        'If true, validate service-account tokens exist in the store (the account and any bound object, with the same uid) as part of authentication.',
        true,
      ),
    )
    .addOption(
      new Option(
        '--oidc-issuer-url <url>',
        'The URL of the OpenID issuer, only HTTPS scheme will be accepted. If set, it will be used to verify the OIDC JSON Web Token (JWT).',
      ),
    )
    .addOption(
      new Option(
        '--oidc-client-id <id>',
        'The client ID for the OpenID Connect client, must be set if --oidc-issuer-url is set.',
      ),
    )
    .addOption(
      new Option(
        '--oidc-username-claim <claim>',
        "The OpenID claim to use as the user name. Claims other than the default ('sub') are not guaranteed to be unique and immutable.",
      ).default('sub'),
    )
    .addOption(
      new Option(
        '--oidc-username-prefix <prefix>',
        "If provided, all usernames will be prefixed with this value. If not provided, username claims other than 'email' are prefixed by the issuer URL to avoid clashes. To skip any prefixing, provide the value '-'.",
      ),
    )
    .addOption(
      new Option(
        '--oidc-groups-claim <claim>',
        'If provided, the name of a custom OpenID Connect claim for specifying user groups. The claim value is expected to be an array of strings.',
      ),
    )
    .addOption(
      new Option(
        '--oidc-groups-prefix <prefix>',
        'If provided, all groups will be prefixed with this value to prevent conflicts with other authentication strategies.',
      ),
    )
    .addOption(
      new Option(
        '--oidc-required-claim <key=value>',
        'A key=value pair that describes a required claim in the ID Token. If set, the claim is verified to be present in the ID Token with a matching value. Repeat this flag to specify multiple claims.',
      )
        .default([], '')
        .argParser(repeatable),
    )
    .addOption(
      new Option(
        '--oidc-ca-file <file>',
        "If set, the OpenID server's certificate will be verified by one of the authorities in the oidc-ca-file, otherwise the host's root CA set will be used.",
      ),
    )
    .addOption(
      listOption(
        '--oidc-signing-algs <algs>',
        `Comma-separated list of allowed JOSE asymmetric signing algorithms: ${OIDC_SIGNING_ALGS.join(', ')}.`,
        ['RS256'],
      ),
    )
    .addOption(
      new Option(
        '--authentication-config <file>',
        'File with Authenticator Configuration to configure the JWT Token authenticator or the anonymous authenticator. Requires the StructuredAuthenticationConfiguration feature gate. Mutually exclusive with the --oidc-* flags; an anonymous section also excludes --anonymous-auth. Reloaded when the file changes.',
      ),
    )
    .addOption(
      new Option(
        '--authentication-token-webhook-config-file <file>',
        'File with webhook configuration for token authentication in kubeconfig format. The API server will query the remote service to determine authentication for bearer tokens.',
      ),
    )
    .addOption(
      new Option(
        '--authentication-token-webhook-version <version>',
        'The API version of the TokenReview (authentication API group) to send to and expect from the webhook.',
      )
        .default('v1beta1')
        .choices(['v1', 'v1beta1']),
    )
    .addOption(
      durationOption(
        '--authentication-token-webhook-cache-ttl',
        'The duration to cache responses from the webhook token authenticator.',
        120_000,
      ),
    )
    .addOption(
      new Option(
        '--requestheader-client-ca-file <file>',
        'Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in headers specified by --requestheader-username-headers. WARNING: generally do not depend on authorization being already done for incoming requests.',
      ),
    )
    .addOption(
      listOption(
        '--requestheader-allowed-names <names>',
        'List of client certificate common names to allow to provide usernames in headers specified by --requestheader-username-headers. If empty, any client certificate validated by the authorities in --requestheader-client-ca-file is allowed.',
      ),
    )
    .addOption(
      listOption(
        '--requestheader-username-headers <headers>',
        'List of request headers to inspect for usernames. X-Remote-User is common.',
      ),
    )
    .addOption(
      listOption(
        '--requestheader-uid-headers <headers>',
        'List of request headers to inspect for UIDs. X-Remote-Uid is suggested.',
      ),
    )
    .addOption(
      listOption(
        '--requestheader-group-headers <headers>',
        'List of request headers to inspect for groups. X-Remote-Group is suggested.',
      ),
    )
    .addOption(
      listOption(
        '--requestheader-extra-headers-prefix <prefixes>',
        'List of request header prefixes to inspect. X-Remote-Extra- is suggested.',
      ),
    )
    .addOption(
      listOption(
        '--enable-admission-plugins <plugins>',
        `Admission plugins to run besides the default ones (${[...DEFAULT_ENABLED_ADMISSION_PLUGINS].join(', ')}), comma separated, from: ${ORDERED_ADMISSION_PLUGINS.join(', ')}. They always run in a fixed order, whatever the order here.`,
        [],
      ),
    )
    .addOption(
      listOption(
        '--disable-admission-plugins <plugins>',
        `Default admission plugins not to run, comma separated, from: ${ORDERED_ADMISSION_PLUGINS.join(', ')}.`,
        [],
      ),
    )
    .addOption(
      new Option(
        '--encryption-provider-config <file>',
        'EncryptionConfiguration file: how the values of each resource are encrypted in the store (per resource, providers in order: the first encrypts, all decrypt).',
      ),
    )
    .addOption(
      boolOption(
        '--encryption-provider-config-automatic-reload',
        'Watch the --encryption-provider-config file and use it again whenever it changes (a bad file keeps the current one). KMS plugins then share the one health check kms-providers.',
        false,
      ),
    )
    .addOption(
      new Option(
        '--admission-control-config-file <file>',
        'AdmissionConfiguration file: per-plugin configuration, inline or by path.',
      ),
    )
    .addOption(
      listOption(
        '--authorization-mode <modes>',
        `Ordered list of plug-ins to do authorization on secure port. Comma-delimited list of: ${AUTHORIZATION_MODES.join(',')}.`,
        ['AlwaysAllow'],
      ),
    )
    .addOption(
      new Option(
        '--authorization-config <file>',
        'File with the authorization configuration (AuthorizationConfiguration) to set up the authorizer chain. Note: cannot be used with --authorization-mode or --authorization-webhook-* flags.',
      ),
    )
    .addOption(
      new Option(
        '--authorization-policy-file <file>',
        'File with the authorization policy in JSON lines format, used with --authorization-mode=ABAC, on the secure port.',
      ),
    )
    .addOption(
      new Option(
        '--authorization-webhook-config-file <file>',
        "File with webhook configuration in kubeconfig format, used with --authorization-mode=Webhook. The API server will query the remote service to determine access on the API server's secure port.",
      ),
    )
    .addOption(
      new Option(
        '--authorization-webhook-version <version>',
        'The API version of the authorization.<suffix> SubjectAccessReview to send to and expect from the webhook.',
      )
        .default('v1beta1')
        .choices(['v1beta1', 'v1']),
    )
    .addOption(
      durationOption(
        '--authorization-webhook-cache-authorized-ttl',
        "The duration to cache 'authorized' responses from the webhook authorizer.",
        300_000,
      ),
    )
    .addOption(
      durationOption(
        '--authorization-webhook-cache-unauthorized-ttl',
        "The duration to cache 'unauthorized' responses from the webhook authorizer.",
        30_000,
      ),
    )
    .addOption(
      new Option('--runtime-config <config>', 'A set of key=value pairs that enable or disable built-in APIs.')
        .default([], '')
        .argParser(repeatable),
    )
    .addOption(
      durationOption(
        '--livez-grace-period',
        'This option represents the maximum amount of time it should take for apiserver to complete its startup sequence and become live.',
        0,
      ),
    )
    .addOption(
      durationOption(
        '--shutdown-delay-duration',
        'Time to delay the termination. During that time the server keeps serving requests normally while /readyz fails.',
        0,
      ),
    )
    .addOption(
      new Option(
        '--max-requests-inflight <n>',
        'The maximum number of non-mutating requests in flight at a given time. 0 means no limit.',
      )
        .default(400)
        .argParser(intArg),
    )
    .addOption(
      new Option(
        '--max-mutating-requests-inflight <n>',
        'The maximum number of mutating requests in flight at a given time. 0 means no limit.',
      )
        .default(200)
        .argParser(intArg),
    )
    .addOption(
      boolOption(
        '--enable-priority-and-fairness',
        'If true, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness',
        true,
      ),
    )
    .addOption(
      new Option(
        '--default-not-ready-toleration-seconds <seconds>',
        'Indicates the tolerationSeconds of the toleration for notReady:NoExecute that is added by default to every pod that does not already have such a toleration.',
      )
        .default(300)
        .argParser(intArg),
    )
    .addOption(
      new Option(
        '--default-unreachable-toleration-seconds <seconds>',
        'Indicates the tolerationSeconds of the toleration for unreachable:NoExecute that is added by default to every pod that does not already have such a toleration.',
      )
        .default(300)
        .argParser(intArg),
    )
    .addOption(
      new Option(
        '--min-request-timeout <seconds>',
        'The minimum number of seconds a handler must keep a request open before timing it out (watch picks a random timeout above it).',
      )
        .default(1800)
        .argParser(intArg),
    )
    .addOption(
      durationOption(
        '--request-timeout',
        'How long a request that is not a watch or stream may take before the server answers 504 Timeout (watches follow --min-request-timeout).',
        60_000,
      ),
    )
    .addOption(new Option('--svclet-client-certificate <file>', 'Path to a client cert file for TLS to node agents.'))
    .addOption(new Option('--svclet-client-key <file>', 'Path to a client key file for TLS to node agents.'))
    .addOption(
      new Option(
        '--svclet-certificate-authority <file>',
        "Path to a cert file for the certificate authority of node agents' serving certificates. Unset: they are not verified.",
      ),
    )
    .addOption(
      durationOption('--svclet-timeout', 'Timeout for node agent operations (connecting and the TLS handshake).', 5000),
    )
    .addOption(
      listOption(
        '--svclet-preferred-address-types <types>',
        'List of the preferred NodeAddressTypes to use for node agent connections.',
        NODE_ADDRESS_TYPES,
      ),
    )
    .addOption(namingOption('Spelling of product identifiers: svc, or kubernetes for stock clients.'));
  withFeatureFlags(cmd);
  withAuditFlags(cmd);
  withServerFlags(cmd);
  withServiceRangeFlags(cmd);
  withServingFlags(cmd);
  withMetricsFlags(cmd);
  withLoggingFlags(cmd);
  cmd.configureHelp({ sortOptions: false });
  return cmd;
}

/**
 * Parses argv (without node and script) into options; throws `CommanderError` on bad input.
 * `quiet` keeps commander's own error text off stderr (the caller prints one line); help
 * still goes to stdout.
 */
export function parseApiServerOptions(argv: string[], opts: { quiet?: boolean } = {}): ApiServerOptions {
  const parsed = parseFlags(apiServerCommand(), argv, opts);
  const { cmd, o, fail, givenOnCli } = parsed;
  const { featureGates: gates, emulatedVersion } = featureOptions(parsed);
  let runtimeConfig: RuntimeConfig;
  try {
    runtimeConfig = parseRuntimeConfig((o.runtimeConfig as string[]).join(','));
  } catch (e) {
    return fail(`invalid argument for "--runtime-config" flag: ${(e as Error).message}`);
  }
  let admissionPlugins: AdmissionPluginName[];
  try {
    admissionPlugins = enabledAdmissionPlugins({
      enable: o.enableAdmissionPlugins as string[],
      disable: o.disableAdmissionPlugins as string[],
    });
  } catch (e) {
    return fail(`invalid argument for admission plugins: ${(e as Error).message}`);
  }
  const authzConfig = o.authorizationConfig as string | undefined;
  if (authzConfig !== undefined) {
    if (!gates.enabled('StructuredAuthorizationConfiguration'))
      fail('--authorization-config: requires the StructuredAuthorizationConfiguration feature gate');
    if (givenOnCli('authorizationMode'))
      fail('--authorization-config can not be specified simultaneously with --authorization-mode');
    const webhookFlags = [
      'authorizationWebhookConfigFile',
      'authorizationWebhookVersion',
      'authorizationWebhookCacheAuthorizedTtl',
      'authorizationWebhookCacheUnauthorizedTtl',
    ];
    if (webhookFlags.some(givenOnCli))
      fail('--authorization-config can not be specified simultaneously with --authorization-webhook-* flags');
  }
  const modes = authzConfig !== undefined ? [] : ((o.authorizationMode as string[] | undefined) ?? ['AlwaysAllow']);
  if (modes.includes('ABAC') !== (o.authorizationPolicyFile !== undefined)) {
    fail(
      modes.includes('ABAC')
        ? '--authorization-policy-file: required by authorization mode ABAC'
        : '--authorization-policy-file: only used with authorization mode ABAC',
    );
  }
  if (modes.includes('Webhook') !== (o.authorizationWebhookConfigFile !== undefined)) {
    fail(
      modes.includes('Webhook')
        ? '--authorization-webhook-config-file: required by authorization mode Webhook'
        : '--authorization-webhook-config-file: only used with authorization mode Webhook',
    );
  }
  for (const m of modes) {
    if (!AUTHORIZATION_MODES.includes(m))
      fail(`--authorization-mode: authorization mode ${JSON.stringify(m)} is not a valid mode`);
  }
  if (new Set(modes).size !== modes.length) fail('--authorization-mode: authorization modes may not be repeated');
  if ((o.tlsCertFile === undefined) !== (o.tlsPrivateKeyFile === undefined)) {
    fail('--tls-cert-file and --tls-private-key-file must be given together');
  }
  if ((o.svcletClientCertificate === undefined) !== (o.svcletClientKey === undefined)) {
    fail('--svclet-client-certificate and --svclet-client-key must be given together');
  }
  const addressTypes = o.svcletPreferredAddressTypes as string[];
  if (addressTypes.length === 0) fail('--svclet-preferred-address-types must be specified');
  for (const t of addressTypes) {
    if (!NODE_ADDRESS_TYPES.includes(t))
      fail(
        `--svclet-preferred-address-types: unsupported value ${JSON.stringify(t)}: supported values: ${NODE_ADDRESS_TYPES.join(', ')}`,
      );
  }
  for (const k of ['defaultNotReadyTolerationSeconds', 'defaultUnreachableTolerationSeconds']) {
    if ((o[k] as number) < 0) fail(`--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} must not be negative`);
  }
  if ((o.eventTtl as number) <= 0) fail('--event-ttl must be greater than 0');
  let storeServersOverrides: StoreOverride[] = [];
  let watchCacheSizes: WatchCacheSizes = new Map();
  try {
    storeServersOverrides = parseStoreOverrides((o.storeServersOverrides as string[] | undefined) ?? []);
    watchCacheSizes = parseWatchCacheSizes((o.watchCacheSizes as string[] | undefined) ?? []);
  } catch (e) {
    fail((e as Error).message);
  }
  if (o.encryptionProviderConfigAutomaticReload && !o.encryptionProviderConfig)
    fail('--encryption-provider-config-automatic-reload must be set with --encryption-provider-config');
  if ((o.requestTimeout as number) <= 0) fail('--request-timeout must be greater than 0');
  for (const k of ['maxRequestsInflight', 'maxMutatingRequestsInflight'] as const) {
    if ((o[k] as number) < 0) fail(`--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} can not be negative value`);
  }
  if (o.enablePriorityAndFairness && (o.maxRequestsInflight as number) + (o.maxMutatingRequestsInflight as number) <= 0)
    fail(
      '--max-requests-inflight plus --max-mutating-requests-inflight must be positive if --enable-priority-and-fairness is true',
    );
  if ((o.leaseReuseDurationSeconds as number) < 1) fail('--lease-reuse-duration-seconds must be greater than 0');
  const namingScheme = String(o.naming);
  if (!isNamingScheme(namingScheme)) return fail(`--naming: unknown naming ${namingScheme}`);
  const issuers =
    (o.serviceAccountIssuer as string[]).length > 0
      ? (o.serviceAccountIssuer as string[])
      : [defaultServiceAccountIssuer(NAMINGS[namingScheme])];
  for (const iss of issuers) {
    if (iss === '') fail('--service-account-issuer: must not be empty');
    if (iss.includes(':') && !isUrl(iss))
      fail(`--service-account-issuer: ${JSON.stringify(iss)} contains a ':' but is not a valid URL`);
  }
  if (new Set(issuers).size !== issuers.length) fail('--service-account-issuer: the same issuer is given twice');
  const jwksUri = o.serviceAccountJwksUri as string | undefined;
  if (jwksUri !== undefined && (!isUrl(jwksUri) || !jwksUri.startsWith('https:'))) {
    fail(`--service-account-jwks-uri: ${JSON.stringify(jwksUri)} must be an https URL`);
  }
  const givenAudiences = o.apiAudiences as string[] | undefined;
  const audiences = givenAudiences?.length ? givenAudiences : issuers;
  const oidc = oidcFlags(o, fail);
  const authenticationConfig = authenticationConfigFlag({ o, cmd, gates, issuers, scheme: namingScheme, fail });
  // Like Kubernetes, refuse group versions and resources this server does not know.
  const served = builtinResourcesFor(namingScheme);
  for (const key of runtimeConfig.groupVersions.keys()) {
    if (!served.some((r) => groupVersionKey(r.group, r.version) === key))
      fail(`--runtime-config: unknown api group version ${JSON.stringify(key)}`);
  }
  for (const key of runtimeConfig.resources.keys()) {
    if (!served.some((r) => resourceKey(r.group, r.version, r.plural) === key))
      fail(`--runtime-config: unknown api resource ${JSON.stringify(key)}`);
  }

  return {
    storeServers: o.storeServers as string[],
    storeServersOverrides,
    storePrefix: String(o.storePrefix).replace(/\/+$/, '') || '/registry',
    storeCaFile: o.storeCafile as string | undefined,
    storeCertFile: o.storeCertfile as string | undefined,
    storeKeyFile: o.storeKeyfile as string | undefined,
    storeHealthcheckTimeoutMs: o.storeHealthcheckTimeout as number,
    storeReadycheckTimeoutMs: o.storeReadycheckTimeout as number,
    storeCountMetricPollPeriodMs: o.storeCountMetricPollPeriod as number,
    storeCompactionIntervalMs: o.storeCompactionInterval as number,
    eventTtlMs: o.eventTtl as number,
    leaseReuseDurationSeconds: o.leaseReuseDurationSeconds as number,
    watchCache: o.watchCache as boolean,
    watchCacheSizes,
    bindAddress: String(o.bindAddress),
    securePort: o.securePort as number,
    certDir: String(o.certDir),
    tlsCertFile: o.tlsCertFile as string | undefined,
    tlsPrivateKeyFile: o.tlsPrivateKeyFile as string | undefined,
    advertiseAddress: o.advertiseAddress as string | undefined,
    tokenAuthFile: o.tokenAuthFile as string | undefined,
    anonymousAuth: o.anonymousAuth as boolean,
    clientCaFile: o.clientCaFile as string | undefined,
    enableBootstrapTokenAuth: o.enableBootstrapTokenAuth as boolean,
    serviceAccountKeyFiles: o.serviceAccountKeyFile as string[],
    serviceAccountSigningKeyFile: o.serviceAccountSigningKeyFile as string | undefined,
    serviceAccountIssuers: issuers,
    serviceAccountJwksUri: jwksUri,
    apiAudiences: audiences,
    serviceAccountLookup: o.serviceAccountLookup as boolean,
    oidc,
    authenticationConfig,
    authenticationTokenWebhookConfigFile: o.authenticationTokenWebhookConfigFile as string | undefined,
    authenticationTokenWebhookVersion: o.authenticationTokenWebhookVersion as 'v1' | 'v1beta1',
    authenticationTokenWebhookCacheTtlMs: o.authenticationTokenWebhookCacheTtl as number,
    requestHeader: {
      clientCaFile: o.requestheaderClientCaFile as string | undefined,
      allowedNames: (o.requestheaderAllowedNames as string[] | undefined) ?? [],
      usernameHeaders: (o.requestheaderUsernameHeaders as string[] | undefined) ?? [],
      uidHeaders: (o.requestheaderUidHeaders as string[] | undefined) ?? [],
      groupHeaders: (o.requestheaderGroupHeaders as string[] | undefined) ?? [],
      extraHeadersPrefix: (o.requestheaderExtraHeadersPrefix as string[] | undefined) ?? [],
    },
    authorizationMode: modes,
    authorizationConfig: authzConfig,
    authorizationPolicyFile: o.authorizationPolicyFile as string | undefined,
    authorizationWebhookConfigFile: o.authorizationWebhookConfigFile as string | undefined,
    authorizationWebhookVersion: o.authorizationWebhookVersion === 'v1' ? 'v1' : 'v1beta1',
    authorizationWebhookCacheAuthorizedTtlMs: o.authorizationWebhookCacheAuthorizedTtl as number,
    authorizationWebhookCacheUnauthorizedTtlMs: o.authorizationWebhookCacheUnauthorizedTtl as number,
    featureGates: gates,
    emulatedVersion,
    metrics: metricsPolicy({ cmd, o, fail, givenOnCli }),
    runtimeConfig,
    livezGracePeriodMs: o.livezGracePeriod as number,
    shutdownDelayDurationMs: o.shutdownDelayDuration as number,
    maxRequestsInflight: o.maxRequestsInflight as number,
    maxMutatingRequestsInflight: o.maxMutatingRequestsInflight as number,
    enablePriorityAndFairness: o.enablePriorityAndFairness as boolean,
    minRequestTimeoutSeconds: o.minRequestTimeout as number,
    requestTimeoutMs: o.requestTimeout as number,
    admissionPlugins,
    admissionControlConfigFile: o.admissionControlConfigFile as string | undefined,
    encryptionProviderConfig: o.encryptionProviderConfig as string | undefined,
    encryptionProviderConfigAutomaticReload: o.encryptionProviderConfigAutomaticReload as boolean,
    defaultNotReadyTolerationSeconds: o.defaultNotReadyTolerationSeconds as number,
    defaultUnreachableTolerationSeconds: o.defaultUnreachableTolerationSeconds as number,
    svclet: {
      clientCertificate: o.svcletClientCertificate as string | undefined,
      clientKey: o.svcletClientKey as string | undefined,
      certificateAuthority: o.svcletCertificateAuthority as string | undefined,
      timeoutMs: o.svcletTimeout as number,
      preferredAddressTypes: addressTypes,
    },
    naming: namingScheme,
    loggingFormat: o.loggingFormat as LogFormat,
    verbosity: o.v as number,
    audit: auditOptions({ o, scheme: namingScheme, fail }),
    ...serverFlags(o, { fail, gates }),
    ...serviceRangeFlags(o, { fail }),
    serving: servingOptions({ o, fail }),
  };
}

function isUrl(s: string): boolean {
  try {
    new URL(s);
    return true;
  } catch {
    return false;
  }
}

/**
 * `--authentication-config`: the gate, exclusion of the `--oidc-*` flags, and the file read
 * and validated (every error of the file on one line).
 */
function authenticationConfigFlag(a: {
  o: Record<string, unknown>;
  cmd: Command;
  gates: FeatureGates;
  issuers: string[];
  scheme: NamingScheme;
  fail: (msg: string) => never;
}): AuthenticationConfigFile | undefined {
  const file = a.o.authenticationConfig as string | undefined;
  if (file === undefined) return undefined;
  if (file === '') a.fail('--authentication-config must not be empty');
  if (!a.gates.enabled('StructuredAuthenticationConfiguration'))
    a.fail('--authentication-config: set only when the StructuredAuthenticationConfiguration feature gate is enabled');
  const oidcGiven = a.cmd.options
    .map((opt) => opt.attributeName())
    .filter((k) => k.startsWith('oidc') && a.cmd.getOptionValueSource(k) === 'cli');
  if (oidcGiven.length > 0) a.fail('--authentication-config and the --oidc-* flags are mutually exclusive');
  const context: AuthenticationConfigContext = {
    apiVersion: `apiserver.config.${NAMINGS[a.scheme].groupSuffix}/v1beta1`,
    serviceAccountIssuers: a.issuers,
    anonymousConfigurable: a.gates.enabled('AnonymousAuthConfigurableEndpoints'),
    anonymousAuthFlagSet: a.cmd.getOptionValueSource('anonymousAuth') === 'cli',
  };
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    return a.fail(`--authentication-config: ${(e as Error).message}`);
  }
  try {
    return { file, text, config: parseAuthenticationConfig(text, context), context };
  } catch (e) {
    return a.fail(`--authentication-config: ${file}: ${(e as Error).message}`);
  }
}

/** The `--oidc-*` flags, checked: none, or at least the issuer URL (https) and client id. */
function oidcFlags(o: Record<string, unknown>, fail: (msg: string) => never): OidcFlags | undefined {
  const issuerUrl = o.oidcIssuerUrl as string | undefined;
  const clientId = o.oidcClientId as string | undefined;
  const requiredRaw = o.oidcRequiredClaim as string[];
  const given = ['oidcClientId', 'oidcUsernamePrefix', 'oidcGroupsClaim', 'oidcGroupsPrefix', 'oidcCaFile'].filter(
    (k) => o[k] !== undefined,
  );
  if (issuerUrl === undefined) {
    if (given.length > 0 || requiredRaw.length > 0)
      fail('--oidc-issuer-url is required when other --oidc-* flags are given');
    return undefined;
  }
  if (!clientId) fail('--oidc-client-id must be given (and not empty) together with --oidc-issuer-url');
  let url: URL;
  try {
    url = new URL(issuerUrl);
  } catch {
    return fail(`--oidc-issuer-url: ${JSON.stringify(issuerUrl)} is not a valid URL`);
  }
  if (url.protocol !== 'https:') fail(`--oidc-issuer-url: ${JSON.stringify(issuerUrl)} must use the https scheme`);
  const signingAlgs = (o.oidcSigningAlgs as string[] | undefined) ?? ['RS256'];
  if (signingAlgs.length === 0) fail('--oidc-signing-algs: at least one algorithm is required');
  for (const a of signingAlgs) {
    if (!(OIDC_SIGNING_ALGS as readonly string[]).includes(a))
      fail(`--oidc-signing-algs: ${JSON.stringify(a)} is not one of ${OIDC_SIGNING_ALGS.join(', ')}`);
  }
  const requiredClaims: Record<string, string> = {};
  for (const pair of requiredRaw.flatMap((v) => v.split(','))) {
    const i = pair.indexOf('=');
    const key = i < 0 ? '' : pair.slice(0, i).trim();
    if (key === '') fail(`--oidc-required-claim: ${JSON.stringify(pair)} must be of the form key=value`);
    requiredClaims[key] = pair.slice(i + 1).trim();
  }
  const usernameClaim = String(o.oidcUsernameClaim ?? 'sub');
  if (usernameClaim === '') fail('--oidc-username-claim must not be empty');
  return {
    issuerUrl,
    clientId: clientId ?? '',
    usernameClaim,
    usernamePrefix: o.oidcUsernamePrefix as string | undefined,
    groupsClaim: o.oidcGroupsClaim as string | undefined,
    groupsPrefix: o.oidcGroupsPrefix as string | undefined,
    requiredClaims,
    caFile: o.oidcCaFile as string | undefined,
    signingAlgs,
  };
}
