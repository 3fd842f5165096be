#!/usr/bin/env node
import { LB_USAGE, parseLoadBalancerArgs, startLoadBalancer } from '../lb.js';

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  process.stdout.write(LB_USAGE);
} else {
  const log = (line: string): void => {
    process.stderr.write(`${new Date().toISOString()} svc-lb ${line}\n`);
  };
  Promise.resolve()
    .then(async () => {
      const lb = await startLoadBalancer({ ...parseLoadBalancerArgs(argv), log });
      const stop = (): void => {
        void lb.close().then(() => process.exit(0));
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    })
    .catch((e: unknown) => {
      process.stderr.write(`Error: ${e instanceof Error ? e.message : String(e)}\n${LB_USAGE}`);
      process.exitCode = 1;
    });
}
