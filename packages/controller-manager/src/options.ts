import { Command, InvalidArgumentError, Option } from 'commander';
import { NAMINGS, isNamingScheme, naming, type NamingScheme } from '@svc/api';
import {
  apiClientOptions,
  boolOption,
  durationOption,
  intArg,
  leaderElectionOptions,
  listOption,
  namingOption,
  parseFlags,
  secureServingOptions,
  withApiClientFlags,
  withLeaderElectionFlags,
  withLoggingFlags,
  featureOptions,
  metricsPolicy,
  withFeatureFlags,
  withMetricsFlags,
  type FeatureOptions,
  type MetricsPolicy,
  withSecureServingFlags,
  type ApiClientOptions,
  type DelegatedServingOptions,
  type LeaderElectionOptions,
  type LogFormat,
} from '@svc/component-base';
import { formatDuration } from '@svc/machinery';
import { parseControllers, type ControllerSelection } from './controller-names.js';
import { nodeIpamConfig, type NodeIpamConfig } from './controllers/node-ipam-config.js';

/** `--cluster-signing-<signer>-cert-file/-key-file` flag stems and the signer each stands for (by naming). */
export const SIGNER_FLAGS = {
  'svc-apiserver-client': 'apiserverClient',
  'svc-apiserver-client-svclet': 'apiserverClientNode',
  'svclet-serving': 'nodeServing',
  'legacy-unknown': 'legacyUnknown',
} as const;
export type SignerRole = (typeof SIGNER_FLAGS)[keyof typeof SIGNER_FLAGS];

export interface SigningFiles {
  certFile: string;
  keyFile: string;
}

/** Every svc-controller-manager setting, parsed and validated. Durations are milliseconds. */
export interface ControllerManagerOptions
  extends ApiClientOptions, DelegatedServingOptions, LeaderElectionOptions, FeatureOptions {
  /** `--disabled-metrics`, `--show-hidden-metrics-for-version`, `--allow-metric-labels*`. */
  metrics: MetricsPolicy;
  controllers: ControllerSelection;
  clusterName: string;
  /** `--cluster-signing-cert-file/-key-file`, or per signer. */
  clusterSigning?: SigningFiles;
  signerFiles: Partial<Record<SignerRole, SigningFiles>>;
  clusterSigningDurationMs: number;
  rootCaFile?: string;
  /** `--service-account-private-key-file`: signs legacy token Secrets; without it serviceaccount-token-controller does not run. */
  serviceAccountPrivateKeyFile?: string;
  /** `--legacy-service-account-token-clean-up-period` (8760h0m0s): unused this long, an auto-generated legacy token is marked invalid, then deleted. */
  legacyServiceAccountTokenCleanUpPeriodMs: number;
  /** endpointslice-mirroring-controller's `--mirroring-*` flags. */
  mirroring: { concurrentSyncs: number; maxEndpointsPerSubset: number; updatesBatchPeriodMs: number };
  /** `--concurrent-<name>-syncs` by name (e.g. `namespace`, `gc`). */
  concurrentSyncs: Record<string, number>;
  /** `--max-endpoints-per-slice` (100). */
  maxEndpointsPerSlice: number;
  /**
   * `--endpoint-updates-batch-period` and `--endpointslice-updates-batch-period` (0): a pod change
   * syncs its Services this much later, so the changes of one period are written together.
   */
  endpointUpdatesBatchPeriodMs: number;
  endpointSliceUpdatesBatchPeriodMs: number;
  /** The `--horizontal-pod-autoscaler-*` flags (durations in ms). */
  horizontalPodAutoscaler: {
    syncPeriodMs: number;
    tolerance: number;
    downscaleStabilizationMs: number;
    cpuInitializationPeriodMs: number;
    initialReadinessDelayMs: number;
  };
  /** `--terminated-pod-gc-threshold` (12500): terminated pods kept before podgc deletes the oldest; 0 or less keeps all. */
  terminatedPodGcThreshold: number;
  enableGarbageCollector: boolean;
  /** node-ipam-controller: `--allocate-node-cidrs`, `--cluster-cidr`, `--node-cidr-mask-size*`, `--service-cluster-ip-range`. */
  nodeIpam: NodeIpamConfig;
  /** `--use-service-account-credentials`: each controller calls the API as its own service account. */
  useServiceAccountCredentials: boolean;
  minResyncPeriodMs: number;
  namespaceSyncPeriodMs: number;
  /** `--resource-quota-sync-period`: every quota is recounted this often. */
  resourceQuotaSyncPeriodMs: number;
  nodeEvictionRate: number;
  secondaryNodeEvictionRate: number;
  largeClusterSizeThreshold: number;
  nodeMonitorGracePeriodMs: number;
  nodeMonitorPeriodMs: number;
  nodeStartupGracePeriodMs: number;
  naming: NamingScheme;
  loggingFormat: LogFormat;
  verbosity: number;
  /** Flags given on the command line that belong to controllers this manager does not run (logged once at start). */
  ignoredFlags: string[];
}

