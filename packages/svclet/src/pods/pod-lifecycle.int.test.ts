// Pods bound to the node, run by a PodManager through a real svc-runtime against a real API
// server: status, logs, restarts with back-off, phases, bad specs, graceful deletion.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { criLabel, isNotFound, type ApiObject, type Event, type Pod } from '@svc/api';
import { Informer, ResourceClient, listWatcherFor } from '@svc/client';
import { waitFor } from '@svc/testing';
import type { PodManager } from './pod-manager.js';
import { PODS, containerOf, shPod, waitForPod, withPodEnv } from './pods-testing.js';

const env = withPodEnv();
let manager: PodManager;

beforeAll(async () => {
  ({ manager } = await env.startManager());
});

/** Kubernetes' kubelet events about pod `name`: waits until `want` holds of them. */
async function podEvents(name: string, what: string, want: (reasons: string[]) => boolean): Promise<Event[]> {
  const events = new ResourceClient<Event>(env.testApi, { group: '', version: 'v1', resource: 'events' }).namespace(
    'default',
  );
  return waitFor(`events of ${name}: ${what}`, async () => {
    const items = (await events.list({ fieldSelector: `involvedObject.name=${name}` })).items;
    return want(items.map((e) => `${e.reason ?? ''}: ${e.message ?? ''}`)) ? items : undefined;
  });
}

/** The log file of container `c`'s first run in pod `p` (of namespace default). */
function firstLog(p: Pod): string {
  return join(env.podLogsDir, `default_${p.metadata.name ?? ''}_${p.metadata.uid ?? ''}`, 'c', '0.log');
}

async function readLog(file: string): Promise<string> {
  return readFile(file, 'utf8').catch(() => '');
}

