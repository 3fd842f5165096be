import type { GlobalFlags } from './flags.js';
import type { SvcctlIo } from './io.js';

/** What a command's implementation gets: its arguments, its own flags and the global ones. */
export interface Invocation<O = Record<string, unknown>> {
  args: string[];
  opts: O;
  globals: GlobalFlags;
  io: SvcctlIo;
  /** How many of `args` came before a `--` on the command line (exec), if there was one. */
  dashIndex?: number;
  /** Marks the run failed (exit 1) without stopping it: kubectl's "print the error, go on". */
  fail(code?: number): void;
}

export type Runner = (inv: Invocation<never>) => Promise<void>;
