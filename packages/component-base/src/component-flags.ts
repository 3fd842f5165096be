import { InvalidArgumentError, Option, type Command } from 'commander';
import { NAMINGS, naming, type NamingScheme } from '@svc/api';
import { formatDuration } from '@svc/machinery';
import { boolOption, durationOption, intArg, listOption, portArg, type ParsedFlags } from './flags.js';

// The flag groups the control-plane components (controller manager, scheduler) share, with
// Kubernetes' names (`--kube-api-*` → `--svc-api-*`) and meanings.

function floatArg(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n))
    throw new InvalidArgumentError(`strconv.ParseFloat: parsing ${JSON.stringify(v)}: invalid syntax`);
  return n;
}

function stringOption(flags: string, description: string, def?: string): Option {
  const o = new Option(`${flags} <value>`, description);
  return def === undefined ? o : o.default(def);
}

/** How a component reaches the API server. */
export interface ApiClientOptions {
  svcconfig?: string;
  master?: string;
  apiQps: number;
  apiBurst: number;
  apiContentType: string;
}

/** `--svcconfig` (alias `--kubeconfig`), `--master`, `--svc-api-qps`, `--svc-api-burst`, `--svc-api-content-type`. */
export function withApiClientFlags(cmd: Command, defaults: { qps: number; burst: number }): Command {
  return cmd
    .addOption(stringOption('--svcconfig', "Path to a svcconfig file with the API server's location and credentials."))
    .addOption(stringOption('--kubeconfig', 'Alias of --svcconfig.').hideHelp())
    .addOption(stringOption('--master', 'The address of the API server (overrides any value in svcconfig).'))
    .addOption(
      new Option('--svc-api-qps <float>', 'QPS to use while talking with the API server.')
        .default(defaults.qps)
        .argParser(floatArg),
    )
    .addOption(
      new Option('--svc-api-burst <int>', 'Burst to use while talking with the API server.')
        .default(defaults.burst)
        .argParser(intArg),
    )
    .addOption(
      stringOption(
        '--svc-api-content-type',
        'Content type of requests sent to the API server.',
        naming().protobufMediaType,
      ),
    );
}

/** Reads the flags of `withApiClientFlags`; the content type defaults to the naming's Protobuf type. */
export function apiClientOptions(p: ParsedFlags, scheme: NamingScheme): ApiClientOptions {
  const { o, fail, givenOnCli } = p;
  if (givenOnCli('svcconfig') && givenOnCli('kubeconfig') && o.svcconfig !== o.kubeconfig)
    fail('--svcconfig and --kubeconfig name different files');
  const contentType = String(o.svcApiContentType);
  if (
    givenOnCli('svcApiContentType') &&
    contentType !== 'application/json' &&
    !Object.values(NAMINGS).some((x) => x.protobufMediaType === contentType)
  ) {
    fail(
      `--svc-api-content-type: ${JSON.stringify(contentType)} is neither application/json nor ${NAMINGS[scheme].protobufMediaType}`,
    );
  }
  if ((o.svcApiQps as number) < 0) fail('--svc-api-qps must not be negative');
  if ((o.svcApiBurst as number) < 0) fail('--svc-api-burst must not be negative');
  return {
    svcconfig: (o.svcconfig ?? o.kubeconfig) as string | undefined,
    master: o.master as string | undefined,
    apiQps: o.svcApiQps as number,
    apiBurst: o.svcApiBurst as number,
    apiContentType: givenOnCli('svcApiContentType') ? contentType : NAMINGS[scheme].protobufMediaType,
  };
}

/** The secure port and its delegated authentication and authorization (durations in ms). */
export interface DelegatedServingOptions {
  bindAddress: string;
  /** 0: no secure port. */
  securePort: number;
  certDir: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  authenticationKubeconfig?: string;
  authenticationSkipLookup: boolean;
  authenticationTolerateLookupFailure: boolean;
  authenticationTokenWebhookCacheTtlMs: number;
  authorizationKubeconfig?: string;
  authorizationAlwaysAllowPaths: string[];
  authorizationWebhookCacheAuthorizedTtlMs: number;
  authorizationWebhookCacheUnauthorizedTtlMs: number;
  clientCaFile?: string;
}

