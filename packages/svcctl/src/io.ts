/**
 * What a run of svcctl talks to: its output streams, standard input, environment and
 * terminal. The binary passes the process's; tests pass their own and read what was written.
 */
export interface SvcctlIo {
  out(s: string): void;
  err(s: string): void;
  /** All of standard input (`-f -`). */
  readStdin(): Promise<string>;
  env: NodeJS.ProcessEnv;
  /** Is standard output a terminal (colour and progress only then). */
  isTerminal: boolean;
  /** Ends long-running commands (`get -w`, `logs -f`, `rollout status`) when it fires. */
  signal?: AbortSignal;
  /** The directory relative paths are read from; default the process's. */
  cwd?: string;
}

/** The io of the svcctl process itself. */
export function processIo(signal?: AbortSignal): SvcctlIo {
  return {
    out: (s) => {
      process.stdout.write(s);
    },
    err: (s) => {
      process.stderr.write(s);
    },
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    env: process.env,
    isTerminal: process.stdout.isTTY === true,
    signal,
  };
}
