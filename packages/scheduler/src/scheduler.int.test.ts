// The scheduler in this process against a real API server and etcd: nodes are plain objects
// (allocatable resources, a Ready condition), pods are created without nodeName.
import { createLogger } from '@svc/component-base';
import { kubectl, uniqueName, waitFor } from '@svc/testing';
import {
  boundNode,
  cacheSizes,
  eventsFor,
  nodeObject,
  podObject,
  startTestScheduler,
  unschedulableCondition,
  withScheduler,
  type NodeSpec,
  type PodSpecInput,
} from './scheduler-testing.js';

const mainLogs: string[] = [];
const logs: string[] = [];
const env = withScheduler([], { logger: createLogger({ write: (l) => mainLogs.push(l) }) });
const created: string[] = [];

async function node(spec: NodeSpec = {}): Promise<string> {
  const name = uniqueName('node');
  await env.nodes.create(nodeObject(name, { ...spec, labels: { 'svc.io/hostname': name, ...spec.labels } }));
  created.push(name);
  return name;
}

async function pod(spec: PodSpecInput = {}, prefix = 'pod'): Promise<string> {
  const name = uniqueName(prefix);
  await env.pods.create(podObject(name, spec));
  return name;
}

/** Waits until the scheduler knows `nodes`: one pinned pod (tolerating everything) bound to each, so they stay equal. */
async function seen(...nodes: string[]): Promise<void> {
  const probes = await Promise.all(
    nodes.map((n) => pod({ nodeSelector: { 'svc.io/hostname': n }, tolerations: [{ operator: 'Exists' }] }, 'probe')),
  );
  for (const [i, p] of probes.entries()) expect(await boundNode(env.pods, p)).toBe(nodes[i]);
}

/** Each test starts from a cluster without nodes or pods, and a scheduler that has seen them go. */
afterEach(async () => {
  for (const p of (await env.pods.list()).items)
    await env.pods.delete(p.metadata.name ?? '', { gracePeriodSeconds: 0 }).catch(() => undefined);
  for (const n of created.splice(0)) await env.nodes.delete(n).catch(() => undefined);
  await waitFor(
    'the scheduler to forget the deleted nodes and pods',
    async () => {
      const s = await cacheSizes(env.scheduler);
      return s.nodes === 0 && s.pods === 0 && s.assumed_pods === 0;
    },
    { timeoutMs: 10_000, intervalMs: 20 },
  );
});

const countBy = (xs: string[]): Record<string, number> =>
  xs.reduce<Record<string, number>>((m, x) => ({ ...m, [x]: (m[x] ?? 0) + 1 }), {});

describe('binding', () => {
  it('binds a pending pod to a fitting node: PodScheduled=True and a Scheduled event from default-scheduler', async () => {
    const n = await node();
    const started = Date.now();
    const p = await pod({ cpu: '100m', memory: '64Mi' });
    expect(await boundNode(env.pods, p)).toBe(n);
    const latency = Date.now() - started;
    const got = await env.pods.get(p);
    expect(got.status?.conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'PodScheduled', status: 'True' })]),
    );
    const events = await waitFor('the Scheduled event', async () => {
      const e = await eventsFor(env.api, env.namespace, p);
      return e.some((x) => x.reason === 'Scheduled') ? e : undefined;
    });
    expect(events.find((x) => x.reason === 'Scheduled')).toMatchObject({
      type: 'Normal',
      message: `Successfully assigned ${env.namespace}/${p} to ${n}`,
      reportingComponent: 'default-scheduler',
      source: { component: 'default-scheduler' },
      involvedObject: { kind: 'Pod', name: p, namespace: env.namespace, uid: got.metadata.uid },
    });
    console.log(`scheduler: pod created → bound in ${latency} ms`);
  });

  it('ignores pods of another scheduler and pods that name their node', async () => {
    const n = await node();
    const other = await pod({ schedulerName: 'other-scheduler' });
    const mine = await pod();
    expect(await boundNode(env.pods, mine)).toBe(n);
    await new Promise((r) => setTimeout(r, 300));
    const o = await env.pods.get(other);
    expect(o.spec?.nodeName).toBeUndefined();
    expect(o.status?.conditions ?? []).toEqual([]);
    expect(await eventsFor(env.api, env.namespace, other)).toEqual([]);
  });

  it('leaves pods with scheduling gates alone', async () => {
    await node();
    const gated = uniqueName('gated');
    const body = podObject(gated);
    (body.spec ?? {}).schedulingGates = [{ name: 'example.com/wait' }];
    await env.pods.create(body);
    const mine = await pod();
    await boundNode(env.pods, mine);
    await new Promise((r) => setTimeout(r, 300));
    expect((await env.pods.get(gated)).spec?.nodeName).toBeUndefined();
    expect(await eventsFor(env.api, env.namespace, gated)).toEqual([]);
  });

  it('throughput: 200 pods over 10 nodes, spread evenly', async () => {
    const nodes = await Promise.all(Array.from({ length: 10 }, () => node({ cpu: '8', memory: '16Gi' })));
    await seen(...nodes);
    const names = Array.from({ length: 200 }, () => uniqueName('load'));
    const started = Date.now();
    for (let i = 0; i < names.length; i += 20)
      await Promise.all(
        names.slice(i, i + 20).map((n) => env.pods.create(podObject(n, { cpu: '100m', memory: '128Mi' }))),
      );
    const createdMs = Date.now() - started;
    const placed = await waitFor(
      '200 pods bound',
      async () => {
        const list = (await env.pods.list()).items.filter((p) => names.includes(p.metadata.name ?? ''));
        return list.every((p) => p.spec?.nodeName) && list.length === 200
          ? list.map((p) => p.spec?.nodeName ?? '')
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    const ms = Date.now() - started;
    expect(Object.keys(countBy(placed)).sort()).toEqual([...nodes].sort());
    for (const n of Object.values(countBy(placed))) expect(n).toBe(20);
    console.log(
      `scheduler: 200 pods over 10 nodes bound ${ms} ms after the first create (creates took ${createdMs} ms): ${Math.round(200_000 / ms)} pods/s end to end`,
    );
  });
});

