import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { isNamingScheme, naming, useNaming, type NamingScheme, type Taint } from '@svc/api';
import {
  boolArg,
  durationArg,
  intArg,
  listOption,
  metricsPolicy,
  portArg,
  splitList,
  withMetricsFlags,
  type MetricsPolicy,
} from '@svc/component-base';
import { formatDuration, type FeatureGates } from '@svc/machinery';
import {
  ConfigurationError,
  defaultConfiguration,
  loadConfigurationFile,
  loadDropIns,
  overlay,
  setField,
  validateConfiguration,
  type PartialConfiguration,
  type SvcletConfiguration,
} from './configuration.js';
import { parseGatePairs, svcletFeatureGates } from './feature-gates.js';
import {
  addSimulatedNodeFlags,
  simulatedNodesOptions,
  type SimulatedNodesOptions,
} from './simulated/simulated-node-flags.js';

/** The version the svclet reports (`nodeInfo.kubeletVersion`): the API server's release. */
export const SVCLET_VERSION = 'v1.32.0-svc.0.1.0';

/** Every svclet setting: the merged configuration plus the flags that have no field in it. */
export interface SvcletOptions {
  /** Defaults, then `--config`, then the `--config-dir` drop-ins, then flags given on the command line. */
  config: SvcletConfiguration;
  configFile?: string;
  configDir?: string;
  /** `--svcconfig` (`--kubeconfig`): API-server mode when set, else standalone mode. */
  svcconfig?: string;
  bootstrapKubeconfig?: string;
  certDir: string;
  rootDir: string;
  hostnameOverride?: string;
  /** `--node-ip`: one address, or an IPv4 and an IPv6 one. */
  nodeIps: string[];
  nodeLabels: Record<string, string>;
  cloudProvider: string;
  imageCredentialProviderBinDir?: string;
  imageCredentialProviderConfig?: string;
  naming: NamingScheme;
  featureGates: FeatureGates;
  /** `--disabled-metrics`, `--show-hidden-metrics-for-version`, `--allow-metric-labels*`. */
  metrics: MetricsPolicy;
  /** `--simulate-nodes` and its shaping flags: run simulated nodes instead of this node (absent: off). */
  simulated?: SimulatedNodesOptions;
  /** One line per deprecated flag given (each flag once, however often it was given), to log at start. */
  warnings: string[];
}

const DEPRECATED = (agent: string): string =>
  `This parameter should be set via the config file specified by the ${agent.charAt(0).toUpperCase()}${agent.slice(1)}'s --config flag.`;

function floatArg(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n))
    throw new InvalidArgumentError(`strconv.ParseFloat: parsing ${JSON.stringify(v)}: invalid syntax`);
  return n;
}

/** `k=v,k2=v2` (repeatable; later keys win), as pflag's mapStringString. */
function mapArg(sep: string) {
  return (v: string, prev: Record<string, string> | undefined): Record<string, string> => {
    const out = { ...prev };
    for (const pair of splitList(v)) {
      const i = pair.indexOf(sep);
      if (i <= 0) throw new InvalidArgumentError(`malformed pair, expect string${sep}string: ${JSON.stringify(pair)}`);
      out[pair.slice(0, i).trim()] = pair.slice(i + 1).trim();
    }
    return out;
  };
}

/** `--manifest-url-header 'a:hello,b:again,c:world'`: values of a repeated key accumulate. */
function headerArg(v: string, prev: Record<string, string[]> | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = { ...prev };
  for (const pair of splitList(v)) {
    const i = pair.indexOf(':');
    if (i <= 0) throw new InvalidArgumentError(`malformed header, expect name:value: ${JSON.stringify(pair)}`);
    const k = pair.slice(0, i);
    out[k] = [...(out[k] ?? []), pair.slice(i + 1)];
  }
  return out;
}

