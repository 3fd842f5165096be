import { exitOnFlagError } from './flags.js';
import { createLogger, type LogFormat, type Logger } from './logger.js';
import { ComponentConfigError } from './delegated-serving.js';
import type { RunningComponent } from './running-component.js';

/**
 * The `main` of a leader-elected control-plane binary: parses flags (bad flags exit 2), starts
 * the component, shuts it down on SIGTERM/SIGINT (exit 0; a second signal exits 1 at once)
 * and exits 1 when the lease is lost, as Kubernetes does, so a supervisor restarts it as a
 * candidate. A start-up failure prints one line and exits 2 for configuration errors
 * (`ComponentConfigError` or what `isConfigError` accepts), else 1.
 */
export function componentMain<O extends { loggingFormat: LogFormat; verbosity: number }>(c: {
  name: string;
  parse(argv: string[]): O;
  start(opts: O, logger: Logger): Promise<RunningComponent>;
  isConfigError?(e: unknown): boolean;
}): void {
  const main = async (): Promise<void> => {
    let opts: O;
    try {
      opts = c.parse(process.argv.slice(2));
    } catch (e) {
      exitOnFlagError(e);
      return;
    }
    const logger = createLogger({ format: opts.loggingFormat, verbosity: opts.verbosity }, { component: c.name });
    const running = await c.start(opts, logger);
    let signals = 0;
    const onSignal = (sig: string): void => {
      signals++;
      if (signals > 1) process.exit(1);
      logger.info('shutting down', { signal: sig });
      running.shutdown().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.on('SIGTERM', () => onSignal('SIGTERM'));
    process.on('SIGINT', () => onSignal('SIGINT'));
    await running.lostLease;
    process.exit(1);
  };
  main().catch((e: unknown) => {
    process.stderr.write(`Error: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}\n`);
    process.exit(e instanceof ComponentConfigError || c.isConfigError?.(e) ? 2 : 1);
  });
}
