#!/usr/bin/env node
import { createLogger, exitOnFlagError } from '@svc/component-base';
import { parseControllerManagerOptions, type ControllerManagerOptions } from '../options.js';
import { ControllerManagerConfigError, startControllerManager } from '../controller-manager.js';

async function main(): Promise<void> {
  let opts: ControllerManagerOptions;
  try {
    opts = parseControllerManagerOptions(process.argv.slice(2), { quiet: true });
  } catch (e) {
    exitOnFlagError(e);
    return;
  }
  const logger = createLogger({ format: opts.loggingFormat, verbosity: opts.verbosity }, { component: 'svc-controller-manager' });
  const cm = await startControllerManager(opts, { logger });
  let signals = 0;
  const onSignal = (sig: string): void => {
    signals++;
    if (signals > 1) process.exit(1);
    logger.info('shutting down', { signal: sig });
    cm.shutdown().then(() => process.exit(0), () => process.exit(1));
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  // As Kubernetes: losing the lease ends the process so that a supervisor restarts it as a candidate.
  await cm.lostLease;
  process.exit(1);
}

main().catch((e: unknown) => {
  process.stderr.write(`Error: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}\n`);
  process.exit(e instanceof ControllerManagerConfigError ? 2 : 1);
});
