#!/usr/bin/env node
import { connectCri } from '@svc/runtime/client';
import { createLogger, exitOnFlagError, type LogFormat } from '@svc/component-base';
import { ConfigurationError } from '../configuration.js';
import { parseSvcletOptions, type SvcletOptions } from '../options.js';
import { startPodSide } from '../pods/index.js';
import { SvcletConfigError, startSvclet } from '../svclet.js';
import { startSimulatedNodes } from '../simulated/simulated-nodes.js';

async function main(): Promise<void> {
  let opts: SvcletOptions;
  try {
    opts = parseSvcletOptions(process.argv.slice(2), { quiet: true });
  } catch (e) {
    if (e instanceof ConfigurationError) throw e;
    exitOnFlagError(e);
    return;
  }
  const c = opts.config;
  const logger = createLogger(
    { format: c.logging.format as LogFormat, verbosity: c.logging.verbosity },
    { component: 'svclet' },
  );
  let signals = 0;
  /** Set once the svclet runs; a signal before that ends the process at once. */
  const running: { shutdown?: () => Promise<void> } = {};
  const onSignal = (sig: string): void => {
    signals++;
    // A second signal ends at once; so does one before start-up finished (TLS bootstrap may wait long).
    if (signals > 1) process.exit(1);
    if (!running.shutdown) process.exit(0);
    logger.info('shutting down', { signal: sig });
    running.shutdown().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  if (opts.simulated) {
    // Simulated nodes: no runtime, no server, no pods run; see docs/simulated-nodes.md.
    const sim = await startSimulatedNodes(opts, { logger: logger.with({ component: 'simulated-nodes' }) });
    running.shutdown = () => sim.shutdown();
    return;
  }
  // The node side's own connection for the runtime's Version and Status; the pod side opens its own.
  const cri = connectCri(c.containerRuntimeEndpoint);
  const svclet = await startSvclet(opts, {
    logger,
    runtime: {
      version: (req) => cri.runtime.version(req, { timeoutMs: 2000 }),
      status: (req) => cri.runtime.status(req, { timeoutMs: 2000 }),
    },
    startPods: startPodSide,
  });
  running.shutdown = async () => {
    await svclet.shutdown();
    cri.close();
  };
}

main().catch((e: unknown) => {
  process.stderr.write(`Error: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(e instanceof ConfigurationError || e instanceof SvcletConfigError ? 2 : 1);
});
