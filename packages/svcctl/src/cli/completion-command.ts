import type { Command } from 'commander';
import { type Built, subcommand } from './command-kit.js';

/** `completion bash|zsh`: prints a completion script for the whole command tree. */
export function registerCompletionCommand(program: Command, b: Built): void {
  subcommand(program, {
    name: 'completion',
    description: 'Output shell completion code for the specified shell (bash or zsh).',
    io: b.io,
  })
    .argument('<shell>')
    .action(async (shell: string) => {
      const { completionScript } = await import('../commands/completion.js');
      b.io.out(completionScript(program, shell));
    });
}