/** `--concurrent-*-syncs` and their defaults (the spec's table; daemonset, which it leaves out, as Kubernetes 1.32). */
const CONCURRENT_SYNCS: Record<string, number> = {
  'cron-job': 5,
  daemonset: 2,
  deployment: 5,
  endpoint: 5,
  ephemeralvolume: 5,
  gc: 20,
  'horizontal-pod-autoscaler': 5,
  job: 5,
  namespace: 10,
  rc: 5,
  replicaset: 5,
  'resource-quota': 5,
  'service-endpoint': 5,
  service: 1,
  'serviceaccount-token': 5,
  statefulset: 5,
  'ttl-after-finished': 5,
  'validating-admission-policy-status': 5,
};
/** The `--concurrent-*-syncs` of controllers we run; the others are accepted and ignored. */
const CONCURRENT_SYNCS_USED = new Set([
  'cron-job',
  'daemonset',
  'deployment',
  'endpoint',
  'gc',
  'horizontal-pod-autoscaler',
  'job',
  'namespace',
  'rc',
  'replicaset',
  'resource-quota',
  'service-endpoint',
  'serviceaccount-token',
  'statefulset',
  'ttl-after-finished',
]);

function floatArg(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n))
    throw new InvalidArgumentError(`strconv.ParseFloat: parsing ${JSON.stringify(v)}: invalid syntax`);
  return n;
}

function int32Option(flags: string, description: string, def?: number): Option {
  const o = new Option(`${flags} <int>`, description).argParser(intArg);
  return def === undefined ? o : o.default(def);
}

function floatOption(flags: string, description: string, def?: number): Option {
  const o = new Option(`${flags} <float>`, description).argParser(floatArg);
  return def === undefined ? o : o.default(def);
}

function stringOption(flags: string, description: string, def?: string): Option {
  const o = new Option(`${flags} <value>`, description);
  return def === undefined ? o : o.default(def);
}

/**
 * Flags of the spec's table for controllers this manager does not run: parsed and
 * validated like the others, then reported once at start.
 */
