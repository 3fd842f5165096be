import { NAMINGS } from '@svc/api/names';
import { CliError } from './errors.js';
import type { Query } from './session.js';

export type DryRun = 'none' | 'client' | 'server';
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** `--dry-run`: none, client or server (kubectl refuses the bare flag since 1.23). */
export function parseDryRun(v: string | boolean | undefined): DryRun {
  if (v === undefined || v === 'none' || v === false) return 'none';
  if (v === 'client' || v === 'server') return v;
  const shown = v === true ? 'unchanged' : v;
  throw new CliError(`Invalid dry-run value (${shown}). Must be "none", "server", or "client".`);
}

/** `--validate`: strict (true, the default; the bare flag), warn, ignore (false). */
export function parseValidate(v: string | boolean | undefined): FieldValidation {
  const s = v === undefined || v === true ? 'strict' : v === false ? 'false' : v.toLowerCase();
  switch (s) {
    case 'strict':
    case 'true':
      return 'Strict';
    case 'warn':
      return 'Warn';
    case 'ignore':
    case 'false':
      return 'Ignore';
  }
  throw new CliError(
    `invalid - validate option "${String(v)}"; must be one of: strict (or true), warn, ignore (or false)`,
  );
}

/** What a write carries: dry run, field manager, field validation (query parameters). */
export function writeQuery(o: { dryRun?: DryRun; fieldManager?: string; fieldValidation?: FieldValidation }): Query {
  return {
    dryRun: o.dryRun === 'server' ? 'All' : undefined,
    fieldManager: o.fieldManager,
    fieldValidation: o.fieldValidation,
  };
}

/** `svcctl-<verb>`: the field manager of svcctl's non-apply writes (kubectl's `kubectl-create`, `kubectl-edit`...). */
export function fieldManagerFor(verb: string): string {
  return `${NAMINGS.svc.cliName}-${verb}`;
}

/** The manager of server-side apply (`svcctl`), which the server migrates from client-side apply. */
export function applyFieldManager(): string {
  return NAMINGS.svc.cliName;
}

/** ` (dry run)`, ` (server dry run)` or nothing: what kubectl appends to its result lines. */
export function dryRunSuffix(d: DryRun): string {
  return d === 'client' ? ' (dry run)' : d === 'server' ? ' (server dry run)' : '';
}
