import type { Command } from 'commander';
import { type Built, fileFlags, lazyAction, outputFlag, subcommand } from './command-kit.js';

/** explain, convert. */
export function registerInspectCommands(program: Command, b: Built): void {
  const io = b.io;
  const add = (name: string, description: string): Command => subcommand(program, { name, description, io });

  const explain = add('explain', 'Get documentation for a resource.').argument('[args...]');
  explain
    .option('--recursive', 'When true, print the name of all the fields recursively.')
    .option('--api-version <version>', 'Use given api-version (group/version) of the resource.')
    .option('-o, --output <format>', 'Format in which to render the schema (plaintext).');
  lazyAction(explain, () => import('../commands/explain.js'), b);

  const convert = add('convert', 'Convert config files between different API versions.');
  outputFlag(fileFlags(convert), 'Output format. One of: (json, yaml, jsonpath=...).')
    .option('--output-version <version>', 'Output the formatted object with the given group version (for ex: apps/v1).')
    .option('--local', 'Only rewrite apiVersion, without the server (conversion without a webhook).');
  lazyAction(convert, () => import('../commands/convert.js'), b);
}