/** `--eviction-hard memory.available<100Mi,nodefs.available<10%`. */
function evictionArg(v: string, prev: Record<string, string> | undefined): Record<string, string> {
  const out = { ...prev };
  for (const item of splitList(v)) {
    const i = item.indexOf('<');
    if (i <= 0)
      throw new InvalidArgumentError(`malformed eviction threshold, expect signal<quantity: ${JSON.stringify(item)}`);
    out[item.slice(0, i)] = item.slice(i + 1);
  }
  return out;
}

/** `--register-with-taints <key>=<value>:<effect>,...`. */
function taintsArg(v: string): Taint[] {
  return splitList(v).map((t) => {
    const m = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(t);
    if (!m) throw new InvalidArgumentError(`invalid taint spec: ${t}, expect <key>=<value>:<effect>`);
    return m[2] === undefined
      ? { key: m[1] ?? '', effect: m[3] as Taint['effect'] }
      : { key: m[1] ?? '', value: m[2], effect: m[3] as Taint['effect'] };
  });
}

function gatesArg(v: string, prev: Record<string, boolean> | undefined): Record<string, boolean> {
  try {
    return { ...prev, ...parseGatePairs(v) };
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

type Kind =
  | 'string'
  | 'bool'
  | 'int'
  | 'port'
  | 'float'
  | 'duration'
  | 'list'
  | 'map'
  | 'eviction'
  | 'headers'
  | 'taints'
  | 'gates';

/** One flag: its name, value kind, help, and the configuration field it sets (flags with a field are deprecated, as in Kubernetes). */
interface FlagSpec {
  flag: string;
  kind: Kind;
  help: string;
  field?: string;
}

/** The node agent's flag table (the spec's, plus Kubernetes' `--port`, `--pod-manifest-path` and the rest we read). */
const FLAGS: FlagSpec[] = [
  // Flags with no configuration field (not deprecated).
  {
    flag: 'config',
    kind: 'string',
    help: "The svclet will load its initial configuration from this file. The path may be absolute or relative; relative paths start at the svclet's current working directory. Omit this flag to use the built-in default configuration values. Command-line flags override configuration from this file.",
  },
  {
    flag: 'config-dir',
    kind: 'string',
    help: 'Path to a directory of drop-in configuration files (*.conf, applied in lexical order after --config); command-line flags override them.',
  },
  {
    flag: 'svcconfig',
    kind: 'string',
    help: 'Path to a svcconfig file, specifying how to connect to the API server. Providing --svcconfig enables API server mode, omitting it enables standalone mode.',
  },
  { flag: 'kubeconfig', kind: 'string', help: 'Alias of --svcconfig.' },
  {
    flag: 'bootstrap-kubeconfig',
    kind: 'string',
    help: 'Path to a svcconfig file used to get a client certificate for the svclet when the --svcconfig file does not exist; the result is written to --svcconfig, the certificate and key to --cert-dir.',
  },
  {
    flag: 'cert-dir',
    kind: 'string',
    help: 'The directory where the TLS certs are located. Ignored for serving if --tls-cert-file and --tls-private-key-file are provided.',
  },
  { flag: 'root-dir', kind: 'string', help: 'Directory path for managing svclet files (volume mounts, etc).' },
  {
    flag: 'hostname-override',
    kind: 'string',
    help: 'If non-empty, will use this string as identification instead of the actual hostname.',
  },
  { flag: 'node-ip', kind: 'list', help: 'IP address (or comma-separated dual-stack IP addresses) of the node.' },
  {
    flag: 'node-labels',
    kind: 'map',
    help: 'Labels to add when registering the node in the cluster (comma-separated key=value pairs).',
  },
  { flag: 'cloud-provider', kind: 'string', help: 'The provider for cloud services: empty for none, or external.' },
  {
    flag: 'image-credential-provider-bin-dir',
    kind: 'string',
    help: 'The path to the directory where credential provider plugin binaries are located.',
  },
  {
    flag: 'image-credential-provider-config',
    kind: 'string',
    help: 'The path to the credential provider plugin config file.',
  },
  // Flags with a configuration field (deprecated in favor of the file).
  {
    flag: 'address',
    kind: 'string',
    field: 'address',
    help: 'The IP address for the svclet to serve on (set to 0.0.0.0 or :: for listening on all interfaces and IP address families).',
  },
  { flag: 'port', kind: 'port', field: 'port', help: 'The port for the svclet to serve on.' },
  {
    flag: 'tls-cert-file',
    kind: 'string',
    field: 'tlsCertFile',
    help: 'File containing x509 certificate used for serving HTTPS. If not given, a self-signed certificate and key are generated for the public address and saved to --cert-dir.',
  },
  {
    flag: 'tls-private-key-file',
    kind: 'string',
    field: 'tlsPrivateKeyFile',
    help: 'File containing x509 private key matching --tls-cert-file.',
  },
  {
    flag: 'rotate-certificates',
    kind: 'bool',
    field: 'rotateCertificates',
    help: 'Auto rotate the svclet client certificates by requesting new certificates from the API server as the certificate approaches expiration.',
  },
  {
    flag: 'anonymous-auth',
    kind: 'bool',
    field: 'authentication.anonymous.enabled',
    help: 'Enables anonymous requests to the svclet server. Requests that are not rejected by another authentication method are treated as anonymous requests (username system:anonymous, group system:unauthenticated).',
  },
  {
    flag: 'authentication-token-webhook',
    kind: 'bool',
    field: 'authentication.webhook.enabled',
    help: 'Use the TokenReview API to determine authentication for bearer tokens.',
  },
  {
    flag: 'authentication-token-webhook-cache-ttl',
    kind: 'duration',
    field: 'authentication.webhook.cacheTTL',
    help: 'The duration to cache responses from the webhook token authenticator.',
  },
  {
    flag: 'authorization-mode',
    kind: 'string',
    field: 'authorization.mode',
    help: 'Authorization mode for the svclet server: AlwaysAllow or Webhook (uses the SubjectAccessReview API).',
  },
  {
    flag: 'authorization-webhook-cache-authorized-ttl',
    kind: 'duration',
    field: 'authorization.webhook.cacheAuthorizedTTL',
    help: "The duration to cache 'authorized' responses from the webhook authorizer.",
  },
  {
    flag: 'authorization-webhook-cache-unauthorized-ttl',
    kind: 'duration',
    field: 'authorization.webhook.cacheUnauthorizedTTL',
    help: "The duration to cache 'unauthorized' responses from the webhook authorizer.",
  },
  {
    flag: 'client-ca-file',
    kind: 'string',
    field: 'authentication.x509.clientCAFile',
    help: 'If set, any request presenting a client certificate signed by one of the authorities in the file is authenticated with an identity corresponding to the CommonName of the client certificate.',
  },
  {
    flag: 'cgroup-driver',
    kind: 'string',
    field: 'cgroupDriver',
    help: 'Driver that the svclet uses to manipulate cgroups on the host: cgroupfs or systemd.',
  },
  { flag: 'cgroups-per-qos', kind: 'bool', field: 'cgroupsPerQOS', help: 'Enable creation of QoS cgroup hierarchy.' },
  {
    flag: 'container-log-max-files',
    kind: 'int',
    field: 'containerLogMaxFiles',
    help: 'Set the maximum number of container log files that can be present for a container. The number must be >= 2.',
  },
  {
    flag: 'container-log-max-size',
    kind: 'string',
    field: 'containerLogMaxSize',
    help: 'Set the maximum size (e.g. 10Mi) of container log file before it is rotated.',
  },
  {
    flag: 'container-runtime-endpoint',
    kind: 'string',
    field: 'containerRuntimeEndpoint',
    help: 'The endpoint of the container runtime service (a unix socket).',
  },
  {
    flag: 'cpu-cfs-quota',
    kind: 'bool',
    field: 'cpuCFSQuota',
    help: 'Enable CPU CFS quota enforcement for containers that specify CPU limits.',
  },
  {
    flag: 'cpu-cfs-quota-period',
    kind: 'duration',
    field: 'cpuCFSQuotaPeriod',
    help: 'Sets CPU CFS quota period value, cpu.cfs_period_us.',
  },
  {
    flag: 'cpu-manager-policy',
    kind: 'string',
    field: 'cpuManagerPolicy',
    help: 'CPU Manager policy to use: none or static.',
  },
  {
    flag: 'cpu-manager-reconcile-period',
    kind: 'duration',
    field: 'cpuManagerReconcilePeriod',
    help: 'CPU Manager reconciliation period.',
  },
  {
    flag: 'enable-controller-attach-detach',
    kind: 'bool',
    field: 'enableControllerAttachDetach',
    help: 'Enables the Attach/Detach controller to manage attachment/detachment of volumes scheduled to this node.',
  },
  {
    flag: 'enable-debugging-handlers',
    kind: 'bool',
    field: 'enableDebuggingHandlers',
    help: 'Enables server endpoints for log collection and local running of containers and commands.',
  },
  { flag: 'enable-server', kind: 'bool', field: 'enableServer', help: "Enable the svclet's server." },
  {
    flag: 'enforce-node-allocatable',
    kind: 'list',
    field: 'enforceNodeAllocatable',
    help: 'A comma separated list of levels of node allocatable enforcement: none, pods, system-reserved, svc-reserved.',
  },
  { flag: 'event-burst', kind: 'int', field: 'eventBurst', help: 'Maximum size of a bursty event records.' },
  { flag: 'event-qps', kind: 'int', field: 'eventRecordQPS', help: 'QPS to limit event creations. 0 means unlimited.' },
  {
    flag: 'eviction-hard',
    kind: 'eviction',
    field: 'evictionHard',
    help: 'A set of eviction thresholds (e.g. memory.available<1Gi) that if met would trigger a pod eviction.',
  },
  {
    flag: 'eviction-pressure-transition-period',
    kind: 'duration',
    field: 'evictionPressureTransitionPeriod',
    help: 'Duration for which the svclet has to wait before transitioning out of an eviction pressure condition.',
  },
  {
    flag: 'fail-swap-on',
    kind: 'bool',
    field: 'failSwapOn',
    help: 'Makes the svclet fail to start if swap is enabled on the node.',
  },
  {
    flag: 'feature-gates',
    kind: 'gates',
    field: 'featureGates',
    help: 'A set of key=value pairs that describe feature gates for alpha/experimental features.',
  },
  {
    flag: 'file-check-frequency',
    kind: 'duration',
    field: 'fileCheckFrequency',
    help: 'Duration between checking config files for new data.',
  },
  {
    flag: 'hairpin-mode',
    kind: 'string',
    field: 'hairpinMode',
    help: 'How the svclet should setup hairpin NAT: promiscuous-bridge, hairpin-veth or none.',
  },
  {
    flag: 'healthz-bind-address',
    kind: 'string',
    field: 'healthzBindAddress',
    help: 'The IP address for the healthz server to serve on.',
  },
  {
    flag: 'healthz-port',
    kind: 'port',
    field: 'healthzPort',
    help: 'The port of the localhost healthz endpoint (set to 0 to disable).',
  },
  {
    flag: 'http-check-frequency',
    kind: 'duration',
    field: 'httpCheckFrequency',
    help: 'Duration between checking http for new data.',
  },
  {
    flag: 'image-gc-high-threshold',
    kind: 'int',
    field: 'imageGCHighThresholdPercent',
    help: 'The percent of disk usage after which image garbage collection is always run. Values must be within the range [0, 100]; 100 disables image garbage collection.',
  },
  {
    flag: 'image-gc-low-threshold',
    kind: 'int',
    field: 'imageGCLowThresholdPercent',
    help: 'The percent of disk usage before which image garbage collection is never run. Must not exceed --image-gc-high-threshold.',
  },
  { flag: 'svc-api-burst', kind: 'int', field: 'svcAPIBurst', help: 'Burst to use while talking with the API server.' },
  {
    flag: 'svc-api-content-type',
    kind: 'string',
    field: 'contentType',
    help: 'Content type of requests sent to the API server.',
  },
  { flag: 'svc-api-qps', kind: 'float', field: 'svcAPIQPS', help: 'QPS to use while talking with the API server.' },
  {
    flag: 'local-storage-capacity-isolation',
    kind: 'bool',
    field: 'localStorageCapacityIsolation',
    help: 'Enables local ephemeral storage isolation.',
  },
  {
    flag: 'log-flush-frequency',
    kind: 'duration',
    field: 'logging.flushFrequency',
    help: 'Maximum number of seconds between log flushes.',
  },
  {
    flag: 'logging-format',
    kind: 'string',
    field: 'logging.format',
    help: 'Sets the log format: text, or json (gated by LoggingBetaOptions).',
  },
  {
    flag: 'make-iptables-util-chains',
    kind: 'bool',
    field: 'makeIPTablesUtilChains',
    help: 'If true, the svclet will ensure iptables utility rules are present on host.',
  },
  {
    flag: 'max-open-files',
    kind: 'int',
    field: 'maxOpenFiles',
    help: 'Number of files that can be opened by the svclet process.',
  },
  { flag: 'max-pods', kind: 'int', field: 'maxPods', help: 'Number of pods that can run on this svclet.' },
  {
    flag: 'manifest-url',
    kind: 'string',
    field: 'staticPodURL',
    help: 'URL for accessing additional Pod specifications to run.',
  },
  {
    flag: 'manifest-url-header',
    kind: 'headers',
    field: 'staticPodURLHeader',
    help: "Comma-separated list of HTTP headers to use when accessing the URL provided to --manifest-url (e.g. 'a:hello,b:again,c:world').",
  },
  {
    flag: 'pod-manifest-path',
    kind: 'string',
    field: 'staticPodPath',
    help: 'Path to the directory containing static pod files to run, or the path to a single static pod file.',
  },
  {
    flag: 'sync-frequency',
    kind: 'duration',
    field: 'syncFrequency',
    help: 'Max period between synchronizing running containers and config.',
  },
  {
    flag: 'node-status-update-frequency',
    kind: 'duration',
    field: 'nodeStatusUpdateFrequency',
    help: 'Specifies how often the svclet posts node status to the API server.',
  },
  { flag: 'cluster-dns', kind: 'list', field: 'clusterDNS', help: 'Comma-separated list of DNS server IP addresses.' },
  { flag: 'cluster-domain', kind: 'string', field: 'clusterDomain', help: 'Domain for this cluster.' },
  {
    flag: 'system-reserved',
    kind: 'map',
    field: 'systemReserved',
    help: 'A set of ResourceName=ResourceQuantity (e.g. cpu=200m,memory=500Mi) pairs that describe resources reserved for non-svc components.',
  },
  {
    flag: 'svc-reserved',
    kind: 'map',
    field: 'svcReserved',
    help: 'A set of ResourceName=ResourceQuantity (e.g. cpu=200m,memory=500Mi) pairs that describe resources reserved for svc system components.',
  },
  { flag: 'register-node', kind: 'bool', field: 'registerNode', help: 'Register the node with the API server.' },
  {
    flag: 'register-with-taints',
    kind: 'taints',
    field: 'registerWithTaints',
    help: 'Register the node with the given list of taints (comma separated <key>=<value>:<effect>).',
  },
  {
    flag: 'provider-id',
    kind: 'string',
    field: 'providerID',
    help: 'Unique identifier for identifying the node in a machine database.',
  },
];

const attr = (flag: string): string => flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

function getPath(c: object, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], c);
}