describe('filters', () => {
  it('nodeSelector: only nodes with every label', async () => {
    const ssd = await node({ labels: { disk: 'ssd' } });
    await node({ labels: { disk: 'hdd' } });
    const p = await pod({ nodeSelector: { disk: 'ssd' } });
    expect(await boundNode(env.pods, p)).toBe(ssd);
    const none = await pod({ nodeSelector: { disk: 'nvme' } });
    const message =
      "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
    expect(await unschedulableCondition(env.pods, none, message)).toEqual(
      expect.objectContaining({ reason: 'Unschedulable', message }),
    );
  });

  it('required node affinity: In, NotIn, Exists, DoesNotExist, Gt, Lt, matchFields, terms ORed', async () => {
    const n1 = await node({ labels: { zone: 'a', gen: '3' } });
    const n2 = await node({ labels: { zone: 'b', gen: '5', gpu: 'yes' } });
    const n3 = await node({ labels: { zone: 'c' } });
    const req = (...terms: object[]) => ({
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } },
    });
    const cases: Array<[object, string[]]> = [
      [req({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] }), [n2]],
      [req({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a', 'b'] }] }), [n3]],
      [req({ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }), [n2]],
      [req({ matchExpressions: [{ key: 'gen', operator: 'DoesNotExist' }] }), [n3]],
      [req({ matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['4'] }] }), [n2]],
      [req({ matchExpressions: [{ key: 'gen', operator: 'Lt', values: ['4'] }] }), [n1]],
      [req({ matchFields: [{ key: 'metadata.name', operator: 'In', values: [n3] }] }), [n3]],
      [
        req(
          { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
          { matchExpressions: [{ key: 'zone', operator: 'In', values: ['c'] }] },
        ),
        [n1, n3],
      ],
      [
        req({
          matchExpressions: [
            { key: 'zone', operator: 'In', values: ['a', 'b'] },
            { key: 'gpu', operator: 'DoesNotExist' },
          ],
        }),
        [n1],
      ],
    ];
    const names = await Promise.all(cases.map(([affinity]) => pod({ affinity })));
    for (const [i, name] of names.entries()) expect(cases[i]?.[1]).toContain(await boundNode(env.pods, name));
    const never = await pod({ affinity: req({ matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['9'] }] }) });
    await unschedulableCondition(
      env.pods,
      never,
      /^0\/3 nodes are available: 3 node\(s\) didn't match Pod's node affinity\/selector\./,
    );
  });

  it('taints: NoSchedule and NoExecute need a toleration, PreferNoSchedule only scores lower', async () => {
    const gpu = await node({ taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] });
    await node({ taints: [{ key: 'maintenance', value: 'yes', effect: 'NoExecute' }] });
    const prefer = await node({ taints: [{ key: 'spot', value: 'true', effect: 'PreferNoSchedule' }] });
    await seen(gpu, prefer);
    const plain = await Promise.all([1, 2, 3].map(() => pod()));
    for (const p of plain) expect(await boundNode(env.pods, p)).toBe(prefer);
    const tolerant = await pod({
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
    });
    expect(await boundNode(env.pods, tolerant)).toBe(gpu);
    const wrongValue = await pod({
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'cpu', effect: 'NoSchedule' }],
      nodeSelector: { 'svc.io/hostname': gpu },
    });
    await unschedulableCondition(
      env.pods,
      wrongValue,
      "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) had untolerated taint {maintenance: yes}. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    );
  });

  it('unschedulable nodes are skipped unless the pod tolerates the unschedulable taint', async () => {
    const cordoned = await node({ unschedulable: true });
    const open = await node();
    expect(await boundNode(env.pods, await pod())).toBe(open);
    const pinned = await pod({ nodeSelector: { 'svc.io/hostname': cordoned } });
    await unschedulableCondition(
      env.pods,
      pinned,
      /^0\/2 nodes are available: 1 node\(s\) didn't match Pod's node affinity\/selector, 1 node\(s\) were unschedulable\./,
    );
    const tolerant = await pod({
      nodeSelector: { 'svc.io/hostname': cordoned },
      tolerations: [{ key: 'node.svc.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }],
    });
    expect(await boundNode(env.pods, tolerant)).toBe(cordoned);
  });

  it("resources: cpu, memory and pod count against allocatable minus what the node's pods request", async () => {
    const n = await node({ cpu: '1', memory: '1Gi', pods: '2' });
    expect(await boundNode(env.pods, await pod({ cpu: '600m' }))).toBe(n);
    const noCpu = await pod({ cpu: '600m' });
    const message =
      '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.';
    expect(await unschedulableCondition(env.pods, noCpu, message)).toEqual(
      expect.objectContaining({ reason: 'Unschedulable', message }),
    );
    const noMemory = await pod({ memory: '2Gi' });
    await unschedulableCondition(env.pods, noMemory, /^0\/1 nodes are available: 1 Insufficient memory\./);
    expect(await boundNode(env.pods, await pod())).toBe(n);
    const tooMany = await pod();
    await unschedulableCondition(env.pods, tooMany, /^0\/1 nodes are available: 1 Too many pods\./);
  });

  it('host ports: a port in use on a node keeps the next pod asking for it off that node', async () => {
    const nodes = [await node(), await node()];
    const first = await boundNode(env.pods, await pod({ hostPort: 8080 }));
    const second = await boundNode(env.pods, await pod({ hostPort: 8080 }));
    expect(new Set([first, second])).toEqual(new Set(nodes));
    const third = await pod({ hostPort: 8080 });
    await unschedulableCondition(
      env.pods,
      third,
      "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
    );
    expect(await boundNode(env.pods, await pod({ hostPort: 8081 }))).toBeDefined();
  });
});

