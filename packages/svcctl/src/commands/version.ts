import { CliError, describeError } from '../errors.js';
import type { Invocation } from '../invocation.js';
import { clientVersionInfo } from '../version-info.js';

export interface VersionOptions {
  client?: boolean;
  output?: string;
}

const FIELD_ORDER = [
  'major',
  'minor',
  'gitVersion',
  'gitCommit',
  'gitTreeState',
  'buildDate',
  'goVersion',
  'compiler',
  'platform',
];

function ordered(info: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of FIELD_ORDER) if (k in info) out[k] = info[k];
  for (const k of Object.keys(info)) if (!(k in out)) out[k] = info[k];
  return out;
}

export async function run(inv: Invocation<VersionOptions>): Promise<void> {
  const { opts, io } = inv;
  if (opts.output !== undefined && opts.output !== 'json' && opts.output !== 'yaml') {
    throw new CliError(`--output must be 'yaml' or 'json'`);
  }
  const result: Record<string, unknown> = { clientVersion: ordered(clientVersionInfo()) };
  let serverError: unknown;
  if (!opts.client) {
    const { Session } = await import('../session.js');
    const session = Session.open(inv.globals, io);
    try {
      result.serverVersion = ordered(await session.call<Record<string, unknown>>('GET', '/version'));
    } catch (e) {
      serverError = e;
    } finally {
      session.close();
    }
  }
  if (opts.output === 'json') io.out(`${JSON.stringify(result, null, 2)}\n`);
  else if (opts.output === 'yaml') {
    const { toYaml } = await import('../printers/json-yaml.js');
    io.out(toYaml(result));
  } else {
    io.out(`Client Version: ${String((result.clientVersion as Record<string, unknown>).gitVersion)}\n`);
    const server = result.serverVersion as Record<string, unknown> | undefined;
    if (server) io.out(`Server Version: ${String(server.gitVersion)}\n`);
  }
  if (serverError !== undefined) {
    const { text } = describeError(serverError);
    io.err(text.endsWith('\n') ? text : `${text}\n`);
    inv.fail();
  }
}
