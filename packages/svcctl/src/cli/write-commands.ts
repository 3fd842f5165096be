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

/** apply, delete, replace, patch, label, annotate, scale. */
export function registerWriteCommands(program: Command, b: Built): void {
  const io = b.io;
  const add = (name: string, description: string): Command => subcommand(program, { name, description, io });
  const apply = add('apply', 'Apply a configuration to a resource by file name or stdin.');
  outputFlag(fileFlags(apply));
  dryRunFlag(validateFlag(apply))
    .option('--server-side', 'If true, apply runs in the server instead of the client.')
    .option('--force-conflicts', 'If true, server-side apply will force the changes against conflicts.')
    .option('--field-manager <name>', 'Name of the manager used to track field ownership.')
    .option('--prune', 'Automatically delete resource objects that do not appear in the configs (not supported).');
  lazyAction(apply, () => import('../commands/apply.js'), b);

  const del = add(
    'delete',
    'Delete resources by file names, stdin, resources and names, or by resources and label selector.',
  ).argument('[args...]');
  selectorFlags(fileFlags(del));
  dryRunFlag(del)
    .option('--all', 'Delete all resources, in the namespace of the specified resource types.')
    .option('-A, --all-namespaces', 'If present, list the requested object(s) across all namespaces.')
    .option('--cascade [policy]', 'Must be "background", "orphan", or "foreground".', 'background')
    .option(
      '--grace-period <seconds>',
      'Period of time in seconds given to the resource to terminate gracefully (-1: the default).',
      '-1',
    )
    .option('--now', 'If true, resources are signaled for immediate shutdown (same as --grace-period=1).')
    .option('--force', 'If true, immediately remove resources from API and bypass graceful deletion.')
    .option('--wait', 'If true, wait for resources to be gone before returning.', true)
    .option('--no-wait', 'Do not wait for resources to be gone.')
    .option(
      '--timeout <duration>',
      'The length of time to wait before giving up on a delete, zero means determine a timeout from the size of the object.',
      '0s',
    )
    .option('--ignore-not-found', 'Treat "resource not found" as a successful delete.')
    .option('-o, --output <format>', 'Output mode. Use "-o name" for shorter output (resource/name).');
  lazyAction(del, () => import('../commands/delete.js'), b);

  const replace = add('replace', 'Replace a resource by file name or stdin.');
  outputFlag(fileFlags(replace));
  dryRunFlag(validateFlag(replace))
    .option(
      '--force',
      'If true, immediately remove resources from API and bypass graceful deletion, then re-create them.',
    )
    .option(
      '--grace-period <seconds>',
      'Period of time in seconds given to the resource to terminate gracefully (with --force).',
    )
    .option('--field-manager <name>', 'Name of the manager used to track field ownership.')
    .option('--save-config', 'If true, the configuration of current object will be saved in its annotation.');
  lazyAction(replace, () => import('../commands/replace.js'), b);

  const patch = add('patch', 'Update fields of a resource.').argument('[args...]');
  outputFlag(fileFlags(patch));
  dryRunFlag(patch)
    .option('-p, --patch <patch>', 'The patch to be applied to the resource JSON file.')
    .option('--patch-file <file>', 'A file containing a patch to be applied to the resource.')
    .option('--type <type>', 'The type of patch being provided; one of [json merge strategic].', 'strategic')
    .option('--subresource <name>', 'If specified, patch will operate on the subresource of the requested object.')
    .option('--field-manager <name>', 'Name of the manager used to track field ownership.');
  lazyAction(patch, () => import('../commands/patch.js'), b);

  for (const [name, what, load] of [
    ['label', 'labels', () => import('../commands/label.js')],
    ['annotate', 'annotations', () => import('../commands/label.js').then((m) => ({ run: m.runAnnotate }))],
  ] as const) {
    const c = add(name, `Update the ${what} on a resource.`).argument('[args...]');
    outputFlag(selectorFlags(fileFlags(c)));
    dryRunFlag(c)
      .option(
        '--overwrite',
        `If true, allow ${what} to be overwritten, otherwise reject updates that overwrite existing ${what}.`,
      )
      .option('--all', 'Select all resources, in the namespace of the specified resource types.')
      .option('-A, --all-namespaces', 'If true, check the specified action in all namespaces.')
      .option('--list', `If true, display the ${what} for a given resource.`)
      .option(
        '--resource-version <version>',
        'If non-empty, the update will only succeed if this is the current resource-version for the object.',
      )
      .option('--field-manager <name>', 'Name of the manager used to track field ownership.');
    lazyAction(c, load, b);
  }

  const scale = add(
    'scale',
    'Set a new size for a deployment, replica set, replication controller, or stateful set.',
  ).argument('[args...]');
  outputFlag(selectorFlags(fileFlags(scale)));
  dryRunFlag(scale)
    .option('--replicas <count>', 'The new desired number of replicas. Required.')
    .option(
      '--current-replicas <count>',
      'Precondition for current size. Requires that the current size of the resource match this value in order to scale.',
    )
    .option('--resource-version <version>', 'Precondition for resource version.')
    .option('--all', 'Select all resources in the namespace of the specified resource types.');
  lazyAction(scale, () => import('../commands/scale.js'), b);
}
