// Needs the build (`tsc -b packages/*/tsconfig.json`): it runs dist/bin/svc-scheduler.js as real processes.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  componentTestArgs,
  freePorts,
  HttpsClient,
  runCommand,
  spawnProcess,
  startTestApiServer,
  waitFor,
  type TestProcess,
  type Json,
  type TestApiServer,
  createDefaultServiceAccount,
} from '@svc/testing';
import { nodeObject, podObject } from '../scheduler-testing.js';

const BIN = resolve(__dirname, '../../dist/bin/svc-scheduler.js');
const LEASE_MS = 3000;
const RETRY_MS = 500;
const PERIODS = { leaseDuration: `${LEASE_MS}ms`, renewDeadline: '2s', retryPeriod: `${RETRY_MS}ms` };

interface Candidate extends TestProcess {
  port: number;
}

describe('svc-scheduler processes', () => {
  let server: TestApiServer;
  let dir: string;
  const running: Candidate[] = [];

  beforeAll(async () => {
    // No node lifecycle controller lifts the not-ready taint TaintNodesByCondition gives new nodes.
    server = await startTestApiServer({ args: ['--disable-admission-plugins=TaintNodesByCondition'] });
    await createDefaultServiceAccount(server.client, 'default');
    dir = await mkdtemp(join(tmpdir(), 'svc-sched-bin-'));
    for (const n of ['bin-node-a', 'bin-node-b'])
      await server.client.request('POST', '/api/v1/nodes', { body: nodeObject(n) });
  });
  afterAll(async () => {
    for (const c of running) c.child.kill('SIGKILL');
    await Promise.all(running.map((c) => c.exited));
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  function start(port: number, extra: string[] = []): Candidate {
    const p = spawnProcess(`candidate ${port}`, 'node', [
      BIN,
      ...componentTestArgs({ server, port, certDir: join(dir, String(port)), leaderElection: PERIODS }),
      '--authorization-always-allow-paths=/healthz,/metrics',
      '--v=2',
      ...extra,
    ]);
    const c = { ...p, port };
    running.push(c);
    return c;
  }

  /** The candidate's /metrics, or undefined while it does not answer. */
  async function metrics(c: Candidate): Promise<string | undefined> {
    try {
      const ca = await readFile(join(dir, String(c.port), 'ca.crt'), 'utf8');
      return (await new HttpsClient(`https://127.0.0.1:${c.port}`, ca).request('GET', '/metrics')).text;
    } catch {
      return undefined;
    }
  }

  async function leading(c: Candidate): Promise<number | undefined> {
    const m = /^leader_election_master_status\{name="svc-scheduler"\} (\d)$/m.exec((await metrics(c)) ?? '');
    return m ? Number(m[1]) : undefined;
  }

  async function scheduledCount(c: Candidate): Promise<number> {
    const m = /^scheduler_schedule_attempts_total\{result="scheduled",profile="default-scheduler"\} (\d+)$/m.exec(
      (await metrics(c)) ?? '',
    );
    return Number(m?.[1] ?? 0);
  }

  async function createPods(prefix: string, n: number): Promise<string[]> {
    const names = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
    for (const name of names)
      await server.client.request('POST', '/api/v1/namespaces/default/pods', { body: podObject(name, { cpu: '10m' }) });
    return names;
  }

  async function allBound(names: string[]): Promise<void> {
    await waitFor(
      `${names.length} pods bound`,
      async () => {
        const list = (await server.client.request('GET', '/api/v1/namespaces/default/pods')).json<{ items: Json[] }>()
          .items;
        return names.every((n) => list.find((p) => p.metadata.name === n)?.spec?.nodeName);
      },
      { timeoutMs: 20_000, intervalMs: 50 },
    );
  }

  /** Waits until each pod has a Scheduled event, then requires exactly one each. */
  async function oneScheduledEventEach(names: string[]): Promise<void> {
    const scheduled = (e: Json, name: string): boolean => e.involvedObject.name === name && e.reason === 'Scheduled';
    const events = await waitFor('a Scheduled event for each pod', async () => {
      const items = (await server.client.request('GET', '/api/v1/namespaces/default/events')).json<{ items: Json[] }>()
        .items;
      return names.every((n) => items.some((e) => scheduled(e, n))) ? items : undefined;
    });
    for (const name of names) expect(events.filter((e) => scheduled(e, name))).toHaveLength(1);
  }

  it("flags: --help exits 0 and lists the scheduler's flags; a bad flag exits 2 with one line", async () => {
    const help = await runCommand(process.execPath, [BIN, '--help']);
    expect(help.code).toBe(0);
    const out = help.stdout;
    expect(out).toMatch(/--secure-port <port>.*\(default: 10259\)/);
    expect(out).toMatch(/--leader-elect-resource-name <value>.*\(default: "svc-scheduler"\)/);
    const bad = await runCommand(process.execPath, [BIN, '--leader-elect-renew-deadline=20s']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toEqual([
      'Error: --leader-elect-renew-deadline (20s) must be less than --leader-elect-lease-duration (15s)',
    ]);
  });

  it('one of two candidates schedules; killing it hands over, and no pod is bound twice', async () => {
    const [pa, pb] = await freePorts(2);
    const a = start(pa ?? 0);
    const b = start(pb ?? 0);
    const leader = await waitFor(
      'a leader and a standby',
      async () => {
        const [la, lb] = await Promise.all([leading(a), leading(b)]);
        expect(la === 1 && lb === 1).toBe(false);
        if (la === undefined || lb === undefined) return undefined;
        return la === 1 ? a : lb === 1 ? b : undefined;
      },
      { timeoutMs: 15_000 },
    );
    const standby = leader === a ? b : a;
    const before = await createPods('before', 10);
    await allBound(before);
    expect(await scheduledCount(leader)).toBe(10);
    expect(await scheduledCount(standby)).toBe(0);
    expect(await leading(standby)).toBe(0);
    await oneScheduledEventEach(before);

    const killedAt = Date.now();
    leader.child.kill('SIGKILL');
    await leader.exited;
    const during = await createPods('during', 10);
    await waitFor('the standby to lead', async () => (await leading(standby)) === 1, {
      timeoutMs: 15_000,
      intervalMs: 50,
    });
    const handover = Date.now() - killedAt;
    await allBound(during);
    const boundAt = Date.now() - killedAt;
    expect(handover).toBeLessThanOrEqual(LEASE_MS + RETRY_MS * 1.2 + 1500);
    expect(await scheduledCount(standby)).toBe(10);
    // Exactly one binding per pod: one Scheduled event each, and no binding was refused.
    await oneScheduledEventEach([...before, ...during]);
    expect(standby.log.text).not.toMatch(/bound or deleted meanwhile/);
    const lease = await server.client.request(
      'GET',
      '/apis/coordination.svc.io/v1/namespaces/svc-system/leases/svc-scheduler',
    );
    expect(lease.json<{ spec: { leaseTransitions: number } }>().spec.leaseTransitions).toBeGreaterThanOrEqual(1);
    console.log(
      `scheduler leader handover after SIGKILL: ${handover} ms, 10 pods created meanwhile all bound after ${boundAt} ms (lease ${LEASE_MS} ms, retry ${RETRY_MS} ms)`,
    );

    standby.child.kill('SIGTERM');
    expect(await standby.exited).toBe(0);
  });

  it('a leader whose lease is taken away stops scheduling and exits 1', async () => {
    const [port] = await freePorts(1);
    const c = start(port ?? 0, ['--leader-elect-resource-name', 'stolen']);
    await waitFor('leadership', async () => /starting scheduler/.test(c.log.text), { timeoutMs: 15_000 });
    const path = '/apis/coordination.svc.io/v1/namespaces/svc-system/leases/stolen';
    const lease = (await server.client.request('GET', path)).json<{ spec: Record<string, unknown> }>();
    const now = new Date().toISOString().replace('Z', '000Z');
    const put = await server.client.request('PUT', path, {
      body: {
        ...lease,
        spec: { ...lease.spec, holderIdentity: 'someone-else', renewTime: now, leaseDurationSeconds: 60 },
      },
    });
    expect(put.status).toBe(200);
    expect(await c.exited).toBe(1);
    expect(c.log.text).toMatch(/leaderelection lost/);
  });
});
