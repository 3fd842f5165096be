import type { Command } from 'commander';
import { type Built, dryRunFlag, fileFlags, lazyAction, outputFlag, subcommand } from './command-kit.js';

/** auth whoami, auth can-i, auth reconcile. */
export function registerAuthCommands(program: Command, b: Built): void {
  const io = b.io;
  const auth = subcommand(program, { name: 'auth', description: 'Inspect authorization.', io });

  const whoami = subcommand(auth, { name: 'whoami', description: 'Check self subject attributes.', io });
  outputFlag(
    whoami,
    'Output format. One of: (json, yaml, name, jsonpath, jsonpath-file, custom-columns, custom-columns-file).',
  );
  lazyAction(whoami, () => import('../commands/auth.js').then((m) => ({ run: m.runWhoami })), b);

  const canI = subcommand(auth, { name: 'can-i', description: 'Check whether an action is allowed.', io })
    .argument('[args...]')
    .option('-A, --all-namespaces', 'If true, check the specified action in all namespaces.')
    .option('--list', 'If true, prints all allowed actions.')
    .option('-q, --quiet', 'If true, suppress output and just return the exit code.')
    .option('--subresource <name>', 'SubResource such as pod/log or deployment/scale.')
    .option('--no-headers', 'If true, prints allowed actions without headers.');
  lazyAction(canI, () => import('../commands/auth.js').then((m) => ({ run: m.runCanI })), b);

  const reconcile = subcommand(auth, {
    name: 'reconcile',
    description: 'Reconciles rules for RBAC role, role binding, cluster role, and cluster role binding objects.',
    io,
  });
  dryRunFlag(fileFlags(reconcile))
    .option('-o, --output <format>', 'Output format. One of: (name).')
    .option('--remove-extra-permissions', 'If true, removes extra permissions added to roles.')
    .option('--remove-extra-subjects', 'If true, removes extra subjects added to rolebindings.');
  lazyAction(reconcile, () => import('../commands/auth-reconcile.js').then((m) => ({ run: m.runReconcile })), b);
}
