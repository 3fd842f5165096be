// policy/v1 PodDisruptionBudget, the pods/eviction subresource and disruption-controller against
// a real API server and etcd, and stock kubectl cordon/drain/uncordon honouring a budget. No
// node agent runs: pods are created on a Node object and made Running/Ready through `/status`,
// as a node agent would report them; their ReplicaSet exists only to give them a controller
// (no replicaset controller runs here).
import type { Node, PodDisruptionBudget, Pod, ReplicaSet, Status } from '@svc/api';
import { ResourceClient, type RestClient } from '@svc/client';
import { uniqueName, waitFor } from '@svc/testing';
import { withControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';
import { newControllerRef } from './controller-ref.js';
import { createNamespace, kubectlIn, pods, replicaSets, setPodReady, template } from './workload-testing.js';

const env = withControllerManager(['--controllers=disruption']);

const PDBS = { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets' };
const budgets = (api: RestClient, ns: string): ResourceClient<PodDisruptionBudget> =>
  new ResourceClient<PodDisruptionBudget>(api, PDBS).namespace(ns);
const nodes = (api: RestClient): ResourceClient<Node> => new ResourceClient<Node>(api, R.nodes());

function budgetOf(name: string, spec: PodDisruptionBudget['spec']): PodDisruptionBudget {
  return { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec };
}

/** The Status a refused request answered with. */
async function statusOf(write: Promise<unknown>): Promise<Status> {
  const e = await write.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!e || typeof e !== 'object' || !('status' in e)) throw new Error(`expected a refusal, got ${String(e)}`);
  return (e as { status: Status }).status;
}

/** POST pods/<name>/eviction; the answer's code and body. */
async function evict(ns: string, name: string, o: { apiVersion?: string; gracePeriodSeconds?: number } = {}) {
  const r = await env.api.request('POST', `/api/v1/namespaces/${ns}/pods/${name}/eviction`, {
    body: {
      apiVersion: o.apiVersion ?? 'policy/v1',
      kind: 'Eviction',
      metadata: { name, namespace: ns },
      deleteOptions: { gracePeriodSeconds: o.gracePeriodSeconds ?? 0 },
    },
  });
  return { code: r.status, body: r.json<Status>() };
}

/** A ReplicaSet of `replicas` (labels `app: <name>`) and that many Running, Ready pods of it on `node`. */
async function workload(ns: string, o: { name: string; replicas: number; node: string }): Promise<Pod[]> {
  const rs = await replicaSets(env.api, ns).create({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: o.name },
    spec: { replicas: o.replicas, selector: { matchLabels: { app: o.name } }, template: template({ app: o.name }) },
  } as ReplicaSet);
  const out: Pod[] = [];
  for (let i = 0; i < o.replicas; i++) {
    const pod = await pods(env.api, ns).create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${o.name}-${i}`,
        labels: { app: o.name },
        ownerReferences: [newControllerRef(rs, 'apps/v1', 'ReplicaSet')],
      },
      spec: { nodeName: o.node, containers: [{ name: 'c', image: 'busybox' }] },
    });
    await setPodReady(env.api, pod);
    out.push(pod);
  }
  return out;
}

/** The budget once the controller has written a status for its current generation that `ok` accepts. */
const settled = (ns: string, name: string, ok: (st: NonNullable<PodDisruptionBudget['status']>) => boolean) =>
  waitFor(`budget ${name} settled`, async () => {
    const b = await budgets(env.api, ns).get(name);
    return b.status && b.status.observedGeneration === b.metadata.generation && ok(b.status) ? b : undefined;
  });

/** The first write to budget `name` after version `rv` whose status `ok` accepts (a watch sees every write). */
async function writeAfter(
  ns: string,
  o: { name: string; rv: string; ok: (st: NonNullable<PodDisruptionBudget['status']>) => boolean },
): Promise<PodDisruptionBudget> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), 10_000);
  try {
    const events = await budgets(env.api, ns).watch({
      resourceVersion: o.rv,
      fieldSelector: `metadata.name=${o.name}`,
      signal: stop.signal,
    });
    for await (const ev of events) {
      const b = ev.object as PodDisruptionBudget;
      if (ev.type === 'MODIFIED' && b.status && o.ok(b.status)) return b;
    }
  } finally {
    clearTimeout(timer);
    stop.abort();
  }
  throw new Error(`no write to ${o.name} after ${o.rv} as expected`);
}

describe('PodDisruptionBudget (policy/v1)', () => {
  it('starts with a zero status and refuses both bounds, bad percents and unknown policies', async () => {
    const ns = await createNamespace(env.api, 'pdb-valid');
    const api = budgets(env.api, ns);
    const created = await api.create(budgetOf('ok', { minAvailable: '50%', selector: { matchLabels: { app: 'x' } } }));
    expect(created.status).toEqual({ disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 });
    expect(created.metadata.generation).toBe(1);

    const both = await statusOf(api.create(budgetOf('both', { minAvailable: 1, maxUnavailable: 1 })));
    expect(both.code).toBe(422);
    expect(both.reason).toBe('Invalid');
    expect(both.details?.causes?.map((c) => c.field)).toEqual(['spec']);
    expect(both.message).toContain('minAvailable and maxUnavailable cannot be both set');

    const percent = await statusOf(api.create(budgetOf('pct', { maxUnavailable: '5x%' })));
    expect(percent.code).toBe(422);
    expect(percent.details?.causes?.map((c) => c.field)).toEqual(['spec.maxUnavailable']);
    expect(percent.message).toContain("a valid percent string must be a numeric string followed by an ending '%'");

    const over = await statusOf(api.create(budgetOf('over', { minAvailable: '150%' })));
    expect(over.message).toContain('spec.minAvailable: Invalid value: "150%": must not be greater than 100%');
    const negative = await statusOf(api.create(budgetOf('neg', { minAvailable: -1 })));
    expect(negative.details?.causes?.map((c) => c.field)).toEqual(['spec.minAvailable']);

    const policy = await statusOf(
      api.create(budgetOf('pol', { minAvailable: 1, unhealthyPodEvictionPolicy: 'Sometimes' as 'AlwaysAllow' })),
    );
    expect(policy.message).toContain('spec.unhealthyPodEvictionPolicy: Unsupported value: "Sometimes"');

    // Updating the spec into both bounds is refused too (read once the controller wrote its status).
    const fetched = await settled(ns, 'ok', () => true);
    const update = await statusOf(api.update({ ...fetched, spec: { ...fetched.spec, maxUnavailable: 1 } }));
    expect(update.code).toBe(422);
  });

  it('counts every pod of the namespace for an empty selector and none for an unset one', async () => {
    const ns = await createNamespace(env.api, 'pdb-sel');
    await workload(ns, { name: 'web', replicas: 2, node: 'sel-node' });
    await budgets(env.api, ns).create(budgetOf('all', { minAvailable: 1, selector: {} }));
    await budgets(env.api, ns).create(budgetOf('none', { minAvailable: 1 }));
    const all = await settled(ns, 'all', (st) => st.expectedPods === 2 && st.currentHealthy === 2);
    expect(all.status).toMatchObject({ desiredHealthy: 1, disruptionsAllowed: 1 });
    const none = await settled(ns, 'none', () => true);
    expect(none.status).toMatchObject({ expectedPods: 0, currentHealthy: 0, disruptionsAllowed: 0 });
    expect(none.status?.conditions?.[0]).toMatchObject({ type: 'DisruptionAllowed', reason: 'InsufficientPods' });
  });

  it('computes status from the controllers’ scale and Ready pods, and evicts within the budget', async () => {
    const ns = await createNamespace(env.api, 'pdb-evict');
    const [first, second, third] = await workload(ns, { name: 'app', replicas: 3, node: 'evict-node' });
    await budgets(env.api, ns).create(
      budgetOf('app', { maxUnavailable: '34%', selector: { matchLabels: { app: 'app' } } }),
    );
    // 34% of 3 rounds up to 2 unavailable: 1 must stay healthy.
    const before = await settled(ns, 'app', (st) => st.currentHealthy === 3);
    expect(before.status).toMatchObject({ expectedPods: 3, desiredHealthy: 1, disruptionsAllowed: 2 });
    expect(before.status?.conditions?.[0]).toMatchObject({ status: 'True', reason: 'SufficientPods' });

    // An unready pod no longer counts.
    await setPodReady(env.api, third as Pod, false);
    await settled(ns, 'app', (st) => st.currentHealthy === 2 && st.disruptionsAllowed === 1);

    const { resourceVersion: rv = '' } = (await budgets(env.api, ns).get('app')).metadata;
    const ok = await evict(ns, first?.metadata.name ?? '');
    expect(ok.code).toBe(201);
    expect(ok.body).toMatchObject({ kind: 'Status', status: 'Success' });
    await expect(pods(env.api, ns).get(first?.metadata.name ?? '')).rejects.toMatchObject({ code: 404 });
    // The eviction's own write: one disruption fewer and the pod recorded (the controller drops
    // the entry once it sees the pod gone).
    await writeAfter(ns, {
      name: 'app',
      rv,
      ok: (st) => st.disruptionsAllowed === 0 && Object.keys(st.disruptedPods ?? {}).join() === first?.metadata.name,
    });

    const refused = await evict(ns, second?.metadata.name ?? '', { apiVersion: 'policy/v1beta1' });
    expect(refused.code).toBe(429);
    expect(refused.body).toMatchObject({
      reason: 'TooManyRequests',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
    });
    // currentHealthy is 2 until the controller has seen the evicted pod go, then 1.
    expect(refused.body.details?.causes).toEqual([
      {
        reason: 'DisruptionBudget',
        message: expect.stringMatching(/^The disruption budget app needs 1 healthy pods and has [12] currently$/),
      },
    ]);
    // The controller forgets the evicted pod once it is gone.
    const settledAfter = await settled(ns, 'app', (st) => Object.keys(st.disruptedPods ?? {}).length === 0);
    expect(settledAfter.status).toMatchObject({ currentHealthy: 1, disruptionsAllowed: 0 });

    const missing = await evict(ns, 'no-such-pod');
    expect(missing.code).toBe(404);
    expect(missing.body.reason).toBe('NotFound');

    // A finished pod is evicted without asking the budget.
    await pods(env.api, ns).patch(
      second?.metadata.name ?? '',
      { status: { phase: 'Succeeded' } },
      {
        type: 'merge',
        subresource: 'status',
      },
    );
    expect((await evict(ns, second?.metadata.name ?? '')).code).toBe(201);

    // Two budgets over one pod: Kubernetes' 500.
    await budgets(env.api, ns).create(
      budgetOf('twice', { minAvailable: 0, selector: { matchLabels: { app: 'app' } } }),
    );
    const two = await evict(ns, third?.metadata.name ?? '');
    expect(two.code).toBe(500);
    expect(two.body.message).toContain('This pod has more than one PodDisruptionBudget');
  });

  it('kubectl cordon, drain (refused while the budget forbids, done once it allows) and uncordon', async () => {
    const ns = await createNamespace(env.api, 'pdb-drain');
    const node = uniqueName('drain-node');
    await nodes(env.api).create({ apiVersion: 'v1', kind: 'Node', metadata: { name: node } });
    await workload(ns, { name: 'db', replicas: 2, node });
    await budgets(env.api, ns).create(budgetOf('db', { minAvailable: 2, selector: { matchLabels: { app: 'db' } } }));
    await settled(ns, 'db', (st) => st.currentHealthy === 2);
    const k = await kubectlIn(env.server.svcconfigPath);
    try {
      const table = await k.ok(['get', 'pdb', '-n', ns]);
      expect(table.stdout).toMatch(/NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE/);
      expect(table.stdout).toMatch(/db\s+2\s+N\/A\s+0\s+/);

      expect((await k.ok(['cordon', node])).stdout).toContain(`node/${node} cordoned`);
      expect((await nodes(env.api).get(node)).spec?.unschedulable).toBe(true);

      const args = ['drain', node, '--ignore-daemonsets', '--delete-emptydir-data', '--grace-period=0'];
      const refused = await k.run([...args, '--timeout=4s']);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain(
        "(will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.",
      );
      expect((await pods(env.api, ns).list()).items).toHaveLength(2);

      // The budget now allows both: drain evicts them.
      const pdb = await budgets(env.api, ns).get('db');
      await budgets(env.api, ns).update({ ...pdb, spec: { ...pdb.spec, minAvailable: 0 } });
      await settled(ns, 'db', (st) => st.disruptionsAllowed === 2);
      const drained = await k.ok([...args, '--timeout=30s']);
      expect(drained.stdout).toContain(`node/${node} drained`);
      expect((await pods(env.api, ns).list()).items).toHaveLength(0);

      expect((await k.ok(['uncordon', node])).stdout).toContain(`node/${node} uncordoned`);
      expect((await nodes(env.api).get(node)).spec?.unschedulable).toBeFalsy();
    } finally {
      await k.stop();
    }
  });
  it('resets a DisruptionTarget condition left on a pod that was not deleted within 2 minutes', async () => {
    const ns = await createNamespace(env.api, 'pdb-stale');
    const node = uniqueName('node');
    await nodes(env.api).create({ apiVersion: 'v1', kind: 'Node', metadata: { name: node } });
    const [old, fresh] = await workload(ns, { name: 'kept', replicas: 2, node });
    const mark = async (pod: Pod | undefined, since: Date): Promise<void> => {
      await pods(env.api, ns).patch(
        pod?.metadata.name ?? '',
        {
          status: {
            conditions: [
              {
                type: 'DisruptionTarget',
                status: 'True',
                reason: 'EvictionByEvictionAPI',
                message: 'Eviction API: evicting',
                lastTransitionTime: since.toISOString().replace(/\.\d{3}Z$/, 'Z'),
              },
            ],
          },
        },
        { type: 'strategic', subresource: 'status' },
      );
    };
    await mark(old, new Date(Date.now() - 3 * 60_000));
    await mark(fresh, new Date());
    const target = async (name: string) =>
      (await pods(env.api, ns).get(name)).status?.conditions?.find((c) => c.type === 'DisruptionTarget');
    // Marked 3 minutes ago and still here: reset to False (reason and message kept, as the merge leaves them).
    const reset = await waitFor('the stale condition reset', async () => {
      const c = await target(old?.metadata.name ?? '');
      return c?.status === 'False' ? c : undefined;
    });
    expect(reset.reason).toBe('EvictionByEvictionAPI');
    expect(Date.parse(reset.lastTransitionTime ?? '')).toBeGreaterThan(Date.now() - 60_000);
    // Marked just now: left alone (it becomes stale only after 2 minutes).
    expect((await target(fresh?.metadata.name ?? ''))?.status).toBe('True');
  });
});
