// apps/v1 StatefulSet against a real API server and etcd: the server's defaults and refusals,
// and statefulset-controller (with the garbage collector, which acts on the claims' owner
// references). No scheduler or node agent runs: the tests mark pods Running/Ready through
// `/status` as a node agent would (workload-testing's watchPods).
import {
  statefulSetPodLabel,
  type ControllerRevision,
  type PersistentVolumeClaim,
  type Pod,
  type StatefulSet,
} from '@svc/api';
import { ResourceClient, type RestClient } from '@svc/client';
import { waitFor } from '@svc/testing';
import { withControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';
import { REVISION_HASH_LABEL } from './daemonset-util.js';
import { isPodActive, isPodReady } from './pod-util.js';
import { ordinalOf } from './statefulset-util.js';
import { createNamespace, kubectlIn, pods, refusal, template, watchPods } from './workload-testing.js';

const env = withControllerManager(['--controllers=statefulset,garbagecollector']);

const statefulSets = (api: RestClient, ns: string): ResourceClient<StatefulSet> =>
  new ResourceClient<StatefulSet>(api, R.statefulSets()).namespace(ns);
const claims = (api: RestClient, ns: string): ResourceClient<PersistentVolumeClaim> =>
  new ResourceClient<PersistentVolumeClaim>(api, R.persistentVolumeClaims()).namespace(ns);
const revisions = (api: RestClient, ns: string): ResourceClient<ControllerRevision> =>
  new ResourceClient<ControllerRevision>(api, R.controllerRevisions()).namespace(ns);

const DATA_CLAIM: PersistentVolumeClaim = {
  metadata: { name: 'data' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
};

/** A StatefulSet of `replicas` pods labelled `app: <name>`, with `spec` fields over those. */
function statefulSetOf(name: string, replicas: number, extra: Partial<StatefulSet['spec']> = {}): StatefulSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: template({ app: name }), ...extra },
  };
}

/** Active pods of the set `name` by name, lowest ordinal first. */
async function podsOf(ns: string, name: string): Promise<Pod[]> {
  const list = await pods(env.api, ns).list({ labelSelector: `app=${name}` });
  return list.items.filter(isPodActive).sort((a, b) => ordinalOf(a) - ordinalOf(b));
}

const names = (ps: readonly Pod[]): string[] => ps.map((p) => p.metadata.name ?? '');
const image = (p: Pod): string => p.spec?.containers[0]?.image ?? '';

/** Waits until the set's status shows `n` replicas all ready and updated at its current generation. */
const settled = (ns: string, name: string, n: number): Promise<StatefulSet> =>
  waitFor(
    `${name} settled at ${n}`,
    async () => {
      const set = await statefulSets(env.api, ns).get(name);
      const st = set.status;
      const done =
        st !== undefined &&
        (st.observedGeneration ?? 0) >= (set.metadata.generation ?? 0) &&
        st.replicas === n &&
        (st.readyReplicas ?? 0) === n &&
        (st.updatedReplicas ?? 0) === n &&
        st.currentRevision === st.updateRevision;
      return done ? set : undefined;
    },
    { timeoutMs: 30_000 },
  );

/** The code and causes of a refused write, as `field: reason: message`. */
const refused = (write: Promise<unknown>): Promise<{ code: number; causes: string[] }> =>
  refusal(write, { messages: true });

