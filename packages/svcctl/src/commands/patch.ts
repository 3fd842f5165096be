import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';
import { resourcePath } from '../discovery.js';
import { CliError, statusOf } from '../errors.js';
import { objectRefs, type RefOptions } from '../object-refs.js';
import { report, writeFormat } from '../manifest-writes.js';
import { ResultPrinter } from '../printers/results.js';
import type { ApiObjectJson } from '../objects.js';
import { dryRunSuffix, fieldManagerFor, parseDryRun, writeQuery } from '../write-options.js';

export interface PatchOptions extends RefOptions {
  patch?: string;
  patchFile?: string;
  type?: string;
  subresource?: string;
  output?: string;
  dryRun?: string | boolean;
  fieldManager?: string;
}

const MEDIA: Record<string, string> = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

/** The patch as JSON text: kubectl accepts JSON or YAML. */
function patchBody(text: string): string {
  try {
    JSON.parse(text);
    return text;
  } catch {
    try {
      return JSON.stringify(YAML.parse(text));
    } catch (e) {
      throw new CliError(`unable to parse "${text}": ${(e as Error).message}`);
    }
  }
}

export async function run(inv: Invocation<PatchOptions>): Promise<void> {
  const { opts, io } = inv;
  const type = opts.type ?? 'strategic';
  const media = MEDIA[type];
  if (!media) throw new CliError(`--type must be one of [json merge strategic], not "${type}"`);
  if (opts.patch === undefined && opts.patchFile === undefined)
    throw new CliError('must specify --patch or --patch-file containing the contents of the patch');
  if (opts.patch !== undefined && opts.patchFile !== undefined)
    throw new CliError('cannot specify --patch and --patch-file together');
  const text = opts.patch ?? readFileSync(opts.patchFile ?? '', 'utf8');
  if (text.trim() === '')
    throw new CliError('must specify --patch or --patch-file containing the contents of the patch');
  const body = patchBody(text);
  const dryRun = parseDryRun(opts.dryRun);
  const printer = new ResultPrinter(io, { format: writeFormat(opts.output), suffix: dryRunSuffix(dryRun) });
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    const refs = await objectRefs(inv.args, { ...opts, session, discovery, io, cli: 'svcctl' });
    for (const ref of refs) {
      const path = resourcePath(ref.resource, {
        namespace: ref.namespace,
        name: ref.name,
        subresource: opts.subresource,
      });
      try {
        const before = await session.call<ApiObjectJson>('GET', path);
        if (dryRun === 'client') {
          printer.print(before, { resource: ref.resource, verb: 'patched' });
          continue;
        }
        const after = await session.call<ApiObjectJson>('PATCH', path, {
          body,
          contentType: media,
          query: writeQuery({ dryRun, fieldManager: opts.fieldManager ?? fieldManagerFor('patch') }),
        });
        const changed = before.metadata?.resourceVersion !== after.metadata?.resourceVersion || dryRun === 'server';
        printer.print(after, { resource: ref.resource, verb: changed ? 'patched' : 'patched (no change)' });
      } catch (e) {
        const s = statusOf(e);
        if (s?.code === 415 && type === 'strategic') {
          report(
            inv,
            new CliError(
              `${media} is not supported by ${ref.resource.group ? `${ref.resource.group}/` : ''}${ref.resource.version}, Kind=${ref.resource.kind}: ${s.message ?? ''}`,
            ),
          );
        } else report(inv, e);
      }
    }
    printer.finish();
  } finally {
    session.close();
  }
}
