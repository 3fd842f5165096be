import type { Command } from 'commander';
import type { SvcctlIo } from '../io.js';
import type { GlobalFlags } from '../flags.js';
import type { Invocation } from '../invocation.js';
import { DASH_MARK } from '../dash-mark.js';

export type Loader = () => Promise<{ run: (inv: Invocation<never>) => Promise<void> }>;

export const collect = (v: string, prev: string[] = []): string[] => [...prev, v];
export const collectCsv = (v: string, prev: string[] = []): string[] => [
  ...prev,
  ...v.split(',').filter((x) => x !== ''),
];

export interface Built {
  io: SvcctlIo;
  state: { code: number };
}

/**
 * A command's options, with the values its parents took from the command line for options
 * of the same name: commander lets a parent (`create`) consume an option given after the
 * subcommand (`create configmap x -o yaml`).
 */
function effectiveOpts(cmd: Command): Record<string, unknown> {
  const own = { ...cmd.opts() };
  for (let p = cmd.parent; p; p = p.parent) {
    const theirs = p.opts();
    for (const [k, v] of Object.entries(theirs)) {
      if (p.getOptionValueSource(k) !== 'cli') continue;
      if (cmd.getOptionValueSource(k) === 'cli') continue;
      if (cmd.options.some((o) => o.attributeName() === k)) own[k] = v;
    }
  }
  return own;
}

/** Adds a command whose implementation `load` imports only when it runs. */
export function lazyAction(cmd: Command, load: Loader, b: Built): Command {
  return cmd.action(async (...a: unknown[]) => {
    const self = a[a.length - 1] as Command;
    const mod = await load();
    const dash = self.args.indexOf(DASH_MARK);
    const inv: Invocation<never> = {
      args: self.args.filter((x) => x !== DASH_MARK),
      dashIndex: dash >= 0 ? dash : undefined,
      opts: effectiveOpts(self) as never,
      globals: self.optsWithGlobals() as GlobalFlags,
      io: b.io,
      fail: (code = 1) => {
        b.state.code = code;
      },
    };
    await mod.run(inv);
  });
}

export function outputFlag(
  cmd: Command,
  help = 'Output format. One of: (json, yaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file, custom-columns, custom-columns-file, wide).',
): Command {
  return cmd.option('-o, --output <format>', help);
}

export function fileFlags(cmd: Command): Command {
  return cmd
    .option('-f, --filename <file>', 'Files, directories or URLs (- for standard input) to use.', collect)
    .option('-R, --recursive', 'Process the directory used in -f recursively.');
}

export function dryRunFlag(cmd: Command): Command {
  return cmd.option('--dry-run [strategy]', 'Must be "none", "server", or "client".', 'none');
}

export function validateFlag(cmd: Command): Command {
  return cmd.option(
    '--validate [mode]',
    'Must be one of: strict (or true), warn, ignore (or false). Server-side field validation, with a client-side fallback for servers that lack it.',
    'strict',
  );
}

export function selectorFlags(cmd: Command): Command {
  return cmd
    .option('-l, --selector <selector>', 'Selector (label query) to filter on.')
    .option('--field-selector <selector>', 'Selector (field query) to filter on.');
}

/** A subcommand of `parent` that prints through svcctl's io and reports errors as exceptions. */
export function subcommand(parent: Command, o: { name: string; description: string; io: SvcctlIo }): Command {
  return parent
    .command(o.name)
    .description(o.description)
    .exitOverride()
    .configureOutput({ writeOut: (s) => o.io.out(s), writeErr: (s) => o.io.err(s) });
}