describe('scoring', () => {
  it('spreads by least allocated: 4 pods over 2 equal nodes land 2 + 2 (pods just bound count)', async () => {
    const a = await node();
    const b = await node();
    await seen(a, b);
    const names = await Promise.all([1, 2, 3, 4].map(() => pod({ cpu: '500m', memory: '256Mi' })));
    const placed = await Promise.all(names.map((p) => boundNode(env.pods, p)));
    expect(countBy(placed)).toEqual({ [a]: 2, [b]: 2 });
  });

  it('prefers the emptier node', async () => {
    const busy = await node({ cpu: '2' });
    const idle = await node({ cpu: '2' });
    await seen(busy, idle);
    expect(await boundNode(env.pods, await pod({ cpu: '1500m', nodeSelector: { 'svc.io/hostname': busy } }))).toBe(
      busy,
    );
    expect(await boundNode(env.pods, await pod({ cpu: '100m' }))).toBe(idle);
  });
});

describe('the scheduling queue', () => {
  it('an unschedulable pod gets the condition and a FailedScheduling event, and is bound once a fitting node appears', async () => {
    await node({ cpu: '1' });
    const p = await pod({ cpu: '3' });
    const message =
      '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.';
    const c = await unschedulableCondition(env.pods, p, message);
    expect(c).toEqual(expect.objectContaining({ reason: 'Unschedulable', message }));
    const failed = await waitFor('the FailedScheduling event', async () =>
      (await eventsFor(env.api, env.namespace, p)).find(
        (e) => e.reason === 'FailedScheduling' && e.message === message,
      ),
    );
    expect(failed).toMatchObject({
      type: 'Warning',
      message,
      reportingComponent: 'default-scheduler',
      source: { component: 'default-scheduler' },
      action: 'Scheduling',
    });
    const added = Date.now();
    const big = await node({ cpu: '4' });
    expect(await boundNode(env.pods, p)).toBe(big);
    console.log(`scheduler: unschedulable pod bound ${Date.now() - added} ms after a fitting node was added`);
    const scheduled = await env.pods.get(p);
    expect(scheduled.status?.conditions?.find((x) => x.type === 'PodScheduled')).toMatchObject({ status: 'True' });
  });

  it('retries after a bound pod is deleted', async () => {
    const n = await node({ pods: '1' });
    const first = await pod();
    expect(await boundNode(env.pods, first)).toBe(n);
    const waiting = await pod();
    await unschedulableCondition(env.pods, waiting, /Too many pods/);
    await env.pods.delete(first, { gracePeriodSeconds: 0 });
    expect(await boundNode(env.pods, waiting)).toBe(n);
  });

  it('a pod bound by someone else meanwhile stays where it was bound', async () => {
    const n = await node();
    const other = await node({ labels: { role: 'manual' } });
    // Pending on a selector no node matches, then bound by hand: the scheduler drops it.
    const parked = await pod({ nodeSelector: { role: 'nowhere' } });
    await unschedulableCondition(env.pods, parked, /^0\/2 nodes/);
    const r = await env.api.request('POST', `/api/v1/namespaces/${env.namespace}/pods/${parked}/binding`, {
      body: { kind: 'Binding', metadata: { name: parked }, target: { name: other } },
    });
    expect(r.status).toBe(201);
    await env.nodes.patch(n, { metadata: { labels: { role: 'nowhere' } } }, { type: 'merge' });
    await new Promise((res) => setTimeout(res, 500));
    expect((await env.pods.get(parked)).spec?.nodeName).toBe(other);
    expect((await eventsFor(env.api, env.namespace, parked)).filter((e) => e.reason === 'Scheduled')).toEqual([]);
  });

  it('binding conflicts: a second scheduler racing for the same pods loses some bindings with 409, drops those pods, never binds one twice', async () => {
    await node();
    await node();
    const second = await startTestScheduler(env.server, ['--leader-elect=false'], {
      logger: createLogger({ write: (l) => logs.push(l) }),
    });
    try {
      // Both must be scheduling before the pods come (on CI the second was still syncing and never raced).
      await waitFor('the second scheduler to see both nodes', async () => (await cacheSizes(second)).nodes === 2, {
        timeoutMs: 10_000,
        intervalMs: 20,
      });
      const names = await Promise.all(Array.from({ length: 20 }, () => pod({}, 'race')));
      for (const name of names) {
        const at = await boundNode(env.pods, name);
        const events = await waitFor(`the Scheduled event of ${name}`, async () => {
          const e = (await eventsFor(env.api, env.namespace, name)).filter((x) => x.reason === 'Scheduled');
          return e.length > 0 ? e : undefined;
        });
        await new Promise((res) => setTimeout(res, 20));
        expect(events.map((e) => e.message)).toEqual([`Successfully assigned ${env.namespace}/${name} to ${at}`]);
        expect((await eventsFor(env.api, env.namespace, name)).filter((x) => x.reason !== 'Scheduled')).toEqual([]);
      }
    } finally {
      await second.stop();
    }
    const conflicts = [...logs, ...mainLogs].filter((l) => /pod was bound or deleted meanwhile/.test(l)).length;
    expect(conflicts).toBeGreaterThan(0);
    console.log(
      `scheduler: two schedulers racing for 20 pods: ${conflicts} bindings lost with 409 and dropped, none bound twice`,
    );
  });
});

