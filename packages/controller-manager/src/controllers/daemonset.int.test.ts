// apps/v1 DaemonSet and ControllerRevision against a real API server and etcd: the server's
// defaults and refusals, and daemonset-controller placing one pod per eligible node. Nodes are
// Node objects; no scheduler or node agent runs: pods stay bound to their node by the required
// affinity the controller writes, and the tests make them Running/Ready through `/status` as a
// node agent would.
import { nodeTaintKey, type ControllerRevision, type DaemonSet, type Node, type Pod, type Taint } from '@svc/api';
import { ResourceClient, type RestClient } from '@svc/client';
import { uniqueName, waitFor } from '@svc/testing';
import { withControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';
import { controllerOf } from './controller-ref.js';
import { REVISION_HASH_LABEL, targetNodeName } from './daemonset-util.js';
import { isPodActive, isPodReady } from './pod-util.js';
import { createNamespace, kubectlIn, pods, refusal, template, watchPods, type PodWatch } from './workload-testing.js';

const env = withControllerManager(['--controllers=daemonset']);

const daemonSets = (api: RestClient, ns: string): ResourceClient<DaemonSet> =>
  new ResourceClient<DaemonSet>(api, R.daemonSets()).namespace(ns);
const revisions = (api: RestClient, ns: string): ResourceClient<ControllerRevision> =>
  new ResourceClient<ControllerRevision>(api, R.controllerRevisions()).namespace(ns);
const nodes = (api: RestClient): ResourceClient<Node> => new ResourceClient<Node>(api, R.nodes());

/** A DaemonSet of pods labelled `app: <name>` on nodes labelled `pool: <pool>`, with `spec` fields over those. */
function daemonSetOf(name: string, pool: string, extra: Partial<DaemonSet['spec']> = {}): DaemonSet {
  const t = template({ app: name });
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { ...t, spec: { ...t.spec, containers: t.spec?.containers ?? [], nodeSelector: { pool } } },
      ...extra,
    },
  };
}

/**
 * Creates a node labelled `pool: <pool>` (and `labels`) with exactly `taints`: the server taints
 * a new node not-ready (NoSchedule), which the node lifecycle controller lifts when the node
 * reports Ready; none runs here, so the test lifts it.
 */
async function addNode(pool: string, o: { labels?: Record<string, string>; taints?: Taint[] } = {}): Promise<string> {
  const name = uniqueName('dsnode');
  await nodes(env.api).create({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { pool, ...o.labels } } });
  await nodes(env.api).patch(name, { spec: { taints: o.taints ?? [] } }, { type: 'merge' });
  return name;
}

/** Active pods of `ds` by the node they are for. */
async function podsByNode(ns: string, ds: DaemonSet): Promise<Map<string, Pod[]>> {
  const out = new Map<string, Pod[]>();
  for (const p of (await pods(env.api, ns).list()).items) {
    if (controllerOf(p)?.uid !== ds.metadata.uid || !isPodActive(p)) continue;
    const node = targetNodeName(p) ?? '';
    out.set(node, [...(out.get(node) ?? []), p]);
  }
  return out;
}

/** Waits until `ds` has exactly one active pod on each of `want` and none elsewhere. */
const onNodes = (ns: string, ds: DaemonSet, want: readonly string[]): Promise<Map<string, Pod[]>> =>
  waitFor(`${ds.metadata.name ?? ''} on ${want.join(',')}`, async () => {
    const m = await podsByNode(ns, ds);
    const ok = m.size === want.length && want.every((n) => m.get(n)?.length === 1);
    return ok ? m : undefined;
  });

/** Waits until the DaemonSet's status shows `want` nodes all updated and available at its current generation. */
const rolledOut = (ns: string, name: string, want: number): Promise<DaemonSet> =>
  waitFor(
    `${name} rolled out on ${want} nodes`,
    async () => {
      const ds = await daemonSets(env.api, ns).get(name);
      const st = ds.status ?? {};
      const done =
        (st.observedGeneration ?? 0) >= (ds.metadata.generation ?? 0) &&
        st.desiredNumberScheduled === want &&
        st.updatedNumberScheduled === want &&
        st.numberAvailable === want;
      return done ? ds : undefined;
    },
    { timeoutMs: 20_000 },
  );