/** Flags of the list below that a controller run here reads (they are not reported as ignored). */
const USED_FLAGS = new Set([
  '--max-endpoints-per-slice',
  '--endpoint-updates-batch-period',
  '--endpointslice-updates-batch-period',
  '--allocate-node-cidrs',
  '--cidr-allocator-type',
  '--cluster-cidr',
  '--node-cidr-mask-size',
  '--node-cidr-mask-size-ipv4',
  '--node-cidr-mask-size-ipv6',
  '--service-cluster-ip-range',
  '--horizontal-pod-autoscaler-cpu-initialization-period',
  '--horizontal-pod-autoscaler-downscale-stabilization',
  '--horizontal-pod-autoscaler-initial-readiness-delay',
  '--horizontal-pod-autoscaler-sync-period',
  '--horizontal-pod-autoscaler-tolerance',
  '--mirroring-concurrent-service-endpoint-syncs',
  '--mirroring-endpointslice-updates-batch-period',
  '--mirroring-max-endpoints-per-subset',
  '--legacy-service-account-token-clean-up-period',
]);
const IGNORED: Array<[Option, string]> = [
  [
    boolOption('--allocate-node-cidrs', 'Should CIDRs for Pods be allocated and set on the cloud provider.', false),
    'node-ipam-controller',
  ],
  [
    durationOption(
      '--attach-detach-reconcile-sync-period',
      'The reconciler sync wait time between volume attach detach. Must exceed 1 second.',
      60_000,
    ),
    'persistentvolume-attach-detach-controller',
  ],
  [stringOption('--cidr-allocator-type', 'Type of CIDR allocator to use.', 'RangeAllocator'), 'node-ipam-controller'],
  [
    stringOption('--cluster-cidr', 'CIDR Range for Pods in cluster. Requires --allocate-node-cidrs to be true.'),
    'node-ipam-controller',
  ],
  [
    boolOption(
      '--configure-cloud-routes',
      'Should CIDRs allocated by allocate-node-cidrs be configured on the cloud provider.',
      true,
    ),
    'node-route-controller',
  ],
  [
    boolOption('--disable-attach-detach-reconcile-sync', 'Disable volume attach detach reconciler sync.', false),
    'persistentvolume-attach-detach-controller',
  ],
  [
    boolOption(
      '--disable-force-detach-on-timeout',
      'Prevent force detaching volumes based on maximum unmount time and node status.',
      false,
    ),
    'persistentvolume-attach-detach-controller',
  ],
  [
    boolOption('--enable-dynamic-provisioning', 'Enable dynamic provisioning for environments that support it.', true),
    'persistentvolume-binder-controller',
  ],
  [
    boolOption('--enable-leader-migration', 'Whether to enable controller leader migration.', false),
    'leader-migration',
  ],
  [
    stringOption('--leader-migration-config', 'Path to the config file for controller leader migration.'),
    'leader-migration',
  ],
  [
    durationOption('--endpoint-updates-batch-period', 'The length of endpoint updates batching period.', 0),
    'endpoints-controller',
  ],
  [
    durationOption('--endpointslice-updates-batch-period', 'The length of endpoint slice updates batching period.', 0),
    'endpointslice-controller',
  ],
  [
    durationOption(
      '--horizontal-pod-autoscaler-cpu-initialization-period',
      'The period after pod start when CPU samples might be skipped.',
      300_000,
    ),
    'horizontal-pod-autoscaler-controller',
  ],
  [
    durationOption(
      '--horizontal-pod-autoscaler-downscale-stabilization',
      'The period for which autoscaler will look backwards and not scale down below any recommendation it made during that period.',
      300_000,
    ),
    'horizontal-pod-autoscaler-controller',
  ],
  [
    durationOption(
      '--horizontal-pod-autoscaler-initial-readiness-delay',
      'The period after pod start during which readiness changes will be treated as initial readiness.',
      30_000,
    ),
    'horizontal-pod-autoscaler-controller',
  ],
  [
    durationOption(
      '--horizontal-pod-autoscaler-sync-period',
      'The period for syncing the number of pods in horizontal pod autoscaler.',
      15_000,
    ),
    'horizontal-pod-autoscaler-controller',
  ],
  [
    floatOption(
      '--horizontal-pod-autoscaler-tolerance',
      'The minimum change (from 1.0) in the desired-to-actual metrics ratio for the horizontal pod autoscaler to consider scaling.',
      0.1,
    ),
    'horizontal-pod-autoscaler-controller',
  ],
  [
    durationOption(
      '--legacy-service-account-token-clean-up-period',
      'The period of time since the last usage of an legacy service account token before it can be deleted.',
      8760 * 3600_000,
    ),
    'legacy-serviceaccount-token-cleaner-controller',
  ],
  [
    int32Option(
      '--max-endpoints-per-slice',
      'The maximum number of endpoints that will be added to an EndpointSlice.',
      100,
    ),
    'endpointslice-controller',
  ],
  [
    int32Option(
      '--mirroring-concurrent-service-endpoint-syncs',
      'The number of service endpoint syncing operations that will be done concurrently by the endpointslice-mirroring-controller.',
      5,
    ),
    'endpointslice-mirroring-controller',
  ],
  [
    durationOption(
      '--mirroring-endpointslice-updates-batch-period',
      'The length of EndpointSlice updates batching period for mirroring controller. Processing of EndpointSlice changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of EndpointSlice updates.',
      0,
    ),
    'endpointslice-mirroring-controller',
  ],
  [
    int32Option(
      '--mirroring-max-endpoints-per-subset',
      'The maximum number of endpoints that will be added to an EndpointSlice by the endpointslice-mirroring-controller.',
      1000,
    ),
    'endpointslice-mirroring-controller',
  ],
  [
    int32Option('--node-cidr-mask-size', 'Mask size for node cidr in cluster. Default is 24 for IPv4 and 64 for IPv6.'),
    'node-ipam-controller',
  ],
  [
    int32Option('--node-cidr-mask-size-ipv4', 'Mask size for IPv4 node cidr in dual-stack cluster. Default is 24.'),
    'node-ipam-controller',
  ],
  [
    int32Option('--node-cidr-mask-size-ipv6', 'Mask size for IPv6 node cidr in dual-stack cluster. Default is 64.'),
    'node-ipam-controller',
  ],
  [
    int32Option(
      '--pv-recycler-increment-timeout-nfs',
      'the increment of time added per Gi to ActiveDeadlineSeconds for an NFS scrubber pod',
      30,
    ),
    'persistentvolume-binder-controller',
  ],
  [
    int32Option(
      '--pv-recycler-minimum-timeout-nfs',
      'The minimum ActiveDeadlineSeconds to use for an NFS Recycler pod',
      300,
    ),
    'persistentvolume-binder-controller',
  ],
  [
    int32Option(
      '--pv-recycler-minimum-timeout-hostpath',
      'The minimum ActiveDeadlineSeconds to use for a HostPath Recycler pod. This is for development and testing only.',
      60,
    ),
    'persistentvolume-binder-controller',
  ],
  [
    int32Option(
      '--pv-recycler-timeout-increment-hostpath',
      'the increment of time added per Gi to ActiveDeadlineSeconds for a HostPath scrubber pod. This is for development and testing only.',
      30,
    ),
    'persistentvolume-binder-controller',
  ],
  [
    stringOption(
      '--pv-recycler-pod-template-filepath-nfs',
      'The file path to a pod definition used as a template for NFS persistent volume recycling',
    ),
    'persistentvolume-binder-controller',
  ],
  [
    stringOption(
      '--pv-recycler-pod-template-filepath-hostpath',
      'The file path to a pod definition used as a template for HostPath persistent volume recycling.',
    ),
    'persistentvolume-binder-controller',
  ],
  [
    durationOption(
      '--pvclaimbinder-sync-period',
      'The period for syncing persistent volumes and persistent volume claims',
      15_000,
    ),
    'persistentvolume-binder-controller',
  ],
  [
    stringOption(
      '--service-cluster-ip-range',
      'CIDR Range for Services in cluster. Only used when --allocate-node-cidrs=true; if false, this option will be ignored.',
    ),
    'node-ipam-controller',
  ],
  [
    stringOption(
      '--flex-volume-plugin-dir',
      'Full path of the directory in which the flex volume plugin should search for additional third party volume plugins.',
      '/usr/libexec/svc/svclet-plugins/volume/exec/',
    ),
    'persistentvolume-attach-detach-controller',
  ],
  [boolOption('--profiling', 'Enable profiling via web interface host:port/debug/pprof/', true), 'profiling'],
];

