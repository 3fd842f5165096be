import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { kubectl, type KubectlResult } from './kubectl.js';
import { uniqueName } from './api-assertions.js';
import { startTestApiServer, type TestApiServer, type TestApiServerOptions } from './api-server.js';

export interface KubectlRunOptions {
  stdin?: string;
  timeoutMs?: number;
}

/** A test API server with a private kubectl HOME (so kubectl's discovery cache is per run). */
export interface KubectlEnv {
  server: TestApiServer;
  home: string;
  run(args: string[], opts?: KubectlRunOptions): Promise<KubectlResult>;
  /** Like `run`, but rejects unless kubectl exits 0 (the error carries its output). */
  ok(args: string[], opts?: KubectlRunOptions): Promise<KubectlResult>;
  /** Writes `obj` as a YAML manifest in the kubectl HOME and returns its path. */
  manifest(obj: unknown): Promise<string>;
  stop(): Promise<void>;
}

export async function startKubectlEnv(o: TestApiServerOptions = {}): Promise<KubectlEnv> {
  const server = await startTestApiServer(o);
  const home = await mkdtemp(join(tmpdir(), 'svc-kubectl-home-'));
  const run = (args: string[], opts: KubectlRunOptions = {}): Promise<KubectlResult> =>
    kubectl(server.svcconfigPath, args, { timeoutMs: 60_000, ...opts, home });
  return {
    server,
    home,
    run,
    ok: async (args, opts) => {
      const r = await run(args, opts);
      if (r.code !== 0)
        throw new Error(`kubectl ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      return r;
    },
    manifest: async (obj) => {
      const file = join(home, `${uniqueName('manifest')}.yaml`);
      await writeFile(file, YAML.stringify(obj));
      return file;
    },
    stop: async () => {
      await server.stop();
      await rm(home, { recursive: true, force: true });
    },
  };
}
