import type { Command } from 'commander';
import type { Invocation } from '../invocation.js';
import {
  type Built,
  collect,
  collectCsv,
  dryRunFlag,
  fileFlags,
  lazyAction,
  outputFlag,
  subcommand,
  validateFlag,
} from './command-kit.js';

/** create -f, the create generators and create token. */
export function registerCreateCommands(program: Command, b: Built): void {
  const io = b.io;
  const add = (name: string, description: string): Command => subcommand(program, { name, description, io });
  // create -f, and the create generators (create-generators.ts)
  const create = add('create', 'Create a resource from a file or from stdin.');
  outputFlag(fileFlags(create));
  dryRunFlag(validateFlag(create))
    .option('--field-manager <name>', 'Name of the manager used to track field ownership.')
    .option('--save-config', 'If true, the configuration of current object will be saved in its annotation.');
  lazyAction(create, () => import('../commands/create.js'), b);
  const generator = (parent: Command, g: { name: string; which: string; description: string }): Command => {
    const { name, which, description } = g;
    const c = subcommand(parent, { name, description, io }).argument('<name>');
    outputFlag(c);
    dryRunFlag(validateFlag(c))
      .option('--field-manager <name>', 'Name of the manager used to track field ownership.')
      .option('--save-config', 'If true, the configuration of current object will be saved in its annotation.');
    lazyAction(
      c,
      () =>
        import('../commands/create-generators.js').then((m) => ({
          run: (inv: Invocation<never>) => m.runGenerator(inv, which),
        })),
      b,
    );
    return c;
  };
  const dataFlags = (c: Command): Command =>
    c
      .option('--from-literal <key=value>', 'Specify a key and literal value to insert (repeatable).', collect)
      .option('--from-file <[key=]source>', 'Key file can be specified using its file path (repeatable).', collect)
      .option(
        '--from-env-file <file>',
        'Specify the path to a file to read lines of key=val pairs (repeatable).',
        collect,
      );
  generator(create, {
    name: 'namespace',
    which: 'namespace',
    description: 'Create a namespace with the specified name.',
  }).alias('ns');
  generator(create, {
    name: 'serviceaccount',
    which: 'serviceaccount',
    description: 'Create a service account with the specified name.',
  }).alias('sa');
  dataFlags(
    generator(create, {
      name: 'configmap',
      which: 'configmap',
      description: 'Create a config map from a local file, directory or literal value.',
    }).alias('cm'),
  );
  const secret = create.command('secret').description('Create a secret using a specified subcommand.');
  dataFlags(
    generator(secret, {
      name: 'generic',
      which: 'secret generic',
      description: 'Create a secret from a local file, directory, or literal value.',
    }),
  ).option('--type <type>', 'The type of secret to create.');
  generator(create, {
    name: 'deployment',
    which: 'deployment',
    description: 'Create a deployment with the specified name.',
  })
    .alias('deploy')
    .option('--image <image>', 'Image names to run (repeatable).', collect)
    .option('-r, --replicas <n>', 'Number of replicas to create.', '1')
    .option('--port <port>', 'The containerPort that this deployment exposes.');
  for (const [name, what] of [
    ['role', 'role'],
    ['clusterrole', 'cluster role'],
  ] as const) {
    generator(create, { name, which: name, description: `Create a ${what}.` })
      .option('--verb <verbs>', 'Verb that applies to the resources contained in the rule (repeatable).', collectCsv)
      .option('--resource <resources>', 'Resource that the rule applies to (repeatable).', collectCsv)
      .option(
        '--resource-name <name>',
        'Resource in the white list that the rule applies to (repeatable).',
        collectCsv,
      );
  }
  for (const [name, what] of [
    ['rolebinding', 'role binding'],
    ['clusterrolebinding', 'cluster role binding'],
  ] as const) {
    const c = generator(create, {
      name,
      which: name,
      description: `Create a ${what} for a particular role or cluster role.`,
    })
      .option('--clusterrole <name>', 'ClusterRole this binding should reference.')
      .option('--user <user>', 'Usernames to bind to the role (repeatable).', collectCsv)
      .option('--group <group>', 'Groups to bind to the role (repeatable).', collectCsv)
      .option('--serviceaccount <namespace:name>', 'Service accounts to bind to the role (repeatable).', collectCsv);
    if (name === 'rolebinding') c.option('--role <name>', 'Role this binding should reference.');
  }
  const token = create
    .command('token')
    .description('Request a service account token.')
    .argument('<serviceaccount>')
    .exitOverride()
    .option(
      '--duration <duration>',
      'Requested lifetime of the issued token (the server may return one of another lifetime).',
    )
    .option('--audience <audience>', 'Audience of the requested token (repeatable).', collect)
    .option('--bound-object-kind <kind>', 'Kind of an object to bind the token to: Pod, Secret or Node.')
    .option('--bound-object-name <name>', 'Name of an object to bind the token to.')
    .option('--bound-object-uid <uid>', 'UID of an object to bind the token to.');
  outputFlag(token);
  lazyAction(token, () => import('../commands/create-token.js'), b);
}