/**
 * `--bind-address`, `--secure-port`, `--cert-dir`, `--tls-*`, `--authentication-*`,
 * `--authorization-*` and `--client-ca-file`, with the component's port and its default for
 * `--authentication-tolerate-lookup-failure` (false for the controller manager, true for the scheduler).
 */
export function withSecureServingFlags(
  cmd: Command,
  defaults: { securePort: number; tolerateLookupFailure: boolean },
): Command {
  return cmd
    .addOption(
      stringOption('--bind-address', 'The IP address on which to listen for the --secure-port port.', '0.0.0.0'),
    )
    .addOption(
      new Option(
        '--secure-port <port>',
        "The port on which to serve HTTPS with authentication and authorization. If 0, don't serve HTTPS at all.",
      )
        .default(defaults.securePort)
        .argParser(portArg),
    )
    .addOption(
      stringOption(
        '--cert-dir',
        'The directory where the TLS certs are located. Ignored if --tls-cert-file and --tls-private-key-file are provided.',
        '',
      ),
    )
    .addOption(stringOption('--tls-cert-file', 'File containing the default x509 certificate for HTTPS.'))
    .addOption(
      stringOption('--tls-private-key-file', 'File containing the default x509 private key matching --tls-cert-file.'),
    )
    .addOption(
      stringOption(
        '--authentication-kubeconfig',
        'svcconfig file pointing at the API server with enough rights to create tokenreviews. Empty: all token requests are considered anonymous and no client CA is looked up in the cluster.',
      ),
    )
    .addOption(
      boolOption(
        '--authentication-skip-lookup',
        'If false, the authentication-kubeconfig will be used to lookup missing authentication configuration from the cluster.',
        false,
      ),
    )
    .addOption(
      boolOption(
        '--authentication-tolerate-lookup-failure',
        'If true, failures to look up missing authentication configuration from the cluster are not considered fatal.',
        defaults.tolerateLookupFailure,
      ),
    )
    .addOption(
      durationOption(
        '--authentication-token-webhook-cache-ttl',
        'The duration to cache responses from the webhook token authenticator.',
        10_000,
      ),
    )
    .addOption(
      stringOption(
        '--authorization-kubeconfig',
        'svcconfig file pointing at the API server with enough rights to create subjectaccessreviews. Empty: all requests not skipped by authorization are forbidden.',
      ),
    )
    .addOption(
      listOption(
        '--authorization-always-allow-paths <paths>',
        'A list of HTTP paths to skip during authorization, i.e. these are authorized without contacting the API server.',
        ['/healthz', '/readyz', '/livez'],
      ),
    )
    .addOption(
      durationOption(
        '--authorization-webhook-cache-authorized-ttl',
        "The duration to cache 'authorized' responses from the webhook authorizer.",
        10_000,
      ),
    )
    .addOption(
      durationOption(
        '--authorization-webhook-cache-unauthorized-ttl',
        "The duration to cache 'unauthorized' responses from the webhook authorizer.",
        10_000,
      ),
    )
    .addOption(
      stringOption(
        '--client-ca-file',
        'If set, any request presenting a client certificate signed by one of the authorities in the file is authenticated with an identity corresponding to the CommonName of the client certificate.',
      ),
    );
}

