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
/** Controllers on a loaded machine: wait generously. */
const LONG = { timeoutMs: 30_000 };

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
  waitFor(
    `${n} running pods of ${job.metadata.name ?? ''}`,
    async () => {
      const ps = (await podsOf(ns, job)).filter((p) => !p.status?.phase || p.status.phase === 'Pending');
      return ps.length === n ? ps : undefined;
    },
    LONG,
  );

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
  waitFor(
    `job ${name} ${type}`,
    async () => {
      const j = await jobs(env.api, ns).get(name);
      return condition(j, type) !== undefined ? j : undefined;
    },
    LONG,
  );

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

  it('refuses bad successPolicy and backoffLimitPerIndex specs with 422 and Kubernetes 1.32 field paths and messages', async () => {
    const ns = await createNamespace(env.api, 'jobbad2');
    const api = jobs(env.api, ns);
    const indexed = (name: string, spec: Partial<Job['spec']>): Job =>
      jobOf(name, { completionMode: 'Indexed', completions: 3, parallelism: 3, ...spec });
    const refused = (job: Job): Promise<{ code: number; causes: string[] }> =>
      refusal(api.create(job), { messages: true });
    expect(await refused(jobOf('sp-nonidx', { successPolicy: { rules: [{ succeededCount: 1 }] } }))).toMatchObject({
      code: 422,
      causes: [expect.stringMatching(/^spec\.successPolicy: FieldValueInvalid: .*requires indexed completion mode$/)],
    });
    expect(await refused(indexed('sp-empty', { successPolicy: { rules: [] } }))).toEqual({
      code: 422,
      causes: [
        'spec.successPolicy.rules: FieldValueRequired: Required value: at least one rules must be specified when the successPolicy is specified',
      ],
    });
    expect(
      await refused(
        indexed('sp-rules', {
          successPolicy: {
            rules: [
              {},
              { succeededIndexes: '0-5' },
              { succeededIndexes: '2,1' },
              { succeededIndexes: '0-1', succeededCount: 4 },
            ],
          },
        }),
      ),
    ).toEqual({
      code: 422,
      causes: [
        'spec.successPolicy.rules[0]: FieldValueRequired: Required value: at least one of succeededCount or succeededIndexes must be specified',
        'spec.successPolicy.rules[1].succeededIndexes: FieldValueInvalid: Invalid value: "0-5": error parsing succeededIndexes: too large index: "5"',
        'spec.successPolicy.rules[2].succeededIndexes: FieldValueInvalid: Invalid value: "2,1": error parsing succeededIndexes: non-increasing order, previous: 2, current: 1',
        'spec.successPolicy.rules[3].succeededCount: FieldValueInvalid: Invalid value: 4: must be less than or equal to 3 (the number of specified completions)',
        'spec.successPolicy.rules[3].succeededCount: FieldValueInvalid: Invalid value: 4: must be less than or equal to 2 (the number of indexes in the specified succeededIndexes field)',
      ],
    });
    expect(await refused(jobOf('bl-nonidx', { backoffLimitPerIndex: 1, maxFailedIndexes: 1 }))).toEqual({
      code: 422,
      causes: [
        'spec.backoffLimitPerIndex: FieldValueInvalid: Invalid value: 1: requires indexed completion mode',
        'spec.maxFailedIndexes: FieldValueInvalid: Invalid value: 1: requires indexed completion mode',
      ],
    });
    expect(await refused(indexed('max-alone', { maxFailedIndexes: 1 }))).toEqual({
      code: 422,
      causes: ['spec.backoffLimitPerIndex: FieldValueRequired: Required value: when maxFailedIndexes is specified'],
    });
    expect(await refused(indexed('max-big', { backoffLimitPerIndex: 1, maxFailedIndexes: 4 }))).toEqual({
      code: 422,
      causes: ['spec.maxFailedIndexes: FieldValueInvalid: Invalid value: 4: must be less than or equal to completions'],
    });
    expect(
      await refused(
        indexed('failindex', {
          podFailurePolicy: { rules: [{ action: 'FailIndex', onExitCodes: { operator: 'In', values: [3] } }] },
        }),
      ),
    ).toEqual({
      code: 422,
      causes: [
        'spec.podFailurePolicy.rules[0].action: FieldValueInvalid: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set',
      ],
    });
    // backoffLimit defaults to the largest int32 when backoffLimitPerIndex is set; both are immutable.
    const ok = await api.create(indexed('per-index', { suspend: true, backoffLimitPerIndex: 1 }));
    expect(ok.spec.backoffLimit).toBe(2147483647);
    // Without a resourceVersion (an unconditional update, which Jobs allow): the job controller
    // writes the new Job's status meanwhile, and a stale version answered 409 once.
    const { resourceVersion: _rv, ...meta } = ok.metadata;
    expect(await refusal(api.update({ ...ok, metadata: meta, spec: { ...ok.spec, backoffLimitPerIndex: 2 } }))).toEqual(
      {
        code: 422,
        causes: ['spec.backoffLimitPerIndex: FieldValueInvalid'],
      },
    );
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

  it('successPolicy: SuccessCriteriaMet (SuccessPolicy) once the named indexes succeed, the rest terminated, then Complete', async () => {
    const ns = await createNamespace(env.api, 'jobsp');
    const j = await jobs(env.api, ns).create(
      jobOf('sp', {
        completionMode: 'Indexed',
        completions: 4,
        parallelism: 4,
        successPolicy: { rules: [{ succeededIndexes: '0,2' }] },
      }),
    );
    const ps = await running(ns, j, 4);
    const key = batchKey('job-completion-index');
    for (const i of ['0', '2']) {
      const p = ps.find((x) => x.metadata.annotations?.[key] === i);
      if (p) await finish(p);
    }
    const done = await waitForCondition(ns, 'sp', 'Complete');
    const types = (done.status?.conditions ?? []).map((c) => c.type);
    expect(types).toEqual(['SuccessCriteriaMet', 'Complete']);
    for (const type of ['SuccessCriteriaMet', 'Complete']) {
      const c = done.status?.conditions?.find((x) => x.type === type);
      expect(c).toMatchObject({ status: 'True', reason: 'SuccessPolicy', message: 'Matched rules at index 0' });
    }
    expect(done.status).toMatchObject({ completedIndexes: '0,2', succeeded: 2 });
    expect(done.status?.active).toBeUndefined();
    expect(done.status?.completionTime).toBeDefined();
    // Indexes 1 and 3 were still running: their pods were deleted.
    await waitFor(
      'the running pods of indexes 1 and 3 gone or terminating',
      async () =>
        (await podsOf(ns, j))
          .filter((p) => ['1', '3'].includes(p.metadata.annotations?.[key] ?? ''))
          .every((p) => !!p.metadata.deletionTimestamp),
      LONG,
    );
  });

  it('backoffLimitPerIndex: an index out of retries is listed in failedIndexes, the others complete, the Job fails with FailedIndexes', async () => {
    const ns = await createNamespace(env.api, 'jobbli');
    const j = await jobs(env.api, ns).create(
      jobOf('bli', { completionMode: 'Indexed', completions: 3, parallelism: 3, backoffLimitPerIndex: 1 }),
    );
    expect(j.spec.backoffLimit).toBe(2147483647);
    const ps = await running(ns, j, 3);
    const key = batchKey('job-completion-index');
    const count = batchKey('job-index-failure-count');
    expect(ps.map((p) => p.metadata.annotations?.[count])).toEqual(['0', '0', '0']);
    const first = ps.find((p) => p.metadata.annotations?.[key] === '1');
    if (first) await finish(first, 1);
    // The replacement (after the index's back-off) carries the index's failure count.
    const retry = await waitFor(
      'a second pod for index 1',
      async () =>
        (await podsOf(ns, j)).find(
          (p) => p.metadata.annotations?.[key] === '1' && p.metadata.uid !== first?.metadata.uid,
        ),
      { timeoutMs: 45_000 },
    );
    expect(retry.metadata.annotations?.[count]).toBe('1');
    await finish(retry, 1);
    await waitFor(
      'index 1 failed',
      async () => (await jobs(env.api, ns).get('bli')).status?.failedIndexes === '1',
      LONG,
    );
    for (const i of ['0', '2']) {
      const p = ps.find((x) => x.metadata.annotations?.[key] === i);
      if (p) await finish(p);
    }
    const failed = await waitForCondition(ns, 'bli', 'Failed');
    expect(failed.status?.conditions?.find((c) => c.type === 'Failed')).toMatchObject({
      reason: 'FailedIndexes',
      message: 'Job has failed indexes',
    });
    expect(condition(failed, 'FailureTarget')).toBe('FailedIndexes');
    expect(failed.status).toMatchObject({ failedIndexes: '1', completedIndexes: '0,2', succeeded: 2, failed: 2 });
    // No third pod for the failed index.
    expect((await podsOf(ns, j)).filter((p) => p.metadata.annotations?.[key] === '1').length).toBe(2);
  });

  it('maxFailedIndexes: the Job fails with MaxFailedIndexesExceeded when more indexes fail, and its running pods are deleted', async () => {
    const ns = await createNamespace(env.api, 'jobmfi');
    const j = await jobs(env.api, ns).create(
      jobOf('mfi', {
        completionMode: 'Indexed',
        completions: 4,
        parallelism: 4,
        backoffLimitPerIndex: 0,
        maxFailedIndexes: 1,
        podFailurePolicy: {
          rules: [{ action: 'FailIndex', onExitCodes: { containerName: 'c', operator: 'In', values: [7] } }],
        },
      }),
    );
    const ps = await running(ns, j, 4);
    const key = batchKey('job-completion-index');
    const byIndex = (i: string): Pod | undefined => ps.find((p) => p.metadata.annotations?.[key] === i);
    const zero = byIndex('0');
    if (zero) await finish(zero, 7);
    await waitFor(
      'index 0 failed',
      async () => (await jobs(env.api, ns).get('mfi')).status?.failedIndexes === '0',
      LONG,
    );
    const one = byIndex('1');
    if (one) await finish(one, 1);
    const failed = await waitForCondition(ns, 'mfi', 'Failed');
    expect(failed.status?.conditions?.find((c) => c.type === 'Failed')).toMatchObject({
      reason: 'MaxFailedIndexesExceeded',
      message: 'Job has exceeded the specified maximal number of failed indexes',
    });
    expect(failed.status?.failedIndexes).toBe('0,1');
    expect(failed.status?.failed).toBeGreaterThanOrEqual(2);
    expect(failed.status?.active).toBeUndefined();
    await waitFor(
      'indexes 2 and 3 deleted',
      async () =>
        (await podsOf(ns, j))
          .filter((p) => ['2', '3'].includes(p.metadata.annotations?.[key] ?? ''))
          .every((p) => !!p.metadata.deletionTimestamp),
      LONG,
    );
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
