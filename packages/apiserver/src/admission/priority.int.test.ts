// PriorityClass and the Priority admission plugin on a real server (etcd, HTTPS): the two system
// classes from poststarthook/scheduling/bootstrap-system-priority-classes, defaults and
// validation (system- prefix, value bound, immutable value), one global default, pods resolved
// to spec.priority and preemptionPolicy, and Kubernetes' refusals; then stock kubectl under
// --naming=kubernetes (`kubectl create priorityclass`, `get pc`, the 403 text).
import type { Pod, PriorityClass } from '@svc/api';
import { expectCode, startKubectlEnv, uniqueName, waitFor, type HttpResponse, type KubectlEnv } from '@svc/testing';
import { podNamespace, postPod } from './pod-admission-testing.js';

let env: KubectlEnv;

function classesPath(groupSuffix: string): string {
  return `/apis/scheduling.${groupSuffix}/v1/priorityclasses`;
}

function createClass(suffix: string, body: Partial<PriorityClass> & { name: string }): Promise<HttpResponse> {
  const { name, ...rest } = body;
  return env.server.client.post(classesPath(suffix), {
    apiVersion: `scheduling.${suffix}/v1`,
    kind: 'PriorityClass',
    metadata: { name },
    ...rest,
  });
}

const namespace = (): Promise<string> => podNamespace(env.server.client, 'prio');

const createPod = (ns: string, spec: object, name?: string): Promise<HttpResponse> =>
  postPod(env.server.client, { namespace: ns, spec, name });

describe('the default naming', () => {
  beforeAll(async () => {
    env = await startKubectlEnv();
  });
  afterAll(async () => {
    await env.stop();
  });

  it('creates the system classes at start, which cannot be deleted', async () => {
    const c = env.server.client;
    const ready = await c.get('/readyz?verbose');
    expect(ready.text).toContain('[+]poststarthook/scheduling/bootstrap-system-priority-classes ok');
    const node = expectCode(await c.get(`${classesPath('svc.io')}/system-node-critical`), 200) as PriorityClass;
    expect(node).toMatchObject({
      value: 2000001000,
      preemptionPolicy: 'PreemptLowerPriority',
      description: 'Used for system critical pods that must not be moved from their current node.',
    });
    const cluster = expectCode(await c.get(`${classesPath('svc.io')}/system-cluster-critical`), 200) as PriorityClass;
    expect(cluster.value).toBe(2000000000);
    const del = await c.delete(`${classesPath('svc.io')}/system-cluster-critical`);
    expect(del.status).toBe(403);
    expect(del.json<{ message: string }>().message).toBe(
      'priorityclasses.scheduling.svc.io "system-cluster-critical" is forbidden: this is a system priority class and cannot be deleted',
    );
  });

  it('validates classes as Kubernetes: the system- prefix, the user bound, immutable value', async () => {
    const sys = await createClass('svc.io', { name: 'system-mine', value: 10 });
    expect(sys.status).toBe(422);
    expect(sys.json<{ message: string }>().message).toContain(
      "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class",
    );
    const high = await createClass('svc.io', { name: uniqueName('high'), value: 1_000_000_001 });
    expect(high.json<{ message: string }>().message).toContain(
      'value: Forbidden: maximum allowed value of a user defined priority is 1000000000',
    );
    const bad = await createClass('svc.io', { name: uniqueName('bad'), value: 1, preemptionPolicy: 'Sometimes' });
    expect(bad.json<{ message: string }>().message).toContain(
      'preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"',
    );
    const name = uniqueName('pc');
    const pc = expectCode(await createClass('svc.io', { name, value: 100 }), 201) as PriorityClass;
    expect(pc.preemptionPolicy).toBe('PreemptLowerPriority');
    const moved = await env.server.client.put(`${classesPath('svc.io')}/${name}`, { ...pc, value: 101 });
    expect(moved.status).toBe(422);
    expect(moved.json<{ message: string }>().message).toContain('value: Forbidden: may not be changed in an update.');
  });

  it('resolves a pod priority from its class and refuses a missing class or a conflicting priority', async () => {
    const ns = await namespace();
    const name = uniqueName('high');
    expectCode(await createClass('svc.io', { name, value: 1000, preemptionPolicy: 'Never' }), 201);
    const pod = expectCode(await createPod(ns, { priorityClassName: name }), 201) as Pod;
    expect(pod.spec).toMatchObject({ priorityClassName: name, priority: 1000, preemptionPolicy: 'Never' });
    const plain = expectCode(await createPod(ns, {}), 201) as Pod;
    expect(plain.spec.priority).toBe(0);
    expect(plain.spec.preemptionPolicy).toBe('PreemptLowerPriority');
    expect(plain.spec.priorityClassName).toBeUndefined();

    const missing = await createPod(ns, { priorityClassName: 'nope' }, 'm');
    expect(missing.status).toBe(403);
    expect(missing.json<{ message: string }>().message).toBe(
      'pods "m" is forbidden: no PriorityClass with name nope was found',
    );
    const wrong = await createPod(ns, { priorityClassName: name, priority: 5 }, 'w');
    expect(wrong.json<{ message: string }>().message).toBe(
      'pods "w" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name',
    );
    const policy = await createPod(ns, { priorityClassName: name, preemptionPolicy: 'PreemptLowerPriority' }, 'q');
    expect(policy.json<{ message: string }>().message).toBe(
      'pods "q" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name',
    );
    const critical = expectCode(await createPod(ns, { priorityClassName: 'system-node-critical' }), 201) as Pod;
    expect(critical.spec.priority).toBe(2000001000);
  });

  it('allows one global default, which pods without a class get', async () => {
    const first = uniqueName('default');
    expectCode(await createClass('svc.io', { name: first, value: 7, globalDefault: true }), 201);
    try {
      const second = await createClass('svc.io', { name: 'second-default', value: 8, globalDefault: true });
      expect(second.status).toBe(403);
      expect(second.json<{ message: string }>().message).toBe(
        `priorityclasses.scheduling.svc.io "second-default" is forbidden: PriorityClass ${first} is already marked as default. Only one default can exist`,
      );
      const ns = await namespace();
      const pod = await waitFor('a pod with the default priority', async () => {
        const p = expectCode(await createPod(ns, {}), 201) as Pod;
        return p.spec.priority === 7 ? p : undefined;
      });
      expect(pod.spec.priorityClassName).toBe(first);
    } finally {
      await env.server.client.delete(`${classesPath('svc.io')}/${first}`);
    }
  });
});

