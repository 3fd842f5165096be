import type { Command } from 'commander';
import {
  type Built,
  dryRunFlag,
  fileFlags,
  lazyAction,
  outputFlag,
  selectorFlags,
  subcommand,
  validateFlag,
} from './command-kit.js';

/** describe, logs, explain, rollout, edit, diff, convert. */
export function registerInspectCommands(program: Command, b: Built): void {
  const io = b.io;
  const add = (name: string, description: string): Command => subcommand(program, { name, description, io });

  const describe = add('describe', 'Show details of a specific resource or group of resources.').argument('[args...]');
  fileFlags(describe)
    .option('-l, --selector <selector>', 'Selector (label query) to filter on.')
    .option('-A, --all-namespaces', 'If present, list the requested object(s) across all namespaces.')
    .option('--show-events', 'If true, display events related to the described object.')
    .option('--no-show-events', 'Do not display events.')
    .option('--chunk-size <n>', 'Return large lists in chunks rather than all at once.', '500');
  lazyAction(describe, () => import('../commands/describe.js'), b);

  const logs = add('logs', 'Print the logs for a container in a pod.').argument('[args...]');
  logs
    .option('-f, --follow', 'Specify if the logs should be streamed.')
    .option(
      '-p, --previous',
      'If true, print the logs for the previous instance of the container in a pod if it exists.',
    )
    .option('-c, --container <name>', 'Print the logs of this container.')
    .option('--timestamps', 'Include timestamps on each line in the log output.')
    .option('--tail <lines>', 'Lines of recent log file to display (-1: all).', '-1')
    .option('--since <duration>', 'Only return logs newer than a relative duration like 5s, 2m, or 3h.')
    .option('--since-time <time>', 'Only return logs after a specific date (RFC3339).')
    .option('--limit-bytes <n>', 'Maximum bytes of logs to return.')
    .option('--all-containers', 'Get all containers’ logs in the pod(s).')
    .option('--prefix', 'Prefix each log line with the log source (pod name and container name).')
    .option('-l, --selector <selector>', 'Selector (label query) to filter on.');
  lazyAction(logs, () => import('../commands/logs.js'), b);

  const explain = add('explain', 'Get documentation for a resource.').argument('[args...]');
  explain
    .option('--recursive', 'When true, print the name of all the fields recursively.')
    .option('--api-version <version>', 'Use given api-version (group/version) of the resource.')
    .option('-o, --output <format>', 'Format in which to render the schema (plaintext).');
  lazyAction(explain, () => import('../commands/explain.js'), b);

  const rollout = add('rollout', 'Manage the rollout of a resource.');
  const rolloutCmd = (
    name: string,
    description: string,
    run: 'runStatus' | 'runHistory' | 'runUndo' | 'runRestart' | 'runPause' | 'runResume',
  ): Command => {
    const c = subcommand(rollout, { name, description, io }).argument('[args...]');
    selectorFlags(fileFlags(c));
    lazyAction(c, () => import('../commands/rollout.js').then((m) => ({ run: m[run] })), b);
    return c;
  };
  rolloutCmd('status', 'Show the status of the rollout.', 'runStatus')
    .option('-w, --watch', 'Watch the status of the rollout until it is done.', true)
    .option('--no-watch', 'Print the status once.')
    .option('--timeout <duration>', 'The length of time to wait before ending watch, zero means never.', '0s')
    .option('--revision <n>', 'Pin to a specific revision for showing its status.');
  rolloutCmd('history', 'View rollout history.', 'runHistory').option(
    '--revision <n>',
    'See the details, including podTemplate of the revision specified.',
  );
  dryRunFlag(rolloutCmd('undo', 'Undo a previous rollout.', 'runUndo')).option(
    '--to-revision <n>',
    'The revision to rollback to (0: the previous one).',
    '0',
  );
  dryRunFlag(rolloutCmd('restart', 'Restart a resource.', 'runRestart'));
  dryRunFlag(rolloutCmd('pause', 'Mark the provided resource as paused.', 'runPause'));
  dryRunFlag(rolloutCmd('resume', 'Resume a paused resource.', 'runResume'));

  const edit = add('edit', 'Edit a resource on the server.').argument('[args...]');
  fileFlags(edit)
    .option('-o, --output <format>', 'Output format of the edited file: yaml (default) or json.')
    .option('--field-manager <name>', 'Name of the manager used to track field ownership.')
    .option('--subresource <name>', 'If specified, edit will operate on the subresource of the requested object.');
  lazyAction(edit, () => import('../commands/edit.js'), b);

  const diff = add('diff', 'Diff the live version against a would-be applied version.');
  validateFlag(fileFlags(diff))
    .option('--server-side', 'If true, apply runs in the server instead of the client.')
    .option('--force-conflicts', 'If true, server-side apply will force the changes against conflicts.')
    .option('--field-manager <name>', 'Name of the manager used to track field ownership.')
    .option('--show-managed-fields', 'If true, include managed fields in the diff.');
  lazyAction(diff, () => import('../commands/diff.js'), b);

  const convert = add('convert', 'Convert config files between different API versions.');
  outputFlag(fileFlags(convert), 'Output format. One of: (json, yaml, jsonpath=...).')
    .option('--output-version <version>', 'Output the formatted object with the given group version (for ex: apps/v1).')
    .option('--local', 'Only rewrite apiVersion, without the server (conversion without a webhook).');
  lazyAction(convert, () => import('../commands/convert.js'), b);
}
