import { Command, InvalidArgumentError, Option, CommanderError } from 'commander';
import { isNamingScheme, naming, type NamingScheme } from '@svc/api';
import { parseDuration, formatDuration, FeatureGates, API_SERVER_GATES, parseRuntimeConfig, type RuntimeConfig } from '@svc/machinery';
import type { LogFormat } from './logger.js';

/** Every svc-apiserver setting, parsed and validated. Durations are milliseconds. */
export interface ApiServerOptions {
  storeServers: string[];
  storePrefix: string;
  storeCaFile?: string;
  storeCertFile?: string;
  storeKeyFile?: string;
  storeHealthcheckTimeoutMs: number;
  storeReadycheckTimeoutMs: number;
  storeCountMetricPollPeriodMs: number;
  storeCompactionIntervalMs: number;
  watchCache: boolean;
  bindAddress: string;
  securePort: number;
  certDir: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  advertiseAddress?: string;
  tokenAuthFile?: string;
  anonymousAuth: boolean;
  authorizationMode: string[];
  featureGates: FeatureGates;
  runtimeConfig: RuntimeConfig;
  livezGracePeriodMs: number;
  shutdownDelayDurationMs: number;
  maxRequestsInflight: number;
  maxMutatingRequestsInflight: number;
  minRequestTimeoutSeconds: number;
  naming: NamingScheme;
  loggingFormat: LogFormat;
  verbosity: number;
}

const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'];
/** Modes this build enforces; the rest parse but are refused at start until they exist. */
const SUPPORTED_AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny'];

