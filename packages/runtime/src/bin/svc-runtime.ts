#!/usr/bin/env node
import { createLogger, exitOnFlagError } from '@svc/component-base';
import { parseRuntimeOptions, type RuntimeOptions } from '../options.js';
import { startRuntimeServer } from '../server.js';

async function main(): Promise<void> {
  let opts: RuntimeOptions;
  try {
    opts = parseRuntimeOptions(process.argv.slice(2), { quiet: true });
  } catch (e) {
    exitOnFlagError(e);
    return;
  }
  const logger = createLogger({ format: opts.loggingFormat, verbosity: opts.verbosity }, { component: 'svc-runtime' });
  const server = await startRuntimeServer({ socket: opts.socket, rootDir: opts.rootDir, podIp: opts.podIp, logger });
  let signals = 0;
  // Stopping svc-runtime leaves its containers running: a new one on the same --root-dir takes them over.
  const onSignal = (sig: string): void => {
    signals++;
    if (signals > 1) process.exit(1);
    logger.info('shutting down; containers keep running', { signal: sig });
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
}

main().catch((e: unknown) => {
  process.stderr.write(`Error: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}\n`);
  process.exit(1);
});
