// Needs the build (`tsc -b packages/*/tsconfig.json`): it runs dist/bin/svc-controller-manager.js as real processes.
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
  type TestApiServer,
} from '@svc/testing';

const BIN = resolve(__dirname, '../../dist/bin/svc-controller-manager.js');
const LEASE_MS = 3000;
const RETRY_MS = 500;
const PERIODS = { leaseDuration: `${LEASE_MS}ms`, renewDeadline: '2s', retryPeriod: `${RETRY_MS}ms` };

interface Candidate extends TestProcess {
  port: number;
}

describe('svc-controller-manager processes', () => {
  let server: TestApiServer;
  let dir: string;
  const running: Candidate[] = [];

  beforeAll(async () => {
    server = await startTestApiServer();
    dir = await mkdtemp(join(tmpdir(), 'svc-cm-bin-'));
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
      '--controllers=serviceaccount',
      '--authorization-always-allow-paths=/healthz,/metrics',
      ...extra,
    ]);
    const c = { ...p, port };
    running.push(c);
    return c;
  }

  /** 1 when the candidate reports itself leader on /metrics, 0 when standby, undefined when it does not answer. */
  async function leading(c: Candidate): Promise<number | undefined> {
    try {
      const ca = await readFile(join(dir, String(c.port), 'ca.crt'), 'utf8');
      const r = await new HttpsClient(`https://127.0.0.1:${c.port}`, ca).request('GET', '/metrics');
      const m = /^leader_election_master_status\{name="svc-controller-manager"\} (\d)$/m.exec(r.text);
      return m ? Number(m[1]) : undefined;
    } catch {
      return undefined;
    }
  }

  it('flags: --help exits 0, a bad flag exits 2 with one line', async () => {
    expect((await runCommand(process.execPath, [BIN, '--help'])).code).toBe(0);
    const bad = await runCommand(process.execPath, [BIN, '--leader-elect-renew-deadline=20s']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toEqual([
      'Error: --leader-elect-renew-deadline (20s) must be less than --leader-elect-lease-duration (15s)',
    ]);
  });

  it('one of two candidates leads; killing it hands over within lease duration + retry period, never two at once', async () => {
    const [pa, pb] = await freePorts(2);
    const a = start(pa ?? 0);
    const b = start(pb ?? 0);
    // Both serving, one leading (a process still starting does not answer yet).
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
    // Both settle; the standby must stay standby while the leader lives.
    for (let i = 0; i < 10; i++) {
      expect(await leading(standby)).toBe(0);
      expect(await leading(leader)).toBe(1);
    }
    expect(standby.log.text).not.toMatch(/starting controller/);
    expect(leader.log.text).toMatch(/starting controller.*serviceaccount-controller/);

    const killedAt = Date.now();
    leader.child.kill('SIGKILL');
    await leader.exited;
    await waitFor('the standby to lead', async () => (await leading(standby)) === 1, {
      timeoutMs: 15_000,
      intervalMs: 50,
    });
    const handover = Date.now() - killedAt;
    // The lease runs out LEASE_MS after the last renewal (≤ the kill), the next attempt comes within a
    // jittered retry period; 1.5 s more covers the request round trips and polling on a loaded 2-core machine.
    expect(handover).toBeLessThanOrEqual(LEASE_MS + RETRY_MS * 1.2 + 1500);
    expect(standby.log.text).toMatch(/starting controller.*serviceaccount-controller/);
    const lease = await server.client.request(
      'GET',
      '/apis/coordination.svc.io/v1/namespaces/svc-system/leases/svc-controller-manager',
    );
    expect(lease.json<{ spec: { leaseTransitions: number } }>().spec.leaseTransitions).toBeGreaterThanOrEqual(1);
    console.log(
      `controller-manager leader handover after SIGKILL: ${handover} ms (lease ${LEASE_MS} ms, retry ${RETRY_MS} ms)`,
    );

    standby.child.kill('SIGTERM');
    expect(await standby.exited).toBe(0);
  });

  it('a leader whose lease is taken away stops its loops and exits 1', async () => {
    const [port] = await freePorts(1);
    const c = start(port ?? 0, ['--leader-elect-resource-name', 'stolen']);
    await waitFor('leadership', async () => /starting controller/.test(c.log.text), { timeoutMs: 15_000 });
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
