import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubectl, type KubectlResult } from './kubectl.js';
import { startTestApiServer, type TestApiServer, type TestApiServerOptions } from './api-server.js';

/** A test API server with a private kubectl HOME (so kubectl's discovery cache is per run). */
export interface KubectlEnv {
  server: TestApiServer;
  home: string;
  run(args: string[], opts?: { stdin?: string; timeoutMs?: number }): Promise<KubectlResult>;
  stop(): Promise<void>;
}

export async function startKubectlEnv(o: TestApiServerOptions = {}): Promise<KubectlEnv> {
  const server = await startTestApiServer(o);
  const home = await mkdtemp(join(tmpdir(), 'svc-kubectl-home-'));
  return {
    server, home,
    run: (args, opts = {}) => kubectl(server.svcconfigPath, args, { ...opts, home }),
    stop: async () => {
      await server.stop();
      await rm(home, { recursive: true, force: true });
    },
  };
}
