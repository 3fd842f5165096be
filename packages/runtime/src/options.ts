import { isIP } from 'node:net';
import { Command, Option } from 'commander';
import { parseFlags, withLoggingFlags, type LogFormat } from '@svc/component-base';

/** Every svc-runtime setting, parsed and validated. */
export interface RuntimeOptions {
  socket: string;
  rootDir: string;
  podIp: string;
  loggingFormat: LogFormat;
  verbosity: number;
}

export function runtimeCommand(): Command {
  const cmd = new Command('svc-runtime')
    .description(
      'A CRI (runtime.v1) server that runs each container as a local process. The svclet reaches it with --container-runtime-endpoint unix://<socket>.',
    )
    .addOption(
      new Option('--socket <path>', 'Unix socket to serve the CRI on (a stale socket file is replaced).').default(
        '/run/svc-runtime/svc-runtime.sock',
      ),
    )
    .addOption(
      new Option('--root-dir <dir>', 'Directory for sandbox, container and image state (JSON files).').default(
        '/var/lib/svc-runtime',
      ),
    )
    .addOption(
      new Option('--pod-ip <ip>', 'IP reported for every pod sandbox (containers share the node network).').default(
        '127.0.0.1',
      ),
    )
    .allowExcessArguments(false);
  return withLoggingFlags(cmd);
}

/** Parses the command line; throws commander's CommanderError (help, version, bad flags) for `exitOnFlagError`. */
export function parseRuntimeOptions(argv: string[], opts: { quiet?: boolean } = {}): RuntimeOptions {
  const { o, fail } = parseFlags(runtimeCommand(), argv, opts);
  const podIp = String(o.podIp);
  if (!isIP(podIp)) fail(`--pod-ip: ${JSON.stringify(podIp)} is not an IP address`);
  if (!o.socket) fail('--socket must not be empty');
  if (!o.rootDir) fail('--root-dir must not be empty');
  return {
    socket: String(o.socket),
    rootDir: String(o.rootDir),
    podIp,
    loggingFormat: o.loggingFormat as LogFormat,
    verbosity: o.v as number,
  };
}