describe('pods bound to the node', () => {
  it('runs the container: Running with podIP, hostIP, startTime, conditions and container status; output in its log file', async () => {
    const created = await env.pods().create(shPod('run', env.nodeName, { script: 'echo hello; exec sleep 60' }));
    const p = await waitForPod(env, 'run', {
      what: 'Running and ready',
      cond: (x) => x.status?.phase === 'Running' && containerOf(x)?.ready === true,
    });
    const st = p.status ?? {};
    expect(st).toMatchObject({
      podIP: '127.0.0.1',
      podIPs: [{ ip: '127.0.0.1' }],
      hostIP: '127.0.0.1',
      hostIPs: [{ ip: '127.0.0.1' }],
      qosClass: 'BestEffort',
    });
    expect(Date.parse(st.startTime ?? '')).toBeGreaterThan(Date.now() - 60_000);
    expect(st.conditions?.map((c) => [c.type, c.status])).toEqual([
      ['PodReadyToStartContainers', 'True'],
      ['Initialized', 'True'],
      ['Ready', 'True'],
      ['ContainersReady', 'True'],
      ['PodScheduled', 'True'],
    ]);
    const cs = containerOf(p);
    expect(cs).toMatchObject({
      name: 'c',
      ready: true,
      started: true,
      restartCount: 0,
      image: 'busybox',
      lastState: {},
    });
    expect(cs?.imageID).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(cs?.containerID).toMatch(/^svc-runtime:\/\/[0-9a-f]+$/);
    expect(cs?.state.running?.startedAt).toBeDefined();

    const file = firstLog(created);
    await waitFor('hello in the log', async () => (await readLog(file)).includes(' stdout F hello'));
    expect(manager.containerLogFiles('default', 'run', 'c')).toEqual({ current: file, running: true });
    expect(manager.containerLogFiles('default', 'run', 'nope')).toBeUndefined();
    expect(manager.pods().find((x) => x.metadata.name === 'run')?.status?.phase).toBe('Running');
    // Kubernetes' kubelet events, about the container (fieldPath) and from this node.
    const events = await podEvents(
      'run',
      'Created and Started',
      (r) => r.includes('Created: Created container: c') && r.includes('Started: Started container c'),
    );
    const pulled = events.find((e) => e.reason === 'Pulled');
    expect(pulled?.message).toMatch(
      /^(Container image "busybox" already present on machine|Successfully pulled image "busybox" in \S+ \(\S+ including waiting\))$/,
    );
    for (const e of events) {
      expect(e).toMatchObject({
        type: 'Normal',
        source: { component: 'svclet', host: env.nodeName },
        involvedObject: { kind: 'Pod', fieldPath: 'spec.containers{c}', uid: created.metadata.uid },
      });
    }
  });

  it('restarts a failing container (restartPolicy Always) with growing back-off, showing CrashLoopBackOff', async () => {
    await env.pods().create(shPod('crash', env.nodeName, { script: 'echo boom; exit 1' }));
    const restarts = new Map<number, number>();
    const waiting: string[] = [];
    await waitForPod(env, 'crash', {
      what: 'restart count 4',
      cond: (p) => {
        const cs = containerOf(p);
        if (cs && !restarts.has(cs.restartCount)) restarts.set(cs.restartCount, Date.now());
        if (cs?.state.waiting?.reason === 'CrashLoopBackOff') waiting.push(cs.state.waiting.message ?? '');
        return (cs?.restartCount ?? 0) >= 4;
      },
      timeoutMs: 30_000,
    });
    const at = (n: number): number => restarts.get(n) ?? NaN;
    // Back-off 0.5 s doubling: restart 1 at once, then after 0.5, 1 and 2 s.
    expect(at(3) - at(2)).toBeGreaterThan(700);
    expect(at(4) - at(3)).toBeGreaterThan(1500);
    for (const m of waiting)
      expect(m).toMatch(/^back-off \S+ restarting failed container=c pod=crash_default\([0-9a-f-]+\)$/);
    const periods = [...new Set(waiting.map((m) => m.split(' ')[1]))];
    expect(periods.filter((x) => x === '1s' || x === '2s')).toEqual(['1s', '2s']);
    const p = await waitForPod(env, 'crash', {
      what: 'CrashLoopBackOff',
      cond: (x) => containerOf(x)?.state.waiting?.reason === 'CrashLoopBackOff',
    });
    expect(p.status?.phase).toBe('Running');
    expect(containerOf(p)?.lastState.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    const files = manager.containerLogFiles('default', 'crash', 'c');
    expect(files?.previous).toMatch(/\/c\/\d+\.log$/);
    expect(await readLog(files?.previous ?? '')).toContain('boom');
    // Only the current and the previous instance are kept.
    const { containers } = await env.cri.runtime.listContainers({
      filter: { labelSelector: { [criLabel('pod.uid')]: p.metadata.uid ?? '' } },
    });
    expect(containers.length).toBeLessThanOrEqual(2);
    const backOff = (await podEvents('crash', 'BackOff', (r) => r.some((x) => x.startsWith('BackOff:')))).filter(
      (e) => e.reason === 'BackOff',
    );
    expect(backOff).toHaveLength(1);
    expect(backOff[0]).toMatchObject({
      type: 'Warning',
      message: `Back-off restarting failed container c in pod crash_default(${p.metadata.uid ?? ''})`,
    });
    // One event per back-off period (counted), not one per sync: a handful after 4 restarts, not dozens.
    expect(backOff[0]?.count).toBeLessThanOrEqual(6);
  });

  it('OnFailure and Never: Succeeded and Failed with exit codes; OnFailure restarts a failure', async () => {
    await env.pods().create(shPod('ok', env.nodeName, { script: 'exit 0', spec: { restartPolicy: 'OnFailure' } }));
    await env.pods().create(shPod('fail', env.nodeName, { script: 'exit 3', spec: { restartPolicy: 'Never' } }));
    await env.pods().create(shPod('retry', env.nodeName, { script: 'exit 2', spec: { restartPolicy: 'OnFailure' } }));
    const ok = await waitForPod(env, 'ok', { what: 'Succeeded', cond: (p) => p.status?.phase === 'Succeeded' });
    expect(containerOf(ok)).toMatchObject({
      restartCount: 0,
      ready: false,
      state: { terminated: { exitCode: 0, reason: 'Completed' } },
    });
    expect(ok.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'PodCompleted',
    });
    const fail = await waitForPod(env, 'fail', { what: 'Failed', cond: (p) => p.status?.phase === 'Failed' });
    expect(containerOf(fail)).toMatchObject({
      restartCount: 0,
      state: { terminated: { exitCode: 3, reason: 'Error' } },
    });
    const retry = await waitForPod(env, 'retry', {
      what: 'restarted',
      cond: (p) => (containerOf(p)?.restartCount ?? 0) >= 1,
    });
    expect(retry.status?.phase).toBe('Running');
    // Finished pods stay finished.
    await new Promise((r) => setTimeout(r, 500));
    expect(containerOf(await env.pods().get('fail'))?.restartCount).toBe(0);
  });

  it('reports a pod it cannot run with a waiting reason and message, and keeps going', async () => {
    const bad = shPod('bad', env.nodeName, { script: '' });
    delete bad.spec.containers[0]?.command;
    await env.pods().create(bad);
    const p = await waitForPod(env, 'bad', {
      what: 'a waiting reason',
      cond: (x) => !!containerOf(x)?.state.waiting?.message,
    });
    expect(p.status?.phase).toBe('Pending');
    expect(containerOf(p)?.state.waiting).toEqual({
      reason: 'CreateContainerError',
      message: expect.stringContaining('has no command'),
    });
    const failed = (await podEvents('bad', 'Failed', (r) => r.some((x) => x.startsWith('Failed:')))).find(
      (e) => e.reason === 'Failed',
    );
    expect(failed).toMatchObject({ type: 'Warning', message: expect.stringMatching(/^Error: .*has no command/) });
    // The svclet retries at every relist (1 s); a failure that repeats is not recorded again.
    const events = new ResourceClient<Event>(env.testApi, { group: '', version: 'v1', resource: 'events' }).namespace(
      'default',
    );
    for (const until = Date.now() + 3000; Date.now() < until; await new Promise((r) => setTimeout(r, 250))) {
      const again = (await events.list({ fieldSelector: 'involvedObject.name=bad' })).items;
      expect(again.filter((e) => e.reason === 'Failed').map((e) => e.count)).toEqual([1]);
      expect(again.filter((e) => e.reason === 'Pulled')).toHaveLength(1);
    }
    await env.pods().create(shPod('after-bad', env.nodeName, { script: 'exec sleep 60' }));
    await waitForPod(env, 'after-bad', { what: 'Running', cond: (x) => x.status?.phase === 'Running' });
  });
});

