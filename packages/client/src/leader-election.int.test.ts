import { uniqueName, waitFor } from '@svc/testing';
import { group, naming, type Lease } from '@svc/api';
import { LeaderElectionConfigError, LeaderElector, type RestClient, type LeaderElectionConfig } from './index.js';
import { withServerAndClient } from './server-testing.js';

// Two candidates on one Lease against a real server, with short durations.
const env = withServerAndClient();
let c: RestClient;
beforeAll(() => {
  c = env.client;
});

interface Candidate {
  elector: LeaderElector;
  stop: AbortController;
  run: Promise<void>;
  started: number;
  stopped: number;
  leading: boolean;
}

function candidate(name: string, identity: string, extra: Partial<LeaderElectionConfig> = {}): Candidate {
  const stop = new AbortController();
  const cand = { stop, started: 0, stopped: 0, leading: false } as Candidate;
  cand.elector = new LeaderElector({
    client: c,
    namespace: naming().systemNamespace,
    name,
    identity,
    leaseDurationMs: 1000,
    renewDeadlineMs: 500,
    retryPeriodMs: 100,
    onStartedLeading: async (signal) => {
      cand.started++;
      cand.leading = true;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      cand.leading = false;
    },
    onStoppedLeading: () => {
      cand.stopped++;
    },
    ...extra,
  });
  cand.run = cand.elector.run(stop.signal);
  return cand;
}

async function lease(name: string): Promise<Lease> {
  const r = await c.request(
    'GET',
    `/apis/${group('coordination')}/v1/namespaces/${naming().systemNamespace}/leases/${name}`,
  );
  expect(r.status).toBe(200);
  return r.json<Lease>();
}

/** Another holder writes itself into the lease for a minute, so its leader cannot renew. */
async function takeByForce(name: string): Promise<void> {
  const l = await lease(name);
  const spec = { ...l.spec, holderIdentity: 'intruder', leaseDurationSeconds: 60, renewTime: new Date().toISOString() };
  const r = await c.request(
    'PUT',
    `/apis/${group('coordination')}/v1/namespaces/${naming().systemNamespace}/leases/${name}`,
    { body: { ...l, spec } },
  );
  expect(r.status).toBe(200);
}

it('rejects renewDeadline >= leaseDuration (and other bad durations)', () => {
  const base = { client: c, namespace: 'x', name: 'y', identity: 'z', onStartedLeading: () => {} };
  expect(
    () => new LeaderElector({ ...base, leaseDurationMs: 1000, renewDeadlineMs: 1000, retryPeriodMs: 100 }),
  ).toThrow(LeaderElectionConfigError);
  expect(
    () => new LeaderElector({ ...base, leaseDurationMs: 1000, renewDeadlineMs: 2000, retryPeriodMs: 100 }),
  ).toThrow(/greater than renewDeadline/);
  expect(() => new LeaderElector({ ...base, leaseDurationMs: 1000, renewDeadlineMs: 500, retryPeriodMs: 500 })).toThrow(
    LeaderElectionConfigError,
  );
  expect(() => new LeaderElector({ ...base, leaseDurationMs: 1000, renewDeadlineMs: 500, retryPeriodMs: 0 })).toThrow(
    LeaderElectionConfigError,
  );
});

it('exactly one of two candidates leads; on release the other takes over at once', async () => {
  const name = uniqueName('lease');
  // Longer than the other tests' 1 s lease: this test asserts that the leader keeps leading, and
  // on a loaded machine a renewal can miss a 500 ms deadline (which the third test covers).
  const durations = { leaseDurationMs: 4000, renewDeadlineMs: 3000 };
  const a = candidate(name, 'a', durations);
  const b = candidate(name, 'b', durations);
  try {
    const first = await waitFor('a leader', () => (a.leading ? a : b.leading ? b : undefined));
    const other = first === a ? b : a;
    // Several renew periods pass with the same single leader.
    const l0 = await lease(name);
    await waitFor(
      'a few renewals',
      async () =>
        (await lease(name)).spec?.renewTime !== l0.spec?.renewTime &&
        (await lease(name)).metadata.resourceVersion !== l0.metadata.resourceVersion,
    );
    expect(first.leading && !other.leading).toBe(true);
    expect(first.elector.isLeader()).toBe(true);
    expect(other.elector.isLeader()).toBe(false);
    expect(l0.spec?.holderIdentity).toBe(first === a ? 'a' : 'b');
    const transitions = l0.spec?.leaseTransitions ?? 0;

    const released = Date.now();
    first.stop.abort();
    await first.run;
    expect(first.started).toBe(1);
    expect(first.stopped).toBe(1);
    await waitFor('the other candidate leads', () => other.leading);
    // Released, not expired: taken over before the lease could have expired.
    expect(Date.now() - released).toBeLessThan(durations.leaseDurationMs);
    const l1 = await lease(name);
    expect(l1.spec?.holderIdentity).toBe(other === a ? 'a' : 'b');
    expect(l1.spec?.leaseTransitions).toBe(transitions + 1);
  } finally {
    a.stop.abort();
    b.stop.abort();
    await Promise.all([a.run, b.run]);
  }
});

it('when the leader dies without releasing, the other takes over after the lease expires', async () => {
  const name = uniqueName('lease');
  const a = candidate(name, 'a', { releaseOnCancel: false });
  try {
    await waitFor('a leads', () => a.leading);
  } catch (e) {
    a.stop.abort();
    throw e;
  }
  const b = candidate(name, 'b');
  try {
    a.stop.abort();
    await a.run;
    const killed = Date.now();
    expect((await lease(name)).spec?.holderIdentity).toBe('a');
    await waitFor('b leads', () => b.leading, { timeoutMs: 10_000 });
    // Not before the lease (1 s from a's last renewal) expired.
    expect(Date.now() - killed).toBeGreaterThanOrEqual(400);
    const l = await lease(name);
    expect(l.spec?.holderIdentity).toBe('b');
    expect(l.spec?.leaseTransitions).toBe(1);
  } finally {
    b.stop.abort();
    await b.run;
  }
});

it('a leader that cannot renew within renewDeadline stops leading', async () => {
  const name = uniqueName('lease');
  const a = candidate(name, 'a');
  try {
    await waitFor('a leads', () => a.leading);
    // Someone else takes the lease by force; a cannot renew and gives up.
    await takeByForce(name);
    await waitFor('a stops leading', () => a.stopped === 1 && !a.leading, { timeoutMs: 10_000 });
    expect(a.elector.isLeader()).toBe(false);
  } finally {
    a.stop.abort();
    await a.run;
  }
});

it('a lost lease calls onStoppedLeading at once, before the work has wound down (client-go)', async () => {
  const name = uniqueName('lease');
  let finishWork = (): void => undefined;
  const workMayFinish = new Promise<void>((resolve) => (finishWork = resolve));
  const a = candidate(name, 'a', {
    // Work that takes its time to stop (in the scale run, binds still in flight).
    onStartedLeading: async (signal) => {
      a.leading = true;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      await workMayFinish;
      a.leading = false;
    },
  });
  try {
    await waitFor('a leads', () => a.leading);
    await takeByForce(name);
    await waitFor('onStoppedLeading', () => a.stopped === 1, { timeoutMs: 10_000 });
    // The work has not finished: onStoppedLeading did not wait for it.
    expect(a.leading).toBe(true);
    expect(a.elector.isLeader()).toBe(false);
  } finally {
    finishWork();
    a.stop.abort();
    await a.run;
  }
});
