import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiObject, OwnerReference } from '@svc/api';
import { silentLogger } from '@svc/component-base';
import {
  componentTestArgs,
  freePort,
  STEADY_LEADER_ELECTION,
  reportLostLease,
  startTestApiServer,
  type LeaderElectionPeriods,
  type TestApiServer,
} from '@svc/testing';
import { RestClient, loadSvcconfig } from '@svc/client';
import { parseControllerManagerOptions } from './options.js';
import { startControllerManager, type RunningControllerManager } from './controller-manager.js';
import type { ControllerDefinition } from './controller-context.js';

export interface TestControllerManager {
  cm: RunningControllerManager;
  stop(): Promise<void>;
}

/**
 * Test helper (not exported): svc-controller-manager in this process against `server`'s admin
 * svcconfig, on a free port of 127.0.0.1, with Kubernetes' default leader-election periods
 * unless `o.leaderElection` or `args` say otherwise; `o.controllers` replaces the built-in
 * definitions. A lost Lease is reported on stderr.
 */
export async function startTestControllerManager(
  server: TestApiServer,
  args: string[] = [],
  o: { controllers?: readonly ControllerDefinition[]; leaderElection?: LeaderElectionPeriods } = {},
): Promise<TestControllerManager> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-cm-'));
  const opts = parseControllerManagerOptions(
    [
      ...componentTestArgs({
        server,
        port: await freePort(),
        certDir: dir,
        leaderElection: o.leaderElection ?? STEADY_LEADER_ELECTION,
      }),
      ...args,
    ],
    { quiet: true },
  );
  const cm = await startControllerManager(opts, { logger: silentLogger, controllers: o.controllers });
  reportLostLease('svc-controller-manager', cm);
  return {
    cm,
    stop: async () => {
      await cm.shutdown();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface ClusterEnv {
  server: TestApiServer;
  manager: TestControllerManager;
  /** Admin access to the API. */
  api: RestClient;
}

/**
 * Starts a real API server (extra `serverArgs`) and a controller manager with `args` before
 * the file's tests, stops both after them; fields are set in `beforeAll`.
 */
export function withControllerManager(args: string[], o: { serverArgs?: string[] } = {}): ClusterEnv {
  const env = {} as ClusterEnv;
  beforeAll(async () => {
    env.server = await startTestApiServer({ args: o.serverArgs });
    env.api = new RestClient(loadSvcconfig(env.server.svcconfigPath));
    env.manager = await startTestControllerManager(env.server, args);
  });
  afterAll(async () => {
    await env.manager?.stop();
    env.api?.close();
    await env.server?.stop();
  });
  return env;
}

/** An owner reference to `o` (as the server returned it), with `blockOwnerDeletion` when given. */
export function refTo(o: ApiObject, blockOwnerDeletion?: boolean): OwnerReference {
  return {
    apiVersion: o.apiVersion ?? '',
    kind: o.kind ?? '',
    name: o.metadata.name ?? '',
    uid: o.metadata.uid ?? '',
    ...(blockOwnerDeletion === undefined ? {} : { blockOwnerDeletion }),
  };
}
