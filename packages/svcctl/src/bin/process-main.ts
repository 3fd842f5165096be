import { runSvcctl } from '../main.js';
import { processIo } from '../io.js';

/**
 * svcctl as a process: runs `argv` (without the program name) on the process's standard
 * streams, ends long-running commands on SIGINT/SIGTERM, and exits with the command's code.
 */
export function runSvcctlProcess(argv: string[]): void {
  const abort = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      abort.abort();
      process.exitCode = 130;
    });
  }
  runSvcctl(argv, processIo(abort.signal)).then(
    (code) => {
      process.exitCode = code;
      // Keep-alive sockets and finished watches must not hold the process open.
      setImmediate(() => process.exit(code));
    },
    (e: unknown) => {
      process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}