describe('kubectl', () => {
  it('get events shows FailedScheduling and Scheduled from default-scheduler', async () => {
    await node({ cpu: '1' });
    const stuck = await pod({ cpu: '2' }, 'stuck');
    const ok = await pod({ cpu: '100m' }, 'fits');
    await boundNode(env.pods, ok);
    await unschedulableCondition(env.pods, stuck, /Insufficient cpu/);
    // SOURCE is "component, instance", as Kubernetes prints the scheduler's events.
    const source = 'default-scheduler, default-scheduler-\\S+';
    const failed = new RegExp(
      `Warning\\s+FailedScheduling\\s+pod/${stuck}\\s+${source}\\s+0/1 nodes are available: 1 Insufficient cpu\\.`,
    );
    const scheduled = new RegExp(
      `Normal\\s+Scheduled\\s+pod/${ok}\\s+${source}\\s+Successfully assigned ${env.namespace}/${ok} to `,
    );
    const out = await waitFor(
      'both events in kubectl',
      async () => {
        const r = await kubectl(env.server.svcconfigPath, ['get', 'events', '-n', env.namespace, '-o', 'wide']);
        return failed.test(r.stdout) && scheduled.test(r.stdout) ? r.stdout : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(out.split('\n')[0]).toMatch(
      /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+SUBOBJECT\s+SOURCE\s+MESSAGE\s+FIRST SEEN\s+COUNT\s+NAME/,
    );
  });
});