/** Reads the flags of `withSecureServingFlags`. */
export function secureServingOptions(p: ParsedFlags): DelegatedServingOptions {
  const { o, fail } = p;
  if ((o.tlsCertFile === undefined) !== (o.tlsPrivateKeyFile === undefined))
    fail('--tls-cert-file and --tls-private-key-file must be given together');
  return {
    bindAddress: String(o.bindAddress),
    securePort: o.securePort as number,
    certDir: String(o.certDir),
    tlsCertFile: o.tlsCertFile as string | undefined,
    tlsPrivateKeyFile: o.tlsPrivateKeyFile as string | undefined,
    authenticationKubeconfig: o.authenticationKubeconfig as string | undefined,
    authenticationSkipLookup: o.authenticationSkipLookup as boolean,
    authenticationTolerateLookupFailure: o.authenticationTolerateLookupFailure as boolean,
    authenticationTokenWebhookCacheTtlMs: o.authenticationTokenWebhookCacheTtl as number,
    authorizationKubeconfig: o.authorizationKubeconfig as string | undefined,
    authorizationAlwaysAllowPaths: o.authorizationAlwaysAllowPaths as string[],
    authorizationWebhookCacheAuthorizedTtlMs: o.authorizationWebhookCacheAuthorizedTtl as number,
    authorizationWebhookCacheUnauthorizedTtlMs: o.authorizationWebhookCacheUnauthorizedTtl as number,
    clientCaFile: o.clientCaFile as string | undefined,
  };
}

/** `--leader-elect*` as read (durations in ms); structurally `@svc/client`'s `LeaderElectionSettings`. */
export interface LeaderElectionOptions {
  leaderElect: boolean;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  resourceLock: string;
  leaseName: string;
  leaseNamespace: string;
}

/** `--leader-elect`, `--leader-elect-lease-duration/-renew-deadline/-retry-period/-resource-lock/-resource-name/-resource-namespace`. */
export function withLeaderElectionFlags(cmd: Command, defaults: { leaseName: string }): Command {
  return cmd
    .addOption(
      boolOption(
        '--leader-elect',
        'Start a leader election client and gain leadership before executing the main loop.',
        true,
      ),
    )
    .addOption(
      durationOption(
        '--leader-elect-lease-duration',
        'The duration that non-leader candidates will wait after observing a leadership renewal until attempting to acquire leadership.',
        15_000,
      ),
    )
    .addOption(
      durationOption(
        '--leader-elect-renew-deadline',
        'The interval between attempts by the acting leader to renew a leadership slot before it stops leading. Must be below the lease duration.',
        10_000,
      ),
    )
    .addOption(
      new Option(
        '--leader-elect-resource-lock <lock>',
        'The type of resource object that is used for locking during leader election.',
      )
        .default('leases')
        .choices(['leases', 'endpointsleases', 'configmapsleases']),
    )
    .addOption(
      stringOption(
        '--leader-elect-resource-name',
        'The name of resource object that is used for locking during leader election.',
        defaults.leaseName,
      ),
    )
    .addOption(
      stringOption(
        '--leader-elect-resource-namespace',
        'The namespace of resource object that is used for locking during leader election.',
        naming().systemNamespace,
      ),
    )
    .addOption(
      durationOption(
        '--leader-elect-retry-period',
        'The duration the clients should wait between attempting acquisition and renewal of a leadership.',
        2000,
      ),
    );
}

/** Reads the flags of `withLeaderElectionFlags`; the namespace defaults to the naming's system namespace. */
export function leaderElectionOptions(p: ParsedFlags, scheme: NamingScheme): LeaderElectionOptions {
  const { o, fail, givenOnCli } = p;
  const lease = o.leaderElectLeaseDuration as number;
  const renew = o.leaderElectRenewDeadline as number;
  if (!(renew < lease))
    fail(
      `--leader-elect-renew-deadline (${formatDuration(renew)}) must be less than --leader-elect-lease-duration (${formatDuration(lease)})`,
    );
  return {
    leaderElect: o.leaderElect as boolean,
    leaseDurationMs: lease,
    renewDeadlineMs: renew,
    retryPeriodMs: o.leaderElectRetryPeriod as number,
    resourceLock: String(o.leaderElectResourceLock),
    leaseName: String(o.leaderElectResourceName),
    leaseNamespace: givenOnCli('leaderElectResourceNamespace')
      ? String(o.leaderElectResourceNamespace)
      : NAMINGS[scheme].systemNamespace,
  };
}