describe('--naming=kubernetes', () => {
  beforeAll(async () => {
    env = await startKubectlEnv({ args: ['--naming=kubernetes'] });
  });
  afterAll(async () => {
    await env.stop();
  });

  it('kubectl create priorityclass, get pc, and the 403 of a pod naming a missing class', async () => {
    await env.ok([
      'create',
      'priorityclass',
      'batch-low',
      '--value=10',
      '--description=batch',
      '--preemption-policy=Never',
    ]);
    const out = (await env.ok(['get', 'pc'])).stdout;
    expect(out).toMatch(/^NAME\s+VALUE\s+GLOBAL-DEFAULT\s+AGE\s+PREEMPTIONPOLICY\n/);
    expect(out).toMatch(/\nbatch-low\s+10\s+false\s+\S+\s+Never\n/);
    expect(out).toMatch(/\nsystem-cluster-critical\s+2000000000\s+false\s+\S+\s+PreemptLowerPriority\n/);
    expect(out).toMatch(/\nsystem-node-critical\s+2000001000\s+false\s+\S+\s+PreemptLowerPriority\n/);
    const dup = await env.run(['create', 'priorityclass', 'system-x', '--value=1']);
    expect(dup.stderr).toContain(
      'error: failed to create priorityclass: PriorityClass.scheduling.k8s.io "system-x" is invalid: metadata.name: Forbidden: priority class names with \'system-\' prefix are reserved for system use only. error: system-x is not a known system priority class',
    );

    const ns = await namespace();
    const overrides = JSON.stringify({
      apiVersion: 'v1',
      spec: { automountServiceAccountToken: false, priorityClassName: 'missing' },
    });
    const r = await env.run(['run', 'web', '-n', ns, '--image=busybox', `--overrides=${overrides}`]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      'Error from server (Forbidden): pods "web" is forbidden: no PriorityClass with name missing was found',
    );
    await env.ok([
      'run',
      'batch',
      '-n',
      ns,
      '--image=busybox',
      `--overrides=${overrides.replace('missing', 'batch-low')}`,
    ]);
    const pod = JSON.parse((await env.ok(['get', 'pod', 'batch', '-n', ns, '-o', 'json'])).stdout) as Pod;
    expect(pod.spec).toMatchObject({ priorityClassName: 'batch-low', priority: 10, preemptionPolicy: 'Never' });
  });
});
