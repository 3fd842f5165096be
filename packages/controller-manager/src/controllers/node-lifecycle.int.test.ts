import { ResourceClient } from '@svc/client';
import { createDefaultServiceAccount, waitFor } from '@svc/testing';
import type { ApiObject, Node, NodeCondition, Pod, Taint, Toleration } from '@svc/api';
import { withControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';

const GRACE_MS = 2000;
const STARTUP_GRACE_MS = 3000;
const env = withControllerManager([
  '--controllers=nodelifecycle,taint-eviction-controller',
  '--node-monitor-grace-period=2s',
  '--node-monitor-period=200ms',
  '--node-startup-grace-period=3s',
  '--node-eviction-rate=1',
]);
// No serviceaccount controller runs: the pods in `default` need its account.
beforeAll(() => createDefaultServiceAccount(env.api, 'default'));

const UNREACHABLE = 'node.svc.io/unreachable';
const NOT_READY = 'node.svc.io/not-ready';
const micro = (): string => new Date().toISOString().replace(/Z$/, '000Z');
const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

const nodes = () => new ResourceClient<Node>(env.api, R.nodes());
const leases = () => new ResourceClient(env.api, R.leases()).namespace('svc-node-lease');
const pods = () => new ResourceClient<Pod>(env.api, R.pods()).namespace('default');

function agentConditions(ready: 'True' | 'False'): NodeCondition[] {
  const hb = now();
  const c = (type: string, status: NodeCondition['status'], reason: string): NodeCondition => ({
    type,
    status,
    reason,
    message: reason,
    lastHeartbeatTime: hb,
    lastTransitionTime: hb,
  });
  return [
    c('Ready', ready, ready === 'True' ? 'SvcletReady' : 'SvcletNotReady'),
    c('MemoryPressure', 'False', 'SvcletHasSufficientMemory'),
    c('DiskPressure', 'False', 'SvcletHasNoDiskPressure'),
    c('PIDPressure', 'False', 'SvcletHasSufficientPID'),
  ];
}

/** A Node (with the agent's conditions unless `ready` is undefined) and, with `lease`, its fresh Lease. */
async function createNode(name: string, o: { ready?: 'True' | 'False'; lease?: boolean }): Promise<void> {
  await nodes().create({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    spec: {},
    ...(o.ready ? { status: { conditions: agentConditions(o.ready) } } : {}),
  });
  if (o.lease) {
    await leases().create({
      apiVersion: 'coordination.svc.io/v1',
      kind: 'Lease',
      metadata: { name },
      spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: micro() },
    } as ApiObject);
  }
}

const renewLease = async (name: string): Promise<void> => {
  await leases().patch(name, { spec: { renewTime: micro() } }, { type: 'merge' });
};
const postStatus = async (name: string, ready: 'True' | 'False' = 'True'): Promise<void> => {
  await nodes().patch(
    name,
    { status: { conditions: agentConditions(ready) } },
    { type: 'merge', subresource: 'status' },
  );
};

/** A simulated node agent: `beat` every `everyMs` until stopped; `stop` answers when the last beat was sent. */
function agent(beat: () => Promise<void>, everyMs = 300): { stop(): Promise<number> } {
  let stopped = false;
  let lastSent = 0;
  const loop = (async () => {
    while (!stopped) {
      lastSent = Date.now();
      await beat().catch(() => undefined);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return lastSent;
    },
  };
}

async function deleteNodes(...names: string[]): Promise<void> {
  for (const n of names) {
    await nodes()
      .delete(n)
      .catch(() => undefined);
    await leases()
      .delete(n)
      .catch(() => undefined);
  }
}

const getNode = (name: string): Promise<Node> => nodes().get(name);
const condition = (n: Node, type: string): NodeCondition | undefined =>
  n.status?.conditions?.find((c) => c.type === type);
const taint = (n: Node, key: string, effect: string): Taint | undefined =>
  n.spec?.taints?.find((t) => t.key === key && t.effect === effect);
const exists = async (name: string): Promise<boolean> =>
  (await env.api.request('GET', `/api/v1/namespaces/default/pods/${name}`)).status === 200;

async function createPod(
  name: string,
  node: string,
  { tolerations, metadata = {} }: { tolerations?: Toleration[]; metadata?: Partial<ApiObject['metadata']> } = {},
): Promise<Pod> {
  return pods().create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...metadata },
    spec: {
      nodeName: node,
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'c', image: 'example/app:1' }],
      ...(tolerations ? { tolerations } : {}),
    },
  });
}

