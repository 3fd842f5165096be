#!/usr/bin/env node
import { runSvcctl } from '../main.js';
import { processIo } from '../io.js';

const abort = new AbortController();
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    abort.abort();
    process.exitCode = 130;
  });
}
runSvcctl(process.argv.slice(2), processIo(abort.signal)).then(
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