function showDefault(v: unknown): string {
  if (typeof v === 'number' && v >= 0) return String(v);
  if (Array.isArray(v))
    return v.length === 0 ? '[]' : v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(',');
  if (typeof v === 'object' && v !== null)
    return Object.entries(v)
      .map(([k, x]) => `${k}=${String(x)}`)
      .join(',');
  return String(v);
}

function option(s: FlagSpec, def: SvcletConfiguration): Option {
  const long = `--${s.flag}`;
  const d = s.field ? getPath(def, s.field) : undefined;
  const o = ((): Option => {
    switch (s.kind) {
      case 'bool':
        return new Option(`${long} [bool]`, s.help).argParser(boolArg);
      case 'int':
        return new Option(`${long} <int>`, s.help).argParser(intArg);
      case 'port':
        return new Option(`${long} <port>`, s.help).argParser(portArg);
      case 'float':
        return new Option(`${long} <float>`, s.help).argParser(floatArg);
      case 'duration':
        return new Option(`${long} <duration>`, s.help).argParser(durationArg);
      case 'list':
        return listOption(`${long} <list>`, s.help);
      case 'map':
        return new Option(`${long} <pairs>`, s.help).argParser(mapArg('='));
      case 'eviction':
        return new Option(`${long} <thresholds>`, s.help).argParser(evictionArg);
      case 'headers':
        return new Option(`${long} <headers>`, s.help).argParser(headerArg);
      case 'taints':
        return new Option(`${long} <taints>`, s.help).argParser(taintsArg);
      case 'gates':
        return new Option(`${long} <pairs>`, s.help).argParser(gatesArg);
      case 'string':
        return new Option(`${long} <value>`, s.help);
    }
  })();
  // Defaults are shown in the help only: a value counts when given on the command line (and
  // commander would hand a default to the parsers of repeatable flags as the earlier value).
  let shown =
    d !== undefined && d !== '' ? (s.kind === 'duration' ? formatDuration(d as number) : showDefault(d)) : undefined;
  if (s.flag === 'cert-dir') shown = `/var/lib/${naming().nodeAgentName}/pki`;
  if (s.flag === 'root-dir') shown = `/var/lib/${naming().nodeAgentName}`;
  if (shown !== undefined) o.description = `${s.help} (default: ${shown})`;
  if (s.flag === 'kubeconfig') o.hideHelp();
  if (s.field) o.helpGroup('Deprecated flags (set these in the --config file):');
  return o;
}

