import type { Command } from 'commander';
import { type Built, collectCsv, lazyAction, subcommand } from './command-kit.js';

/** exec and port-forward: streams to a pod through the API server. */
export function registerStreamCommands(program: Command, b: Built): void {
  const io = b.io;
  const exec = subcommand(program, { name: 'exec', description: 'Execute a command in a container.', io })
    .argument('[args...]')
    .option('-i, --stdin', 'Pass stdin to the container.')
    .option('-t, --tty', 'Stdin is a TTY.')
    .option('-c, --container <name>', 'Container name. If omitted, the first container in the pod will be chosen.')
    .option('-q, --quiet', 'Only print output from the remote session.')
    .option(
      '--pod-running-timeout <duration>',
      'The length of time to wait until at least one pod is running.',
      '1m0s',
    );
  lazyAction(exec, () => import('../commands/exec.js'), b);

  const portForward = subcommand(program, {
    name: 'port-forward',
    description: 'Forward one or more local ports to a pod.',
    io,
  })
    .argument('[args...]')
    .option(
      '--address <addresses>',
      'Addresses to listen on (comma separated). Only accepts IP addresses or localhost as a value.',
      collectCsv,
    )
    .option(
      '--pod-running-timeout <duration>',
      'The length of time to wait until at least one pod is running.',
      '1m0s',
    );
  lazyAction(portForward, () => import('../commands/port-forward.js'), b);
}
