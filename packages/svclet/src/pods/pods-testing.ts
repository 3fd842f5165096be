// Test helpers (not built): a real API server and etcd, a real svc-runtime in a temp dir, and
// PodManagers against both; every container left running is killed at the end.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { naming, type ApiObject, type ContainerStatus, type Pod } from '@svc/api';
import { ResourceClient, RestClient, loadSvcconfig, type ClientLogger } from '@svc/client';
import { connectCri, startRuntimeServer, type CriClient as RuntimeCriClient, type RuntimeServer } from '@svc/runtime';
import { startTestApiServer, uniqueName, waitFor, type TestApiServer, createDefaultServiceAccount } from '@svc/testing';
import { PodManager, type PodManagerOptions } from './pod-manager.js';

export const PODS = { group: '', version: 'v1', resource: 'pods' };
export const NODES = { group: '', version: 'v1', resource: 'nodes' };

/** Logs to stderr when SVC_TEST_LOG is set. */
export const testLogger: ClientLogger = process.env.SVC_TEST_LOG
  ? {
      info: (m, f) => console.error('INFO', m, JSON.stringify(f ?? {})),
      warn: (m, f) => console.error('WARN', m, JSON.stringify(f ?? {})),
      error: (m, f) => console.error('ERROR', m, JSON.stringify(f ?? {})),
    }
  : { info() {}, warn() {}, error() {} };

export interface PodEnv {
  server: TestApiServer;
  /** The managers' client (Protobuf). */
  api: RestClient;
  /** The tests' client (JSON). */
  testApi: RestClient;
  runtime: RuntimeServer;
  cri: RuntimeCriClient;
  dir: string;
  podLogsDir: string;
  nodeName: string;
  /** Starts a PodManager for this node with short periods (stopped by `afterAll`, or by calling the result). */
  startManager(o?: Partial<PodManagerOptions>): Promise<{ manager: PodManager; stop(): Promise<void> }>;
  /** Pods in `ns` (default `default`) through the tests' client. */
  pods(ns?: string): ResourceClient<Pod>;
}

/**
 * Before the file's tests: an API server (unless `api: false`), svc-runtime on a socket in a temp
 * dir, and a Node object named `nodeName`. After them: every manager stopped, every
 * container killed, the runtime and the server stopped, the temp dir removed.
 */
export function withPodEnv(o: { api?: boolean } = {}): PodEnv {
  const env = { nodeName: uniqueName('node') } as PodEnv;
  const stops: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    env.dir = await mkdtemp(join(tmpdir(), 'svclet-pods-'));
    env.podLogsDir = join(env.dir, 'logs');
    env.runtime = await startRuntimeServer({ socket: join(env.dir, 'cri.sock'), rootDir: join(env.dir, 'runtime') });
    env.cri = connectCri(env.runtime.socket);
    if (o.api !== false) {
      env.server = await startTestApiServer();
      // The manager's client speaks Protobuf (the svclet's default --svc-api-content-type); the tests' own JSON.
      env.api = new RestClient(loadSvcconfig(env.server.svcconfigPath), { contentType: naming().protobufMediaType });
      env.testApi = new RestClient(loadSvcconfig(env.server.svcconfigPath));
      await new ResourceClient(env.testApi, NODES).create({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: env.nodeName },
      });
      // No controller manager runs: pods in `default` need its ServiceAccount, and the root CA
      // ConfigMap their service-account token volume projects.
      await createDefaultServiceAccount(env.testApi, 'default');
      await new ResourceClient(env.testApi, { group: '', version: 'v1', resource: 'configmaps' })
        .namespace('default')
        .create({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: naming().rootCaConfigMap },
          data: { 'ca.crt': env.server.server.caPem },
        } as ApiObject);
    }
    env.pods = (ns = 'default') => new ResourceClient<Pod>(env.testApi, PODS).namespace(ns);
    env.startManager = async (m = {}) => {
      const manager = new PodManager({
        client: env.api,
        cri: env.cri,
        nodeName: env.nodeName,
        nodeIp: '127.0.0.1',
        rootDir: join(env.dir, 'root'),
        podLogsDir: env.podLogsDir,
        fileCheckFrequencyMs: 200,
        httpCheckFrequencyMs: 200,
        logger: testLogger,
        relistPeriodMs: 100,
        housekeepingPeriodMs: 300,
        backOffInitialMs: 500,
        backOffMaxMs: 4000,
        ...m,
      });
      const stop = new AbortController();
      const run = manager.run(stop.signal);
      let stopped: Promise<void> | undefined;
      const stopFn = (): Promise<void> =>
        (stopped ??= (async () => {
          stop.abort();
          await run;
        })());
      stops.push(stopFn);
      return { manager, stop: stopFn };
    };
  }, 60_000);
  afterAll(async () => {
    for (const s of stops) await s();
    if (env.cri) {
      const { containers } = await env.cri.runtime.listContainers({});
      await Promise.all(
        containers.map((c) => env.cri.runtime.stopContainer({ containerId: c.id, timeout: 0 }).catch(() => undefined)),
      );
      env.cri.close();
    }
    await env.runtime?.close();
    env.api?.close();
    env.testApi?.close();
    await env.server?.stop();
    if (env.dir) await rm(env.dir, { recursive: true, force: true });
  }, 60_000);
  return env;
}

/** A pod for `nodeName` with one container `c` running `sh -c script`, with `spec` and `container` fields over those. */
export function shPod(
  name: string,
  nodeName: string,
  {
    script,
    spec = {},
    container = {},
  }: { script: string; spec?: Partial<Pod['spec']>; container?: Partial<Pod['spec']['containers'][number]> },
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      nodeName,
      containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', script], ...container }],
      ...spec,
    },
  };
}

export function containerOf(p: Pod, name = 'c'): ContainerStatus | undefined {
  return p.status?.containerStatuses?.find((s) => s.name === name);
}

/** Polls the API pod `name` (in `ns`, default `default`) until `cond` holds (default deadline 20 s). */
export function waitForPod(
  env: PodEnv,
  name: string,
  {
    what,
    cond,
    timeoutMs = 20_000,
    ns = 'default',
  }: { what: string; cond: (p: Pod) => boolean; timeoutMs?: number; ns?: string },
): Promise<Pod> {
  return waitFor(
    `${name}: ${what}`,
    async () => {
      const p = await env.pods(ns).get(name);
      return cond(p) ? p : undefined;
    },
    { timeoutMs, intervalMs: 50 },
  );
}
