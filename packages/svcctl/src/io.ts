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
  /** Standard input as a stream (`exec -i`); without it `readStdin()`'s text is sent. */
  stdin?: NodeJS.ReadableStream;
  /** Bytes to standard output and error as they come (`exec`); without them the text goes to `out`/`err`. */
  outBytes?(b: Buffer): void;
  errBytes?(b: Buffer): void;
  /** The terminal standard input is, if it is one (`exec -t`). */
  terminal?: Terminal;
}

/** What `exec -t` needs of the local terminal. */
export interface Terminal {
  setRaw(on: boolean): void;
  /** The size of the terminal standard output is. */
  size(): { columns: number; rows: number } | undefined;
  /** Calls `fn` on SIGWINCH; answers the function that stops it. */
  onResize(fn: () => void): () => void;
}

function processTerminal(): Terminal | undefined {
  if (!process.stdin.isTTY) return undefined;
  return {
    setRaw: (on) => {
      process.stdin.setRawMode(on);
    },
    size: () => (process.stdout.isTTY ? { columns: process.stdout.columns, rows: process.stdout.rows } : undefined),
    onResize: (fn) => {
      process.on('SIGWINCH', fn);
      return () => process.off('SIGWINCH', fn);
    },
  };
}

/**
 * The io of the svcctl process itself. `process.stdin` is touched only when a command reads
 * standard input or asks for the terminal: making it costs a few milliseconds of start-up (the
 * stream and socket modules).
 */
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
    get stdin() {
      return process.stdin;
    },
    outBytes: (b) => {
      process.stdout.write(b);
    },
    errBytes: (b) => {
      process.stderr.write(b);
    },
    get terminal() {
      return processTerminal();
    },
  };
}