describe('environment from ConfigMaps and Secrets', () => {
  const cms = () =>
    new ResourceClient(env.testApi, { group: '', version: 'v1', resource: 'configmaps' }).namespace('default');
  const secrets = () =>
    new ResourceClient(env.testApi, { group: '', version: 'v1', resource: 'secrets' }).namespace('default');

  it('envFrom (with prefix), configMapKeyRef, secretKeyRef and resourceFieldRef values reach the container; env overrides envFrom', async () => {
    await cms().create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'app-config' },
      data: { MODE: 'fast', LEVEL: '3' },
    } as ApiObject);
    await secrets().create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'app-secret' },
      data: { password: Buffer.from('s3cret').toString('base64') },
    } as ApiObject);
    const created = await env.pods().create(
      shPod('envs', env.nodeName, {
        script: 'echo "$CFG_MODE $CFG_LEVEL $PASS $MODE2 $OPT. $MEM"; exec sleep 60',
        container: {
          resources: { limits: { memory: '64Mi' } },
          envFrom: [
            { prefix: 'CFG_', configMapRef: { name: 'app-config' } },
            { secretRef: { name: 'absent', optional: true } },
          ],
          env: [
            { name: 'PASS', valueFrom: { secretKeyRef: { name: 'app-secret', key: 'password' } } },
            { name: 'MODE2', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'MODE' } } },
            { name: 'CFG_LEVEL', value: 'override' },
            { name: 'OPT', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'nope', optional: true } } },
            { name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
          ],
        },
      }),
    );
    await waitForPod(env, 'envs', { what: 'Running', cond: (x) => x.status?.phase === 'Running' });
    const file = firstLog(created);
    await waitFor('the environment in the output', async () =>
      (await readLog(file)).includes('fast override s3cret fast . 64'),
    );
  });

  it('a missing ConfigMap or key keeps the container waiting with CreateContainerConfigError until it exists', async () => {
    await env.pods().create(
      shPod('env-missing', env.nodeName, {
        script: 'echo "$X"; exec sleep 60',
        container: {
          env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'later', key: 'x' } } }],
        },
      }),
    );
    let p = await waitForPod(env, 'env-missing', {
      what: 'a config error',
      cond: (x) => containerOf(x)?.state.waiting?.reason === 'CreateContainerConfigError',
    });
    expect(containerOf(p)?.state.waiting?.message).toBe('configmaps "later" not found');
    expect(p.status?.phase).toBe('Pending');
    await cms().create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'later' },
      data: { y: '1' },
    } as ApiObject);
    p = await waitForPod(env, 'env-missing', {
      what: 'the missing key',
      cond: (x) => containerOf(x)?.state.waiting?.message === "couldn't find key x in ConfigMap default/later",
    });
    expect(containerOf(p)?.state.waiting?.reason).toBe('CreateContainerConfigError');
    await cms().patch('later', { data: { x: 'now' } }, { type: 'merge' });
    await waitForPod(env, 'env-missing', { what: 'Running', cond: (x) => x.status?.phase === 'Running' });
  });
});

