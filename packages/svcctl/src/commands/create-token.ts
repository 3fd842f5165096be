import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';
import { resourcePath } from '../discovery.js';
import { CliError, statusOf } from '../errors.js';
import { writeFormat } from '../manifest-writes.js';
import { ResultPrinter } from '../printers/results.js';
import type { ApiObjectJson } from '../objects.js';

export interface TokenOptions {
  duration?: string;
  audience?: string[];
  boundObjectKind?: string;
  boundObjectName?: string;
  boundObjectUid?: string;
  output?: string;
}

const BOUND_KINDS: Record<string, string> = { Pod: 'v1', Secret: 'v1', Node: 'v1' };

/** Go duration text (`10m`, `1h30m`, `3600s`) in seconds. */
function durationSeconds(v: string): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001 };
  let total = 0;
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s)/gy;
  let at = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(v)) !== null) {
    total += Number(m[1]) * (units[m[2] ?? 's'] ?? 1);
    at = re.lastIndex;
  }
  if (at !== v.length || at === 0)
    throw new CliError(`invalid argument "${v}" for "--duration" flag: time: invalid duration "${v}"`);
  return total;
}

/** `create token SA`: a TokenRequest for the service account; prints the token (or the TokenRequest with -o). */
export async function run(inv: Invocation<TokenOptions>): Promise<void> {
  const { opts, io } = inv;
  const sa = inv.args[0];
  if (!sa) throw new CliError('SERVICE_ACCOUNT is required');
  const spec: Record<string, unknown> = {};
  if (opts.audience?.length) spec.audiences = opts.audience;
  if (opts.duration !== undefined) {
    const secs = durationSeconds(opts.duration);
    if (secs < 0) throw new CliError('--duration must be greater than or equal to 0');
    if (!Number.isInteger(secs)) throw new CliError('--duration cannot be expressed in units less than seconds');
    if (secs > 0) spec.expirationSeconds = secs;
  }
  if (opts.boundObjectKind) {
    const v = BOUND_KINDS[opts.boundObjectKind];
    if (!v) throw new CliError(`supported --bound-object-kind values are ${Object.keys(BOUND_KINDS).join(', ')}`);
    if (!opts.boundObjectName) throw new CliError('--bound-object-name is required if --bound-object-kind is provided');
    spec.boundObjectRef = {
      kind: opts.boundObjectKind,
      apiVersion: v,
      name: opts.boundObjectName,
      uid: opts.boundObjectUid,
    };
  } else if (opts.boundObjectName || opts.boundObjectUid) {
    throw new CliError('--bound-object-name can only be set if --bound-object-kind is provided');
  }
  const format = writeFormat(opts.output);
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    const sas = discovery.builtin({ group: '', resource: 'serviceaccounts' });
    const authn = discovery.group('authentication');
    const answer = await session
      .call<ApiObjectJson & { status?: { token?: string } }>(
        'POST',
        resourcePath(sas, { namespace: session.namespace, name: sa, subresource: 'token' }),
        { body: { apiVersion: `${authn}/v1`, kind: 'TokenRequest', spec } },
      )
      .catch((e: unknown) => {
        throw new CliError(`failed to create token: ${statusOf(e)?.message ?? (e as Error).message}`);
      });
    if (!answer.status?.token) throw new CliError('failed to create token: no token in server response');
    if (format) new ResultPrinter(io, { format }).print(answer, { resource: sas, verb: 'created', name: sa });
    else io.out(io.isTerminal ? `${answer.status.token}\n` : answer.status.token);
  } finally {
    session.close();
  }
}