/** The code and causes of a refused write, as `field: reason: message`. */
const refused = (write: Promise<unknown>): Promise<{ code: number; causes: string[] }> =>
  refusal(write, { messages: true });

const image = (p: Pod): string => p.spec?.containers[0]?.image ?? '';

describe('apps/v1 DaemonSet and ControllerRevision on the API server', () => {
  it('defaults as Kubernetes 1.32 and refuses what it refuses with 422', async () => {
    const ns = await createNamespace(env.api, 'dsapi');
    const ds = await daemonSets(env.api, ns).create(daemonSetOf('defaults', 'none'));
    expect(ds.spec.updateStrategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
    });
    expect(ds.spec.revisionHistoryLimit).toBe(10);
    expect(ds.metadata.generation).toBe(1);
    expect(ds.metadata.annotations?.['deprecated.daemonset.template.generation']).toBe('1');
    const changed = await daemonSets(env.api, ns).patch(
      'defaults',
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } } } },
      { type: 'strategic' },
    );
    expect(changed.metadata.annotations?.['deprecated.daemonset.template.generation']).toBe('2');
    expect(changed.metadata.generation).toBe(2);

    const bad = (name: string, spec: Partial<DaemonSet['spec']>): Promise<unknown> =>
      daemonSets(env.api, ns).create(daemonSetOf(name, 'none', spec));
    const mismatch = await refused(bad('mismatch', { selector: { matchLabels: { app: 'other' } } }));
    expect(mismatch).toEqual({
      code: 422,
      causes: [
        'spec.template.metadata.labels: FieldValueInvalid: Invalid value: {"app":"mismatch"}: `selector` does not match template `labels`',
      ],
    });
    expect((await refused(bad('empty', { selector: {} }))).causes).toContain(
      'spec.selector: FieldValueInvalid: Invalid value: {}: empty selector is invalid for daemonset',
    );
    expect(
      (
        await refused(
          bad('both', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } } }),
        )
      ).causes,
    ).toEqual([
      'spec.updateStrategy.rollingUpdate.maxSurge: FieldValueInvalid: Invalid value: 1: may not be set when maxUnavailable is non-zero',
    ]);
    expect(
      (
        await refused(
          bad('zero', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } } }),
        )
      ).causes,
    ).toEqual([
      'spec.updateStrategy.rollingUpdate.maxUnavailable: FieldValueRequired: Required value: cannot be 0 when maxSurge is 0',
    ]);
    expect((await refused(bad('kind', { updateStrategy: { type: 'Sometimes' as 'OnDelete' } }))).causes[0]).toMatch(
      /^spec\.updateStrategy: FieldValueNotSupported: Unsupported value: .*supported values: "RollingUpdate", "OnDelete"$/,
    );
    const never = daemonSetOf('never', 'none');
    never.spec.template.spec = {
      ...never.spec.template.spec,
      containers: never.spec.template.spec?.containers ?? [],
      restartPolicy: 'Never',
    };
    expect((await refused(daemonSets(env.api, ns).create(never))).causes).toContain(
      'spec.template.spec.restartPolicy: FieldValueNotSupported: Unsupported value: "Never": supported values: "Always"',
    );
    expect(
      (
        await refused(
          daemonSets(env.api, ns).patch(
            'defaults',
            { spec: { selector: { matchLabels: { app: 'defaults', x: 'y' } } } },
            { type: 'merge' },
          ),
        )
      ).causes,
    ).toContain(
      'spec.selector: FieldValueInvalid: Invalid value: {"matchLabels":{"app":"defaults","x":"y"}}: field is immutable',
    );

    const rev = (name: string, o: Partial<ControllerRevision>): ControllerRevision => ({
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name },
      revision: 1,
      ...o,
    });
    expect(await refused(revisions(env.api, ns).create(rev('nodata', {})))).toEqual({
      code: 422,
      causes: ['data: FieldValueRequired: Required value: data is mandatory'],
    });
    expect((await refused(revisions(env.api, ns).create(rev('neg', { data: {}, revision: -1 })))).causes).toEqual([
      'revision: FieldValueInvalid: Invalid value: -1: must be greater than or equal to 0',
    ]);
    await revisions(env.api, ns).create(rev('fixed', { data: { a: 1 } }));
    expect(
      (await refused(revisions(env.api, ns).patch('fixed', { data: { a: 2 } }, { type: 'merge' }))).causes,
    ).toEqual(['data: FieldValueInvalid: Invalid value: {"a":2}: field is immutable']);
  });
});

