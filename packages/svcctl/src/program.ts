import { Command, Option } from 'commander';
import type { SvcctlIo } from './io.js';
import { DASH_MARK } from './dash-mark.js';
import { collect, type Built } from './cli/command-kit.js';
import { registerReadCommands } from './cli/read-commands.js';
import { registerCreateCommands } from './cli/create-commands.js';
import { registerWriteCommands } from './cli/write-commands.js';
import { registerAuthCommands } from './cli/auth-commands.js';
import { registerInspectCommands } from './cli/inspect-commands.js';
import { registerCompletionCommand } from './cli/completion-command.js';
import { registerStreamCommands } from './cli/stream-commands.js';

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
  prefix: false,
  'all-containers': false,
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
  stdin: false,
  tty: false,
  quiet: false,
};

/**
 * kubectl's (pflag's) spellings commander does not read: `-o=json` (a short flag with `=`),
 * and `--flag=true|false` for boolean flags.
 */
export function normalizeArgs(argv: string[]): string[] {
  // `rollout status` watches unless told not to; `get` only when told to.
  const defaults = argv.includes('rollout') ? { ...BOOLEAN_FLAGS, watch: true } : BOOLEAN_FLAGS;
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (a === '--') {
      // exec needs to know where `--` was (commander drops it): a marker operand says.
      const marked = argv.slice(0, i).includes('exec') ? [DASH_MARK] : [];
      out.push('--', ...marked, ...argv.slice(i + 1));
      break;
    }
    const short = /^-([a-zA-Z])=(.*)$/s.exec(a);
    if (short) {
      out.push(`-${short[1] ?? ''}`, short[2] ?? '');
      continue;
    }
    const bool = /^--([a-z0-9-]+)=(true|false|True|False|TRUE|FALSE|1|0|t|f|T|F)$/.exec(a);
    if (bool && Object.hasOwn(defaults, bool[1] ?? '')) {
      const name = bool[1] ?? '';
      const on = /^(true|1|t)$/i.test(bool[2] ?? '');
      if (on) out.push(`--${name}`);
      else if (defaults[name]) out.push(`--no-${name}`);
      continue;
    }
    out.push(a);
  }
  return out;
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

  registerReadCommands(program, b);
  registerCreateCommands(program, b);
  registerWriteCommands(program, b);
  registerAuthCommands(program, b);
  registerInspectCommands(program, b);
  registerStreamCommands(program, b);
  registerCompletionCommand(program, b);
  return program;
}
