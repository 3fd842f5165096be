// core/v1 ReplicationController against a real API server and etcd: the server's defaults and
// refusals, the status and scale subresources, Protobuf field numbers, and
// replicationcontroller-controller (the ReplicaSet controller's logic on RCs) keeping pods,
// with stock kubectl `get rc` and `scale rc`. No node agent runs: a pod watch marks pods
// Running/Ready through `/status` as one would.
import { builtinCatalog, type ObjectSchema, type Pod, type ReplicationController } from '@svc/api';
import { ResourceClient, type RestClient } from '@svc/client';
import { decodeProtobufObject, encodeMessage, encodeProtobufObject } from '@svc/machinery';
import { waitFor } from '@svc/testing';
import { withControllerManager } from '../cm-testing.js';
import { controllerOf } from './controller-ref.js';
import { isPodActive } from './pod-util.js';
import { replicationControllers } from './replication-controller.js';
import { createNamespace, kubectlIn, pods, refusal, template, watchPods } from './workload-testing.js';

const env = withControllerManager(['--controllers=replicationcontroller']);

const rcs = (api: RestClient, ns: string): ResourceClient<ReplicationController> =>
  new ResourceClient<ReplicationController>(api, replicationControllers()).namespace(ns);

function rcOf(name: string, extra: Partial<ReplicationController['spec']> = {}): ReplicationController {
  return {
    apiVersion: 'v1',
    kind: 'ReplicationController',
    metadata: { name },
    spec: { selector: { app: name }, template: template({ app: name }), ...extra },
  };
}

const refused = (write: Promise<unknown>): Promise<{ code: number; causes: string[] }> =>
  refusal(write, { messages: true });

/** Active pods in `ns` controlled by `rc`. */
async function ownedPods(ns: string, rc: ReplicationController): Promise<Pod[]> {
  const list = await pods(env.api, ns).list();
  return list.items.filter((p) => isPodActive(p) && controllerOf(p)?.uid === rc.metadata.uid);
}

const waitForOwned = (ns: string, rc: ReplicationController, n: number): Promise<Pod[]> =>
  waitFor(
    `${rc.metadata.name ?? ''} with ${n} pods`,
    async () => {
      const owned = await ownedPods(ns, rc);
      return owned.length === n ? owned : undefined;
    },
    { timeoutMs: 30_000 },
  );

