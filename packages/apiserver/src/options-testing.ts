import { CommanderError } from 'commander';
import { parseApiServerOptions, type ApiServerOptions } from './options.js';

/** Test helpers for flag parsing (not part of the package's exports). */
export const parseFlags = (...args: string[]): ApiServerOptions => parseApiServerOptions(args, { quiet: true });

/** The CommanderError that refuses `args`; fails when they are accepted. */
export function refusal(args: string[]): CommanderError {
  try {
    parseFlags(...args);
  } catch (e) {
    if (e instanceof CommanderError) return e;
    throw e;
  }
  throw new Error(`${args.join(' ')} was accepted`);
}