describe('daemonset-controller', () => {
  it('runs one pod per eligible node: nodeSelector, taints, the daemon tolerations and node affinity', async () => {
    const ns = await createNamespace(env.api, 'dsplace');
    const pool = uniqueName('pool');
    const plain = await addNode(pool, { labels: { zone: 'a' } });
    const other = await addNode(pool, { labels: { zone: 'b' } });
    const tainted = await addNode(pool, {
      taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }],
    });
    const notReady = await addNode(pool, {
      taints: [{ key: nodeTaintKey('not-ready'), effect: 'NoExecute' }],
    });
    await addNode(uniqueName('elsewhere'));

    const all = await daemonSets(env.api, ns).create(daemonSetOf('all', pool));
    const placed = await onNodes(ns, all, [plain, other, notReady]);
    const [pod] = placed.get(plain) ?? [];
    expect(pod?.metadata.generateName).toBe('all-');
    expect(controllerOf(pod ?? { metadata: {} })).toMatchObject({
      kind: 'DaemonSet',
      name: 'all',
      controller: true,
      blockOwnerDeletion: true,
    });
    expect(pod?.metadata.labels).toMatchObject({ app: 'all', 'pod-template-generation': '1' });
    expect(pod?.metadata.labels?.[REVISION_HASH_LABEL]).toMatch(/^[a-z0-9]+$/);
    expect(pod?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution).toEqual({
      nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [plain] }] }],
    });
    expect(pod?.spec?.tolerations).toEqual([
      { key: nodeTaintKey('not-ready'), operator: 'Exists', effect: 'NoExecute' },
      { key: nodeTaintKey('unreachable'), operator: 'Exists', effect: 'NoExecute' },
      { key: nodeTaintKey('disk-pressure'), operator: 'Exists', effect: 'NoSchedule' },
      { key: nodeTaintKey('memory-pressure'), operator: 'Exists', effect: 'NoSchedule' },
      { key: nodeTaintKey('pid-pressure'), operator: 'Exists', effect: 'NoSchedule' },
      { key: nodeTaintKey('unschedulable'), operator: 'Exists', effect: 'NoSchedule' },
    ]);
    const st = await waitFor('status of all', async () => {
      const d = await daemonSets(env.api, ns).get('all');
      return d.status?.currentNumberScheduled === 3 ? d.status : undefined;
    });
    expect(st).toMatchObject({
      desiredNumberScheduled: 3,
      currentNumberScheduled: 3,
      numberMisscheduled: 0,
      numberReady: 0,
      updatedNumberScheduled: 3,
      numberUnavailable: 3,
      observedGeneration: 1,
    });

    const tolerant = daemonSetOf('tolerant', pool);
    tolerant.spec.template.spec = {
      ...tolerant.spec.template.spec,
      containers: tolerant.spec.template.spec?.containers ?? [],
      nodeSelector: { pool, zone: 'a' },
      tolerations: [{ key: 'dedicated', operator: 'Exists' }],
    };
    const zoneA = await daemonSets(env.api, ns).create(tolerant);
    await onNodes(ns, zoneA, [plain]);
    await daemonSets(env.api, ns).patch(
      'tolerant',
      { spec: { template: { spec: { nodeSelector: { pool, zone: null } } } } },
      { type: 'strategic' },
    );
    await onNodes(ns, zoneA, [plain, other, tainted, notReady]);
  });

  it('follows nodes: added, tainted NoSchedule (pod stays) and NoExecute (pod goes), relabelled, deleted', async () => {
    const ns = await createNamespace(env.api, 'dsnodes');
    const pool = uniqueName('pool');
    const first = await addNode(pool);
    const ds = await daemonSets(env.api, ns).create(daemonSetOf('follow', pool));
    await onNodes(ns, ds, [first]);
    const second = await addNode(pool);
    await onNodes(ns, ds, [first, second]);
    const status = (want: Partial<Record<'desired' | 'current' | 'misscheduled', number>>): Promise<unknown> =>
      waitFor(`follow status ${JSON.stringify(want)}`, async () => {
        const st = (await daemonSets(env.api, ns).get('follow')).status ?? {};
        const have = {
          desired: st.desiredNumberScheduled,
          current: st.currentNumberScheduled,
          misscheduled: st.numberMisscheduled,
        };
        return Object.entries(want).every(([k, v]) => have[k as keyof typeof have] === v) ? have : undefined;
      });
    const taint = (node: string, effect: string): Promise<Node> =>
      nodes(env.api).patch(node, { spec: { taints: [{ key: 'maint', effect }] } }, { type: 'merge' });
    // A NoSchedule taint keeps the pod running (counted misscheduled); a NoExecute one removes it.
    await taint(second, 'NoSchedule');
    await status({ desired: 1, current: 1, misscheduled: 1 });
    expect((await podsByNode(ns, ds)).get(second)).toHaveLength(1);
    await taint(second, 'NoExecute');
    await onNodes(ns, ds, [first]);
    await status({ desired: 1, current: 1, misscheduled: 0 });
    await nodes(env.api).patch(first, { metadata: { labels: { pool: 'gone' } } }, { type: 'merge' });
    await onNodes(ns, ds, []);
    await status({ desired: 0, current: 0 });
    await nodes(env.api).patch(first, { metadata: { labels: { pool } } }, { type: 'merge' });
    await onNodes(ns, ds, [first]);
    await nodes(env.api).delete(first);
    await onNodes(ns, ds, []);
    await nodes(env.api).delete(second);
  });

  it('rolls out a new template within maxUnavailable, keeps ControllerRevisions, prunes past revisionHistoryLimit', async () => {
    const ns = await createNamespace(env.api, 'dsroll');
    const pool = uniqueName('pool');
    const nodeNames = [await addNode(pool), await addNode(pool), await addNode(pool), await addNode(pool)];
    let worst = Infinity;
    let checking = false;
    const watch: PodWatch = await watchPods(env.api, ns, {
      kubelet: true,
      onChange: (w) => {
        if (!checking) return;
        const covered = new Set(w.active(isPodReady).map((p) => targetNodeName(p)));
        worst = Math.min(worst, covered.size);
      },
    });
    try {
      const ds = await daemonSets(env.api, ns).create(
        daemonSetOf('roll', pool, {
          revisionHistoryLimit: 1,
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } },
        }),
      );
      await rolledOut(ns, 'roll', 4);
      checking = true;
      for (const tag of ['2', '3']) {
        await daemonSets(env.api, ns).patch(
          'roll',
          { spec: { template: { spec: { containers: [{ name: 'c', image: `busybox:${tag}` }] } } } },
          { type: 'strategic' },
        );
        await rolledOut(ns, 'roll', 4);
        const placed = await onNodes(ns, ds, nodeNames);
        expect([...placed.values()].flat().map(image)).toEqual(Array(4).fill(`busybox:${tag}`));
      }
      checking = false;
      // Never more than maxUnavailable (2) of the 4 nodes without a ready pod.
      expect(worst).toBeGreaterThanOrEqual(2);
      // Revision 1 was pruned (limit 1): 2 and the current 3 remain.
      const revs = await waitFor('history pruned', async () => {
        const now = (await revisions(env.api, ns).list()).items.filter((r) => controllerOf(r)?.uid === ds.metadata.uid);
        return now.length === 2 ? now : undefined;
      });
      expect(revs.map((r) => r.revision).sort()).toEqual([2, 3]);
      const current = revs.find((r) => r.revision === 3);
      expect(current?.metadata.name).toBe(`roll-${current?.metadata.labels?.[REVISION_HASH_LABEL] ?? ''}`);
      expect(current?.data).toMatchObject({
        spec: { template: { $patch: 'replace', metadata: { labels: { app: 'roll' } } } },
      });
    } finally {
      await watch.stop();
    }
  });

  it('stock kubectl: get ds, rollout status, history, undo and restart', async () => {
    const ns = await createNamespace(env.api, 'dsctl');
    const pool = uniqueName('pool');
    const nodeNames = [await addNode(pool), await addNode(pool)];
    const watch = await watchPods(env.api, ns, { kubelet: true });
    const k = await kubectlIn(env.server.svcconfigPath);
    try {
      const ds = await daemonSets(env.api, ns).create(daemonSetOf('web', pool));
      const status = await k.ok(['-n', ns, 'rollout', 'status', 'ds/web', '--timeout=30s']);
      expect(status.stdout).toContain('daemon set "web" successfully rolled out');
      const table = await k.ok(['-n', ns, 'get', 'ds', '-o', 'wide']);
      const [header, row] = table.stdout.trim().split('\n');
      expect(header?.split(/\s{2,}/)).toEqual([
        'NAME',
        'DESIRED',
        'CURRENT',
        'READY',
        'UP-TO-DATE',
        'AVAILABLE',
        'NODE SELECTOR',
        'AGE',
        'CONTAINERS',
        'IMAGES',
        'SELECTOR',
      ]);
      expect(row).toMatch(
        new RegExp(`^web\\s+2\\s+2\\s+2\\s+2\\s+2\\s+pool=${pool}\\s+\\d+s\\s+c\\s+busybox\\s+app=web$`),
      );

      await k.ok(['-n', ns, 'set', 'image', 'ds/web', 'c=busybox:2']);
      await k.ok(['-n', ns, 'rollout', 'status', 'ds/web', '--timeout=30s']);
      const history = await k.ok(['-n', ns, 'rollout', 'history', 'ds/web']);
      expect(history.stdout).toMatch(/REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
      const rev1 = await k.ok(['-n', ns, 'rollout', 'history', 'ds/web', '--revision=1']);
      expect(rev1.stdout).toMatch(/Image:\s+busybox\n/);
      const crs = await k.ok(['-n', ns, 'get', 'controllerrevisions']);
      expect(crs.stdout).toMatch(/NAME\s+CONTROLLER\s+REVISION\s+AGE\nweb-\S+\s+daemonset\.apps\/web\s+[12]\s+/);

      expect((await k.ok(['-n', ns, 'rollout', 'undo', 'ds/web'])).stdout.trim()).toBe(
        'daemonset.apps/web rolled back',
      );
      await k.ok(['-n', ns, 'rollout', 'status', 'ds/web', '--timeout=30s']);
      const undone = await onNodes(ns, ds, nodeNames);
      expect([...undone.values()].flat().map(image)).toEqual(['busybox', 'busybox']);
      expect((await k.ok(['-n', ns, 'rollout', 'history', 'ds/web'])).stdout).toMatch(
        /REVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>/,
      );

      const before = new Set([...undone.values()].flat().map((p) => p.metadata.uid));
      expect((await k.ok(['-n', ns, 'rollout', 'restart', 'ds/web'])).stdout.trim()).toBe(
        'daemonset.apps/web restarted',
      );
      await k.ok(['-n', ns, 'rollout', 'status', 'ds/web', '--timeout=30s']);
      const restarted = await onNodes(ns, ds, nodeNames);
      for (const p of [...restarted.values()].flat()) expect(before.has(p.metadata.uid)).toBe(false);
      expect((await k.ok(['-n', ns, 'get', 'all'])).stdout).toMatch(/daemonset\.apps\/web\s+2\s+2\s+2\s+2\s+2/);
    } finally {
      await k.stop();
      await watch.stop();
    }
  });
});
