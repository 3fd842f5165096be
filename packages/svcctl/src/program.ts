import { Command, Option } from 'commander';
import type { SvcctlIo } from './io.js';
import type { GlobalFlags } from './flags.js';
import type { Invocation } from './invocation.js';

type Loader = () => Promise<{ run: (inv: Invocation<never>) => Promise<void> }>;

const collect = (v: string, prev: string[] = []): string[] => [...prev, v];
const collectCsv = (v: string, prev: string[] = []): string[] => [...prev, ...v.split(',').filter((x) => x !== '')];

/** Boolean flags (by long name) and whether they default to true (`--wait`): `--x=false` needs their names. */
const BOOLEAN_FLAGS: Record<string, boolean> = {
  'all-namespaces': false,
  watch: false,
  'watch-only': false,
  'show-labels': false,
  'show-kind': false,
  'no-headers': false,
  'ignore-not-found': false,
  'server-side': false,
  'force-conflicts': false,
  force: false,
  wait: true,
  overwrite: false,
  all: false,
  recursive: false,
  raw: false,
  minify: false,
  flatten: false,
  list: false,
  client: false,
  'insecure-skip-tls-verify': false,
  previous: false,
  follow: false,
  timestamps: false,
  local: false,
  namespaced: true,
  'show-managed-fields': false,
  'remove-extra-permissions': false,
  'remove-extra-subjects': false,
  'output-watch-events': false,
  'include-uninitialized': false,
  'show-events': true,
  'windows-line-endings': false,
  'save-config': false,
  prune: false,
  'allow-missing-template-keys': true,
  'keep-annotations': false,
  'ignore-daemonsets': false,
};

/**
 * kubectl's (pflag's) spellings commander does not read: `-o=json` (a short flag with `=`),
 * and `--flag=true|false` for boolean flags.
 */
export function normalizeArgs(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const short = /^-([a-zA-Z])=(.*)$/s.exec(a);
    if (short) {
      out.push(`-${short[1] ?? ''}`, short[2] ?? '');
      continue;
    }
    const bool = /^--([a-z0-9-]+)=(true|false|True|False|TRUE|FALSE|1|0|t|f|T|F)$/.exec(a);
    if (bool && Object.hasOwn(BOOLEAN_FLAGS, bool[1] ?? '')) {
      const name = bool[1] ?? '';
      const on = /^(true|1|t)$/i.test(bool[2] ?? '');
      if (on) out.push(`--${name}`);
      else if (BOOLEAN_FLAGS[name]) out.push(`--no-${name}`);
      continue;
    }
    out.push(a);
  }
  return out;
}

interface Built {
  io: SvcctlIo;
  state: { code: number };
}

/** Adds a command whose implementation `load` imports only when it runs. */
function lazyAction(cmd: Command, load: Loader, b: Built): Command {
  return cmd.action(async (...a: unknown[]) => {
    const self = a[a.length - 1] as Command;
    const mod = await load();
    const inv: Invocation<never> = {
      args: self.args,
      opts: self.opts() as never,
      globals: self.optsWithGlobals() as GlobalFlags,
      io: b.io,
      fail: (code = 1) => {
        b.state.code = code;
      },
    };
    await mod.run(inv);
  });
}

function outputFlag(
  cmd: Command,
  help = 'Output format. One of: (json, yaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file, custom-columns, custom-columns-file, wide).',
): Command {
  return cmd.option('-o, --output <format>', help);
}

function fileFlags(cmd: Command): Command {
  return cmd
    .option('-f, --filename <file>', 'Files, directories or URLs (- for standard input) to use.', collect)
    .option('-R, --recursive', 'Process the directory used in -f recursively.');
}

function dryRunFlag(cmd: Command): Command {
  return cmd.option('--dry-run [strategy]', 'Must be "none", "server", or "client".', 'none');
}

function validateFlag(cmd: Command): Command {
  return cmd.option(
    '--validate [mode]',
    'Must be one of: strict (or true), warn, ignore (or false). Server-side field validation, with a client-side fallback for servers that lack it.',
    'strict',
  );
}

