import { spawn } from 'node:child_process';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the stock `kubectl` on PATH against a svcconfig file; resolves with its exit code and output. */
export function kubectl(svcconfigPath: string, args: string[], opts: { stdin?: string; timeoutMs?: number; home?: string } = {}): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: svcconfigPath };
    if (opts.home) env.HOME = opts.home;
    const child = spawn('kubectl', args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code: code ?? -1, stdout, stderr }); });
    child.stdin.end(opts.stdin ?? '');
  });
}
