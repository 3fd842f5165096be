// batch/v1 Job against a real API server and etcd: the server's defaults and refusals, and
// job-controller running pods to completion or failure. No node agent runs: the tests move
// pods to Succeeded or Failed through `/status` as one would.
import { batchKey, type Job, type Pod } from '@svc/api';
import { ResourceClient, type RestClient } from '@svc/client';
import { waitFor } from '@svc/testing';
import { withControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';
import { controllerOf } from './controller-ref.js';
import { createNamespace, kubectlIn, pods, refusal } from './workload-testing.js';

const env = withControllerManager(['--controllers=job']);

const jobs = (api: RestClient, ns: string): ResourceClient<Job> => new ResourceClient<Job>(api, R.jobs()).namespace(ns);

function jobOf(name: string, spec: Partial<Job['spec']> = {}): Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: {
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['true'] }] } },
      ...spec,
    },
  };
}

/** Pods of `job` (any state), oldest first. */
async function podsOf(ns: string, job: Job): Promise<Pod[]> {
  const list = await pods(env.api, ns).list();
  return list.items
    .filter((p) => controllerOf(p)?.uid === job.metadata.uid)
    .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
}

/** The running pods of `job`, once there are `n`. */
const running = (ns: string, job: Job, n: number): Promise<Pod[]> =>
  waitFor(`${n} running pods of ${job.metadata.name ?? ''}`, async () => {
    const ps = (await podsOf(ns, job)).filter((p) => !p.status?.phase || p.status.phase === 'Pending');
    return ps.length === n ? ps : undefined;
  });

/** Ends a pod as its node agent would report it: Succeeded (exit 0) or Failed (exit `exitCode`). */
async function finish(pod: Pod, exitCode = 0): Promise<void> {
  const phase = exitCode === 0 ? 'Succeeded' : 'Failed';
  const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await pods(env.api, pod.metadata.namespace ?? '').patch(
    pod.metadata.name ?? '',
    {
      status: {
        phase,
        containerStatuses: [
          {
            name: 'c',
            image: 'busybox',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', finishedAt: at } },
          },
        ],
      },
    },
    { type: 'merge', subresource: 'status' },
  );
}

const condition = (job: Job, type: string): string | undefined =>
  job.status?.conditions?.find((c) => c.type === type && c.status === 'True')?.reason;

const waitForCondition = (ns: string, name: string, type: string): Promise<Job> =>
  waitFor(`job ${name} ${type}`, async () => {
    const j = await jobs(env.api, ns).get(name);
    return condition(j, type) !== undefined ? j : undefined;
  });

