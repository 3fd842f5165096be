import { InvalidArgumentError, Option, type Command } from 'commander';
import { boolOption, intArg, listOption } from '@svc/component-base';

/**
 * The listener's flags (Kubernetes' SecureServingOptions and ServerRunOptions rows that are
 * about the connection rather than the API): HTTP/2, GOAWAY, CORS, throttling, profiling.
 */
export interface ServingOptions {
  /** False with `--disable-http2-serving`: ALPN offers only `http/1.1`. */
  http2: boolean;
  /** `--http2-max-streams-per-connection`; 0 means Kubernetes' default (100). */
  http2MaxStreamsPerConnection: number;
  /** `--goaway-chance`: the fraction of HTTP/2 requests whose connection is sent a GOAWAY. */
  goawayChance: number;
  /** `--cors-allowed-origins`, compiled; empty: CORS off. */
  corsAllowedOrigins: RegExp[];
  /** `--external-hostname`: the host of externalized URLs (issuer discovery); absent: the advertise address. */
  externalHostname?: string;
  /** `--max-connection-bytes-per-sec`: bytes per second of a long-running answer; 0: no throttle. */
  maxConnectionBytesPerSec: number;
  /** `--profiling`: the `/debug/pprof/` endpoints on the secure port. */
  profiling: boolean;
  /** `--contention-profiling`: the CPU profiles sample more often (Go's block profiling has no Node counterpart). */
  contentionProfiling: boolean;
  /** `--debug-socket-path`: the profiling endpoints, unauthenticated, on this unix socket. */
  debugSocketPath?: string;
}

/** Go's MaxConcurrentStreams when `--http2-max-streams-per-connection` is 0 (Kubernetes 1.32's secure serving). */
export const DEFAULT_HTTP2_MAX_STREAMS = 100;

const CORS_HELP =
  'List of allowed origins for CORS, comma separated. An allowed origin can be a regular expression to support subdomain matching. If this list is empty CORS will not be enabled. Each expression must match the entire host: anchor its start with ^ or a // prefix, and its end with $ or a : port separator, e.g. //example\\.com(:|$) or ^https://example\\.com(:|$).';

function floatArg(v: string): number {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v.trim()))
    throw new InvalidArgumentError(`strconv.ParseFloat: parsing ${JSON.stringify(v)}: invalid syntax`);
  return Number(v);
}

/** Adds the listener's flags to the API server's command. */
export function withServingFlags(cmd: Command): Command {
  return cmd
    .addOption(boolOption('--disable-http2-serving', 'If true, HTTP2 serving will be disabled [default=false]', false))
    .addOption(
      new Option(
        '--http2-max-streams-per-connection <n>',
        "The limit that the server gives to clients for the maximum number of streams in an HTTP/2 connection. Zero means to use golang's default (here 100).",
      )
        .default(0)
        .argParser(intArg),
    )
    .addOption(
      new Option(
        '--goaway-chance <fraction>',
        "To prevent HTTP/2 clients from getting stuck on a single apiserver, randomly close a connection (GOAWAY). The client's other in-flight requests won't be affected, and the client will reconnect, likely landing on a different apiserver after going through the load balancer again. This argument sets the fraction of requests that will be sent a GOAWAY. Clusters with single apiservers, or which don't use a load balancer, should NOT enable this. Min is 0 (off), Max is .02 (1/50 requests); .001 (1/1000) is a recommended starting point.",
      )
        .default(0)
        .argParser(floatArg),
    )
    .addOption(listOption('--cors-allowed-origins <origins>', CORS_HELP))
    .addOption(
      new Option(
        '--external-hostname <host>',
        'The hostname to use when generating externalized URLs for this server (e.g. OpenID Discovery). Defaults to the advertise address.',
      ),
    )
    .addOption(
      new Option(
        '--max-connection-bytes-per-sec <n>',
        'If non-zero, throttle each user connection to this number of bytes/sec. Currently only applies to long-running requests.',
      )
        .default(0)
        .argParser(intArg),
    )
    .addOption(boolOption('--profiling', 'Enable profiling via web interface host:port/debug/pprof/', true))
    .addOption(
      boolOption(
        '--contention-profiling',
        'Enable block profiling, if profiling is enabled (CPU profiles sample finer).',
        false,
      ),
    )
    .addOption(
      new Option(
        '--debug-socket-path <path>',
        'Use an unprotected (no authn/authz) unix-domain socket for profiling with the given path',
      ),
    );
}

/**
 * Whether a CORS origin expression pins the start of the host (`^` or `//`) and its end
 * (`$` or `:`), as Kubernetes' validation asks since CVE-2022-1996.
 */
function pinsHost(re: string): boolean {
  return (re.includes('^') || re.includes('//')) && (re.includes('$') || re.includes(':'));
}

/** Go's RE2 syntax that JavaScript spells otherwise: `(?P<name>` groups and a leading `(?i)`. */
function compileGoRegexp(source: string): RegExp {
  let flags = '';
  let s = source.replace(/\(\?P</g, '(?<');
  const lead = /^\(\?([is]+)\)/.exec(s);
  if (lead) {
    flags = [...new Set(lead[1])].join('');
    s = s.slice(lead[0].length);
  }
  return new RegExp(s, flags);
}

/** The listener's settings from the parsed flags; a bad value ends parsing (exit 2). */
export function servingOptions(a: { o: Record<string, unknown>; fail: (msg: string) => never }): ServingOptions {
  const { o, fail } = a;
  const chance = o.goawayChance as number;
  if (!(chance >= 0 && chance <= 0.02)) fail('--goaway-chance can not be less than 0 or greater than 0.02');
  const streams = o.http2MaxStreamsPerConnection as number;
  if (streams < 0) fail('--http2-max-streams-per-connection can not be negative');
  if (streams > 0xffffffff) fail('--http2-max-streams-per-connection is too large');
  if ((o.maxConnectionBytesPerSec as number) < 0) fail('--max-connection-bytes-per-sec can not be negative');
  if ((o.minRequestTimeout as number) < 0) fail('--min-request-timeout can not be negative value');
  const origins = (o.corsAllowedOrigins as string[] | undefined) ?? [];
  const corsAllowedOrigins = origins.map((re) => {
    let compiled: RegExp;
    try {
      compiled = compileGoRegexp(re);
    } catch (e) {
      return fail(`--cors-allowed-origins has an invalid regular expression: ${(e as Error).message}`);
    }
    if (!pinsHost(re))
      fail(
        `--cors-allowed-origins has an invalid regular expression: ${JSON.stringify(re)}: regular expression does not pin to start/end of host in the origin header`,
      );
    return compiled;
  });
  const debugSocketPath = o.debugSocketPath as string | undefined;
  const externalHostname = o.externalHostname as string | undefined;
  if (externalHostname !== undefined && !/^[A-Za-z0-9.:[\]-]+$/.test(externalHostname))
    fail(`--external-hostname: ${JSON.stringify(externalHostname)} is not a host name or address`);
  return {
    http2: !(o.disableHttp2Serving as boolean),
    http2MaxStreamsPerConnection: streams,
    goawayChance: chance,
    corsAllowedOrigins,
    externalHostname: externalHostname || undefined,
    maxConnectionBytesPerSec: o.maxConnectionBytesPerSec as number,
    profiling: o.profiling as boolean,
    contentionProfiling: o.contentionProfiling as boolean,
    debugSocketPath: debugSocketPath || undefined,
  };
}
