// replicaset-controller against a real API server and etcd: pods created from the template,
// replaced, scaled (spec and `kubectl scale`), adopted and released, status counts, no double
// creates under load, and pods being deleted not counted. No node agent runs: the tests mark
// pods Running/Ready through `/status` themselves.
import { waitFor } from '@svc/testing';
import { withControllerManager } from '../cm-testing.js';
import { controllerOf } from './controller-ref.js';
import { isPodActive } from './pod-util.js';
import {
  createNamespace,
  eventsAbout,
  kubectlIn,
  pods,
  replicaSets,
  setPodReady,
  template,
  watchPods,
} from './workload-testing.js';
import type { Pod, ReplicaSet } from '@svc/api';

const env = withControllerManager(['--controllers=replicaset']);

function replicaSet(name: string, replicas: number, extra: Partial<ReplicaSet['spec']> = {}): ReplicaSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: template({ app: name }), ...extra },
  };
}

/** Active pods in `ns` controlled by `rs`. */
async function ownedPods(ns: string, rs: ReplicaSet): Promise<Pod[]> {
  const list = await pods(env.api, ns).list();
  return list.items.filter((p) => isPodActive(p) && controllerOf(p)?.uid === rs.metadata.uid);
}

/** Waits until `rs` (in its namespace) controls `n` active pods. */
async function waitForOwned(rs: ReplicaSet, n: number, what = `${n} pods`): Promise<Pod[]> {
  return waitFor(what, async () => {
    const owned = await ownedPods(rs.metadata.namespace ?? '', rs);
    return owned.length === n ? owned : undefined;
  });
}

/** Waits until the stored status reports `expect` for the current generation. */
async function waitForStatus(ns: string, name: string, expect: Record<string, number>): Promise<ReplicaSet> {
  return waitFor(`status ${JSON.stringify(expect)}`, async () => {
    const rs = await replicaSets(env.api, ns).get(name);
    const st = (rs.status ?? {}) as Record<string, number | undefined>;
    const ok =
      rs.status?.observedGeneration === rs.metadata.generation &&
      Object.entries(expect).every(([k, v]) => (st[k] ?? 0) === v);
    return ok ? rs : undefined;
  });
}