describe('batch/v1 Job on the API server', () => {
  it('defaults as Kubernetes 1.32: one completion, parallelism 1, backoffLimit 6, a generated selector and labels', async () => {
    const ns = await createNamespace(env.api, 'jobapi');
    const j = await jobs(env.api, ns).create(jobOf('defaults', { suspend: true }));
    const uid = j.metadata.uid ?? '';
    expect(j.spec).toMatchObject({
      completions: 1,
      parallelism: 1,
      backoffLimit: 6,
      completionMode: 'NonIndexed',
      suspend: true,
      podReplacementPolicy: 'TerminatingOrFailed',
      selector: { matchLabels: { [batchKey('controller-uid')]: uid } },
    });
    expect(j.spec.manualSelector).toBeUndefined();
    expect(j.spec.template.metadata?.labels).toEqual({
      'controller-uid': uid,
      [batchKey('controller-uid')]: uid,
      'job-name': 'defaults',
      [batchKey('job-name')]: 'defaults',
    });
    expect(j.metadata.labels).toEqual(j.spec.template.metadata?.labels);
    const withPolicy = await jobs(env.api, ns).create(
      jobOf('policy', {
        suspend: true,
        podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] },
      }),
    );
    expect(withPolicy.spec.podReplacementPolicy).toBe('Failed');
    expect(withPolicy.spec.podFailurePolicy?.rules[0]?.onPodConditions).toEqual([
      { type: 'DisruptionTarget', status: 'True' },
    ]);
  });

  it('refuses bad Jobs with 422 and the causes Kubernetes gives', async () => {
    const ns = await createNamespace(env.api, 'jobbad');
    const api = jobs(env.api, ns);
    const always = jobOf('always');
    always.spec.template.spec.restartPolicy = 'Always';
    expect(await refusal(api.create(always))).toEqual({
      code: 422,
      causes: ['spec.template.spec.restartPolicy: FieldValueNotSupported'],
    });
    expect(await refusal(api.create(jobOf('idx', { completionMode: 'Indexed', parallelism: 2 })))).toEqual({
      code: 422,
      causes: ['spec.completions: FieldValueRequired'],
    });
    expect(await refusal(api.create(jobOf('neg', { backoffLimit: -1, parallelism: -2 })))).toEqual({
      code: 422,
      causes: ['spec.parallelism: FieldValueInvalid', 'spec.backoffLimit: FieldValueInvalid'],
    });
    expect(await refusal(api.create(jobOf('manual', { manualSelector: true })))).toEqual({
      code: 422,
      causes: ['spec.selector: FieldValueRequired'],
    });
    const onFailure = jobOf('pfp', {
      podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [0, 3] } }] },
    });
    onFailure.spec.template.spec.restartPolicy = 'OnFailure';
    expect((await refusal(api.create(onFailure))).causes).toEqual([
      'spec.podFailurePolicy.rules[0].onExitCodes.values[0]: FieldValueInvalid',
      'spec.template.spec.restartPolicy: FieldValueInvalid',
    ]);

    await api.create(jobOf('imm', { suspend: true, completions: 2 }));
    await waitForCondition(ns, 'imm', 'Suspended');
    const j = await api.get('imm');
    expect(
      await refusal(api.update({ ...j, spec: { ...j.spec, selector: { matchLabels: { other: 'x' } } } })),
    ).toMatchObject({ code: 422, causes: expect.arrayContaining(['spec.selector: FieldValueInvalid']) as unknown });
    expect(await refusal(api.update({ ...j, spec: { ...j.spec, completions: 3 } }))).toEqual({
      code: 422,
      causes: ['spec.completions: FieldValueInvalid'],
    });
    // An Indexed Job is elastic: completions may follow parallelism.
    await api.create(jobOf('elastic', { suspend: true, completionMode: 'Indexed', completions: 2, parallelism: 2 }));
    await waitForCondition(ns, 'elastic', 'Suspended');
    const idx = await api.get('elastic');
    const grown = await api.update({ ...idx, spec: { ...idx.spec, completions: 4, parallelism: 4 } });
    expect(grown.spec.completions).toBe(4);
  });
});

