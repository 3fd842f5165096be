import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';
import { resourcePath } from '../discovery.js';
import { CliError } from '../errors.js';
import { objectRefs, type RefOptions } from '../object-refs.js';
import { report, writeFormat } from '../manifest-writes.js';
import { ResultPrinter } from '../printers/results.js';
import type { ApiObjectJson } from '../objects.js';
import { dryRunSuffix, fieldManagerFor, parseDryRun, writeQuery } from '../write-options.js';

export interface LabelOptions extends RefOptions {
  overwrite?: boolean;
  list?: boolean;
  resourceVersion?: string;
  output?: string;
  dryRun?: string | boolean;
  fieldManager?: string;
}

type Field = 'labels' | 'annotations';

/** Splits `label` arguments into resource arguments and `key=value` / `key-` changes. */
function splitArgs(args: string[], what: string): { resources: string[]; set: Map<string, string>; remove: string[] } {
  const resources: string[] = [];
  const set = new Map<string, string>();
  const remove: string[] = [];
  let changes = false;
  for (const a of args) {
    const eq = a.indexOf('=');
    if (eq > 0) {
      changes = true;
      const key = a.slice(0, eq);
      if (set.has(key))
        throw new CliError(`can not both modify and remove the following ${what}(s) in the same command: ${key}`);
      set.set(key, a.slice(eq + 1));
    } else if (a.endsWith('-') && a.length > 1) {
      changes = true;
      remove.push(a.slice(0, -1));
    } else if (changes) {
      throw new CliError(`all resources must be specified before ${what} changes: ${a}`);
    } else resources.push(a);
  }
  for (const k of remove)
    if (set.has(k))
      throw new CliError(`can not both modify and remove the following ${what}(s) in the same command: ${k}`);
  return { resources, set, remove };
}

const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

async function runMeta(inv: Invocation<LabelOptions>, field: Field): Promise<void> {
  const { opts, io } = inv;
  const what = field === 'labels' ? 'label' : 'annotation';
  const { resources, set, remove } = splitArgs(inv.args, what);
  if (!opts.list && set.size === 0 && remove.length === 0)
    throw new CliError(`at least one ${what} update is required`);
  for (const [k, v] of set) {
    if (field !== 'labels') continue;
    if (v.includes('=')) throw new CliError(`invalid label spec: ${k}=${v}`);
    const errs: string[] = [];
    if (v.length > 63) errs.push('must be no more than 63 characters');
    if (!VALUE.test(v)) {
      errs.push(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
      );
    }
    if (errs.length > 0) throw new CliError(`invalid label value: "${k}=${v}": ${errs.join(';')}`);
  }
  const dryRun = parseDryRun(opts.dryRun);
  const printer = new ResultPrinter(io, { format: writeFormat(opts.output), suffix: dryRunSuffix(dryRun) });
  const session = Session.open(inv.globals, io);
  try {
    const discovery = await session.discovery();
    const refs = await objectRefs(resources, { ...opts, session, discovery, io, cli: 'svcctl' });
    for (const ref of refs) {
      const path = resourcePath(ref.resource, { namespace: ref.namespace, name: ref.name });
      try {
        const obj = await session.call<ApiObjectJson>('GET', path);
        const current = { ...((obj.metadata?.[field] as Record<string, string> | undefined) ?? {}) };
        if (opts.list) {
          for (const k of Object.keys(current).sort()) io.out(`${k}=${current[k] ?? ''}\n`);
          continue;
        }
        const changes: Record<string, string | null> = {};
        for (const [k, v] of set) {
          if (Object.hasOwn(current, k) && !opts.overwrite) {
            throw new CliError(`'${k}' already has a value (${current[k] ?? ''}), and --overwrite is false`);
          }
          if (current[k] !== v) changes[k] = v;
        }
        for (const k of remove) {
          if (!Object.hasOwn(current, k)) io.out(`${what} "${k}" not found.\n`);
          else changes[k] = null;
        }
        const verb =
          field === 'annotations'
            ? 'annotated'
            : Object.keys(changes).length === 0
              ? 'not labeled'
              : remove.length > 0 && set.size === 0
                ? 'unlabeled'
                : 'labeled';
        if (Object.keys(changes).length === 0 || dryRun === 'client') {
          printer.print(obj, { resource: ref.resource, verb });
          continue;
        }
        const metadata: Record<string, unknown> = { [field]: changes };
        if (opts.resourceVersion) metadata.resourceVersion = opts.resourceVersion;
        const patched = await session.call<ApiObjectJson>('PATCH', path, {
          body: { metadata },
          contentType: 'application/merge-patch+json',
          query: writeQuery({ dryRun, fieldManager: opts.fieldManager ?? fieldManagerFor(what) }),
        });
        printer.print(patched, { resource: ref.resource, verb });
      } catch (e) {
        report(inv, e);
      }
    }
    printer.finish();
  } finally {
    session.close();
  }
}

export function run(inv: Invocation<LabelOptions>): Promise<void> {
  return runMeta(inv, 'labels');
}

export function runAnnotate(inv: Invocation<LabelOptions>): Promise<void> {
  return runMeta(inv, 'annotations');
}