export function svcletCommand(): Command {
  const def = defaultConfiguration();
  const cmd = new Command(naming().nodeAgentName)
    .description(
      'The svclet is the primary node agent that runs on each node. It registers the node with the API server and ensures that the containers described in PodSpecs, from the API server, a file path or an HTTP endpoint, are running and healthy.',
    )
    .allowExcessArguments(false);
  for (const s of FLAGS) cmd.addOption(option(s, def));
  addSimulatedNodeFlags(cmd);
  cmd
    .addOption(
      new Option('--naming <scheme>', 'Spelling of product identifiers: svc, or kubernetes.')
        .default('svc')
        .choices(['svc', 'kubernetes']),
    )
    .addOption(new Option('-v, --v <level>', 'number for the log level verbosity').argParser(intArg));
  withMetricsFlags(cmd).version(
    `${naming().nodeAgentName} ${SVCLET_VERSION}`,
    '--version',
    'Print version information and quit.',
  );
  cmd.configureHelp({ sortOptions: false });
  return cmd;
}

const fail = (msg: string): never => {
  throw new CommanderError(2, 'svc.invalidOption', `error: ${msg}`);
};

/**
 * Parses argv (without node and script) and reads `--config` and `--config-dir`; applies
 * `--naming` (the file's apiVersion depends on it). Throws `CommanderError` for bad flags,
 * `ConfigurationError` for a bad file or configuration.
 */
