import { CommanderError, InvalidArgumentError, Option, type Command } from 'commander';
import { formatDuration, parseDuration } from '@svc/machinery';

// Flag parsers with pflag's behaviour (Go durations, Go booleans, comma lists), shared by every binary.

export function durationArg(v: string): number {
  try {
    return parseDuration(v);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

export function intArg(v: string): number {
  if (!/^-?\d+$/.test(v))
    throw new InvalidArgumentError(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  return Number(v);
}

export function portArg(v: string): number {
  const n = intArg(v);
  if (n < 0 || n > 65535) throw new InvalidArgumentError(`port ${n} must be between 0 and 65535, inclusive`);
  return n;
}

export function boolArg(v: string | undefined): boolean {
  if (
    v === undefined ||
    v === '' ||
    v === 'true' ||
    v === '1' ||
    v === 't' ||
    v === 'T' ||
    v === 'TRUE' ||
    v === 'True'
  )
    return true;
  if (v === 'false' || v === '0' || v === 'f' || v === 'F' || v === 'FALSE' || v === 'False') return false;
  throw new InvalidArgumentError(`strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
}

export function splitList(v: string): string[] {
  return v
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

/** A comma-list flag like pflag's StringSlice: the first use replaces the default, later uses append. */
export function listOption(flags: string, description: string, def?: string[]): Option {
  let given = false;
  const o = new Option(flags, description).argParser((v: string, prev: string[] | undefined) => {
    const items = splitList(v);
    if (!given) {
      given = true;
      return items;
    }
    return [...(prev ?? []), ...items];
  });
  return def ? o.default(def, def.join(',')) : o;
}

export function repeatable(v: string, prev: string[] | undefined): string[] {
  return [...(prev ?? []), v];
}

export function boolOption(flags: string, description: string, def: boolean): Option {
  return new Option(`${flags} [bool]`, description).default(def).argParser(boolArg);
}

export function durationOption(flags: string, description: string, defMs: number): Option {
  return new Option(`${flags} <duration>`, description).default(defMs, formatDuration(defMs)).argParser(durationArg);
}

/**
 * What every binary does with a flag error from commander: help and version exit 0; any
 * other error prints its first line and exits 2. Other errors are rethrown.
 */
export function exitOnFlagError(e: unknown): void {
  if (!(e instanceof CommanderError)) throw e;
  if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') process.exit(0);
  process.stderr.write(`${e.message.replace(/^error: /, 'Error: ').split('\n')[0]}\n`);
  process.exit(2);
}

/** The logging flags every binary takes: `--logging-format` and `-v`. */
export function withLoggingFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('--logging-format <format>', 'Sets the log format.').default('text').choices(['text', 'json']),
    )
    .addOption(new Option('-v, --v <level>', 'number for the log level verbosity').default(0).argParser(intArg));
}

/** `--naming`, which every binary that speaks to the API takes. */
export function namingOption(help = 'Spelling of product identifiers: svc, or kubernetes.'): Option {
  return new Option('--naming <scheme>', help).default('svc').choices(['svc', 'kubernetes']);
}

export interface ParsedFlags {
  cmd: Command;
  /** The values by attribute name. */
  o: Record<string, unknown>;
  /** Ends parsing with a flag error (exit 2 through `exitOnFlagError`). */
  fail(msg: string): never;
  /** Whether the flag with this attribute name was given on the command line (not defaulted). */
  givenOnCli(key: string): boolean;
}

/**
 * Runs commander over `argv` (without node and script) the way every binary does: errors
 * are thrown as `CommanderError` for `exitOnFlagError`; `quiet` keeps commander's own text
 * off stderr so the caller prints one line (help still goes to stdout).
 */
export function parseFlags(command: Command, argv: string[], opts: { quiet?: boolean } = {}): ParsedFlags {
  const cmd = command.exitOverride();
  if (opts.quiet) cmd.configureOutput({ writeErr: () => undefined });
  cmd.parse(argv, { from: 'user' });
  return {
    cmd,
    o: cmd.opts<Record<string, unknown>>(),
    fail: (msg: string): never => {
      throw new CommanderError(2, 'svc.invalidOption', `error: ${msg}`);
    },
    givenOnCli: (key: string) => cmd.getOptionValueSource(key) === 'cli',
  };
}