/** Waits until the stored status reports `want` at the current generation. */
const waitForStatus = (ns: string, name: string, want: Record<string, number>): Promise<ReplicationController> =>
  waitFor(
    `${name} status ${JSON.stringify(want)}`,
    async () => {
      const rc = await rcs(env.api, ns).get(name);
      const st = (rc.status ?? {}) as Record<string, number | undefined>;
      const ok =
        rc.status?.observedGeneration === rc.metadata.generation &&
        Object.entries(want).every(([k, v]) => (st[k] ?? 0) === v);
      return ok ? rc : undefined;
    },
    { timeoutMs: 30_000 },
  );

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('core/v1 ReplicationController on the API server', () => {
  it('defaults as Kubernetes 1.32: one replica, selector and labels from the template', async () => {
    const ns = await createNamespace(env.api, 'rcapi');
    const rc = await rcs(env.api, ns).create({
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name: 'plain' },
      spec: { replicas: 0, template: template({ app: 'plain', tier: 'x' }) },
    });
    expect(rc.spec.selector).toEqual({ app: 'plain', tier: 'x' });
    expect(rc.metadata.labels).toEqual({ app: 'plain', tier: 'x' });
    expect(rc.spec.replicas).toBe(0);
    expect(rc.spec.template?.spec?.restartPolicy).toBe('Always');
    expect(rc.metadata.generation).toBe(1);
    const one = await rcs(env.api, ns).create({
      ...rcOf('one'),
      metadata: { name: 'one', labels: { own: 'label' } },
    });
    expect(one.spec.replicas).toBe(1);
    expect(one.metadata.labels).toEqual({ own: 'label' });
    // Unlike apps/v1, the selector may change.
    const moved = await rcs(env.api, ns).patch('plain', { spec: { selector: { tier: null } } }, { type: 'merge' });
    expect(moved.spec.selector).toEqual({ app: 'plain' });
    expect(moved.metadata.generation).toBe(2);
  });

  it('refuses what Kubernetes 1.32 refuses, with its 422 causes and paths', async () => {
    const ns = await createNamespace(env.api, 'rcbad');
    const bad = (name: string, spec: Partial<ReplicationController['spec']>): Promise<unknown> =>
      rcs(env.api, ns).create(rcOf(name, spec));
    expect(await refused(bad('mismatch', { selector: { app: 'other' } }))).toEqual({
      code: 422,
      causes: [
        'spec.template.metadata.labels: FieldValueInvalid: Invalid value: {"app":"mismatch"}: `selector` does not match template `labels`',
      ],
    });
    expect(
      await refused(
        rcs(env.api, ns).create({
          apiVersion: 'v1',
          kind: 'ReplicationController',
          metadata: { name: 'bare' },
          spec: {},
        }),
      ),
    ).toEqual({
      code: 422,
      causes: [
        'spec.selector: FieldValueRequired: Required value',
        'spec.template: FieldValueRequired: Required value',
      ],
    });
    expect((await refused(bad('neg', { replicas: -1, minReadySeconds: -2 }))).causes).toEqual([
      'spec.minReadySeconds: FieldValueInvalid: Invalid value: -2: must be greater than or equal to 0',
      'spec.replicas: FieldValueInvalid: Invalid value: -1: must be greater than or equal to 0',
    ]);
    const never = rcOf('never');
    never.spec.template = {
      ...template({ app: 'never' }),
      spec: { containers: [{ name: 'c', image: 'busybox' }], restartPolicy: 'Never', activeDeadlineSeconds: 5 },
    };
    expect((await refused(rcs(env.api, ns).create(never))).causes).toEqual([
      'spec.template.spec.restartPolicy: FieldValueNotSupported: Unsupported value: "Never": supported values: "Always"',
      'spec.template.spec.activeDeadlineSeconds: FieldValueForbidden: Forbidden: activeDeadlineSeconds in ReplicationController is not Supported',
    ]);
    await rcs(env.api, ns).create(rcOf('ok', { replicas: 0 }));
    const withStatus = (status: ReplicationController['status']): Promise<unknown> =>
      rcs(env.api, ns).patch('ok', { status }, { type: 'merge', subresource: 'status' });
    expect(await refused(withStatus({ replicas: 1, readyReplicas: 2, availableReplicas: 3 }))).toEqual({
      code: 422,
      causes: [
        'status.readyReplicas: FieldValueInvalid: Invalid value: 2: cannot be greater than status.replicas',
        'status.availableReplicas: FieldValueInvalid: Invalid value: 3: cannot be greater than status.replicas',
        'status.availableReplicas: FieldValueInvalid: Invalid value: 3: cannot be greater than readyReplicas',
      ],
    });
  });

  it("serves scale (autoscaling/v1 Scale, the selector as text) and Protobuf at Kubernetes' numbers", async () => {
    const ns = await createNamespace(env.api, 'rcscale');
    await rcs(env.api, ns).create(
      rcOf('s', { replicas: 0, selector: { app: 's', b: 'x' }, template: template({ app: 's', b: 'x' }) }),
    );
    const scale = (await rcs(env.api, ns).get('s', { subresource: 'scale' })) as unknown as {
      apiVersion: string;
      kind: string;
      spec: { replicas?: number };
      status: { replicas: number; selector?: string };
    };
    expect(scale.apiVersion).toBe('autoscaling/v1');
    expect(scale.kind).toBe('Scale');
    expect(scale.status).toEqual({ replicas: 0, selector: 'app=s,b=x' });
    const negative = { ...scale, spec: { replicas: -1 } } as unknown as ReplicationController;
    expect(await refused(rcs(env.api, ns).update(negative, { subresource: 'scale' }))).toEqual({
      code: 422,
      causes: ['spec.replicas: FieldValueInvalid: Invalid value: -1: must be greater than or equal to 0'],
    });

    const schema = builtinCatalog().lookup('', 'v1', 'replicationcontrollers')?.schema as ObjectSchema;
    // spec 2 { replicas 1, selector 2 (map entry key 1, value 2), minReadySeconds 4 }.
    const spec = hex(encodeMessage({ spec: { replicas: 2, minReadySeconds: 5, selector: { a: 'b' } } }, schema));
    expect(spec.startsWith('12')).toBe(true);
    for (const part of ['0802', '12060a0161120162', '2005']) expect(spec).toContain(part);
    // status 3 { replicas 1, fullyLabeledReplicas 2, observedGeneration 3, readyReplicas 4, availableReplicas 5 }.
    const status = hex(
      encodeMessage(
        {
          status: {
            replicas: 1,
            fullyLabeledReplicas: 2,
            observedGeneration: 3,
            readyReplicas: 4,
            availableReplicas: 5,
          },
        },
        schema,
      ),
    );
    for (const part of ['0801', '1002', '1803', '2004', '2805']) expect(status).toContain(part);
    const obj = {
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name: 'p', namespace: ns },
      spec: { replicas: 2, minReadySeconds: 1, selector: { app: 'p' }, template: template({ app: 'p' }) },
      status: {
        replicas: 2,
        readyReplicas: 1,
        conditions: [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'm' }],
      },
    };
    const bytes = encodeProtobufObject(obj, schema, { apiVersion: 'v1', kind: 'ReplicationController' });
    expect(decodeProtobufObject(bytes, schema)).toEqual(obj);
  });
});

