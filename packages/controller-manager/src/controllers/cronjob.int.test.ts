// cronjob-controller and ttl-after-finished-controller (with job-controller) against a real API
// server and etcd. Both take the test's clock: a test sets it forward past a schedule time or a
// TTL and the controllers act at once, so nothing waits for the wall clock's minutes.
import { batchKey, type CronJob, type Job, type Pod } from '@svc/api';
import { ResourceClient, RestClient, loadSvcconfig } from '@svc/client';
import { startTestApiServer, waitFor, type TestApiServer } from '@svc/testing';
import { startTestControllerManager, type TestControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';
import { TestClock } from './clock-testing.js';
import { controllerOf } from './controller-ref.js';
import { makeCronJobController } from './cronjob.js';
import { jobController } from './job.js';
import { makeTtlAfterFinishedController } from './ttl-after-finished.js';
import { createNamespace, eventsAbout, kubectlIn, pods } from './workload-testing.js';

const clock = new TestClock();
/**
 * The TTL controller's own clock: the CronJob cases move `clock` up to a day ahead (the next
 * midnight in a zone), and a Job finishing on the wall clock would then be past its TTL at once.
 */
const ttlClock = new TestClock();
const env = {} as { server: TestApiServer; api: RestClient; manager: TestControllerManager };

beforeAll(async () => {
  env.server = await startTestApiServer();
  env.api = new RestClient(loadSvcconfig(env.server.svcconfigPath));
  env.manager = await startTestControllerManager(
    env.server,
    ['--controllers=job,cronjob,ttl-after-finished', '--concurrent-cron-job-syncs=2'],
    {
      controllers: [
        jobController,
        makeCronJobController({ clock }),
        makeTtlAfterFinishedController({ clock: ttlClock }),
      ],
    },
  );
});
afterAll(async () => {
  await env.manager?.stop();
  env.api?.close();
  await env.server?.stop();
});

const MINUTE = 60_000;
const cronJobs = (ns: string): ResourceClient<CronJob> =>
  new ResourceClient<CronJob>(env.api, R.cronJobs()).namespace(ns);
const jobs = (ns: string): ResourceClient<Job> => new ResourceClient<Job>(env.api, R.jobs()).namespace(ns);

function cronJobOf(name: string, spec: Partial<CronJob['spec']> = {}): CronJob {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name },
    spec: {
      schedule: '* * * * *',
      jobTemplate: {
        spec: {
          template: {
            spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['true'] }] },
          },
        },
      },
      ...spec,
    },
  };
}

/** Sets the clock one second past the next minute boundary; answers that boundary. */
function nextMinute(): number {
  const at = (Math.floor(clock.now() / MINUTE) + 1) * MINUTE;
  clock.set(at + 1000);
  return at;
}

