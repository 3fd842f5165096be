import { runCommand } from './run-command.js';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the stock `kubectl` on PATH against a svcconfig file; resolves with its exit code and output. */
export function kubectl(
  svcconfigPath: string,
  args: string[],
  opts: { stdin?: string; timeoutMs?: number; home?: string } = {},
): Promise<KubectlResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: svcconfigPath };
  if (opts.home) env.HOME = opts.home;
  return runCommand('kubectl', args, { env, stdin: opts.stdin, timeoutMs: opts.timeoutMs });
}