describe('replicaset-controller', () => {
  it('creates spec.replicas pods from the template, owned by the ReplicaSet, and reports them in status', async () => {
    const ns = await createNamespace(env.api, 'rs');
    const rs = await replicaSets(env.api, ns).create(
      replicaSet('web', 3, {
        template: {
          metadata: { labels: { app: 'web' }, annotations: { note: 'x' } },
          spec: { containers: [{ name: 'c', image: 'busybox' }] },
        },
      }),
    );
    const owned = await waitForOwned(rs, 3);
    for (const p of owned) {
      expect(p.metadata.name).toMatch(/^web-[a-z0-9]{5}$/);
      expect(p.metadata.labels).toEqual({ app: 'web' });
      expect(p.metadata.annotations).toEqual({ note: 'x' });
      expect(p.metadata.ownerReferences).toEqual([
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web',
          uid: rs.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect(p.spec.containers).toHaveLength(1);
    }
    const st = await waitForStatus(ns, 'web', {
      replicas: 3,
      fullyLabeledReplicas: 3,
      readyReplicas: 0,
      availableReplicas: 0,
    });
    expect(st.status).toEqual({ replicas: 3, fullyLabeledReplicas: 3, observedGeneration: 1 });

    for (const p of owned) await setPodReady(env.api, p);
    await waitForStatus(ns, 'web', { replicas: 3, readyReplicas: 3, availableReplicas: 3 });
  });

  it('replaces a deleted pod', async () => {
    const ns = await createNamespace(env.api, 'rs');
    const rs = await replicaSets(env.api, ns).create(replicaSet('web', 2));
    const [victim] = await waitForOwned(rs, 2);
    await pods(env.api, ns).delete(victim?.metadata.name ?? '');
    const after = await waitFor('a replacement pod', async () => {
      const owned = await ownedPods(ns, rs);
      return owned.length === 2 && !owned.some((p) => p.metadata.uid === victim?.metadata.uid) ? owned : undefined;
    });
    expect(after).toHaveLength(2);
  });

  it('scales up and down with spec.replicas, deleting not-ready pods first', async () => {
    const ns = await createNamespace(env.api, 'rs');
    const api = replicaSets(env.api, ns);
    const rs = await api.create(replicaSet('web', 2));
    await waitForOwned(rs, 2);
    await api.patch('web', { spec: { replicas: 5 } }, { type: 'merge' });
    const five = await waitForOwned(rs, 5, '5 pods after scaling up');
    const keep = five.slice(0, 2);
    for (const p of keep) await setPodReady(env.api, p);
    await waitForStatus(ns, 'web', { replicas: 5, readyReplicas: 2 });
    await api.patch('web', { spec: { replicas: 2 } }, { type: 'merge' });
    const two = await waitForOwned(rs, 2, '2 pods after scaling down');
    expect(two.map((p) => p.metadata.name).sort()).toEqual(keep.map((p) => p.metadata.name).sort());
    await waitForStatus(ns, 'web', { replicas: 2, readyReplicas: 2, availableReplicas: 2 });
    await api.patch('web', { spec: { replicas: 0 } }, { type: 'merge' });
    await waitForOwned(rs, 0, 'no pods after scaling to 0');
    await waitForStatus(ns, 'web', { replicas: 0 });
    // Kubernetes' events on the ReplicaSet: one per pod created and deleted.
    const events = await waitFor('5 SuccessfulCreate and 5 SuccessfulDelete events', async () => {
      const all = await eventsAbout(env.api, ns, { kind: 'ReplicaSet', name: 'web' });
      return all.filter((e) => e.startsWith('SuccessfulCreate')).length === 5 &&
        all.filter((e) => e.startsWith('SuccessfulDelete')).length === 5
        ? all
        : undefined;
    });
    const created = five.map((p) => `SuccessfulCreate: Created pod: ${p.metadata.name ?? ''}`);
    expect(events.filter((e) => e.startsWith('SuccessfulCreate')).sort()).toEqual(created.sort());
    expect(events.filter((e) => e.startsWith('SuccessfulDelete')).sort()).toEqual(
      five.map((p) => `SuccessfulDelete: Deleted pod: ${p.metadata.name ?? ''}`).sort(),
    );
  });

  it('scales with `kubectl scale` (the scale subresource)', async () => {
    const ns = await createNamespace(env.api, 'rs');
    const rs = await replicaSets(env.api, ns).create(replicaSet('web', 1));
    await waitForOwned(rs, 1);
    const k = await kubectlIn(env.server.svcconfigPath);
    try {
      const out = await k.ok(['-n', ns, 'scale', 'rs/web', '--replicas=4']);
      expect(out.stdout.trim()).toBe('replicaset.apps/web scaled');
      await waitForOwned(rs, 4);
      await waitForStatus(ns, 'web', { replicas: 4 });
      await k.ok(['-n', ns, 'scale', 'rs/web', '--replicas=1', '--current-replicas=4']);
      await waitForOwned(rs, 1);
      await waitForStatus(ns, 'web', { replicas: 1 });
      const got = await k.ok(['-n', ns, 'get', 'rs', 'web', '--no-headers']);
      expect(got.stdout.trim().split(/\s+/).slice(0, 3)).toEqual(['web', '1', '1']);
    } finally {
      await k.stop();
    }
  });

  it('adopts a matching orphan, then deletes a surplus pod; fullyLabeledReplicas counts template labels', async () => {
    const ns = await createNamespace(env.api, 'rs');
    const rs = await replicaSets(env.api, ns).create(
      replicaSet('web', 2, { template: template({ app: 'web', tier: 'front' }) }),
    );
    const own = await waitForOwned(rs, 2);
    await waitForStatus(ns, 'web', { replicas: 2, fullyLabeledReplicas: 2 });
    // A running, ready orphan that matches the selector but lacks the template's `tier` label.
    const orphan = await pods(env.api, ns).create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'orphan', labels: { app: 'web' } },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    await setPodReady(env.api, orphan);
    const after = await waitFor('the orphan adopted and one pending pod deleted', async () => {
      const owned = await ownedPods(ns, rs);
      return owned.length === 2 && owned.some((p) => p.metadata.name === 'orphan') ? owned : undefined;
    });
    const adopted = after.find((p) => p.metadata.name === 'orphan');
    expect(adopted?.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        name: 'web',
        uid: rs.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(after.filter((p) => own.some((o) => o.metadata.uid === p.metadata.uid))).toHaveLength(1);
    await waitForStatus(ns, 'web', { replicas: 2, fullyLabeledReplicas: 1, readyReplicas: 1, availableReplicas: 1 });
  });

  it('leaves pods controlled by someone else alone', async () => {
    const ns = await createNamespace(env.api, 'rs');
    const ref = {
      apiVersion: 'example.test/v1',
      kind: 'Thing',
      name: 'thing',
      uid: 'f0f0f0f0-0000-4000-8000-000000000000',
      controller: true,
    };
    await pods(env.api, ns).create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'taken', labels: { app: 'web' }, ownerReferences: [ref] },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    const rs = await replicaSets(env.api, ns).create(replicaSet('web', 1));
    const [mine] = await waitForOwned(rs, 1);
    expect(mine?.metadata.name).not.toBe('taken');
    await waitForStatus(ns, 'web', { replicas: 1 });
    expect((await pods(env.api, ns).get('taken')).metadata.ownerReferences).toEqual([ref]);
  });

  it('releases a pod whose labels stop matching and replaces it', async () => {
    const ns = await createNamespace(env.api, 'rs');
    const rs = await replicaSets(env.api, ns).create(replicaSet('web', 2));
    const [p] = await waitForOwned(rs, 2);
    const name = p?.metadata.name ?? '';
    await pods(env.api, ns).patch(name, { metadata: { labels: { app: 'debug' } } }, { type: 'merge' });
    const released = await waitFor('the pod released', async () => {
      const got = await pods(env.api, ns).get(name);
      return (got.metadata.ownerReferences ?? []).length === 0 ? got : undefined;
    });
    expect(released.metadata.labels).toEqual({ app: 'debug' });
    const owned = await waitForOwned(rs, 2, 'a replacement for the released pod');
    expect(owned.some((o) => o.metadata.name === name)).toBe(false);
  });

  it('availableReplicas honours minReadySeconds', async () => {
    const ns = await createNamespace(env.api, 'rs');
    const rs = await replicaSets(env.api, ns).create(replicaSet('web', 2, { minReadySeconds: 2 }));
    const owned = await waitForOwned(rs, 2);
    const readyAt = Date.now();
    for (const p of owned) await setPodReady(env.api, p);
    await waitForStatus(ns, 'web', { replicas: 2, readyReplicas: 2, availableReplicas: 0 });
    await waitForStatus(ns, 'web', { readyReplicas: 2, availableReplicas: 2 });
    // Ready times are whole seconds (RFC 3339), so availability comes 1-3 s after marking ready.
    expect(Date.now() - readyAt).toBeGreaterThanOrEqual(1000);
  });

  it('does not count a pod being deleted, and creates its replacement at once', async () => {
    const ns = await createNamespace(env.api, 'rs');
    const rs = await replicaSets(env.api, ns).create(
      replicaSet('web', 1, {
        template: {
          metadata: { labels: { app: 'web' }, finalizers: ['test.example/hold'] },
          spec: { containers: [{ name: 'c', image: 'busybox' }] },
        },
      }),
    );
    const [held] = await waitForOwned(rs, 1);
    await pods(env.api, ns).delete(held?.metadata.name ?? '');
    const owned = await waitForOwned(rs, 1, 'a replacement while the first pod is held by its finalizer');
    expect(owned[0]?.metadata.uid).not.toBe(held?.metadata.uid);
    const still = await pods(env.api, ns).get(held?.metadata.name ?? '');
    expect(still.metadata.deletionTimestamp).toBeDefined();
    await waitForStatus(ns, 'web', { replicas: 1 });
    for (const p of (await pods(env.api, ns).list()).items)
      await pods(env.api, ns).patch(p.metadata.name ?? '', { metadata: { finalizers: null } }, { type: 'merge' });
  });

  it('creates exactly spec.replicas pods in a burst, and none later', async () => {
    const ns = await createNamespace(env.api, 'rs');
    const created = new Set<string>();
    const w = await watchPods(env.api, ns, {
      onChange: (pw) => {
        for (const p of pw.informer.store.list()) created.add(p.metadata.uid ?? '');
      },
    });
    try {
      const start = Date.now();
      const rs = await replicaSets(env.api, ns).create(replicaSet('burst', 30));
      await waitForOwned(rs, 30, '30 pods');
      const ms = Date.now() - start;
      await waitForStatus(ns, 'burst', { replicas: 30 });
      // Ask again after the status write: nothing more appears.
      await replicaSets(env.api, ns).patch('burst', { metadata: { labels: { touched: 'yes' } } }, { type: 'merge' });
      await waitFor(
        'the label to be seen',
        async () => (await replicaSets(env.api, ns).get('burst')).metadata.labels?.touched === 'yes',
      );
      await waitForStatus(ns, 'burst', { replicas: 30 });
      expect(created.size).toBe(30);
      expect((await pods(env.api, ns).list()).items).toHaveLength(30);
      process.stdout.write(`replicaset-controller: 30 pods created in ${ms} ms\n`);
    } finally {
      await w.stop();
    }
  });
});
