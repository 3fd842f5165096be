import { isIP } from 'node:net';
import { Command, CommanderError, Option } from 'commander';
import { intArg, type LogFormat } from '@svc/component-base';

/** Every svc-runtime setting, parsed and validated. */
export interface RuntimeOptions {
  socket: string;
  rootDir: string;
  podIp: string;
  loggingFormat: LogFormat;
  verbosity: number;
}

export function runtimeCommand(): Command {
  return new Command('svc-runtime')
    .description('A CRI (runtime.v1) server that runs each container as a local process. The svclet reaches it with --container-runtime-endpoint unix://<socket>.')
    .addOption(new Option('--socket <path>', 'Unix socket to serve the CRI on (a stale socket file is replaced).').default('/run/svc-runtime/svc-runtime.sock'))
    .addOption(new Option('--root-dir <dir>', 'Directory for sandbox, container and image state (JSON files).').default('/var/lib/svc-runtime'))
    .addOption(new Option('--pod-ip <ip>', 'IP reported for every pod sandbox (containers share the node network).').default('127.0.0.1'))
    .addOption(new Option('--logging-format <format>', 'Sets the log format.').default('text').choices(['text', 'json']))
    .addOption(new Option('-v, --v <level>', 'number for the log level verbosity').default(0).argParser(intArg))
    .allowExcessArguments(false);
}

/** Parses the command line; throws commander's CommanderError (help, version, bad flags) for `exitOnFlagError`. */
export function parseRuntimeOptions(argv: string[], opts: { quiet?: boolean } = {}): RuntimeOptions {
  const cmd = runtimeCommand().exitOverride();
  if (opts.quiet) cmd.configureOutput({ writeErr: () => undefined });
  cmd.parse(argv, { from: 'user' });
  const o = cmd.opts<Record<string, unknown>>();
  const fail = (msg: string): never => {
    throw new CommanderError(2, 'svc.invalidOption', `error: ${msg}`);
  };
  const podIp = String(o.podIp);
  if (!isIP(podIp)) fail(`--pod-ip: ${JSON.stringify(podIp)} is not an IP address`);
  if (!o.socket) fail('--socket must not be empty');
  if (!o.rootDir) fail('--root-dir must not be empty');
  return { socket: String(o.socket), rootDir: String(o.rootDir), podIp, loggingFormat: o.loggingFormat as LogFormat, verbosity: o.v as number };
}
