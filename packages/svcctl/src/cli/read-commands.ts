import type { Command } from 'commander';
import { type Built, collectCsv, fileFlags, lazyAction, outputFlag, selectorFlags, subcommand } from './command-kit.js';

/** get, api-resources, api-versions, version, config. */
export function registerReadCommands(program: Command, b: Built): void {
  const io = b.io;
  const add = (name: string, description: string): Command => subcommand(program, { name, description, io });
  // get
  const get = add('get', 'Display one or many resources.').argument('[args...]');
  outputFlag(get);
  selectorFlags(get);
  fileFlags(get)
    .option('-A, --all-namespaces', 'List the requested object(s) across all namespaces.')
    .option('-w, --watch', 'After listing/getting the requested object, watch for changes.')
    .option('--watch-only', 'Watch for changes to the requested object(s), without listing/getting first.')
    .option('--output-watch-events', 'Output watch event objects when --watch or --watch-only is used.')
    .option('--chunk-size <n>', 'Return large lists in chunks rather than all at once. Pass 0 to disable.', '500')
    .option('--show-labels', 'When printing, show all labels as the last column.')
    .option('--show-kind', 'If present, list the resource type for the requested object(s).')
    .option('-L, --label-columns <keys>', 'Labels to present as columns (comma-separated, repeatable).', collectCsv)
    .option('--no-headers', "When using the default or custom-column output format, don't print headers.")
    .option('--ignore-not-found', 'If the requested object does not exist the command will return exit code 0.')
    .option('--sort-by <jsonpath>', 'Sort list types using this field specification (a JSONPath expression).')
    .option('--subresource <name>', 'If specified, gets the subresource of the requested object.')
    .option('--raw <uri>', 'Raw URI to request from the server.')
    .option(
      '--template <template>',
      'Template string or path to template file to use when -o=go-template, -o=go-template-file.',
    )
    .option(
      '--allow-missing-template-keys',
      'If true, ignore any errors in templates when a field or map key is missing in the template.',
    )
    .option('--no-allow-missing-template-keys', 'Fail on a missing field or map key in a template.');
  lazyAction(get, () => import('../commands/get.js'), b);

  const apiResources = add('api-resources', 'Print the supported API resources on the server.');
  outputFlag(apiResources, 'Output format. One of: (wide, name).')
    .option('--api-group <group>', 'Limit to resources in the specified API group.')
    .option(
      '--namespaced',
      'If false, non-namespaced resources will be returned, otherwise returning namespaced resources by default.',
    )
    .option('--no-namespaced', 'Only cluster-scoped resources.')
    .option('--verbs <verbs>', 'Limit to resources that support the specified verbs.', collectCsv)
    .option('--sort-by <field>', "If non-empty, sort list of resources using specified field. One of 'name' or 'kind'.")
    .option('--categories <categories>', 'Limit to resources that belong to the specified categories.', collectCsv)
    .option('--no-headers', "When using the default or custom-column output format, don't print headers.")
    .option('--cached', 'Use the cached list of resources if available.');
  lazyAction(apiResources, () => import('../commands/api-resources.js'), b);

  const apiVersions = add(
    'api-versions',
    'Print the supported API versions on the server, in the form of "group/version".',
  );
  lazyAction(apiVersions, () => import('../commands/api-versions.js'), b);

  const version = add('version', 'Print the client and server version information.')
    .option('--client', 'If true, shows client version only (no server required).')
    .option('-o, --output <format>', "One of 'yaml' or 'json'.");
  lazyAction(version, () => import('../commands/version.js'), b);

  const config = add('config', 'Modify svcconfig files.');
  const configCmd = (name: string, description: string): Command =>
    config
      .command(name)
      .description(description)
      .exitOverride()
      .configureOutput({
        writeOut: (s) => io.out(s),
        writeErr: (s) => io.err(s),
      });
  const configView = configCmd('view', 'Display merged svcconfig settings or a specified svcconfig file.')
    .option('--raw', 'Display raw byte data and sensitive data.')
    .option('--minify', 'Remove all information not used by current-context from the output.')
    .option('--flatten', 'Flatten the resulting svcconfig file into self-contained output.')
    .option('-o, --output <format>', 'Output format. One of: (json, yaml, jsonpath).', 'yaml');
  lazyAction(configView, () => import('../commands/config.js').then((m) => ({ run: m.runView })), b);
  lazyAction(
    configCmd('current-context', 'Display the current-context.'),
    () => import('../commands/config.js').then((m) => ({ run: m.runCurrentContext })),
    b,
  );
  lazyAction(
    configCmd('use-context', 'Set the current-context in a svcconfig file.').argument('<name>'),
    () => import('../commands/config.js').then((m) => ({ run: m.runUseContext })),
    b,
  );
  lazyAction(
    configCmd('set-context', 'Set a context entry in svcconfig.')
      .argument('[name]')
      .option('--current', 'Modify the current context.')
      .option('--cluster <name>', 'cluster for the context entry in svcconfig')
      .option('--user <name>', 'user for the context entry in svcconfig')
      .option('--namespace <namespace>', 'namespace for the context entry in svcconfig'),
    () => import('../commands/config.js').then((m) => ({ run: m.runSetContext })),
    b,
  );
  lazyAction(
    configCmd('get-contexts', 'Describe one or many contexts.')
      .argument('[name]')
      .option('--no-headers', "When using the default or custom-column output format, don't print headers.")
      .option('-o, --output <format>', 'Output format. One of: (name).'),
    () => import('../commands/config.js').then((m) => ({ run: m.runGetContexts })),
    b,
  );
}