describe('job-controller', () => {
  it('runs pods one at a time to two completions, then SuccessCriteriaMet and Complete; finalizers are removed', async () => {
    const ns = await createNamespace(env.api, 'jobok');
    const j = await jobs(env.api, ns).create(jobOf('two', { completions: 2 }));
    const [first] = await running(ns, j, 1);
    expect(first?.metadata.finalizers).toEqual([batchKey('job-tracking')]);
    expect(first?.metadata.name).toMatch(/^two-[a-z0-9]{5}$/);
    expect(first?.metadata.labels?.[batchKey('job-name')]).toBe('two');
    const started = await waitFor('active 1', async () => {
      const cur = await jobs(env.api, ns).get('two');
      return cur.status?.active === 1 && cur.status.startTime ? cur : undefined;
    });
    expect(started.status?.ready).toBe(0);
    if (first) await finish(first);
    const [second] = await waitFor('a second pod', async () => {
      const ps = (await podsOf(ns, j)).filter((p) => p.metadata.uid !== first?.metadata.uid);
      return ps.length === 1 ? ps : undefined;
    });
    if (second) await finish(second);
    const done = await waitForCondition(ns, 'two', 'Complete');
    expect(done.status).toMatchObject({ succeeded: 2, uncountedTerminatedPods: {} });
    expect(done.status?.failed).toBeUndefined();
    expect(done.status?.completionTime).toBeDefined();
    expect(condition(done, 'SuccessCriteriaMet')).toBe('CompletionsReached');
    expect(condition(done, 'Complete')).toBe('CompletionsReached');
    const types = (done.status?.conditions ?? []).map((c) => c.type);
    expect(types).toEqual(['SuccessCriteriaMet', 'Complete']);
    await waitFor('finalizers removed', async () =>
      (await podsOf(ns, j)).every((p) => !(p.metadata.finalizers ?? []).includes(batchKey('job-tracking'))),
    );
  });

  it('fails a Job whose pods fail past backoffLimit: FailureTarget, then Failed with BackoffLimitExceeded', async () => {
    const ns = await createNamespace(env.api, 'jobfail');
    const j = await jobs(env.api, ns).create(jobOf('bad', { backoffLimit: 0 }));
    const [p] = await running(ns, j, 1);
    if (p) await finish(p, 3);
    const failed = await waitForCondition(ns, 'bad', 'Failed');
    expect(condition(failed, 'Failed')).toBe('BackoffLimitExceeded');
    expect(condition(failed, 'FailureTarget')).toBe('BackoffLimitExceeded');
    expect(failed.status?.conditions?.find((c) => c.type === 'Failed')?.message).toBe(
      'Job has reached the specified backoff limit',
    );
    expect(failed.status?.failed).toBe(1);
    expect(failed.status?.completionTime).toBeUndefined();
    expect((await podsOf(ns, j)).length).toBe(1);
  });

  it('fails at once on a podFailurePolicy FailJob rule, and at activeDeadlineSeconds with DeadlineExceeded', async () => {
    const ns = await createNamespace(env.api, 'jobpfp');
    const j = await jobs(env.api, ns).create(
      jobOf('pfp', {
        backoffLimit: 5,
        podFailurePolicy: {
          rules: [{ action: 'FailJob', onExitCodes: { containerName: 'c', operator: 'In', values: [42] } }],
        },
      }),
    );
    const [p] = await running(ns, j, 1);
    if (p) await finish(p, 42);
    const failed = await waitForCondition(ns, 'pfp', 'Failed');
    expect(condition(failed, 'Failed')).toBe('PodFailurePolicy');
    expect(failed.status?.conditions?.find((c) => c.type === 'Failed')?.message).toBe(
      `Container c for pod ${ns}/${p?.metadata.name ?? ''} failed with exit code 42 matching FailJob rule at index 0`,
    );

    const d = await jobs(env.api, ns).create(jobOf('deadline', { activeDeadlineSeconds: 1 }));
    const over = await waitForCondition(ns, 'deadline', 'Failed');
    expect(condition(over, 'Failed')).toBe('DeadlineExceeded');
    await waitFor('the deadline job has no running pod', async () =>
      (await podsOf(ns, d)).every((pod) => !!pod.metadata.deletionTimestamp || pod.status?.phase === 'Failed'),
    );
  });

  it('runs an Indexed Job one pod per index with the index annotation, label, hostname and JOB_COMPLETION_INDEX', async () => {
    const ns = await createNamespace(env.api, 'jobidx');
    const j = await jobs(env.api, ns).create(
      jobOf('idx', { completionMode: 'Indexed', completions: 3, parallelism: 3 }),
    );
    const ps = await running(ns, j, 3);
    const key = batchKey('job-completion-index');
    expect(ps.map((p) => p.metadata.annotations?.[key]).sort()).toEqual(['0', '1', '2']);
    for (const p of ps) {
      const i = p.metadata.annotations?.[key] ?? '';
      expect(p.metadata.labels?.[key]).toBe(i);
      expect(p.metadata.name).toMatch(new RegExp(`^idx-${i}-[a-z0-9]{5}$`));
      expect(p.spec.hostname).toBe(`idx-${i}`);
      expect(p.spec.containers[0]?.env).toEqual([
        {
          name: 'JOB_COMPLETION_INDEX',
          valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: `metadata.annotations['${key}']` } },
        },
      ]);
    }
    const byIndex = (i: string): Pod | undefined => ps.find((p) => p.metadata.annotations?.[key] === i);
    // Index 1 fails once and is retried (after the back-off) under the same index.
    const one = byIndex('1');
    if (one) await finish(one, 1);
    for (const i of ['0', '2']) {
      const p = byIndex(i);
      if (p) await finish(p);
    }
    await waitFor(
      'indexes 0 and 2 completed',
      async () => (await jobs(env.api, ns).get('idx')).status?.completedIndexes === '0,2',
    );
    const retry = await waitFor(
      'a new pod for index 1',
      async () =>
        (await podsOf(ns, j)).find(
          (p) => p.metadata.annotations?.[key] === '1' && p.metadata.uid !== one?.metadata.uid,
        ),
      { timeoutMs: 30_000 },
    );
    await finish(retry);
    const done = await waitForCondition(ns, 'idx', 'Complete');
    expect(done.status).toMatchObject({ completedIndexes: '0-2', succeeded: 3, failed: 1 });
  });

  it('creates no pods while suspended and deletes them on suspension; resumes', async () => {
    const ns = await createNamespace(env.api, 'jobsus');
    const j = await jobs(env.api, ns).create(jobOf('sus', { suspend: true, parallelism: 2, completions: 4 }));
    const suspended = await waitForCondition(ns, 'sus', 'Suspended');
    expect(suspended.status?.conditions?.find((c) => c.type === 'Suspended')?.message).toBe('Job suspended');
    expect(suspended.status?.startTime).toBeUndefined();
    expect(await podsOf(ns, j)).toEqual([]);
    await jobs(env.api, ns).patch('sus', { spec: { suspend: false } }, { type: 'merge' });
    await running(ns, j, 2);
    const resumed = await waitFor('resumed', async () => {
      const cur = await jobs(env.api, ns).get('sus');
      const c = cur.status?.conditions?.find((x) => x.type === 'Suspended');
      return c?.status === 'False' && cur.status?.active === 2 ? cur : undefined;
    });
    expect(resumed.status?.conditions?.find((c) => c.type === 'Suspended')?.reason).toBe('JobResumed');
    await jobs(env.api, ns).patch('sus', { spec: { suspend: true } }, { type: 'merge' });
    await waitFor('pods deleted on suspension', async () => (await podsOf(ns, j)).length === 0);
    await waitForCondition(ns, 'sus', 'Suspended');
  });

  it('stock kubectl: create job, get jobs, wait --for=condition=complete', async () => {
    const ns = await createNamespace(env.api, 'jobctl');
    const k = await kubectlIn(env.server.svcconfigPath);
    try {
      expect((await k.ok(['-n', ns, 'create', 'job', 'x', '--image=busybox', '--', 'true'])).stdout.trim()).toBe(
        'job.batch/x created',
      );
      const j = await jobs(env.api, ns).get('x');
      const [p] = await running(ns, j, 1);
      await waitFor('job x started', async () => !!(await jobs(env.api, ns).get('x')).status?.startTime);
      const table = await k.ok(['-n', ns, 'get', 'jobs', '-o', 'wide']);
      const [header, row] = table.stdout.trim().split('\n');
      expect(header?.split(/\s{2,}/)).toEqual([
        'NAME',
        'STATUS',
        'COMPLETIONS',
        'DURATION',
        'AGE',
        'CONTAINERS',
        'IMAGES',
        'SELECTOR',
      ]);
      expect(row).toMatch(
        new RegExp(`^x\\s+Running\\s+0/1\\s+\\d+s\\s+\\d+s\\s+x\\s+busybox\\s+${batchKey('controller-uid')}=`),
      );
      if (p) await finish(p);
      const wait = await k.ok(['-n', ns, 'wait', '--for=condition=complete', 'job/x', '--timeout=30s']);
      expect(wait.stdout.trim()).toBe('job.batch/x condition met');
      const after = await k.ok(['-n', ns, 'get', 'jobs']);
      expect(after.stdout).toMatch(/x\s+Complete\s+1\/1\s+\d+s\s+\d+s/);
      expect((await k.ok(['-n', ns, 'get', 'all'])).stdout).toMatch(/job\.batch\/x\s+Complete/);
    } finally {
      await k.stop();
    }
  });
});