// Eviction stops when no node is ready: a healthy node keeps the cluster out of that state.
let anchor: { stop(): Promise<number> };
beforeAll(async () => {
  await createNode('anchor', { ready: 'True', lease: true });
  anchor = agent(() => renewLease('anchor'));
});
afterAll(async () => {
  await anchor?.stop();
});

describe('DefaultTolerationSeconds admission', () => {
  it('gives a pod 300 s tolerations for the not-ready and unreachable NoExecute taints unless it tolerates them', async () => {
    const plain = await createPod('dts-plain', 'nowhere');
    expect(plain.spec?.tolerations).toEqual([
      { key: NOT_READY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ]);
    const own = await createPod('dts-own', 'nowhere', { tolerations: [{ key: UNREACHABLE, operator: 'Exists' }] });
    expect(own.spec?.tolerations).toEqual([
      { key: UNREACHABLE, operator: 'Exists' },
      { key: NOT_READY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ]);
    const all = await createPod('dts-all', 'nowhere', { tolerations: [{ operator: 'Exists' }] });
    expect(all.spec?.tolerations).toEqual([{ operator: 'Exists' }]);
    for (const p of ['dts-plain', 'dts-own', 'dts-all']) await pods().delete(p);
  });
});

describe('node-lifecycle-controller', () => {
  it('marks a node whose Lease stops being renewed Unknown after the grace period, taints it, and clears both when it reports again', async () => {
    await createNode('nl-lease', { ready: 'True', lease: true });
    try {
      // Renewing the Lease alone keeps the node Ready past the grace period (its status is never re-posted).
      const beat = agent(() => renewLease('nl-lease'));
      const renewUntil = Date.now() + GRACE_MS + 1000;
      await waitFor('renewals past the grace period', () => Date.now() > renewUntil, {
        timeoutMs: 10_000,
        intervalMs: 50,
      });
      expect(condition(await getNode('nl-lease'), 'Ready')?.status).toBe('True');
      const lastRenewal = await beat.stop();

      const dead = await waitFor(
        'Ready to become Unknown',
        async () => {
          const n = await getNode('nl-lease');
          return condition(n, 'Ready')?.status === 'Unknown' ? n : undefined;
        },
        { timeoutMs: 10_000 },
      );
      const elapsed = Date.now() - lastRenewal;
      expect(elapsed).toBeGreaterThanOrEqual(GRACE_MS);
      expect(elapsed).toBeLessThan(GRACE_MS + 1500);
      for (const type of ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure']) {
        expect(condition(dead, type)).toMatchObject({
          status: 'Unknown',
          reason: 'NodeStatusUnknown',
          message: 'Svclet stopped posting node status.',
        });
      }

      const tainted = await waitFor('the unreachable taints', async () => {
        const n = await getNode('nl-lease');
        return taint(n, UNREACHABLE, 'NoExecute') && taint(n, UNREACHABLE, 'NoSchedule') ? n : undefined;
      });
      expect(taint(tainted, UNREACHABLE, 'NoExecute')?.timeAdded).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(taint(tainted, NOT_READY, 'NoExecute')).toBeUndefined();

      // The agent is back: Lease renewed and status posted.
      const back = agent(async () => {
        await renewLease('nl-lease');
        await postStatus('nl-lease');
      });
      try {
        await waitFor('the taints to be removed', async () => {
          const n = await getNode('nl-lease');
          return condition(n, 'Ready')?.status === 'True' && (n.spec?.taints ?? []).length === 0;
        });
      } finally {
        await back.stop();
      }
    } finally {
      await deleteNodes('nl-lease');
    }
  });

  it('evicts pods from an unreachable node by their tolerations and marks the ones left not ready', async () => {
    await createNode('nl-evict', { ready: 'True', lease: true });
    try {
      const seconds = 2;
      await createPod('ev-short', 'nl-evict', {
        tolerations: [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds }],
      });
      await createPod('ev-forever', 'nl-evict', {
        tolerations: [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute' }],
      });
      // Counts as tolerating for DefaultTolerationSeconds (which adds nothing) but does not match the taint's empty value.
      await createPod('ev-none', 'nl-evict', {
        tolerations: [{ key: UNREACHABLE, operator: 'Equal', value: 'elsewhere', effect: 'NoExecute' }],
        metadata: { finalizers: ['test.svc.io/hold'] },
      });
      await createPod('ev-default', 'nl-evict');
      await pods().patch(
        'ev-forever',
        { status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now() }] } },
        { type: 'merge', subresource: 'status' },
      );

      await waitFor('the NoExecute taint', async () => taint(await getNode('nl-evict'), UNREACHABLE, 'NoExecute'), {
        timeoutMs: 10_000,
      });
      const taintedAt = Date.now();
      const none = await waitFor(
        'the pod without a matching toleration to be deleted',
        async () => {
          const p = await pods().get('ev-none');
          return p.metadata.deletionTimestamp ? p : undefined;
        },
        { timeoutMs: seconds * 1000 - 500 },
      );
      // At once: well before the tolerating pod's time is up (which the next assertions check).
      expect(Date.now() - taintedAt).toBeLessThan(seconds * 1000 - 500);
      expect(none.status?.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({
        status: 'True',
        reason: 'DeletionByTaintManager',
        message: 'Taint manager: deleting due to NoExecute taint',
      });
      expect(await exists('ev-short')).toBe(true);
      await pods().patch('ev-none', { metadata: { finalizers: null } }, { type: 'merge' });

      await waitFor('the pod tolerating for a while to be deleted', async () => !(await exists('ev-short')), {
        timeoutMs: 10_000,
      });
      // The eviction controller may see the taint up to one poll (20 ms) before this test does.
      expect(Date.now() - taintedAt).toBeGreaterThanOrEqual(seconds * 1000 - 50);
      expect(await exists('ev-forever')).toBe(true);
      expect(await exists('ev-default')).toBe(true);
      expect((await pods().get('ev-forever')).status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe(
        'False',
      );
    } finally {
      for (const p of ['ev-short', 'ev-forever', 'ev-none', 'ev-default'])
        await pods()
          .delete(p)
          .catch(() => undefined);
      await deleteNodes('nl-evict');
    }
  });

  it('times a node without a Lease by its Ready heartbeat', async () => {
    await createNode('nl-nolease', { ready: 'True' });
    try {
      // lastHeartbeatTime has whole seconds: beats closer than 1 s apart may not change it.
      const beat = agent(() => postStatus('nl-nolease'), 1100);
      const until = Date.now() + GRACE_MS + 1000;
      await waitFor('heartbeats past the grace period', () => Date.now() > until, {
        timeoutMs: 10_000,
        intervalMs: 50,
      });
      expect(condition(await getNode('nl-nolease'), 'Ready')?.status).toBe('True');
      const last = await beat.stop();
      await waitFor(
        'Ready to become Unknown',
        async () => condition(await getNode('nl-nolease'), 'Ready')?.status === 'Unknown',
        { timeoutMs: 10_000 },
      );
      expect(Date.now() - last).toBeGreaterThanOrEqual(GRACE_MS);
    } finally {
      await deleteNodes('nl-nolease');
    }
  });

  it('marks a node that never posted its status Unknown after the startup grace period from its creation', async () => {
    const created = Date.now();
    await createNode('nl-silent', {});
    try {
      const n = await waitFor(
        'the never-updated conditions',
        async () => {
          const x = await getNode('nl-silent');
          return condition(x, 'Ready') ? x : undefined;
        },
        { timeoutMs: 10_000 },
      );
      // The creation timestamp has whole seconds: the grace may end up to 1 s before `created` + grace.
      expect(Date.now() - created).toBeGreaterThanOrEqual(STARTUP_GRACE_MS - 1000);
      for (const type of ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure']) {
        expect(condition(n, type)).toMatchObject({
          status: 'Unknown',
          reason: 'NodeStatusNeverUpdated',
          message: 'Svclet never posted node status.',
        });
      }
      await waitFor('the unreachable taint', async () => taint(await getNode('nl-silent'), UNREACHABLE, 'NoExecute'));
    } finally {
      await deleteNodes('nl-silent');
    }
  });

  it('taints a live node that reports Ready=False not-ready, not unreachable', async () => {
    await createNode('nl-false', { ready: 'False', lease: true });
    const beat = agent(() => renewLease('nl-false'));
    try {
      const n = await waitFor('the not-ready taints', async () => {
        const x = await getNode('nl-false');
        return taint(x, NOT_READY, 'NoExecute') && taint(x, NOT_READY, 'NoSchedule') ? x : undefined;
      });
      expect(taint(n, UNREACHABLE, 'NoExecute')).toBeUndefined();
      expect(condition(n, 'Ready')).toMatchObject({ status: 'False', reason: 'SvcletNotReady' });
    } finally {
      await beat.stop();
      await deleteNodes('nl-false');
    }
  });

  // These run in order: each starts from the nodes the one before left.
  describe('eviction rate and zone states', () => {
    const healthy = ['nl-h1', 'nl-h2'];
    const dead = ['nl-d1', 'nl-d2', 'nl-d3'];
    const beats: Array<{ stop(): Promise<number> }> = [];
    afterAll(async () => {
      for (const b of beats) await b.stop();
      await deleteNodes(...healthy, ...dead, 'nl-d4');
    });

    it('taints dead nodes at --node-eviction-rate while fewer than 55 % are unhealthy', async () => {
      for (const h of healthy) {
        await createNode(h, { ready: 'True', lease: true });
        beats.push(agent(() => renewLease(h)));
      }
      for (const d of dead) await createNode(d, { ready: 'True', lease: true });
      const seen = new Map<string, number>();
      await waitFor(
        'all three dead nodes to be tainted',
        async () => {
          for (const n of (await nodes().list()).items) {
            const name = n.metadata.name ?? '';
            if (dead.includes(name) && !seen.has(name) && taint(n, UNREACHABLE, 'NoExecute'))
              seen.set(name, Date.now());
          }
          return seen.size === dead.length;
        },
        { timeoutMs: 15_000 },
      );
      const times = [...seen.values()].sort((a, b) => a - b);
      // 1 node per second, burst 1: the first at once, the others 1 s apart.
      expect((times[2] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(1800);
      expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(800);
    });

    it('stops tainting in a small cluster with more than 55 % unhealthy, and resumes when it recovers', async () => {
      await Promise.all(beats.splice(0).map((b) => b.stop()));
      await deleteNodes(...healthy);
      // Now 3 of 4 nodes are not ready: partial disruption, at or below the large-cluster threshold: rate 0.
      await createNode('nl-d4', { ready: 'True', lease: true });
      await waitFor(
        'the new dead node to be seen unreachable',
        async () => taint(await getNode('nl-d4'), UNREACHABLE, 'NoSchedule'),
        { timeoutMs: 10_000 },
      );
      const unknownAt = Date.now();
      const outcome = await waitFor(
        '1.5 s to pass, or the NoExecute taint',
        async () => {
          if (taint(await getNode('nl-d4'), UNREACHABLE, 'NoExecute')) return 'tainted';
          return Date.now() - unknownAt > 1500 ? 'not tainted' : undefined;
        },
        { timeoutMs: 5000, intervalMs: 100 },
      );
      expect(outcome).toBe('not tainted');
      // 1 of 2 not ready: normal again.
      await deleteNodes(...dead);
      await waitFor(
        'the NoExecute taint after recovery',
        async () => taint(await getNode('nl-d4'), UNREACHABLE, 'NoExecute'),
        { timeoutMs: 5000 },
      );
    });

    it('takes the NoExecute taints off when no node is ready', async () => {
      await anchor.stop();
      await nodes().delete('anchor');
      await waitFor(
        'the NoExecute taint to be removed',
        async () => !taint(await getNode('nl-d4'), UNREACHABLE, 'NoExecute'),
        { timeoutMs: 5000 },
      );
      expect(taint(await getNode('nl-d4'), UNREACHABLE, 'NoSchedule')).toBeDefined();
    });
  });
});
