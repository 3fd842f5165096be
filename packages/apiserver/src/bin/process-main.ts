import { exitOnFlagError } from '@svc/component-base';
import { ConfigurationError, parseApiServerOptions } from '../options.js';
import { startApiServer } from '../server/api-server.js';
import { isWorker, superviseWorkers, supervises } from './workers.js';

/** svc-apiserver with its command-line arguments: starts the server; SIGTERM or SIGINT stop it. */
export function runApiServerProcess(argv: string[]): void {
  run(argv).catch((e: unknown) => {
    process.stderr.write(`Error: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}\n`);
    process.exit(e instanceof ConfigurationError ? 2 : 1);
  });
}

async function run(argv: string[]): Promise<void> {
  let opts;
  try {
    opts = parseApiServerOptions(argv, { quiet: true });
  } catch (e) {
    exitOnFlagError(e);
    return;
  }
  if (supervises(opts.workers)) {
    superviseWorkers(opts.workers);
    return;
  }
  // A worker leaves SIGINT to its supervisor from the start (a terminal's Ctrl-C reaches the
  // whole process group; the supervisor answers it with one SIGTERM to each worker).
  if (isWorker()) process.on('SIGINT', () => undefined);
  const server = await startApiServer(opts);
  let signals = 0;
  const onSignal = (sig: string): void => {
    signals++;
    if (signals > 1) process.exit(1);
    process.stderr.write(`received ${sig}, shutting down\n`);
    server.shutdown().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  if (!isWorker()) process.on('SIGINT', () => onSignal('SIGINT'));
}
