// deployment-controller (with replicaset-controller) against a real API server and etcd:
// ReplicaSets per template, availability, RollingUpdate bounds observed at every step,
// Recreate ordering, proportional scaling mid-rollout, history pruning, pause, the progress
// deadline, and stock kubectl's `rollout status` (`rollout undo`/`history`: see
// deployment-kubectl.int.test.ts, which needs the Kubernetes naming). No node agent runs: the tests mark pods
// Running/Ready through `/status` (`watchPods` with `kubelet`).
import { Informer, listWatcherFor } from '@svc/client';
import { waitFor } from '@svc/testing';
import { withControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';
import { controllerOf } from './controller-ref.js';
import { isPodReady } from './pod-util.js';
import {
  createNamespace,
  deploymentOf,
  deployments,
  eventsAbout,
  kubectlIn,
  pods,
  replicaSets,
  replicaSetsOf,
  template,
  waitForRollout,
  watchPods,
} from './workload-testing.js';
import type { Deployment, Pod, ReplicaSet } from '@svc/api';

const env = withControllerManager(['--controllers=replicaset,deployment']);

const image = (p: Pod | ReplicaSet | Deployment): string | undefined =>
  ('template' in p.spec ? p.spec.template.spec : p.spec).containers[0]?.image;

const setImage = (ns: string, name: string, img: string): Promise<Deployment> =>
  deployments(env.api, ns).patch(
    name,
    {
      spec: { template: { spec: { containers: [{ name: 'c', image: img }] } } },
    },
    { type: 'strategic' },
  );

const condition = (d: Deployment, type: string): { status?: string; reason?: string } | undefined =>
  d.status?.conditions?.find((c) => c.type === type);

async function waitForCondition(
  ns: string,
  name: string,
  { type, reason, timeoutMs = 10_000 }: { type: string; reason: string; timeoutMs?: number },
): Promise<Deployment> {
  return waitFor(
    `${type} ${reason}`,
    async () => {
      const d = await deployments(env.api, ns).get(name);
      return condition(d, type)?.reason === reason ? d : undefined;
    },
    { timeoutMs },
  );
}

/** Waits until `d` has exactly one ReplicaSet, and answers it. */
async function onlyReplicaSet(ns: string, d: Deployment): Promise<ReplicaSet | undefined> {
  const [rs] = await waitFor('the ReplicaSet', async () => {
    const rss = await replicaSetsOf(env.api, ns, d);
    return rss.length === 1 ? rss : undefined;
  });
  return rs;
}

describe('deployment-controller', () => {
  it('creates a ReplicaSet <name>-<pod-template-hash> and its pods, and is Available once they are Ready', async () => {
    const ns = await createNamespace(env.api, 'deploy');
    const d = await deployments(env.api, ns).create(deploymentOf('web', 3));
    const rs = await onlyReplicaSet(ns, d);
    const hash = rs?.metadata.labels?.['pod-template-hash'] ?? '';
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(rs?.metadata.name).toBe(`web-${hash}`);
    expect(rs?.spec.selector).toEqual({ matchLabels: { app: 'web', 'pod-template-hash': hash } });
    expect(rs?.spec.template?.metadata?.labels).toEqual({ app: 'web', 'pod-template-hash': hash });
    expect(rs?.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'web',
        uid: d.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    // 25% of 3: surge rounds up to 1 (max 4 pods), unavailable rounds down to 0.
    expect(rs?.metadata.annotations).toEqual({
      'deployment.svc.io/revision': '1',
      'deployment.svc.io/desired-replicas': '3',
      'deployment.svc.io/max-replicas': '4',
    });
    const notReady = await waitFor('status with 3 unavailable replicas', async () => {
      const got = await deployments(env.api, ns).get('web');
      return got.status?.replicas === 3 ? got : undefined;
    });
    expect(notReady.metadata.annotations?.['deployment.svc.io/revision']).toBe('1');
    expect(notReady.metadata.generation).toBe(1);
    expect(notReady.status).toMatchObject({
      observedGeneration: 1,
      replicas: 3,
      updatedReplicas: 3,
      unavailableReplicas: 3,
    });
    expect(condition(notReady, 'Available')).toMatchObject({ status: 'False', reason: 'MinimumReplicasUnavailable' });
    expect(['NewReplicaSetCreated', 'ReplicaSetUpdated']).toContain(condition(notReady, 'Progressing')?.reason);
    const ps = (await pods(env.api, ns).list()).items;
    expect(ps).toHaveLength(3);
    for (const p of ps) expect(p.metadata.labels).toEqual({ app: 'web', 'pod-template-hash': hash });

    const w = await watchPods(env.api, ns, { kubelet: true });
    try {
      const done = await waitForRollout(env.api, ns, { name: 'web' });
      expect(done.status).toMatchObject({ replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 });
      expect(done.status?.unavailableReplicas ?? 0).toBe(0);
      expect(condition(done, 'Available')).toMatchObject({
        status: 'True',
        reason: 'MinimumReplicasAvailable',
        message: 'Deployment has minimum availability.',
      });
      await waitForCondition(ns, 'web', { type: 'Progressing', reason: 'NewReplicaSetAvailable' });
    } finally {
      await w.stop();
    }
  });

  it.each([
    { replicas: 4, maxSurge: '30%', maxUnavailable: '30%', surge: 2, unavailable: 1 },
    { replicas: 3, maxSurge: 1, maxUnavailable: 0, surge: 1, unavailable: 0 },
    { replicas: 3, maxSurge: 0, maxUnavailable: 1, surge: 0, unavailable: 1 },
  ])(
    'a rolling update keeps within maxSurge $maxSurge / maxUnavailable $maxUnavailable of $replicas at every observed step',
    async (c) => {
      const ns = await createNamespace(env.api, 'roll');
      const name = 'web';
      const d = await deployments(env.api, ns).create(
        deploymentOf(name, c.replicas, {
          spec: {
            strategy: {
              type: 'RollingUpdate',
              rollingUpdate: { maxSurge: c.maxSurge, maxUnavailable: c.maxUnavailable },
            },
          },
          image: 'v1',
        }),
      );
      let watching = false;
      let minReady = Infinity;
      let maxSpecs = 0;
      const w = await watchPods(env.api, ns, {
        kubelet: true,
        onChange: (pw) => {
          if (!watching) return;
          const active = pw.active();
          minReady = Math.min(minReady, active.filter(isPodReady).length);
        },
      });
      const rsInformer = new Informer<ReplicaSet>(
        listWatcherFor<ReplicaSet>(env.api, R.replicaSets(), { namespace: ns }),
      );
      const specSum = (): number => rsInformer.store.list().reduce((n, rs) => n + (rs.spec.replicas ?? 0), 0);
      rsInformer.addEventHandler({
        onAdd: () => {
          if (watching) maxSpecs = Math.max(maxSpecs, specSum());
        },
        onUpdate: () => {
          if (watching) maxSpecs = Math.max(maxSpecs, specSum());
        },
      });
      const stopRs = new AbortController();
      const rsRun = rsInformer.run(stopRs.signal);
      try {
        await waitForRollout(env.api, ns, { name: name });
        watching = true;
        const start = Date.now();
        await setImage(ns, name, 'v2');
        const done = await waitForRollout(env.api, ns, { name: name, generation: 2 });
        const ms = Date.now() - start;
        const rss = await replicaSetsOf(env.api, ns, d);
        expect(
          rss.map((rs) => [image(rs), rs.spec.replicas, rs.metadata.annotations?.['deployment.svc.io/revision']]),
        ).toEqual([
          ['v1', 0, '1'],
          ['v2', c.replicas, '2'],
        ]);
        expect(done.metadata.annotations?.['deployment.svc.io/revision']).toBe('2');
        const final = (await pods(env.api, ns).list()).items;
        expect(final.map(image)).toEqual(Array(c.replicas).fill('v2'));
        // maxSurge bounds the ReplicaSets' replicas, as in Kubernetes (GetReplicaCountForReplicaSets
        // counts spec.replicas); a pod of a scaled-down ReplicaSet may still be active for a moment
        // while the new ReplicaSet's pods are created, so active pods are not bounded by it.
        expect(maxSpecs).toBeLessThanOrEqual(c.replicas + c.surge);
        expect(minReady).toBeGreaterThanOrEqual(c.replicas - c.unavailable);
        // The surge is used: the new ReplicaSet starts at maxSurge (rounded up) above the old one.
        if (c.surge > 0) expect(maxSpecs).toBe(c.replicas + c.surge);
        process.stdout.write(
          `deployment-controller: rolling update of ${c.replicas} pods (surge ${c.surge}, unavailable ${c.unavailable}) in ${ms} ms; observed max ReplicaSet replicas ${maxSpecs}, min ready ${minReady}\n`,
        );
      } finally {
        stopRs.abort();
        await rsRun;
        await w.stop();
      }
    },
  );

  it('records ScalingReplicaSet events on the Deployment as it creates and scales its ReplicaSet', async () => {
    const ns = await createNamespace(env.api, 'deploy');
    const d = await deployments(env.api, ns).create(deploymentOf('web', 2));
    const rs = await onlyReplicaSet(ns, d);
    const name = rs?.metadata.name ?? '';
    const until = (n: number): Promise<string[]> =>
      waitFor(`${n} events`, async () => {
        const all = await eventsAbout(env.api, ns, { kind: 'Deployment', name: 'web' });
        return all.length >= n ? all : undefined;
      });
    expect(await until(1)).toEqual([`ScalingReplicaSet: Scaled up replica set ${name} from 0 to 2`]);
    await deployments(env.api, ns).patch('web', { spec: { replicas: 4 } }, { type: 'merge' });
    await until(2);
    await deployments(env.api, ns).patch('web', { spec: { replicas: 1 } }, { type: 'merge' });
    expect(await until(3)).toEqual([
      `ScalingReplicaSet: Scaled up replica set ${name} from 0 to 2`,
      `ScalingReplicaSet: Scaled up replica set ${name} from 2 to 4`,
      `ScalingReplicaSet: Scaled down replica set ${name} from 4 to 1`,
    ]);
  });

  it('Recreate deletes every old pod before the first new one is created', async () => {
    const ns = await createNamespace(env.api, 'recreate');
    await deployments(env.api, ns).create(
      deploymentOf('web', 3, { spec: { strategy: { type: 'Recreate' } }, image: 'v1' }),
    );
    let watching = false;
    const violations: string[] = [];
    let sawNew = false;
    const w = await watchPods(env.api, ns, {
      kubelet: true,
      onChange: (pw) => {
        if (!watching) return;
        const all = pw.informer.store.list();
        if (all.some((p) => image(p) === 'v2')) {
          sawNew = true;
          const old = all.filter((p) => image(p) === 'v1');
          if (old.length > 0) violations.push(`${old.length} old pods with a new one`);
        }
      },
    });
    try {
      await waitForRollout(env.api, ns, { name: 'web' });
      watching = true;
      await setImage(ns, 'web', 'v2');
      await waitForRollout(env.api, ns, { name: 'web', generation: 2 });
      expect(sawNew).toBe(true);
      expect(violations).toEqual([]);
      expect((await pods(env.api, ns).list()).items.map(image)).toEqual(['v2', 'v2', 'v2']);
    } finally {
      await w.stop();
    }
  });

  it('scales proportionally when spec.replicas changes during a stuck rollout', async () => {
    const ns = await createNamespace(env.api, 'prop');
    const d = await deployments(env.api, ns).create(
      deploymentOf('web', 10, {
        spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 3, maxUnavailable: 2 } } },
        image: 'v1',
      }),
    );
    // Only v1 pods ever become ready: the rollout to v2 stops at old 8 + new 5 (13 = 10 + surge 3, 8 = 10 - 2 available).
    const w = await watchPods(env.api, ns, { kubelet: (p) => image(p) === 'v1' });
    try {
      await waitForRollout(env.api, ns, { name: 'web' });
      await setImage(ns, 'web', 'v2');
      const sizes = async (): Promise<number[]> =>
        (await replicaSetsOf(env.api, ns, d)).map((rs) => rs.spec.replicas ?? 0);
      await waitFor('the rollout to get stuck at 8 + 5', async () => JSON.stringify(await sizes()) === '[8,5]');
      await waitFor(
        'the stuck rollout in status',
        async () => (await deployments(env.api, ns).get('web')).status?.replicas === 13,
      );
      await deployments(env.api, ns).patch('web', { spec: { replicas: 20 } }, { type: 'merge' });
      // 23 (= 20 + 3) spread as 8 and 5 were of 13: 8 → round(8·23/13) = 14, 5 → 9.
      await waitFor('proportional sizes 14 + 9', async () => JSON.stringify(await sizes()) === '[14,9]');
      const rss = await replicaSetsOf(env.api, ns, d);
      for (const rs of rss)
        expect(rs.metadata.annotations).toMatchObject({
          'deployment.svc.io/desired-replicas': '20',
          'deployment.svc.io/max-replicas': '23',
        });
    } finally {
      await w.stop();
    }
  });

  it('revisionHistoryLimit keeps only that many old ReplicaSets (oldest revisions go first)', async () => {
    const ns = await createNamespace(env.api, 'history');
    const d = await deployments(env.api, ns).create(
      deploymentOf('web', 1, { spec: { revisionHistoryLimit: 1 }, image: 'v1' }),
    );
    const w = await watchPods(env.api, ns, { kubelet: true });
    try {
      await waitForRollout(env.api, ns, { name: 'web' });
      for (const [i, img] of ['v2', 'v3', 'v4'].entries()) {
        await setImage(ns, 'web', img);
        await waitForRollout(env.api, ns, { name: 'web', generation: i + 2 });
      }
      const rss = await waitFor('old ReplicaSets pruned to 1', async () => {
        const list = await replicaSetsOf(env.api, ns, d);
        return list.length === 2 ? list : undefined;
      });
      expect(rss.map((rs) => [image(rs), rs.metadata.annotations?.['deployment.svc.io/revision']])).toEqual([
        ['v3', '3'],
        ['v4', '4'],
      ]);
    } finally {
      await w.stop();
    }
  });

  it('a paused Deployment does not roll out a new template but still scales; resuming rolls out', async () => {
    const ns = await createNamespace(env.api, 'pause');
    const d = await deployments(env.api, ns).create(deploymentOf('web', 2, { image: 'v1' }));
    const w = await watchPods(env.api, ns, { kubelet: true });
    try {
      await waitForRollout(env.api, ns, { name: 'web' });
      await deployments(env.api, ns).patch('web', { spec: { paused: true } }, { type: 'merge' });
      const paused = await waitForCondition(ns, 'web', { type: 'Progressing', reason: 'DeploymentPaused' });
      expect(condition(paused, 'Progressing')?.status).toBe('Unknown');
      await setImage(ns, 'web', 'v2');
      await deployments(env.api, ns).patch('web', { spec: { replicas: 3 } }, { type: 'merge' });
      await waitFor('the scale to be applied while paused', async () => {
        const rss = await replicaSetsOf(env.api, ns, d);
        return rss.length === 1 && rss[0]?.spec.replicas === 3 && image(rss[0]) === 'v1';
      });
      const observed = await waitFor('the paused generation observed', async () => {
        const got = await deployments(env.api, ns).get('web');
        return got.status?.observedGeneration === got.metadata.generation && got.status?.replicas === 3
          ? got
          : undefined;
      });
      expect(observed.metadata.annotations?.['deployment.svc.io/revision']).toBe('1');
      expect((await replicaSetsOf(env.api, ns, d)).map(image)).toEqual(['v1']);

      await deployments(env.api, ns).patch('web', { spec: { paused: false } }, { type: 'merge' });
      await waitFor(
        'only v2 pods after resuming',
        async () => {
          await waitForRollout(env.api, ns, { name: 'web' });
          const all = (await pods(env.api, ns).list()).items;
          return all.length === 3 && all.every((p) => image(p) === 'v2');
        },
        { timeoutMs: 20_000 },
      );
      await waitForCondition(ns, 'web', { type: 'Progressing', reason: 'NewReplicaSetAvailable' });
    } finally {
      await w.stop();
    }
  });

  it('adopts a matching orphan ReplicaSet with its template instead of creating one', async () => {
    const ns = await createNamespace(env.api, 'adopt');
    await replicaSets(env.api, ns).create({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'manual', labels: { app: 'web' } },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: template({ app: 'web' }, 'v1') },
    });
    // Seen by the shared ReplicaSet cache (the ReplicaSet controller wrote its status) before the Deployment exists.
    await waitFor(
      'the orphan synced',
      async () => (await replicaSets(env.api, ns).get('manual')).status?.observedGeneration === 1,
    );
    const d = await deployments(env.api, ns).create(deploymentOf('web', 2, { image: 'v1' }));
    const adopted = await waitFor('the orphan adopted with revision 1', async () => {
      const got = await replicaSets(env.api, ns).get('manual');
      return controllerOf(got)?.uid === d.metadata.uid &&
        got.metadata.annotations?.['deployment.svc.io/revision'] === '1'
        ? got
        : undefined;
    });
    expect(adopted.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'web',
        uid: d.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    await waitFor(
      'the Deployment status',
      async () => (await deployments(env.api, ns).get('web')).status?.replicas === 2,
    );
    expect((await replicaSets(env.api, ns).list()).items.map((rs) => rs.metadata.name)).toEqual(['manual']);
  });

  it('reports ProgressDeadlineExceeded when pods do not become ready in progressDeadlineSeconds, and kubectl rollout status fails', async () => {
    const ns = await createNamespace(env.api, 'deadline');
    const start = Date.now();
    await deployments(env.api, ns).create(deploymentOf('stuck', 2, { spec: { progressDeadlineSeconds: 2 } }));
    const d = await waitForCondition(ns, 'stuck', {
      type: 'Progressing',
      reason: 'ProgressDeadlineExceeded',
      timeoutMs: 15_000,
    });
    const ms = Date.now() - start;
    expect(condition(d, 'Progressing')).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
    // Condition times are whole seconds (truncated), so the deadline passes 1-2 s after the condition was set.
    expect(ms).toBeGreaterThanOrEqual(1000);
    const k = await kubectlIn(env.server.svcconfigPath);
    try {
      const r = await k.run(['-n', ns, 'rollout', 'status', 'deployment/stuck', '--timeout=20s']);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/deployment "stuck" exceeded its progress deadline/);
    } finally {
      await k.stop();
    }
    process.stdout.write(`deployment-controller: ProgressDeadlineExceeded ${ms} ms after creation (deadline 2 s)\n`);
  });

  it('kubectl rollout status waits for a rollout and reports success (create deployment, set image)', async () => {
    const ns = await createNamespace(env.api, 'kubectl');
    const k = await kubectlIn(env.server.svcconfigPath);
    const w = await watchPods(env.api, ns, { kubelet: true });
    try {
      await k.ok(['-n', ns, 'create', 'deployment', 'web', '--image=busybox', '--replicas=2']);
      const status = await k.ok(['-n', ns, 'rollout', 'status', 'deployment/web', '--timeout=30s']);
      expect(status.stdout).toMatch(/deployment "web" successfully rolled out/);
      await k.ok(['-n', ns, 'set', 'image', 'deployment/web', 'busybox=busybox:2']);
      const again = await k.ok(['-n', ns, 'rollout', 'status', 'deployment/web', '--timeout=30s']);
      expect(again.stdout).toMatch(/deployment "web" successfully rolled out/);
      const owned = (await pods(env.api, ns).list()).items.filter((p) => controllerOf(p));
      expect(owned.map(image)).toEqual(['busybox:2', 'busybox:2']);
    } finally {
      await w.stop();
      await k.stop();
    }
  });
});