function selectorFlags(cmd: Command): Command {
  return cmd
    .option('-l, --selector <selector>', 'Selector (label query) to filter on.')
    .option('--field-selector <selector>', 'Selector (field query) to filter on.');
}

/** The whole command tree; `state.code` collects the exit code of partial failures. */
export function buildProgram(io: SvcctlIo, state: { code: number }): Command {
  const b: Built = { io, state };
  const program = new Command('svcctl')
    .description('svcctl controls the svc cluster manager.')
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .exitOverride()
    .showSuggestionAfterError(false)
    .option('--svcconfig <file>', 'Path to the svcconfig file to use for CLI requests.')
    .addOption(new Option('--kubeconfig <file>', 'Alias of --svcconfig.').hideHelp())
    .option('--context <name>', 'The name of the svcconfig context to use.')
    .option('-n, --namespace <namespace>', 'If present, the namespace scope for this CLI request.')
    .option('-s, --server <address>', 'The address and port of the API server.')
    .option('--token <token>', 'Bearer token for authentication to the API server.')
    .option('--insecure-skip-tls-verify', "The server's certificate will not be checked for validity.")
    .option('--as <user>', 'Username to impersonate for the operation.')
    .option('--as-group <group>', 'Group to impersonate for the operation; repeat for several groups.', collect)
    .option('--as-uid <uid>', 'UID to impersonate for the operation.')
    .option('--request-timeout <duration>', 'How long to wait for a single server request (0 = no timeout).', '0');
  program.addHelpCommand(false);

  const add = (name: string, description: string): Command =>
    program
      .command(name)
      .description(description)
      .exitOverride()
      .configureOutput({
        writeOut: (s) => io.out(s),
        writeErr: (s) => io.err(s),
      });

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
    .option('--raw <uri>', 'Raw URI to request from the server.');
  lazyAction(get, () => import('./commands/get.js'), b);

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
  lazyAction(apiResources, () => import('./commands/api-resources.js'), b);

  const apiVersions = add(
    'api-versions',
    'Print the supported API versions on the server, in the form of "group/version".',
  );
  lazyAction(apiVersions, () => import('./commands/api-versions.js'), b);

  const version = add('version', 'Print the client and server version information.')
    .option('--client', 'If true, shows client version only (no server required).')
    .option('-o, --output <format>', "One of 'yaml' or 'json'.");
  lazyAction(version, () => import('./commands/version.js'), b);

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
  lazyAction(configView, () => import('./commands/config.js').then((m) => ({ run: m.runView })), b);
  lazyAction(
    configCmd('current-context', 'Display the current-context.'),
    () => import('./commands/config.js').then((m) => ({ run: m.runCurrentContext })),
    b,
  );
  lazyAction(
    configCmd('use-context', 'Set the current-context in a svcconfig file.').argument('<name>'),
    () => import('./commands/config.js').then((m) => ({ run: m.runUseContext })),
    b,
  );
  lazyAction(
    configCmd('set-context', 'Set a context entry in svcconfig.')
      .argument('[name]')
      .option('--current', 'Modify the current context.')
      .option('--cluster <name>', 'cluster for the context entry in svcconfig')
      .option('--user <name>', 'user for the context entry in svcconfig')
      .option('--namespace <namespace>', 'namespace for the context entry in svcconfig'),
    () => import('./commands/config.js').then((m) => ({ run: m.runSetContext })),
    b,
  );
  lazyAction(
    configCmd('get-contexts', 'Describe one or many contexts.')
      .argument('[name]')
      .option('--no-headers', "When using the default or custom-column output format, don't print headers.")
      .option('-o, --output <format>', 'Output format. One of: (name).'),
    () => import('./commands/config.js').then((m) => ({ run: m.runGetContexts })),
    b,
  );

  return program;
}

export { dryRunFlag, validateFlag, fileFlags, outputFlag, selectorFlags, lazyAction, type Built };
