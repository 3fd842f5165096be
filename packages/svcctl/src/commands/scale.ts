import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';
import { resourcePath } from '../discovery.js';
import { CliError } from '../errors.js';
import { objectRefs, type RefOptions } from '../object-refs.js';
import { report, writeFormat } from '../manifest-writes.js';
import { ResultPrinter } from '../printers/results.js';
import type { ApiObjectJson } from '../objects.js';
import { dryRunSuffix, fieldManagerFor, parseDryRun, writeQuery } from '../write-options.js';

export interface ScaleOptions extends RefOptions {
  replicas?: string;
  currentReplicas?: string;
  resourceVersion?: string;
  output?: string;
  dryRun?: string | boolean;
}

interface Scale extends ApiObjectJson {
  spec?: { replicas?: number };
}

/** `scale --replicas=N`: through the `scale` subresource (a precondition makes it a read, check and PUT). */
export async function run(inv: Invocation<ScaleOptions>): Promise<void> {
  const { opts, io } = inv;
  if (opts.replicas === undefined) throw new CliError('required flag(s) "replicas" not set');
  const replicas = Number(opts.replicas);
  if (!Number.isInteger(replicas) || replicas < 0)
    throw new CliError('The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0');
  const current = opts.currentReplicas === undefined ? -1 : Number(opts.currentReplicas);
  const dryRun = parseDryRun(opts.dryRun);
  const printer = new ResultPrinter(io, { format: writeFormat(opts.output), suffix: dryRunSuffix(dryRun) });
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    const refs = await objectRefs(inv.args, { ...opts, session, discovery, io, cli: 'svcctl' });
    if (refs.length === 0) throw new CliError('no objects passed to scale');
    for (const ref of refs) {
      try {
        const path = resourcePath(ref.resource, { namespace: ref.namespace, name: ref.name, subresource: 'scale' });
        const query = writeQuery({ dryRun, fieldManager: fieldManagerFor('scale') });
        if (current >= 0 || opts.resourceVersion) {
          const scale = await session.call<Scale>('GET', path);
          if (current >= 0 && (scale.spec?.replicas ?? 0) !== current) {
            throw new CliError(`Expected replicas to be ${current}, was ${scale.spec?.replicas ?? 0}`);
          }
          if (opts.resourceVersion && scale.metadata?.resourceVersion !== opts.resourceVersion) {
            throw new CliError(
              `Expected resource version to be ${opts.resourceVersion}, was ${scale.metadata?.resourceVersion ?? ''}`,
            );
          }
          if (dryRun !== 'client')
            await session.call('PUT', path, { body: { ...scale, spec: { ...scale.spec, replicas } }, query });
        } else if (dryRun !== 'client') {
          await session.call('PATCH', path, {
            body: { spec: { replicas } },
            contentType: 'application/merge-patch+json',
            query,
          });
        }
        const shown =
          opts.output && opts.output !== 'name'
            ? await session.call<ApiObjectJson>(
                'GET',
                resourcePath(ref.resource, { namespace: ref.namespace, name: ref.name }),
              )
            : ({ metadata: { name: ref.name } } as ApiObjectJson);
        printer.print(shown, { resource: ref.resource, verb: 'scaled' });
      } catch (e) {
        report(inv, e);
      }
    }
  } finally {
    session.close();
  }
}