export function controllerManagerCommand(): Command {
  const n = naming();
  const cmd = new Command(n.controllerManagerName)
    .description(
      'The controller manager is a daemon that embeds the core control loops. A control loop watches the shared state through the API server and changes it to move the current state toward the desired state.',
    )
    .allowExcessArguments(false);
  withSecureServingFlags(withApiClientFlags(cmd, { qps: 20, burst: 30 }), {
    securePort: 10257,
    tolerateLookupFailure: false,
  });
  cmd
    .addOption(
      listOption(
        '--controllers <names>',
        "A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables it. Disabled by default: bootstrap-signer-controller, token-cleaner-controller.",
        ['*'],
      ),
    )
    .addOption(stringOption('--cluster-name', 'The instance prefix for the cluster.', n.clusterName))
    .addOption(
      stringOption(
        '--cluster-signing-cert-file',
        'Filename containing a PEM-encoded X509 CA certificate used to issue cluster-scoped certificates. If set, no more specific --cluster-signing-* flag may be set.',
      ),
    )
    .addOption(
      stringOption(
        '--cluster-signing-key-file',
        'Filename containing a PEM-encoded RSA or ECDSA private key used to sign cluster-scoped certificates. If set, no more specific --cluster-signing-* flag may be set.',
      ),
    )
    .addOption(
      durationOption(
        '--cluster-signing-duration',
        'The max length of duration signed certificates will be given. Individual CSRs may request shorter certs by setting spec.expirationSeconds.',
        8760 * 3600_000,
      ),
    )
    .addOption(
      stringOption(
        '--root-ca-file',
        "If set, this root certificate authority will be published in every namespace's root CA ConfigMap.",
      ),
    )
    .addOption(
      stringOption(
        '--service-account-private-key-file',
        'Filename containing a PEM-encoded private RSA or ECDSA key used to sign service account tokens.',
      ),
    )
    .addOption(
      boolOption(
        '--enable-garbage-collector',
        'Enables the generic garbage collector. Must be synced with the corresponding flag of the API server.',
        true,
      ),
    )
    .addOption(
      boolOption(
        '--use-service-account-credentials',
        'If true, use individual service account credentials for each controller.',
        false,
      ),
    );
  withLeaderElectionFlags(cmd, { leaseName: n.controllerManagerName });
  cmd
    .addOption(
      durationOption(
        '--min-resync-period',
        'The resync period in reflectors will be random between MinResyncPeriod and 2*MinResyncPeriod.',
        12 * 3600_000,
      ),
    )
    .addOption(
      durationOption('--namespace-sync-period', 'The period for syncing namespace life-cycle updates.', 300_000),
    )
    .addOption(
      durationOption(
        '--resource-quota-sync-period',
        'The period for syncing quota usage status in the system.',
        300_000,
      ),
    )
    .addOption(
      floatOption(
        '--node-eviction-rate',
        'Number of nodes per second on which pods are deleted in case of node failure when a zone is healthy.',
        0.1,
      ),
    )
    .addOption(
      floatOption(
        '--secondary-node-eviction-rate',
        'Number of nodes per second on which pods are deleted in case of node failure when a zone is unhealthy. Implicitly 0 for clusters at or below --large-cluster-size-threshold.',
        0.01,
      ),
    )
    .addOption(
      int32Option(
        '--terminated-pod-gc-threshold',
        'Number of terminated pods that can exist before the terminated pod garbage collector starts deleting terminated pods. If <= 0, the terminated pod garbage collector is disabled.',
        12500,
      ),
    )
    .addOption(
      int32Option(
        '--large-cluster-size-threshold',
        'Number of nodes from which the node lifecycle controller treats the cluster as large for the eviction logic purposes.',
        50,
      ),
    )
    .addOption(
      durationOption(
        '--node-monitor-grace-period',
        'Amount of time which we allow running Node to be unresponsive before marking it unhealthy.',
        40_000,
      ),
    )
    .addOption(
      durationOption(
        '--node-monitor-period',
        'The period for syncing NodeStatus in the node lifecycle controller.',
        5000,
      ),
    )
    .addOption(
      durationOption(
        '--node-startup-grace-period',
        'Amount of time which we allow starting Node to be unresponsive before marking it unhealthy.',
        60_000,
      ),
    );
  for (const signer of Object.keys(SIGNER_FLAGS)) {
    cmd.addOption(
      stringOption(
        `--cluster-signing-${signer}-cert-file`,
        `Filename containing a PEM-encoded X509 CA certificate used to issue certificates for the ${signer} signer. If specified, --cluster-signing-{cert,key}-file must not be set.`,
      ),
    );
    cmd.addOption(
      stringOption(
        `--cluster-signing-${signer}-key-file`,
        `Filename containing a PEM-encoded RSA or ECDSA private key used to sign certificates for the ${signer} signer. If specified, --cluster-signing-{cert,key}-file must not be set.`,
      ),
    );
  }
  for (const [name, def] of Object.entries(CONCURRENT_SYNCS)) {
    cmd.addOption(
      int32Option(
        `--concurrent-${name}-syncs`,
        `The number of ${name} objects that are allowed to sync concurrently.`,
        def,
      ),
    );
  }
  for (const [o] of IGNORED) cmd.addOption(o);
  withFeatureFlags(cmd);
  withMetricsFlags(cmd);
  withLoggingFlags(cmd.addOption(namingOption()));
  cmd.configureHelp({ sortOptions: false });
  return cmd;
}