/** Jobs in `ns` controlled by the CronJob `cj`, by name. */
async function jobsOf(ns: string, cj: CronJob): Promise<Job[]> {
  const list = await jobs(ns).list();
  return list.items
    .filter((j) => controllerOf(j)?.uid === cj.metadata.uid && !j.metadata.deletionTimestamp)
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

const waitForJob = (ns: string, name: string): Promise<Job> => waitFor(`job ${name}`, async () => jobs(ns).find(name));

/** Marks the pod of `job` Succeeded (as its node agent would) and waits for the Job to complete. */
async function complete(ns: string, job: Job): Promise<Job> {
  const pod = await waitFor(`a pod of ${job.metadata.name ?? ''}`, async () =>
    (await pods(env.api, ns).list()).items.find((p: Pod) => controllerOf(p)?.uid === job.metadata.uid),
  );
  await pods(env.api, ns).patch(
    pod.metadata.name ?? '',
    { status: { phase: 'Succeeded' } },
    { type: 'merge', subresource: 'status' },
  );
  return waitFor(`${job.metadata.name ?? ''} complete`, async () => {
    const j = await jobs(ns).get(job.metadata.name ?? '');
    return j.status?.completionTime ? j : undefined;
  });
}

describe('cronjob-controller', () => {
  it('starts a Job at each schedule time, named <cronjob>-<minutes>, and keeps active, lastScheduleTime and lastSuccessfulTime', async () => {
    const ns = await createNamespace(env.api, 'cron');
    const cj = await cronJobs(ns).create(
      cronJobOf('every', {
        successfulJobsHistoryLimit: 1,
        jobTemplate: { metadata: { labels: { from: 'cron' } }, spec: cronJobOf('x').spec.jobTemplate.spec },
      }),
    );
    expect(cj.spec).toMatchObject({
      concurrencyPolicy: 'Allow',
      suspend: false,
      successfulJobsHistoryLimit: 1,
      failedJobsHistoryLimit: 1,
    });
    const at = nextMinute();
    const first = await waitForJob(ns, `every-${at / MINUTE}`);
    expect(first.metadata.annotations?.[batchKey('cronjob-scheduled-timestamp')]).toBe(
      new Date(at).toISOString().replace('.000Z', 'Z'),
    );
    expect(first.metadata.labels?.from).toBe('cron');
    expect(controllerOf(first)).toMatchObject({ kind: 'CronJob', name: 'every', uid: cj.metadata.uid });
    const running = await waitFor('active job in status', async () => {
      const cur = await cronJobs(ns).get('every');
      return cur.status?.active?.length === 1 ? cur : undefined;
    });
    expect(running.status?.active?.[0]).toMatchObject({
      kind: 'Job',
      name: first.metadata.name,
      uid: first.metadata.uid,
    });
    expect(running.status?.lastScheduleTime).toBe(new Date(at).toISOString().replace('.000Z', 'Z'));

    const done = await complete(ns, first);
    const after = await waitFor('active emptied, lastSuccessfulTime', async () => {
      const cur = await cronJobs(ns).get('every');
      return !cur.status?.active && cur.status?.lastSuccessfulTime ? cur : undefined;
    });
    expect(after.status?.lastSuccessfulTime).toBe(done.status?.completionTime);

    // The next minute's Job; once it completes the first is beyond the history limit of 1.
    const at2 = nextMinute();
    const second = await waitForJob(ns, `every-${at2 / MINUTE}`);
    await complete(ns, second);
    await waitFor('only the newest finished job kept', async () => {
      const names = (await jobsOf(ns, cj)).map((j) => j.metadata.name);
      return JSON.stringify(names) === JSON.stringify([second.metadata.name]);
    });
  });

  it('Forbid skips a time while a Job runs; Replace deletes the running Job and starts a new one', async () => {
    const ns = await createNamespace(env.api, 'cronconc');
    const forbid = await cronJobs(ns).create(cronJobOf('forbid', { concurrencyPolicy: 'Forbid' }));
    const replace = await cronJobs(ns).create(cronJobOf('replace', { concurrencyPolicy: 'Replace' }));
    // Under an advanced clock creation alone may start a Job for an earlier minute: settle first.
    const at = nextMinute();
    const [first] = await waitFor('one forbid job', async () => {
      const js = await jobsOf(ns, forbid);
      return js.length === 1 ? js : undefined;
    });
    const [replaced] = await waitFor('one replace job, the newest', async () => {
      const js = await jobsOf(ns, replace);
      return js.length === 1 && js[0]?.metadata.name === `replace-${at / MINUTE}` ? js : undefined;
    });
    const at2 = nextMinute();
    await waitFor('Forbid reported', async () =>
      (await eventsAbout(env.api, ns, { kind: 'CronJob', name: 'forbid' })).includes(
        'JobAlreadyActive: Not starting job because prior execution is running and concurrency policy is Forbid',
      ),
    );
    expect((await jobsOf(ns, forbid)).map((j) => j.metadata.name)).toEqual([first?.metadata.name]);
    await waitFor('replaced', async () => {
      const names = (await jobsOf(ns, replace)).map((j) => j.metadata.name);
      return JSON.stringify(names) === JSON.stringify([`replace-${at2 / MINUTE}`]);
    });
    const cur = await waitFor('replace active is the new job', async () => {
      const c = await cronJobs(ns).get('replace');
      return c.status?.active?.length === 1 && c.status.active[0]?.name === `replace-${at2 / MINUTE}` ? c : undefined;
    });
    expect(cur.status?.active?.[0]?.uid).not.toBe(replaced?.metadata.uid);
  });

  it('runs the schedule on the wall clock of spec.timeZone and stamps the Job in that zone', async () => {
    const ns = await createNamespace(env.api, 'crontz');
    await cronJobs(ns).create(cronJobOf('tokyo', { schedule: '0 9 * * *', timeZone: 'Asia/Tokyo' }));
    // The next 09:00 in Tokyo (UTC+9, no daylight saving) is the next 00:00 UTC.
    const at = (Math.floor(clock.now() / (24 * 3600_000)) + 1) * 24 * 3600_000;
    clock.set(at + 1000);
    const job = await waitForJob(ns, `tokyo-${at / MINUTE}`);
    expect(job.metadata.annotations?.[batchKey('cronjob-scheduled-timestamp')]).toBe(
      `${new Date(at + 9 * 3600_000).toISOString().slice(0, 19)}+09:00`,
    );
  });

  it('refuses bad CronJobs with 422: schedule, TZ prefix, timeZone, concurrencyPolicy, a selector in the template', async () => {
    const ns = await createNamespace(env.api, 'cronbad');
    const causes = async (cj: CronJob): Promise<string[]> => {
      try {
        await cronJobs(ns).create(cj);
      } catch (e) {
        const s = (
          e as { status?: { code?: number; details?: { causes?: Array<{ field?: string; message?: string }> } } }
        ).status;
        expect(s?.code).toBe(422);
        return (s?.details?.causes ?? []).map((c) => `${c.field ?? ''}: ${c.message ?? ''}`);
      }
      throw new Error('accepted');
    };
    expect(await causes(cronJobOf('a', { schedule: '61 * * * *' }))).toEqual([
      'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61',
    ]);
    expect(await causes(cronJobOf('b', { schedule: 'TZ=UTC * * * * *' }))).toEqual([
      'spec.schedule: Invalid value: "TZ=UTC * * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
    ]);
    expect(await causes(cronJobOf('c', { timeZone: 'Mars/Olympus' }))).toEqual([
      'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus',
    ]);
    const bad = cronJobOf('d', { concurrencyPolicy: 'Sometimes' as CronJob['spec']['concurrencyPolicy'] });
    expect((await causes(bad))[0]).toMatch(/^spec.concurrencyPolicy: Unsupported value: "Sometimes"/);
    const withSelector = cronJobOf('e');
    withSelector.spec.jobTemplate.spec.selector = { matchLabels: { a: 'b' } };
    expect(await causes(withSelector)).toEqual([
      'spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: `selector` will be auto-generated',
    ]);
  });
});

describe('ttl-after-finished-controller', () => {
  it('deletes a finished Job once ttlSecondsAfterFinished passed since it finished', async () => {
    const ns = await createNamespace(env.api, 'ttl');
    const job = await jobs(ns).create({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'short' },
      spec: { ttlSecondsAfterFinished: 100, template: cronJobOf('x').spec.jobTemplate.spec.template },
    });
    const done = await complete(ns, job);
    expect((await jobs(ns).get('short')).metadata.deletionTimestamp).toBeUndefined();
    ttlClock.set(Date.parse(done.status?.completionTime ?? '') + 101_000);
    await waitFor('the job deleted (foreground)', async () => {
      const j = await jobs(ns).find('short');
      return !j || !!j.metadata.deletionTimestamp;
    });
  });
});