describe('init containers', () => {
  it('run to completion before the containers, with $(VAR) expansion and downward-API env', async () => {
    const pod = shPod('init', env.nodeName, {
      script: "echo main $(WHO) $(POD) '$$(KEPT)'; exec sleep 60",
      spec: {
        // Runs for more than two of the svclet's 1 s relists, so that its running state is
        // reported and seen (0.3 s was missed on a loaded machine once start waited for mounts).
        initContainers: [{ name: 'first', image: 'busybox', command: ['sh', '-c', 'echo init; sleep 2.5'] }],
      },
      container: {
        env: [
          { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'WHO', value: 'pod=$(POD)' },
        ],
      },
    });
    const created = await env.pods().create(pod);
    const pending = await waitForPod(env, 'init', {
      what: 'initializing',
      cond: (p) => p.status?.initContainerStatuses?.[0]?.state.running !== undefined,
    });
    expect(pending.status?.phase).toBe('Pending');
    expect(containerOf(pending)?.state.waiting?.reason).toBe('PodInitializing');
    expect(pending.status?.conditions?.find((c) => c.type === 'Initialized')).toMatchObject({
      status: 'False',
      message: 'containers with incomplete status: [first]',
    });
    const p = await waitForPod(env, 'init', { what: 'Running', cond: (x) => x.status?.phase === 'Running' });
    expect(p.status?.initContainerStatuses?.[0]).toMatchObject({
      name: 'first',
      ready: true,
      state: { terminated: { exitCode: 0, reason: 'Completed' } },
    });
    expect(p.status?.conditions?.find((c) => c.type === 'Initialized')?.status).toBe('True');
    const file = firstLog(created);
    await waitFor('the expanded output', async () => (await readLog(file)).includes('main pod=init init $(KEPT)'));
  });

  it('a failing init container fails a Never pod', async () => {
    await env.pods().create(
      shPod('init-fail', env.nodeName, {
        script: 'exec sleep 60',
        spec: {
          restartPolicy: 'Never',
          initContainers: [{ name: 'first', image: 'busybox', command: ['sh', '-c', 'exit 7'] }],
        },
      }),
    );
    const p = await waitForPod(env, 'init-fail', { what: 'Failed', cond: (x) => x.status?.phase === 'Failed' });
    expect(p.status?.initContainerStatuses?.[0]?.state.terminated?.exitCode).toBe(7);
    expect(containerOf(p)?.state.waiting?.reason).toBe('PodInitializing');
  });
});