describe('apps/v1 StatefulSet on the API server', () => {
  it('defaults as Kubernetes 1.32 and refuses what it refuses with 422', async () => {
    const ns = await createNamespace(env.api, 'stsapi');
    const set = await statefulSets(env.api, ns).create(
      statefulSetOf('defaults', 0, { replicas: undefined, volumeClaimTemplates: [structuredClone(DATA_CLAIM)] }),
    );
    expect(set.spec).toMatchObject({
      replicas: 1,
      podManagementPolicy: 'OrderedReady',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
      revisionHistoryLimit: 10,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
    });
    expect(set.spec.minReadySeconds ?? 0).toBe(0);
    expect(set.spec.volumeClaimTemplates?.[0]?.spec?.volumeMode).toBe('Filesystem');
    // maxUnavailable needs the alpha MaxUnavailableStatefulSet gate: dropped.
    const dropped = await statefulSets(env.api, ns).create(
      statefulSetOf('nomax', 0, { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } } }),
    );
    expect(dropped.spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 0 } });

    const bad = (s: StatefulSet): Promise<unknown> => statefulSets(env.api, ns).create(s);
    const noSelector = statefulSetOf('nosel', 1);
    delete noSelector.spec.selector;
    expect(await refused(bad(noSelector))).toEqual({
      code: 422,
      causes: [
        'spec.selector: FieldValueRequired: Required value',
        'spec.template.metadata.labels: FieldValueInvalid: Invalid value: {"app":"nosel"}: `selector` does not match template `labels`',
      ],
    });
    expect(await refused(bad(statefulSetOf('mismatch', 1, { selector: { matchLabels: { app: 'other' } } })))).toEqual({
      code: 422,
      causes: [
        'spec.template.metadata.labels: FieldValueInvalid: Invalid value: {"app":"mismatch"}: `selector` does not match template `labels`',
      ],
    });
    expect(await refused(bad(statefulSetOf('negative', -1)))).toEqual({
      code: 422,
      causes: ['spec.replicas: FieldValueInvalid: Invalid value: -1: must be greater than or equal to 0'],
    });
    expect((await refused(bad(statefulSetOf('empty', 1, { selector: {} })))).causes).toContain(
      'spec.selector: FieldValueInvalid: Invalid value: {}: empty selector is invalid for statefulset',
    );
    expect(
      (await refused(bad(statefulSetOf('policy', 1, { podManagementPolicy: 'Sometimes' as 'Parallel' })))).causes,
    ).toEqual([
      "spec.podManagementPolicy: FieldValueInvalid: Invalid value: \"Sometimes\": must be 'OrderedReady' or 'Parallel'",
    ]);
    expect(
      (
        await refused(
          bad(
            statefulSetOf('retain', 1, {
              persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Keep' as 'Retain', whenScaled: 'Delete' },
            }),
          ),
        )
      ).causes,
    ).toEqual([
      'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: FieldValueNotSupported: Unsupported value: "Keep": supported values: "Delete", "Retain"',
    ]);
    expect(
      (
        await refused(
          bad(
            statefulSetOf('partition', 1, {
              updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: -1 } },
            }),
          ),
        )
      ).causes,
    ).toEqual([
      'spec.updateStrategy.rollingUpdate.partition: FieldValueInvalid: Invalid value: -1: must be greater than or equal to 0',
    ]);

    const forbidden = {
      code: 422,
      causes: [
        "spec: FieldValueForbidden: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ],
    };
    const api = statefulSets(env.api, ns);
    expect(await refused(api.patch('defaults', { spec: { serviceName: 'other' } }, { type: 'merge' }))).toEqual(
      forbidden,
    );
    expect(
      await refused(
        api.patch(
          'defaults',
          { spec: { volumeClaimTemplates: [{ ...DATA_CLAIM, metadata: { name: 'logs' } }] } },
          { type: 'merge' },
        ),
      ),
    ).toEqual(forbidden);
    expect(
      await refused(
        api.patch('defaults', { spec: { selector: { matchLabels: { app: 'defaults', x: 'y' } } } }, { type: 'merge' }),
      ),
    ).toEqual({
      code: 422,
      causes: [
        'spec.template.metadata.labels: FieldValueInvalid: Invalid value: {"app":"defaults"}: `selector` does not match template `labels`',
        forbidden.causes[0],
      ],
    });
    expect((await refused(api.patch('defaults', { spec: { replicas: -2 } }, { type: 'merge' }))).causes).toEqual([
      'spec.replicas: FieldValueInvalid: Invalid value: -2: must be greater than or equal to 0',
    ]);
    // The mutable fields change freely.
    const changed = await api.patch(
      'defaults',
      {
        spec: {
          replicas: 0,
          minReadySeconds: 3,
          ordinals: { start: 2 },
          updateStrategy: { type: 'OnDelete', rollingUpdate: null },
          persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
        },
      },
      { type: 'merge' },
    );
    expect(changed.spec.updateStrategy).toEqual({ type: 'OnDelete' });
    expect(changed.metadata.generation).toBe(2);
    // status counts through /status only, with Kubernetes' rules.
    // A merge patch, not an update: the controller writes this status too (an update could meet a 409).
    expect(
      (
        await refused(
          api.patch(
            'defaults',
            { status: { replicas: 1, readyReplicas: 2 } },
            { type: 'merge', subresource: 'status' },
          ),
        )
      ).causes,
    ).toEqual(['status.readyReplicas: FieldValueInvalid: Invalid value: 2: cannot be greater than status.replicas']);
  });
});

