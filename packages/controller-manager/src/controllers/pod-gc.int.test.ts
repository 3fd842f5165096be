// pod-garbage-collector-controller (podgc) against a real API server and etcd, with a sweep every
// 300 ms and a 1 s node quarantine (Kubernetes: 20 s and 40 s) and --terminated-pod-gc-threshold=2.
// No node agent runs: the tests write pod and node status through the API as one would.
import { resolve } from 'node:path';
import { nodeTaintKey, type Node, type Pod, type Taint } from '@svc/api';
import { Informer, ResourceClient, RestClient, listWatcherFor, loadSvcconfig } from '@svc/client';
import { runCommand, startTestApiServer, uniqueName, waitFor, type TestApiServer } from '@svc/testing';
import { startTestControllerManager, type TestControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';
import { makePodGcController } from './pod-gc.js';
import { createNamespace, pods } from './workload-testing.js';
import { nowTime } from './workload-util.js';

const BIN = resolve(__dirname, '../../dist/bin/svc-controller-manager.js');

let server: TestApiServer;
let manager: TestControllerManager;
let api: RestClient;

beforeAll(async () => {
  server = await startTestApiServer();
  api = new RestClient(loadSvcconfig(server.svcconfigPath));
  manager = await startTestControllerManager(server, ['--controllers=podgc', '--terminated-pod-gc-threshold=2'], {
    controllers: [makePodGcController({ periodMs: 300, quarantineMs: 1000 })],
  });
});

afterAll(async () => {
  await manager?.stop();
  api?.close();
  await server?.stop();
});

const nodes = (): ResourceClient<Node> => new ResourceClient<Node>(api, R.nodes());

function podOf(name: string, o: { nodeName?: string; finalizers?: string[] } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...(o.finalizers ? { finalizers: o.finalizers } : {}) },
    spec: { containers: [{ name: 'c', image: 'busybox' }], ...(o.nodeName ? { nodeName: o.nodeName } : {}) },
  };
}

const setPhase = (ns: string, name: string, status: Pod['status']): Promise<Pod> =>
  pods(api, ns).patch(name, { status }, { type: 'merge', subresource: 'status' });

