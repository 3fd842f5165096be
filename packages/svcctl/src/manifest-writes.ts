import { readFileSync } from 'node:fs';
import type { Invocation } from './invocation.js';
import { Session } from './session.js';
import type { Discovery } from './discovery.js';
import { readManifests } from './manifests.js';
import { resolveObjects, type ResolvedObject } from './resolve-objects.js';
import { OBJECT_FORMATS, parseOutputFormat, type OutputFormat } from './printers/output-format.js';
import { ResultPrinter } from './printers/results.js';
import { dryRunSuffix, parseDryRun, parseValidate, type DryRun, type FieldValidation } from './write-options.js';
import { fieldValidationFor } from './validation.js';
import { CliError, describeError } from './errors.js';

export interface ManifestWriteOptions {
  filename?: string[];
  recursive?: boolean;
  output?: string;
  dryRun?: string | boolean;
  validate?: string | boolean;
  fieldManager?: string;
}

export interface ManifestWrite {
  session: Session;
  discovery: Discovery;
  objects: ResolvedObject[];
  dryRun: DryRun;
  /** The `fieldValidation` to send (undefined: the server does not validate; svcctl did). */
  fieldValidation?: FieldValidation;
  format?: OutputFormat;
  printer: ResultPrinter;
}

/** Output format of a write command: undefined (result lines) or one of the object formats. */
export function writeFormat(output: string | undefined): OutputFormat | undefined {
  if (output === undefined || output === '') return undefined;
  return parseOutputFormat(output, { allowed: OBJECT_FORMATS, readFile: (p) => readFileSync(p, 'utf8') });
}

/** The common start of `create -f`, `apply -f`, `replace -f`: flags, session, discovery, objects, validation. */
export async function openManifestWrite(
  inv: Invocation<ManifestWriteOptions>,
  o: { verb: string; asList?: boolean; allowGenerateName?: boolean },
): Promise<ManifestWrite> {
  const { opts, io } = inv;
  const files = opts.filename ?? [];
  if (files.length === 0) throw new CliError(`must specify one of -f and -k`);
  const dryRun = parseDryRun(opts.dryRun);
  const level = parseValidate(opts.validate);
  const format = writeFormat(opts.output);
  const session = Session.open(inv.globals, io);
  try {
    const [discovery, manifests] = await Promise.all([
      session.discovery(),
      readManifests(files, { io, recursive: opts.recursive, verb: o.verb }),
    ]);
    const objects = resolveObjects(manifests, {
      discovery,
      namespace: session.namespace,
      explicitNamespace: session.explicitNamespace,
      allowGenerateName: o.allowGenerateName,
    });
    const fieldValidation = await fieldValidationFor(session, { level, objects });
    const printer = new ResultPrinter(io, { format, asList: o.asList, suffix: dryRunSuffix(dryRun) });
    return { session, discovery, objects, dryRun, fieldValidation, format, printer };
  } catch (e) {
    session.close();
    throw e;
  }
}

/** Prints an error as kubectl does and marks the run failed (the command goes on with the next object). */
export function report(inv: Invocation<unknown>, e: unknown): void {
  const { text } = describeError(e);
  inv.io.err(text.endsWith('\n') ? text : `${text}\n`);
  inv.fail();
}
