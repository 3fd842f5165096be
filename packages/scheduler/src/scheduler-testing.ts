import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Affinity, Event, Node, Pod, Taint, Toleration } from '@svc/api';
import { RestClient, ResourceClient, loadSvcconfig } from '@svc/client';
import { silentLogger, type Logger } from '@svc/component-base';
import {
  componentTestArgs,
  STEADY_LEADER_ELECTION,
  reportLostLease,
  type LeaderElectionPeriods,
  freePort,
  startTestApiServer,
  uniqueName,
  waitFor,
  type TestApiServer,
  createDefaultServiceAccount,
} from '@svc/testing';
import { parseSchedulerOptions } from './options.js';
import { startScheduler, type RunningScheduler, type SchedulerTuning } from './run-scheduler.js';

export interface TestScheduler {
  scheduler: RunningScheduler;
  stop(): Promise<void>;
}

/**
 * Test helper (not exported): svc-scheduler in this process against `server`'s admin
 * svcconfig, on a free port of 127.0.0.1, with Kubernetes' default leader-election periods unless
 * `o.leaderElection` or `args` say otherwise. A lost Lease is reported on stderr.
 */
export async function startTestScheduler(
  server: TestApiServer,
  args: string[] = [],
  o: { tuning?: SchedulerTuning; logger?: Logger; leaderElection?: LeaderElectionPeriods } = {},
): Promise<TestScheduler> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-sched-'));
  const leaderElection = o.leaderElection ?? STEADY_LEADER_ELECTION;
  const opts = parseSchedulerOptions(
    [...componentTestArgs({ server, port: await freePort(), certDir: dir, leaderElection }), ...args],
    { quiet: true },
  );
  const scheduler = await startScheduler(opts, { logger: o.logger ?? silentLogger, tuning: o.tuning });
  reportLostLease('svc-scheduler', scheduler);
  return {
    scheduler,
    stop: async () => {
      await scheduler.shutdown();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The `scheduler_scheduler_cache_size` figures `s` reports on `/metrics`. */
export async function cacheSizes(s: TestScheduler): Promise<Record<string, number>> {
  const metric = await s.scheduler.metrics.getSingleMetric('scheduler_scheduler_cache_size')?.get();
  return Object.fromEntries((metric?.values ?? []).map((v) => [String(v.labels.type), v.value]));
}

export interface SchedulerEnv {
  server: TestApiServer;
  scheduler: TestScheduler;
  /** Admin access to the API. */
  api: RestClient;
  nodes: ResourceClient<Node>;
  /** Pods of the file's own namespace. */
  pods: ResourceClient<Pod>;
  namespace: string;
}

/**
 * Starts a real API server and a scheduler with `args` before the file's tests (the scheduler
 * leads before they run), stops both after them; fields are set in `beforeAll`.
 */
export function withScheduler(
  args: string[] = [],
  o: { tuning?: SchedulerTuning; logger?: Logger } = {},
): SchedulerEnv {
  const env = {} as SchedulerEnv;
  beforeAll(async () => {
    // No node lifecycle controller lifts the not-ready taint TaintNodesByCondition gives new nodes.
    env.server = await startTestApiServer({ args: ['--disable-admission-plugins=TaintNodesByCondition'] });
    env.api = new RestClient(loadSvcconfig(env.server.svcconfigPath));
    env.namespace = uniqueName('sched');
    await new ResourceClient(env.api, { group: '', version: 'v1', resource: 'namespaces' }).create({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: env.namespace },
    });
    // No controller manager runs: the pods need the namespace's default ServiceAccount.
    await createDefaultServiceAccount(env.api, env.namespace);
    env.nodes = new ResourceClient<Node>(env.api, { group: '', version: 'v1', resource: 'nodes' });
    env.pods = new ResourceClient<Pod>(env.api, { group: '', version: 'v1', resource: 'pods' }).namespace(
      env.namespace,
    );
    env.scheduler = await startTestScheduler(env.server, args, o);
    await waitFor('the scheduler to lead', () => env.scheduler.scheduler.isLeader(), { timeoutMs: 15_000 });
  });
  afterAll(async () => {
    await env.scheduler?.stop();
    env.api?.close();
    await env.server?.stop();
  });
  return env;
}

export interface NodeSpec {
  cpu?: string;
  memory?: string;
  pods?: string;
  labels?: Record<string, string>;
  taints?: Taint[];
  unschedulable?: boolean;
}

/** A Node as a node agent registers it: allocatable resources and a Ready condition. */
export function nodeObject(name: string, o: NodeSpec = {}): Node {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: o.labels ?? {} },
    spec: { ...(o.taints ? { taints: o.taints } : {}), ...(o.unschedulable ? { unschedulable: true } : {}) },
    status: {
      capacity: { cpu: o.cpu ?? '4', memory: o.memory ?? '8Gi', pods: o.pods ?? '110' },
      allocatable: { cpu: o.cpu ?? '4', memory: o.memory ?? '8Gi', pods: o.pods ?? '110' },
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'SvcletReady',
          message: 'ready',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
      ],
    },
  };
}

export interface PodSpecInput {
  cpu?: string;
  memory?: string;
  nodeSelector?: Record<string, string>;
  affinity?: Affinity;
  tolerations?: Toleration[];
  hostPort?: number;
  schedulerName?: string;
  labels?: Record<string, string>;
}

/** A pending pod (no nodeName) with one container. */
export function podObject(name: string, o: PodSpecInput = {}): Pod {
  const requests: Record<string, string> = {};
  if (o.cpu) requests.cpu = o.cpu;
  if (o.memory) requests.memory = o.memory;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: o.labels ?? {} },
    spec: {
      containers: [
        {
          name: 'c',
          image: 'busybox',
          resources: { requests },
          ...(o.hostPort ? { ports: [{ containerPort: 80, hostPort: o.hostPort }] } : {}),
        },
      ],
      ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}),
      ...(o.affinity ? { affinity: o.affinity } : {}),
      ...(o.tolerations ? { tolerations: o.tolerations } : {}),
      ...(o.schedulerName ? { schedulerName: o.schedulerName } : {}),
    },
  };
}

/** Waits until the pod is bound and returns its node. */
export async function boundNode(pods: ResourceClient<Pod>, name: string, timeoutMs = 10_000): Promise<string> {
  return waitFor(`pod ${name} to be bound`, async () => (await pods.get(name)).spec?.nodeName || undefined, {
    timeoutMs,
  });
}

/**
 * The PodScheduled condition once it is False with a message matching `message` (when given:
 * an attempt made before the scheduler saw every node says less, and a later one corrects it),
 * within 10 s.
 */
export async function unschedulableCondition(
  pods: ResourceClient<Pod>,
  name: string,
  message?: string | RegExp,
): Promise<{ reason?: string; message?: string }> {
  const timeoutMs = 10_000;
  const matches = (m = ''): boolean =>
    message === undefined || (typeof message === 'string' ? m === message : message.test(m));
  return waitFor(
    `pod ${name} to be unschedulable${message ? ` with ${String(message)}` : ''}`,
    async () =>
      (await pods.get(name)).status?.conditions?.find(
        (c) => c.type === 'PodScheduled' && c.status === 'False' && matches(c.message),
      ),
    { timeoutMs },
  );
}

/** Events about `name` in the namespace, oldest first. */
export async function eventsFor(api: RestClient, namespace: string, name: string): Promise<Event[]> {
  const list = await new ResourceClient<Event>(api, { group: '', version: 'v1', resource: 'events' })
    .namespace(namespace)
    .list({ fieldSelector: `involvedObject.name=${name}` });
  return list.items;
}