/** A node with `taints`, its Ready condition `ready`. */
async function addNode(o: { ready: boolean; taints?: Taint[] }): Promise<string> {
  const name = uniqueName('gcnode');
  await nodes().create({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
  await nodes().patch(name, { spec: { taints: o.taints ?? [] } }, { type: 'merge' });
  await nodes().patch(
    name,
    {
      status: {
        conditions: [
          {
            type: 'Ready',
            status: o.ready ? 'True' : 'False',
            lastHeartbeatTime: nowTime(),
            lastTransitionTime: nowTime(),
            reason: 'Test',
            message: 'test',
          },
        ],
      },
    },
    { type: 'merge', subresource: 'status' },
  );
  return name;
}

/** Pods of `ns` as the server last had them before deleting them, by name. */
async function recordDeletions(ns: string): Promise<{ deleted: Map<string, Pod>; stop: () => void }> {
  const informer = new Informer<Pod>(listWatcherFor<Pod>(api, R.pods(), { namespace: ns }));
  const deleted = new Map<string, Pod>();
  informer.addEventHandler({ onDelete: (p) => deleted.set(p.metadata.name ?? '', p) });
  const stop = new AbortController();
  void informer.run(stop.signal);
  await informer.waitForSync();
  return { deleted, stop: () => stop.abort() };
}

const names = async (ns: string): Promise<string[]> =>
  (await pods(api, ns).list()).items.map((p) => p.metadata.name ?? '').sort();

describe('pod-garbage-collector-controller', () => {
  it('keeps --terminated-pod-gc-threshold terminated pods, deleting evicted then oldest first', async () => {
    const ns = await createNamespace(api, 'gcdone');
    for (const n of ['t-a', 't-b', 't-c', 't-d', 'run']) await pods(api, ns).create(podOf(n));
    await setPhase(ns, 'run', { phase: 'Running' });
    await setPhase(ns, 't-a', { phase: 'Succeeded' });
    await setPhase(ns, 't-b', { phase: 'Failed' });
    await setPhase(ns, 't-c', { phase: 'Succeeded' });
    await setPhase(ns, 't-d', { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource' });
    // Whenever the sweep ran, the evicted pod and then the oldest went; running and pending pods stay.
    await waitFor('two terminated pods left', async () => (await names(ns)).length === 3 || undefined, {
      timeoutMs: 20_000,
    });
    expect(await names(ns)).toEqual(['run', 't-b', 't-c']);
  });

  it('force-deletes pods bound to a node gone past the quarantine, with DisruptionTarget DeletionByPodGC', async () => {
    const ns = await createNamespace(api, 'gcorphan');
    const rec = await recordDeletions(ns);
    try {
      const doomed = await addNode({ ready: true });
      const kept = await addNode({ ready: true });
      await pods(api, ns).create(podOf('orphan', { nodeName: doomed }));
      await pods(api, ns).create(podOf('homed', { nodeName: kept }));
      await setPhase(ns, 'orphan', { phase: 'Running' });
      await setPhase(ns, 'homed', { phase: 'Running' });
      await nodes().delete(doomed);
      const last = await waitFor('the orphan deleted', () => rec.deleted.get('orphan'), { timeoutMs: 20_000 });
      expect(last.status?.phase).toBe('Failed');
      expect(last.status?.conditions).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            type: 'DisruptionTarget',
            status: 'True',
            reason: 'DeletionByPodGC',
            message: 'PodGC: node no longer exists',
          }),
        ]),
      );
      // The sweep that deleted the orphan also saw the pod on a live node and left it.
      expect(await names(ns)).toEqual(['homed']);
    } finally {
      rec.stop();
    }
  });

  it('force-deletes terminating pods never scheduled and terminating pods on out-of-service not-ready nodes', async () => {
    const ns = await createNamespace(api, 'gcterm');
    const rec = await recordDeletions(ns);
    try {
      const notReady = await addNode({ ready: false });
      const outOfService = await addNode({
        ready: false,
        taints: [{ key: nodeTaintKey('out-of-service'), value: 'nodeshutdown', effect: 'NoExecute' }],
      });
      // A graceful deletion keeps a scheduled pod until its node agent confirms; none runs here.
      await pods(api, ns).create(podOf('waiting', { nodeName: notReady }));
      await setPhase(ns, 'waiting', { phase: 'Running' });
      await pods(api, ns).delete('waiting', { gracePeriodSeconds: 600 });
      await pods(api, ns).create(podOf('stuck', { nodeName: outOfService }));
      await setPhase(ns, 'stuck', { phase: 'Running' });
      await pods(api, ns).delete('stuck', { gracePeriodSeconds: 600 });
      const stuck = await waitFor('the out-of-service pod deleted', () => rec.deleted.get('stuck'), {
        timeoutMs: 20_000,
      });
      expect(stuck.status?.phase).toBe('Failed');
      const waiting = await pods(api, ns).get('waiting');
      expect(waiting.metadata.deletionTimestamp).toBeDefined();

      // An unscheduled pod held by a finalizer: podgc marks it Failed and deletes it again.
      await pods(api, ns).create(podOf('unscheduled', { finalizers: ['example.com/hold'] }));
      await pods(api, ns).delete('unscheduled');
      const failed = await waitFor(
        'the unscheduled terminating pod marked Failed',
        async () => {
          const p = await pods(api, ns).get('unscheduled');
          return p.status?.phase === 'Failed' ? p : undefined;
        },
        { timeoutMs: 20_000 },
      );
      expect(failed.metadata.deletionTimestamp).toBeDefined();
      await pods(api, ns).patch('unscheduled', { metadata: { finalizers: null } }, { type: 'merge' });
      await waitFor('the unscheduled pod gone', () => rec.deleted.get('unscheduled'), { timeoutMs: 20_000 });
    } finally {
      rec.stop();
    }
  });

  it('a bad --terminated-pod-gc-threshold exits 2 with one line', async () => {
    const bad = await runCommand(process.execPath, [BIN, '--terminated-pod-gc-threshold=lots']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toEqual([
      `Error: option '--terminated-pod-gc-threshold <int>' argument 'lots' is invalid. strconv.ParseInt: parsing "lots": invalid syntax`,
    ]);
  });
});