describe('graceful deletion', () => {
  let informer: Informer<Pod>;
  const stop = new AbortController();
  const lastSeen = new Map<string, Pod>();

  beforeAll(async () => {
    informer = new Informer<Pod>(listWatcherFor<Pod>(env.testApi, PODS, { namespace: 'default' }));
    informer.addEventHandler({ onDelete: (p) => lastSeen.set(p.metadata.name ?? '', p) });
    void informer.run(stop.signal);
    await informer.waitForSync();
  });
  afterAll(() => stop.abort());

  /**
   * Waits for the "ready" the container writes after its trap: Running comes as the process
   * starts, and a TERM before the shell has set its trap kills it (exit 143, seen once in a
   * clean-clone run).
   */
  async function trapSet(p: Pod): Promise<void> {
    await waitFor('ready in the log', async () => (await readLog(firstLog(p))).includes(' stdout F ready'));
  }

  async function deleteAndTime(name: string): Promise<number> {
    const t0 = Date.now();
    await env.pods().delete(name, { gracePeriodSeconds: 2 });
    await waitFor(
      `${name} gone`,
      async () => {
        try {
          await env.pods().get(name);
          return false;
        } catch (e) {
          return isNotFound(e);
        }
      },
      { timeoutMs: 15_000, intervalMs: 20 },
    );
    return Date.now() - t0;
  }

  it('a container that handles TERM stops within the grace period and the pod object is removed', async () => {
    const created = await env.pods().create(
      shPod('term', env.nodeName, {
        script: 'trap "echo got TERM; exit 0" TERM; echo ready; while true; do sleep 0.1; done',
      }),
    );
    await waitForPod(env, 'term', { what: 'Running', cond: (p) => p.status?.phase === 'Running' });
    await trapSet(created);
    const ms = await deleteAndTime('term');
    expect(ms).toBeLessThan(2000);
    const last = await waitFor('the deleted object', () => lastSeen.get('term'));
    expect(containerOf(last)?.state.terminated).toMatchObject({ exitCode: 0 });
    expect(last.status?.phase).toBe('Succeeded');
    await podEvents('term', 'Killing', (r) => r.includes('Killing: Stopping container c'));
  });

  it('a container that ignores TERM is killed at the deadline', async () => {
    const created = await env
      .pods()
      .create(shPod('stubborn', env.nodeName, { script: 'trap "" TERM; echo ready; while true; do sleep 0.1; done' }));
    await waitForPod(env, 'stubborn', { what: 'Running', cond: (p) => p.status?.phase === 'Running' });
    await trapSet(created);
    const ms = await deleteAndTime('stubborn');
    expect(ms).toBeGreaterThanOrEqual(2000);
    expect(ms).toBeLessThan(5000);
    const last = await waitFor('the deleted object', () => lastSeen.get('stubborn'));
    expect(containerOf(last)?.state.terminated).toMatchObject({ exitCode: 137, reason: 'Error' });
    expect(last.status?.phase).toBe('Failed');
  });

  it('a pod removed from the API (force delete) is killed and its containers removed', async () => {
    const created = await env.pods().create(shPod('forced', env.nodeName, { script: 'exec sleep 60' }));
    await waitForPod(env, 'forced', { what: 'Running', cond: (p) => p.status?.phase === 'Running' });
    const uidLabel = criLabel('pod.uid');
    expect(
      (await env.cri.runtime.listContainers({ filter: { labelSelector: { [uidLabel]: created.metadata.uid ?? '' } } }))
        .containers.length,
    ).toBe(1);
    await env.pods().delete('forced', { gracePeriodSeconds: 0 });
    await waitFor(
      'containers removed',
      async () => {
        const { containers } = await env.cri.runtime.listContainers({
          filter: { labelSelector: { [uidLabel]: created.metadata.uid ?? '' } },
        });
        return containers.length === 0;
      },
      { timeoutMs: 15_000 },
    );
  });
});

describe('containers the svclet did not create', () => {
  it('are left alone, while sandboxes it labelled for a pod no source has are removed', async () => {
    const rt = env.cri.runtime;
    const sandbox = (name: string, labels: Record<string, string>) => ({
      metadata: { name, uid: `${name}-uid`, namespace: 'elsewhere', attempt: 0 },
      labels,
    });
    const config = sandbox('foreign', { app: 'mine' });
    const { podSandboxId } = await rt.runPodSandbox({ config });
    await env.cri.image.pullImage({ image: { image: 'busybox' } });
    const { containerId } = await rt.createContainer({
      podSandboxId,
      config: {
        metadata: { name: 'x' },
        image: { image: 'busybox' },
        command: ['sleep', '60'],
        labels: { app: 'mine' },
      },
      sandboxConfig: config,
    });
    await rt.startContainer({ containerId });
    const orphan = (await rt.runPodSandbox({ config: sandbox('orphan', { [criLabel('pod.uid')]: 'no-such-pod' }) }))
      .podSandboxId;
    await waitFor(
      'the orphan removed',
      async () => (await rt.listPodSandbox({ filter: { id: orphan } })).items.length === 0,
      { timeoutMs: 15_000 },
    );
    await new Promise((r) => setTimeout(r, 1000));
    expect((await rt.containerStatus({ containerId })).status?.state).toBe('CONTAINER_RUNNING');
    expect((await rt.listPodSandbox({ filter: { id: podSandboxId } })).items).toHaveLength(1);
  });
});
