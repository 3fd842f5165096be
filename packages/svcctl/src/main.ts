import { CommanderError } from 'commander';
import { buildProgram, normalizeArgs } from './program.js';
import type { SvcctlIo } from './io.js';
import { CliError, describeError } from './errors.js';

/**
 * Runs one svcctl command line (without the program name) and resolves with its exit
 * code: 0, or 1 on errors, printed as kubectl prints them. Command implementations are
 * loaded only when their command runs, so start-up stays short.
 */
export async function runSvcctl(argv: string[], io: SvcctlIo): Promise<number> {
  const state = { code: 0 };
  const program = buildProgram(io, state);
  try {
    await program.parseAsync(normalizeArgs(argv), { from: 'user' });
    return state.code;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help')
        return 0;
      return e.exitCode === 0 ? 0 : 1;
    }
    if (e instanceof CliError && e.stdout) io.out(e.stdout);
    const { text, code } = describeError(e);
    io.err(text.endsWith('\n') ? text : `${text}\n`);
    return code;
  }
}