describe('statefulset-controller', () => {
  it('OrderedReady: stable names, identity, claims before pods, one at a time up and down', async () => {
    const ns = await createNamespace(env.api, 'stsorder');
    /** For every state the server went through: a pod exists only once all lower ordinals are Running and Ready. */
    const violations: string[] = [];
    const deleted: string[] = [];
    const watch = await watchPods(env.api, ns, {
      kubelet: true,
      onChange: (w) => {
        const live = w.active().sort((a, b) => ordinalOf(a) - ordinalOf(b));
        for (const p of live) {
          const below = live.filter((q) => ordinalOf(q) < ordinalOf(p));
          if (below.length !== ordinalOf(p) || !below.every((q) => isPodReady(q)))
            violations.push(`${p.metadata.name ?? ''} with ${names(below).join(',')}`);
        }
      },
    });
    watch.informer.addEventHandler({ onDelete: (p) => deleted.push(p.metadata.name ?? '') });
    try {
      await statefulSets(env.api, ns).create(
        statefulSetOf('web', 3, { serviceName: 'nginx', volumeClaimTemplates: [structuredClone(DATA_CLAIM)] }),
      );
      const set = await settled(ns, 'web', 3);
      expect(violations).toEqual([]);
      const made = await podsOf(ns, 'web');
      expect(names(made)).toEqual(['web-0', 'web-1', 'web-2']);
      const web1 = made[1] as Pod;
      expect(web1.metadata.labels).toMatchObject({
        app: 'web',
        [statefulSetPodLabel('pod-name')]: 'web-1',
        [statefulSetPodLabel('pod-index')]: '1',
        [REVISION_HASH_LABEL]: set.status?.updateRevision,
      });
      expect(web1.spec).toMatchObject({ hostname: 'web-1', subdomain: 'nginx' });
      expect(web1.spec?.volumes).toContainEqual({ name: 'data', persistentVolumeClaim: { claimName: 'data-web-1' } });
      const pvcs = (await claims(env.api, ns).list()).items;
      expect(pvcs.map((c) => c.metadata.name).sort()).toEqual(['data-web-0', 'data-web-1', 'data-web-2']);
      // Retain/Retain: the claims have no owners.
      expect(pvcs.every((c) => (c.metadata.ownerReferences ?? []).length === 0)).toBe(true);
      expect(set.status).toMatchObject({ replicas: 3, readyReplicas: 3, availableReplicas: 3, currentReplicas: 3 });
      expect(set.status?.currentRevision).toMatch(/^web-[a-z0-9]+$/);

      await statefulSets(env.api, ns).patch('web', { spec: { replicas: 1 } }, { type: 'merge' });
      await settled(ns, 'web', 1);
      expect(deleted).toEqual(['web-2', 'web-1']);
      expect(names(await podsOf(ns, 'web'))).toEqual(['web-0']);
      // whenScaled Retain: the claims of the pods scaled away stay.
      expect((await claims(env.api, ns).list()).items).toHaveLength(3);
    } finally {
      await watch.stop();
    }
  });

  it('Parallel and ordinals.start: every pod at once, none Ready; a failed pod is made again', async () => {
    const ns = await createNamespace(env.api, 'stspar');
    const watch = await watchPods(env.api, ns);
    try {
      await statefulSets(env.api, ns).create(
        statefulSetOf('par', 3, { podManagementPolicy: 'Parallel', ordinals: { start: 5 } }),
      );
      // Nothing marks them Ready, yet all three exist (OrderedReady would stop at the first).
      await waitFor('three parallel pods', () =>
        names(watch.active()).sort().join() === 'par-5,par-6,par-7' ? true : undefined,
      );
      const first = watch.active().find((p) => p.metadata.name === 'par-5') as Pod;
      await pods(env.api, ns).patch('par-5', { status: { phase: 'Failed' } }, { type: 'merge', subresource: 'status' });
      const again = await waitFor('par-5 made again', () =>
        watch.active().find((p) => p.metadata.name === 'par-5' && p.metadata.uid !== first.metadata.uid),
      );
      expect(again.metadata.labels?.[statefulSetPodLabel('pod-index')]).toBe('5');
    } finally {
      await watch.stop();
    }
  });

  it('rolling update from the highest ordinal, holding at the partition, then OnDelete', async () => {
    const ns = await createNamespace(env.api, 'stsroll');
    const deleted: string[] = [];
    const watch = await watchPods(env.api, ns, { kubelet: true });
    watch.informer.addEventHandler({ onDelete: (p) => deleted.push(p.metadata.name ?? '') });
    try {
      const api = statefulSets(env.api, ns);
      await api.create(statefulSetOf('roll', 3));
      const before = await settled(ns, 'roll', 3);
      await api.patch(
        'roll',
        {
          spec: {
            updateStrategy: { rollingUpdate: { partition: 1 } },
            template: { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } },
          },
        },
        { type: 'strategic' },
      );
      const partial = await waitFor(
        'two pods updated above the partition',
        async () => {
          const set = await api.get('roll');
          const ps = await podsOf(ns, 'roll');
          const ok =
            set.status?.updatedReplicas === 2 &&
            (set.status.readyReplicas ?? 0) === 3 &&
            ps.map(image).join() === 'busybox,busybox:2,busybox:2';
          return ok ? set : undefined;
        },
        { timeoutMs: 30_000 },
      );
      expect(deleted).toEqual(['roll-2', 'roll-1']);
      expect(partial.status?.currentRevision).toBe(before.status?.currentRevision);
      expect(partial.status?.updateRevision).not.toBe(before.status?.currentRevision);

      await api.patch('roll', { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } }, { type: 'strategic' });
      const done = await settled(ns, 'roll', 3);
      expect(deleted).toEqual(['roll-2', 'roll-1', 'roll-0']);
      expect(done.status?.currentRevision).toBe(partial.status?.updateRevision);
      expect((await podsOf(ns, 'roll')).map(image)).toEqual(['busybox:2', 'busybox:2', 'busybox:2']);
      const revs = (await revisions(env.api, ns).list()).items.map((r) => r.revision).sort();
      expect(revs).toEqual([1, 2]);

      // OnDelete: a new template reaches a pod only when it is deleted.
      await api.patch(
        'roll',
        {
          spec: {
            updateStrategy: { type: 'OnDelete', rollingUpdate: null },
            template: { spec: { containers: [{ name: 'c', image: 'busybox:3' }] } },
          },
        },
        { type: 'merge' },
      );
      await waitFor('the OnDelete update observed', async () => {
        const set = await api.get('roll');
        return (set.status?.observedGeneration ?? 0) >= (set.metadata.generation ?? 0) &&
          set.status?.updateRevision !== done.status?.updateRevision
          ? true
          : undefined;
      });
      expect((await podsOf(ns, 'roll')).map(image)).toEqual(['busybox:2', 'busybox:2', 'busybox:2']);
      await pods(env.api, ns).delete('roll-1');
      await waitFor('roll-1 made from the new template', async () =>
        (await podsOf(ns, 'roll')).map(image).join() === 'busybox:2,busybox:3,busybox:2' ? true : undefined,
      );
    } finally {
      await watch.stop();
    }
  });

  it('persistentVolumeClaimRetentionPolicy Delete: claims go with scaled-away pods and with the set', async () => {
    const ns = await createNamespace(env.api, 'stspvc');
    const watch = await watchPods(env.api, ns, { kubelet: true });
    try {
      const api = statefulSets(env.api, ns);
      const set = await api.create(
        statefulSetOf('db', 2, {
          volumeClaimTemplates: [structuredClone(DATA_CLAIM)],
          persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
        }),
      );
      await settled(ns, 'db', 2);
      const claimNames = async (): Promise<string> =>
        (await claims(env.api, ns).list()).items
          .filter((c) => !c.metadata.deletionTimestamp)
          .map((c) => c.metadata.name ?? '')
          .sort()
          .join();
      expect(await claimNames()).toBe('data-db-0,data-db-1');
      const owned = await claims(env.api, ns).get('data-db-0');
      expect(owned.metadata.ownerReferences).toEqual([
        { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: set.metadata.uid },
      ]);

      await api.patch('db', { spec: { replicas: 1 } }, { type: 'merge' });
      await settled(ns, 'db', 1);
      await waitFor(
        'the scaled-away claim deleted',
        async () => ((await claimNames()) === 'data-db-0' ? true : undefined),
        {
          timeoutMs: 30_000,
        },
      );

      await api.delete('db');
      await waitFor("the set's claim deleted with it", async () => ((await claimNames()) === '' ? true : undefined), {
        timeoutMs: 30_000,
      });
    } finally {
      await watch.stop();
    }
  });

  it('stock kubectl: get sts -o wide, scale, rollout status, history, undo and restart', async () => {
    const ns = await createNamespace(env.api, 'stsctl');
    const watch = await watchPods(env.api, ns, { kubelet: true });
    const k = await kubectlIn(env.server.svcconfigPath);
    try {
      await statefulSets(env.api, ns).create(statefulSetOf('web', 2));
      const status = await k.ok(['-n', ns, 'rollout', 'status', 'sts/web', '--timeout=30s']);
      expect(status.stdout).toContain('partitioned roll out complete: 2 new pods have been updated...');
      const table = await k.ok(['-n', ns, 'get', 'sts', '-o', 'wide']);
      const [header, row] = table.stdout.trim().split('\n');
      expect(header?.split(/\s{2,}/)).toEqual(['NAME', 'READY', 'AGE', 'CONTAINERS', 'IMAGES']);
      expect(row).toMatch(/^web\s+2\/2\s+\d+s\s+c\s+busybox$/);

      expect((await k.ok(['-n', ns, 'scale', 'statefulset', 'web', '--replicas=3'])).stdout.trim()).toBe(
        'statefulset.apps/web scaled',
      );
      await k.ok(['-n', ns, 'rollout', 'status', 'sts/web', '--timeout=30s']);
      await settled(ns, 'web', 3);
      expect((await k.ok(['-n', ns, 'get', 'sts', 'web'])).stdout).toMatch(/web\s+3\/3\s+/);

      await k.ok(['-n', ns, 'set', 'image', 'sts/web', 'c=busybox:2']);
      await k.ok(['-n', ns, 'rollout', 'status', 'sts/web', '--timeout=30s']);
      await settled(ns, 'web', 3);
      const history = await k.ok(['-n', ns, 'rollout', 'history', 'sts/web']);
      expect(history.stdout).toMatch(/REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
      const rev1 = await k.ok(['-n', ns, 'rollout', 'history', 'sts/web', '--revision=1']);
      expect(rev1.stdout).toMatch(/Image:\s+busybox\n/);
      const crs = await k.ok(['-n', ns, 'get', 'controllerrevisions']);
      expect(crs.stdout).toMatch(/web-\S+\s+statefulset\.apps\/web\s+[12]\s+/);

      expect((await k.ok(['-n', ns, 'rollout', 'undo', 'sts/web'])).stdout.trim()).toBe(
        'statefulset.apps/web rolled back',
      );
      await k.ok(['-n', ns, 'rollout', 'status', 'sts/web', '--timeout=30s']);
      await settled(ns, 'web', 3);
      expect((await podsOf(ns, 'web')).map(image)).toEqual(['busybox', 'busybox', 'busybox']);
      expect((await k.ok(['-n', ns, 'rollout', 'history', 'sts/web'])).stdout).toMatch(
        /REVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>/,
      );

      const before = new Set((await podsOf(ns, 'web')).map((p) => p.metadata.uid));
      expect((await k.ok(['-n', ns, 'rollout', 'restart', 'sts/web'])).stdout.trim()).toBe(
        'statefulset.apps/web restarted',
      );
      await k.ok(['-n', ns, 'rollout', 'status', 'sts/web', '--timeout=30s']);
      await settled(ns, 'web', 3);
      const restarted = await podsOf(ns, 'web');
      expect(names(restarted)).toEqual(['web-0', 'web-1', 'web-2']);
      for (const p of restarted) expect(before.has(p.metadata.uid)).toBe(false);
      expect((await k.ok(['-n', ns, 'get', 'all'])).stdout).toMatch(/statefulset\.apps\/web\s+3\/3/);
      const described = (await k.ok(['-n', ns, 'describe', 'sts', 'web'])).stdout;
      expect(described).toMatch(/Replicas:\s+3 desired \| 3 total/);
      expect(described).toMatch(/Update Strategy:\s+RollingUpdate\n\s+Partition:\s+0/);
      expect(described).toMatch(/Pods Status:\s+3 Running \/ 0 Waiting \/ 0 Succeeded \/ 0 Failed/);
      expect(described).toContain('create Pod web-2 in StatefulSet web successful');
    } finally {
      await k.stop();
      await watch.stop();
    }
  });
});