describe('stock kubectl', () => {
  it('create cronjob, create job --from=cronjob, get jobs,cronjobs', async () => {
    const ns = await createNamespace(env.api, 'cronctl');
    const k = await kubectlIn(env.server.svcconfigPath);
    try {
      const created = await k.ok([
        '-n',
        ns,
        'create',
        'cronjob',
        'c',
        '--image=busybox',
        '--schedule=*/1 * * * *',
        '--',
        'true',
      ]);
      expect(created.stdout.trim()).toBe('cronjob.batch/c created');
      const fromCron = await k.ok(['-n', ns, 'create', 'job', 'y', '--from=cronjob/c']);
      expect(fromCron.stdout.trim()).toBe('job.batch/y created');
      const y = await jobs(ns).get('y');
      expect(y.metadata.annotations?.['cronjob.kubernetes.io/instantiate']).toBe('manual');
      expect(controllerOf(y)).toMatchObject({ kind: 'CronJob', name: 'c' });
      const table = await k.ok(['-n', ns, 'get', 'cronjobs', '-o', 'wide']);
      const [header, row] = table.stdout.trim().split('\n');
      expect(header?.split(/\s{2,}/)).toEqual([
        'NAME',
        'SCHEDULE',
        'TIMEZONE',
        'SUSPEND',
        'ACTIVE',
        'LAST SCHEDULE',
        'AGE',
        'CONTAINERS',
        'IMAGES',
        'SELECTOR',
      ]);
      expect(row).toMatch(/^c\s+\*\/1 \* \* \* \*\s+<none>\s+False\s+\d\s+\S+\s+\S+\s+c\s+busybox\s+<none>$/);
      const both = await k.ok(['-n', ns, 'get', 'jobs,cronjobs']);
      expect(both.stdout).toMatch(/job\.batch\/y\s+Running/);
      expect(both.stdout).toMatch(/cronjob\.batch\/c\s+\*\/1 \* \* \* \*/);
      expect((await k.ok(['-n', ns, 'get', 'cj'])).stdout).toMatch(/^NAME\s+SCHEDULE/);
    } finally {
      await k.stop();
    }
  });
});