describe('replicationcontroller-controller', () => {
  it('keeps spec.replicas pods controlled by v1/ReplicationController and reports status', async () => {
    const ns = await createNamespace(env.api, 'rcctl');
    const watch = await watchPods(env.api, ns, { kubelet: true });
    try {
      // An orphan that matches is adopted rather than a new pod made for it.
      await pods(env.api, ns).create({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'orphan', labels: { app: 'web', extra: 'y' } },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      });
      await waitFor(
        'orphan ready',
        async () =>
          watch.active((p) => p.metadata.name === 'orphan' && p.status?.phase === 'Running').length === 1 || undefined,
      );
      const rc = await rcs(env.api, ns).create(
        rcOf('web', { replicas: 3, selector: { app: 'web' }, template: template({ app: 'web', tier: 'fe' }) }),
      );
      const owned = await waitForOwned(ns, rc, 3);
      expect(owned.map((p) => p.metadata.name)).toContain('orphan');
      for (const p of owned) {
        expect(controllerOf(p)).toEqual({
          apiVersion: 'v1',
          kind: 'ReplicationController',
          name: 'web',
          uid: rc.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        });
        if (p.metadata.name !== 'orphan') expect(p.metadata.name).toMatch(/^web-[a-z0-9]{5}$/);
      }
      // The orphan lacks the template's tier label: two of three are fully labelled.
      await waitForStatus(ns, 'web', { replicas: 3, fullyLabeledReplicas: 2, readyReplicas: 3, availableReplicas: 3 });

      // A pod deleted is replaced; scaled down, the surplus goes.
      await pods(env.api, ns).delete(owned.find((p) => p.metadata.name !== 'orphan')?.metadata.name ?? '');
      await waitForStatus(ns, 'web', { replicas: 3, readyReplicas: 3 });
      await rcs(env.api, ns).patch('web', { spec: { replicas: 1 } }, { type: 'merge' });
      await waitForOwned(ns, rc, 1);
      await waitForStatus(ns, 'web', { replicas: 1, readyReplicas: 1, availableReplicas: 1 });

      // A pod relabelled out of the selector is released and replaced.
      const [last] = await ownedPods(ns, rc);
      await pods(env.api, ns).patch(
        last?.metadata.name ?? '',
        { metadata: { labels: { app: 'gone' } } },
        { type: 'merge' },
      );
      const released = await waitFor('released', async () => {
        const p = await pods(env.api, ns).get(last?.metadata.name ?? '');
        return controllerOf(p) ? undefined : p;
      });
      expect(released.metadata.ownerReferences ?? []).toEqual([]);
      await waitForOwned(ns, rc, 1);
    } finally {
      await watch.stop();
    }
  });

  it('stock kubectl: get rc (-o wide, get all) and scale rc', async () => {
    const ns = await createNamespace(env.api, 'rckubectl');
    const watch = await watchPods(env.api, ns, { kubelet: true });
    const k = await kubectlIn(env.server.svcconfigPath);
    try {
      const rc = await rcs(env.api, ns).create(rcOf('front', { replicas: 2 }));
      await waitForStatus(ns, 'front', { replicas: 2, readyReplicas: 2 });
      const table = await k.ok(['-n', ns, 'get', 'rc', '-o', 'wide']);
      const [header, row] = table.stdout.trim().split('\n');
      expect(header?.split(/\s{2,}/)).toEqual([
        'NAME',
        'DESIRED',
        'CURRENT',
        'READY',
        'AGE',
        'CONTAINERS',
        'IMAGES',
        'SELECTOR',
      ]);
      expect(row).toMatch(/^front\s+2\s+2\s+2\s+\d+s\s+c\s+busybox\s+app=front$/);
      expect((await k.ok(['-n', ns, 'get', 'all'])).stdout).toMatch(/replicationcontroller\/front\s+2\s+2\s+2\s+\d+s/);

      expect((await k.ok(['-n', ns, 'scale', 'rc', 'front', '--replicas=4'])).stdout.trim()).toBe(
        'replicationcontroller/front scaled',
      );
      await waitForOwned(ns, rc, 4);
      await waitForStatus(ns, 'front', { replicas: 4, readyReplicas: 4 });
      expect((await k.ok(['-n', ns, 'get', 'rc', 'front'])).stdout).toMatch(/front\s+4\s+4\s+4\s+/);
      const described = (await k.ok(['-n', ns, 'describe', 'rc', 'front'])).stdout;
      expect(described).toMatch(/^Selector:\s+app=front$/m);
      expect(described).toMatch(/^Replicas:\s+4 current \/ 4 desired$/m);
      expect(described).toMatch(/^Pods Status:\s+4 Running \/ 0 Waiting \/ 0 Succeeded \/ 0 Failed$/m);
      const refusedScale = await k.run(['-n', ns, 'scale', 'rc', 'front', '--replicas=1', '--current-replicas=3']);
      expect(refusedScale.code).not.toBe(0);
      expect(refusedScale.stderr).toContain('Expected replicas to be 3, was 4');
      await k.ok(['-n', ns, 'scale', 'rc/front', '--replicas=0']);
      await waitForOwned(ns, rc, 0);
      await waitForStatus(ns, 'front', { replicas: 0 });
    } finally {
      await k.stop();
      await watch.stop();
    }
  });
});