/**
 * Parses argv (without node and script); throws `CommanderError` on bad input (`quiet`
 * keeps commander's own text off stderr so the caller prints one line).
 */
export function parseControllerManagerOptions(
  argv: string[],
  opts: { quiet?: boolean } = {},
): ControllerManagerOptions {
  const parsed = parseFlags(controllerManagerCommand(), argv, opts);
  const { o, fail, givenOnCli } = parsed;
  const scheme = String(o.naming);
  if (!isNamingScheme(scheme)) return fail(`--naming: unknown naming ${scheme}`);

  const api = apiClientOptions(parsed, scheme);
  let controllers: ControllerSelection;
  try {
    controllers = parseControllers(o.controllers as string[]);
  } catch (e) {
    return fail(`--controllers: ${(e as Error).message}`);
  }
  const leaderElection = leaderElectionOptions(parsed, scheme);
  const serving = secureServingOptions(parsed);
  const pair = (cert: unknown, key: unknown, what: string): SigningFiles | undefined => {
    if (cert === undefined && key === undefined) return undefined;
    if (!cert || !key) return fail(`${what}: the cert file and the key file must be given together`);
    return { certFile: String(cert), keyFile: String(key) };
  };
  const clusterSigning = pair(o.clusterSigningCertFile, o.clusterSigningKeyFile, '--cluster-signing-{cert,key}-file');
  const signerFiles: Partial<Record<SignerRole, SigningFiles>> = {};
  for (const [stem, role] of Object.entries(SIGNER_FLAGS)) {
    const attr = stem.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
    const cap = attr.charAt(0).toUpperCase() + attr.slice(1);
    const files = pair(
      o[`clusterSigning${cap}CertFile`],
      o[`clusterSigning${cap}KeyFile`],
      `--cluster-signing-${stem}-{cert,key}-file`,
    );
    if (files) signerFiles[role] = files;
  }
  if (clusterSigning && Object.keys(signerFiles).length > 0)
    fail(
      '--cluster-signing-{cert,key}-file cannot be set together with a --cluster-signing-<signer>-{cert,key}-file pair',
    );
  if ((o.attachDetachReconcileSyncPeriod as number) <= 1000)
    fail('--attach-detach-reconcile-sync-period must exceed 1 second');
  if (givenOnCli('clusterCidr') && !o.allocateNodeCidrs) fail('--cluster-cidr requires --allocate-node-cidrs=true');
  let nodeIpam: NodeIpamConfig;
  try {
    nodeIpam = nodeIpamConfig({
      // As Kubernetes, the node-ipam flags are checked only when its controller would start.
      allocateNodeCidrs: (o.allocateNodeCidrs as boolean) && controllers.enabled.has('node-ipam-controller'),
      cidrAllocatorType: String(o.cidrAllocatorType),
      clusterCidr: o.clusterCidr as string | undefined,
      nodeCidrMaskSize: (o.nodeCidrMaskSize as number | undefined) ?? 0,
      nodeCidrMaskSizeIpv4: (o.nodeCidrMaskSizeIpv4 as number | undefined) ?? 0,
      nodeCidrMaskSizeIpv6: (o.nodeCidrMaskSizeIpv6 as number | undefined) ?? 0,
      serviceClusterIpRange: o.serviceClusterIpRange as string | undefined,
    });
  } catch (e) {
    return fail((e as Error).message);
  }

  const concurrentSyncs: Record<string, number> = {};
  const ignoredFlags: string[] = [];
  for (const name of Object.keys(CONCURRENT_SYNCS)) {
    const attr = `concurrent${name
      .split('-')
      .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
      .join('')}Syncs`;
    const v = o[attr] as number;
    if (v < 1 && CONCURRENT_SYNCS_USED.has(name)) fail(`--concurrent-${name}-syncs must be at least 1`);
    concurrentSyncs[name] = v;
    if (!CONCURRENT_SYNCS_USED.has(name) && givenOnCli(attr)) ignoredFlags.push(`--concurrent-${name}-syncs`);
  }
  const mirroring = {
    concurrentSyncs: o.mirroringConcurrentServiceEndpointSyncs as number,
    maxEndpointsPerSubset: o.mirroringMaxEndpointsPerSubset as number,
    updatesBatchPeriodMs: o.mirroringEndpointsliceUpdatesBatchPeriod as number,
  };
  // Kubernetes' EndpointSliceMirroringControllerOptions.Validate bounds.
  for (const [flag, v, max] of [
    ['--mirroring-concurrent-service-endpoint-syncs', mirroring.concurrentSyncs, 50],
    ['--mirroring-max-endpoints-per-subset', mirroring.maxEndpointsPerSubset, 1000],
  ] as const) {
    if (v < 1) fail(`${flag} must not be less than 1, but got ${v}`);
    if (v > max) fail(`${flag} must not be more than ${max}, but got ${v}`);
  }
  const legacyServiceAccountTokenCleanUpPeriodMs = o.legacyServiceAccountTokenCleanUpPeriod as number;
  // Kubernetes' NewLegacySATokenCleaner refuses a period that is not positive (when the controller starts).
  if (
    legacyServiceAccountTokenCleanUpPeriodMs <= 0 &&
    controllers.enabled.has('legacy-serviceaccount-token-cleaner-controller')
  )
    fail(
      `--legacy-service-account-token-clean-up-period: invalid CleanUpPeriod: ${formatDuration(legacyServiceAccountTokenCleanUpPeriodMs)}`,
    );
  for (const [opt, controller] of IGNORED) {
    if (USED_FLAGS.has(opt.long ?? '')) continue;
    if (givenOnCli(opt.attributeName())) ignoredFlags.push(`${opt.long ?? ''} (${controller})`);
  }
  return {
    ...api,
    ...serving,
    controllers,
    clusterName: givenOnCli('clusterName') ? String(o.clusterName) : NAMINGS[scheme].clusterName,
    clusterSigning,
    signerFiles,
    clusterSigningDurationMs: o.clusterSigningDuration as number,
    rootCaFile: o.rootCaFile as string | undefined,
    serviceAccountPrivateKeyFile: (o.serviceAccountPrivateKeyFile as string | undefined) || undefined,
    legacyServiceAccountTokenCleanUpPeriodMs,
    mirroring,
    concurrentSyncs,
    maxEndpointsPerSlice: o.maxEndpointsPerSlice as number,
    endpointUpdatesBatchPeriodMs: o.endpointUpdatesBatchPeriod as number,
    endpointSliceUpdatesBatchPeriodMs: o.endpointsliceUpdatesBatchPeriod as number,
    horizontalPodAutoscaler: {
      syncPeriodMs: o.horizontalPodAutoscalerSyncPeriod as number,
      tolerance: o.horizontalPodAutoscalerTolerance as number,
      downscaleStabilizationMs: o.horizontalPodAutoscalerDownscaleStabilization as number,
      cpuInitializationPeriodMs: o.horizontalPodAutoscalerCpuInitializationPeriod as number,
      initialReadinessDelayMs: o.horizontalPodAutoscalerInitialReadinessDelay as number,
    },
    terminatedPodGcThreshold: o.terminatedPodGcThreshold as number,
    enableGarbageCollector: o.enableGarbageCollector as boolean,
    nodeIpam,
    useServiceAccountCredentials: o.useServiceAccountCredentials as boolean,
    ...leaderElection,
    ...featureOptions(parsed),
    metrics: metricsPolicy(parsed),
    minResyncPeriodMs: o.minResyncPeriod as number,
    namespaceSyncPeriodMs: o.namespaceSyncPeriod as number,
    resourceQuotaSyncPeriodMs: o.resourceQuotaSyncPeriod as number,
    nodeEvictionRate: o.nodeEvictionRate as number,
    secondaryNodeEvictionRate: o.secondaryNodeEvictionRate as number,
    largeClusterSizeThreshold: o.largeClusterSizeThreshold as number,
    nodeMonitorGracePeriodMs: o.nodeMonitorGracePeriod as number,
    nodeMonitorPeriodMs: o.nodeMonitorPeriod as number,
    nodeStartupGracePeriodMs: o.nodeStartupGracePeriod as number,
    naming: scheme,
    loggingFormat: o.loggingFormat as LogFormat,
    verbosity: o.v as number,
    ignoredFlags,
  };
}