export function parseSvcletOptions(argv: string[], opts: { quiet?: boolean } = {}): SvcletOptions {
  const cmd = svcletCommand().exitOverride();
  if (opts.quiet) cmd.configureOutput({ writeErr: () => undefined });
  cmd.parse(argv, { from: 'user' });
  const o = cmd.opts<Record<string, unknown>>();
  const given = (name: string): boolean => cmd.getOptionValueSource(name) === 'cli';
  const scheme = String(o.naming);
  if (!isNamingScheme(scheme)) return fail(`--naming: unknown naming ${scheme}`);
  useNaming(scheme);
  const metrics = metricsPolicy({ cmd, o, fail, givenOnCli: given });
  if (given('svcconfig') && given('kubeconfig') && o.svcconfig !== o.kubeconfig)
    fail('--svcconfig and --kubeconfig name different files');
  const cloud = String(o.cloudProvider ?? '');
  if (cloud !== '' && cloud !== 'external')
    fail(`--cloud-provider: unknown provider ${JSON.stringify(cloud)} (only "external" or empty)`);

  let config = defaultConfiguration();
  const configFile = o.config as string | undefined;
  const configDir = o.configDir as string | undefined;
  // The --config path itself is relative to the working directory (readFileSync resolves it so).
  if (configFile) config = overlay(config, loadConfigurationFile(configFile));
  if (configDir) for (const d of loadDropIns(configDir)) config = overlay(config, d);
  const fromFlags: PartialConfiguration = {};
  const warnings: string[] = [];
  for (const s of FLAGS) {
    if (!s.field || !given(attr(s.flag))) continue;
    setField(fromFlags, s.field, o[attr(s.flag)]);
    warnings.push(`Flag --${s.flag} has been deprecated, ${DEPRECATED(naming().nodeAgentName)}`);
  }
  config = overlay(config, fromFlags);
  if (given('v')) config = { ...config, logging: { ...config.logging, verbosity: o.v as number } };

  const problems = validateConfiguration(config);
  if (problems.length > 0) throw new ConfigurationError(problems.join('\n'));
  let featureGates: FeatureGates;
  try {
    featureGates = svcletFeatureGates(config.featureGates);
  } catch (e) {
    throw new ConfigurationError(`invalid configuration: featureGates: ${(e as Error).message}`);
  }
  warnings.push(...featureGates.warnings);
  if (config.logging.format === 'json' && !featureGates.enabled('LoggingBetaOptions')) {
    throw new ConfigurationError(
      'invalid configuration: logging.format json needs the LoggingBetaOptions feature gate',
    );
  }
  const svcconfig = (o.svcconfig ?? o.kubeconfig) as string | undefined;
  const simulated = simulatedNodesOptions(o, { maxPods: config.maxPods, svcconfig: !!svcconfig, fail });
  return {
    config,
    configFile,
    configDir,
    svcconfig,
    bootstrapKubeconfig: o.bootstrapKubeconfig as string | undefined,
    certDir: (o.certDir as string | undefined) ?? `/var/lib/${naming().nodeAgentName}/pki`,
    rootDir: (o.rootDir as string | undefined) ?? `/var/lib/${naming().nodeAgentName}`,
    hostnameOverride: (o.hostnameOverride as string | undefined) || undefined,
    nodeIps: (o.nodeIp as string[] | undefined) ?? [],
    nodeLabels: (o.nodeLabels as Record<string, string> | undefined) ?? {},
    cloudProvider: cloud,
    imageCredentialProviderBinDir: o.imageCredentialProviderBinDir as string | undefined,
    imageCredentialProviderConfig: o.imageCredentialProviderConfig as string | undefined,
    naming: scheme,
    featureGates,
    metrics,
    simulated,
    warnings,
  };
}

export { ConfigurationError };
