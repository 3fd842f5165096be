import type { Command } from 'commander';
import { CliError } from '../errors.js';

const sh = (words: string[]): string => words.join(' ');

/** Long and short flags of a command (and the root's global ones). */
function flagsOf(cmd: Command): string[] {
  return cmd.options.flatMap((o) => [o.long, o.short]).filter((f): f is string => !!f);
}

/** Flags whose next word is their value, so it is not taken for a command. */
function valueFlags(root: Command): string[] {
  const all = [root, ...root.commands, ...root.commands.flatMap((c) => c.commands)].flatMap((c) => c.options);
  return [...new Set(all.filter((o) => o.required || o.optional).flatMap((o) => [o.long, o.short]))].filter(
    (f): f is string => !!f,
  );
}

/**
 * `completion bash|zsh`: a completion function over the command tree as this binary has it —
 * commands, sub-commands (`auth can-i`, `rollout undo`, `create role`...) and each one's flags.
 * zsh loads it through bashcompinit.
 */
export function completionScript(root: Command, shell: string): string {
  if (shell !== 'bash' && shell !== 'zsh') throw new CliError(`Unsupported shell type "${shell}".`);
  const name = root.name();
  const fn = `_${name}`;
  const subs = root.commands
    .filter((c) => c.commands.length > 0)
    .map((c) => `    ${c.name()}) echo "${sh(c.commands.map((s) => s.name()))}" ;;`);
  const flags = root.commands.flatMap((c) => [
    `    "${c.name()} ") echo "${sh(flagsOf(c))}" ;;`,
    ...c.commands.map((s) => `    "${c.name()} ${s.name()}") echo "${sh(flagsOf(s))}" ;;`),
  ]);
  const bash = `# ${name} completion (${shell}): source <(${name} completion ${shell})
${fn}_subcommands() {
  case "$1" in
${subs.join('\n')}
  esac
}
${fn}_flags() {
  case "$1 $2" in
${flags.join('\n')}
  esac
  echo "${sh(flagsOf(root))}"
}
${fn}() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmd="" sub="" skip="" w i
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=\${COMP_WORDS[i]}
    if [ -n "$skip" ]; then skip=""; continue; fi
    case " ${sh(valueFlags(root))} " in *" $w "*) skip=1; continue ;; esac
    case "$w" in
      -*) ;;
      *) if [ -z "$cmd" ]; then cmd=$w; elif [ -z "$sub" ]; then sub=$w; fi ;;
    esac
  done
  local words
  if [[ "$cur" == -* ]]; then
    words=$(${fn}_flags "$cmd" "$sub")
  elif [ -z "$cmd" ]; then
    words="${sh(root.commands.map((c) => c.name()))}"
  elif [ -z "$sub" ]; then
    words=$(${fn}_subcommands "$cmd")
  fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F ${fn} ${name}
`;
  return shell === 'zsh' ? `autoload -U +X bashcompinit && bashcompinit\n${bash}` : bash;
}