function durationArg(v: string): number {
  try {
    return parseDuration(v);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

function intArg(v: string): number {
  if (!/^-?\d+$/.test(v)) throw new InvalidArgumentError(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  return Number(v);
}

function portArg(v: string): number {
  const n = intArg(v);
  if (n < 0 || n > 65535) throw new InvalidArgumentError(`port ${n} must be between 0 and 65535, inclusive`);
  return n;
}

function boolArg(v: string | undefined): boolean {
  if (v === undefined || v === '' || v === 'true' || v === '1' || v === 't' || v === 'T' || v === 'TRUE' || v === 'True') return true;
  if (v === 'false' || v === '0' || v === 'f' || v === 'F' || v === 'FALSE' || v === 'False') return false;
  throw new InvalidArgumentError(`strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
}

function splitList(v: string): string[] {
  return v.split(',').map((x) => x.trim()).filter((x) => x !== '');
}

/** A comma-list flag like pflag's StringSlice: the first use replaces the default, later uses append. */
function listOption(flags: string, description: string, def?: string[]): Option {
  let given = false;
  const o = new Option(flags, description).argParser((v: string, prev: string[] | undefined) => {
    const items = splitList(v);
    if (!given) {
      given = true;
      return items;
    }
    return [...(prev ?? []), ...items];
  });
  return def ? o.default(def, def.join(',')) : o;
}

function repeatable(v: string, prev: string[] | undefined): string[] {
  return [...(prev ?? []), v];
}

function boolOption(flags: string, description: string, def: boolean): Option {
  return new Option(`${flags} [bool]`, description).default(def).argParser(boolArg);
}

function durationOption(flags: string, description: string, defMs: number): Option {
  return new Option(`${flags} <duration>`, description).default(defMs, formatDuration(defMs)).argParser(durationArg);
}

export function apiServerCommand(): Command {
  const cmd = new Command(naming().apiserverName)
    .description('The API server validates and configures data for the API objects and is the front end to the shared cluster state.')
    .allowExcessArguments(false)
    .addOption(listOption('--store-servers <urls>', 'List of store servers to connect with (scheme://ip:port), comma separated.', ['http://127.0.0.1:2379']))
    .addOption(new Option('--store-prefix <prefix>', 'The prefix to prepend to all resource paths in the store.').default('/registry'))
    .addOption(new Option('--store-cafile <file>', 'SSL Certificate Authority file used to secure store communication.'))
    .addOption(new Option('--store-certfile <file>', 'SSL certification file used to secure store communication.'))
    .addOption(new Option('--store-keyfile <file>', 'SSL key file used to secure store communication.'))
    .addOption(durationOption('--store-healthcheck-timeout', 'The timeout to use when checking store health.', 2000))
    .addOption(durationOption('--store-readycheck-timeout', 'The timeout to use when checking store readiness.', 2000))
    .addOption(durationOption('--store-count-metric-poll-period', 'Frequency of polling the store for the number of resources per type. 0 disables.', 60_000))
    .addOption(durationOption('--store-compaction-interval', 'The interval of compaction requests. 0 disables compaction from the API server.', 300_000))
    .addOption(boolOption('--watch-cache', 'Enable watch caching in the apiserver.', true))
    .addOption(new Option('--bind-address <ip>', 'The IP address on which to listen for the --secure-port port.').default('0.0.0.0'))
    .addOption(new Option('--secure-port <port>', 'The port on which to serve HTTPS with authentication and authorization. 0 picks a free port.').default(6443).argParser(portArg))
    .addOption(new Option('--cert-dir <dir>', 'The directory where the TLS certs are located. Ignored if --tls-cert-file and --tls-private-key-file are provided.').default('/var/run/svc'))
    .addOption(new Option('--tls-cert-file <file>', 'File containing the default x509 certificate for HTTPS (CA cert, if any, concatenated after server cert).'))
    .addOption(new Option('--tls-private-key-file <file>', 'File containing the default x509 private key matching --tls-cert-file.'))
    .addOption(new Option('--advertise-address <ip>', 'The IP address on which to advertise the apiserver to members of the cluster.'))
    .addOption(new Option('--token-auth-file <file>', 'If set, the file that will be used to secure the secure port of the API server via token authentication (CSV: token,user,uid,"group1,group2").'))
    .addOption(boolOption('--anonymous-auth', 'Enables anonymous requests to the secure port of the API server.', true))
    .addOption(listOption('--authorization-mode <modes>', `Ordered list of plug-ins to do authorization on secure port. Comma-delimited list of: ${AUTHORIZATION_MODES.join(',')}.`, ['AlwaysAllow']))
    .addOption(new Option('--feature-gates <gates>', 'A set of key=value pairs that describe feature gates for alpha/experimental features (repeatable).').default([], '').argParser(repeatable))
    .addOption(new Option('--runtime-config <config>', 'A set of key=value pairs that enable or disable built-in APIs.').default([], '').argParser(repeatable))
    .addOption(durationOption('--livez-grace-period', 'This option represents the maximum amount of time it should take for apiserver to complete its startup sequence and become live.', 0))
    .addOption(durationOption('--shutdown-delay-duration', 'Time to delay the termination. During that time the server keeps serving requests normally while /readyz fails.', 0))
    .addOption(new Option('--max-requests-inflight <n>', 'The maximum number of non-mutating requests in flight at a given time. 0 means no limit.').default(400).argParser(intArg))
    .addOption(new Option('--max-mutating-requests-inflight <n>', 'The maximum number of mutating requests in flight at a given time. 0 means no limit.').default(200).argParser(intArg))
    .addOption(new Option('--min-request-timeout <seconds>', 'The minimum number of seconds a handler must keep a request open before timing it out (watch picks a random timeout above it).').default(1800).argParser(intArg))
    .addOption(new Option('--naming <scheme>', 'Spelling of product identifiers: svc, or kubernetes for stock clients.').default('svc').choices(['svc', 'kubernetes']))
    .addOption(new Option('--logging-format <format>', 'Sets the log format.').default('text').choices(['text', 'json']))
    .addOption(new Option('-v, --v <level>', 'number for the log level verbosity').default(0).argParser(intArg));
  cmd.configureHelp({ sortOptions: false });
  return cmd;
}

/**
 * Parses argv (without node and script) into options; throws `CommanderError` on bad input.
 * `quiet` keeps commander's own error text off stderr (the caller prints one line); help
 * still goes to stdout.
 */
export function parseApiServerOptions(argv: string[], opts: { quiet?: boolean } = {}): ApiServerOptions {
  const cmd = apiServerCommand().exitOverride();
  if (opts.quiet) cmd.configureOutput({ writeErr: () => undefined });
  cmd.parse(argv, { from: 'user' });
  const o = cmd.opts<Record<string, unknown>>();
  const fail = (msg: string): never => {
    throw new CommanderError(2, 'svc.invalidOption', `error: ${msg}`);
  };

  const gates = new FeatureGates(API_SERVER_GATES);
  try {
    gates.parse(o.featureGates as string[]);
  } catch (e) {
    fail(`invalid argument for "--feature-gates" flag: ${(e as Error).message}`);
  }
  let runtimeConfig: RuntimeConfig;
  try {
    runtimeConfig = parseRuntimeConfig((o.runtimeConfig as string[]).join(','));
  } catch (e) {
    return fail(`invalid argument for "--runtime-config" flag: ${(e as Error).message}`);
  }
  const modes = (o.authorizationMode as string[] | undefined) ?? ['AlwaysAllow'];
  for (const m of modes) {
    if (!AUTHORIZATION_MODES.includes(m)) fail(`--authorization-mode: authorization mode ${JSON.stringify(m)} is not a valid mode`);
    if (!SUPPORTED_AUTHORIZATION_MODES.includes(m)) fail(`--authorization-mode: authorization mode ${m} is not available in this build yet`);
  }
  if (new Set(modes).size !== modes.length) fail('--authorization-mode: authorization modes may not be repeated');
  if ((o.tlsCertFile === undefined) !== (o.tlsPrivateKeyFile === undefined)) {
    fail('--tls-cert-file and --tls-private-key-file must be given together');
  }
  const namingScheme = String(o.naming);
  if (!isNamingScheme(namingScheme)) return fail(`--naming: unknown naming ${namingScheme}`);

  return {
    storeServers: o.storeServers as string[],
    storePrefix: String(o.storePrefix).replace(/\/+$/, '') || '/registry',
    storeCaFile: o.storeCafile as string | undefined,
    storeCertFile: o.storeCertfile as string | undefined,
    storeKeyFile: o.storeKeyfile as string | undefined,
    storeHealthcheckTimeoutMs: o.storeHealthcheckTimeout as number,
    storeReadycheckTimeoutMs: o.storeReadycheckTimeout as number,
    storeCountMetricPollPeriodMs: o.storeCountMetricPollPeriod as number,
    storeCompactionIntervalMs: o.storeCompactionInterval as number,
    watchCache: o.watchCache as boolean,
    bindAddress: String(o.bindAddress),
    securePort: o.securePort as number,
    certDir: String(o.certDir),
    tlsCertFile: o.tlsCertFile as string | undefined,
    tlsPrivateKeyFile: o.tlsPrivateKeyFile as string | undefined,
    advertiseAddress: o.advertiseAddress as string | undefined,
    tokenAuthFile: o.tokenAuthFile as string | undefined,
    anonymousAuth: o.anonymousAuth as boolean,
    authorizationMode: modes,
    featureGates: gates,
    runtimeConfig,
    livezGracePeriodMs: o.livezGracePeriod as number,
    shutdownDelayDurationMs: o.shutdownDelayDuration as number,
    maxRequestsInflight: o.maxRequestsInflight as number,
    maxMutatingRequestsInflight: o.maxMutatingRequestsInflight as number,
    minRequestTimeoutSeconds: o.minRequestTimeout as number,
    naming: namingScheme,
    loggingFormat: o.loggingFormat as LogFormat,
    verbosity: o.v as number,
  };
}
