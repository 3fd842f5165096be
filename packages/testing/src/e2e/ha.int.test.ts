// `./scripts/cluster.sh up --ha --nodes 1` as real processes (needs the build): 3 etcd members,
// 2 API servers behind svc-lb, 2 controller managers and 2 schedulers, 1 node; then the
// scheduler leader, the controller-manager leader, the etcd leader and one API server are
// killed with SIGKILL.
// Every port is free and passed through SVC_*_PORT; the cluster lives in a temp SVC_CLUSTER_DIR.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePorts } from '../free-port.js';
import { HttpsClient } from '../https-client.js';
import { kubectl } from '../kubectl.js';
import { waitFor } from '../wait.js';
import { runCommand } from '../run-command.js';

const ROOT = resolve(__dirname, '../../../..');
const LEASE_S = 4;
const RETRY_S = 0.5;

interface Lease {
  spec?: { holderIdentity?: string };
}
interface Pod {
  spec?: { nodeName?: string };
  status?: { phase?: string };
}

/** A command's exit code and its stdout and stderr together. */
async function run(
  cmd: string,
  args: string[],
  { env, timeoutMs }: { env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<{ code: number | null; out: string }> {
  const r = await runCommand(cmd, args, { env, cwd: ROOT, timeoutMs });
  return { code: r.code, out: r.stdout + r.stderr };
}

/** POST to etcd's JSON gateway of one member. */
function etcdStatus(port: number): Promise<{ header?: { member_id?: string }; leader?: string }> {
  return new Promise((ok, fail) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path: '/v3/maintenance/status', method: 'POST', timeout: 1000 },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => {
          body += d.toString();
        });
        res.on('end', () => {
          try {
            ok(JSON.parse(body) as { leader?: string });
          } catch (e) {
            fail(e as Error);
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', fail);
    req.end('{}');
  });
}

/** One request on a fresh connection (no pooled socket to a dead backend). */
function freshGet(url: string, ca: string, token: string): Promise<number> {
  return new Promise((ok, fail) => {
    const req = httpsRequest(
      url,
      { ca, agent: false, headers: { authorization: `Bearer ${token}` }, timeout: 5000 },
      (res) => {
        res.resume();
        res.on('end', () => ok(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', fail);
    req.end();
  });
}

function killPidFile(file: string): Promise<number> {
  return readFile(file, 'utf8').then((s) => {
    const pid = Number(s.trim());
    process.kill(pid, 'SIGKILL');
    return pid;
  });
}

const log = (s: string): void => {
  process.stderr.write(`[ha] ${s}\n`);
};

describe('cluster.sh up --ha', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let api: HttpsClient;
  let ca: string;
  let token: string;
  let lbUrl: string;
  let etcdPorts: number[];
  let upOk = false;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-ha-'));
    const p = await freePorts(17);
    const at = (i: number): string => String(p[i]);
    etcdPorts = [p[0] ?? 0, p[2] ?? 0, p[4] ?? 0];
    env = {
      ...process.env,
      SVC_CLUSTER_DIR: dir,
      SVC_ETCD_PORT: at(0),
      SVC_ETCD_PEER_PORT: at(1),
      SVC_ETCD_2_PORT: at(2),
      SVC_ETCD_2_PEER_PORT: at(3),
      SVC_ETCD_3_PORT: at(4),
      SVC_ETCD_3_PEER_PORT: at(5),
      SVC_APISERVER_PORT: at(6),
      SVC_APISERVER_1_PORT: at(7),
      SVC_APISERVER_2_PORT: at(8),
      SVC_CONTROLLER_MANAGER_PORT: at(9),
      SVC_CONTROLLER_MANAGER_2_PORT: at(10),
      SVC_SCHEDULER_PORT: at(11),
      SVC_SCHEDULER_2_PORT: at(12),
      // Node i serves on base+i and base+100*i.
      SVC_NODE_PORT_BASE: String((p[13] ?? 1) - 1),
      SVC_NODE_HEALTHZ_PORT_BASE: String((p[14] ?? 100) - 100),
      SVC_CONTROLLER_MANAGER_ARGS: `--leader-elect-lease-duration ${LEASE_S}s --leader-elect-renew-deadline 3s --leader-elect-retry-period ${RETRY_S * 1000}ms`,
      SVC_SCHEDULER_ARGS: `--leader-elect-lease-duration ${LEASE_S}s --leader-elect-renew-deadline 3s --leader-elect-retry-period ${RETRY_S * 1000}ms`,
    };
    lbUrl = `https://127.0.0.1:${at(6)}`;
    const started = Date.now();
    const up = await run('bash', ['scripts/cluster.sh', 'up', '--ha', '--nodes', '1'], { env, timeoutMs: 240_000 });
    log(`up: exit ${up.code} in ${Date.now() - started} ms`);
    if (up.code !== 0) throw new Error(`cluster.sh up --ha failed:\n${up.out}`);
    upOk = true;
    ca = await readFile(join(dir, 'pki', 'ca.crt'), 'utf8');
    token = (await readFile(join(dir, 'tokens.csv'), 'utf8')).split(',')[0] ?? '';
    api = new HttpsClient(lbUrl, ca, { token });
  }, 300_000);

  afterAll(async () => {
    if (!dir) return;
    const down = await run('bash', ['scripts/cluster.sh', 'down'], { env, timeoutMs: 120_000 });
    if (down.code !== 0) log(`down failed:\n${down.out}`);
    // Processes may take a moment to disappear from the process table after their kill.
    let left = '';
    try {
      await waitFor(
        'no process of the cluster left',
        () => {
          left = spawnSync('pgrep', ['-af', dir], { encoding: 'utf8' }).stdout.trim();
          return left === '';
        },
        { timeoutMs: 10_000, intervalMs: 200 },
      );
    } catch {
      /* reported below */
    }
    if (left) spawnSync('pkill', ['-9', '-f', dir]);
    await rm(dir, { recursive: true, force: true });
    expect(left).toBe('');
  }, 180_000);

  it('status shows every component running and healthy', async () => {
    expect(upOk).toBe(true);
    const st = await run('bash', ['scripts/cluster.sh', 'status'], { env, timeoutMs: 60_000 });
    for (const c of [
      'etcd-1',
      'etcd-2',
      'etcd-3',
      'apiserver-1',
      'apiserver-2',
      'lb',
      'controller-manager-1',
      'controller-manager-2',
      'scheduler-1',
      'scheduler-2',
      'node-1',
      'node-1-runtime',
    ])
      expect(st.out).toMatch(new RegExp(`^${c}: running`, 'm'));
    for (const c of [
      'etcd-1 health',
      'etcd-3 health',
      'apiserver-1 readyz',
      'apiserver-2 readyz',
      'lb readyz',
      'controller-manager-2 healthz',
      'scheduler-2 healthz',
    ]) {
      expect(st.out).toContain(`${c}: ok`);
    }
    expect(st.out).toMatch(/node-1\s+Ready/);
    // The node reaches the cluster through the LB.
    const boot = await readFile(join(dir, 'node-1', 'svclet.svcconfig'), 'utf8');
    expect(boot).toContain(lbUrl);
  }, 90_000);

  // The Lease takeovers come before the etcd leader and API server kills: a write outage longer
  // than the renew deadline (the etcd kill's is ~7 s) makes a leader exit with 'leaderelection
  // lost', as Kubernetes' do, and with no supervisor here the standby would then be the only one
  // left when its takeover is tested.
  it('hands the scheduler Lease to the standby, which schedules the next pod', async () => {
    await killLeader('scheduler');
    const createdAt = Date.now();
    const pod = await api.post('/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'after-scheduler-takeover' },
      spec: { containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'sleep 3600'] }] },
    });
    expect(pod.status).toBe(201);
    const get = async (): Promise<Pod> =>
      (await api.get('/api/v1/namespaces/default/pods/after-scheduler-takeover')).json<Pod>();
    await waitFor('the pod bound', async () => (await get()).spec?.nodeName, { timeoutMs: 30_000, intervalMs: 100 });
    const boundAt = Date.now();
    await waitFor('the pod Running', async () => (await get()).status?.phase === 'Running', {
      timeoutMs: 60_000,
      intervalMs: 300,
    });
    log(
      `pod after the scheduler takeover: bound in ${boundAt - createdAt} ms, Running ${Date.now() - boundAt} ms later`,
    );
  }, 120_000);

  it('hands the controller-manager Lease to the standby and keeps reconciling', async () => {
    await killLeader('controller-manager');
    const createdAt = Date.now();
    const dep = await api.post('/apis/apps/v1/namespaces/default/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'after-takeover' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'after-takeover' } },
        template: {
          metadata: { labels: { app: 'after-takeover' } },
          spec: { containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'sleep 3600'] }] },
        },
      },
    });
    expect(dep.status).toBe(201);
    await waitFor(
      '2 Running pods',
      async () => {
        const pods = (await api.get('/api/v1/namespaces/default/pods?labelSelector=app%3Dafter-takeover')).json<{
          items: Pod[];
        }>().items;
        return pods.filter((p) => p.status?.phase === 'Running').length >= 2;
      },
      { timeoutMs: 60_000, intervalMs: 300 },
    );
    log(`Deployment after takeover: 2 pods Running in ${Date.now() - createdAt} ms`);
  }, 120_000);

  it('keeps every acknowledged write when the etcd leader is killed during writes', async () => {
    const leader = await waitFor(
      'an etcd leader',
      async () => {
        const st = await Promise.all(etcdPorts.map((port) => etcdStatus(port).catch(() => undefined)));
        const i = st.findIndex((s) => s?.leader && s.leader !== '0' && s.leader === s.header?.member_id);
        return i >= 0 ? i + 1 : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    const acked: string[] = [];
    let failures = 0;
    let killedAt = 0;
    let recoveredAt = 0;
    const deadline = Date.now() + 90_000;
    for (let i = 0; Date.now() < deadline; i++) {
      if (i === 20) {
        await killPidFile(join(dir, `etcd-${leader}.pid`));
        killedAt = Date.now();
        log(`killed etcd-${leader} (the leader) after ${acked.length} writes`);
      }
      const name = `w-${i}`;
      const r = await api
        .post('/api/v1/namespaces/default/configmaps', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name },
          data: { i: String(i) },
        })
        .catch(() => undefined);
      if (r?.status === 201) {
        acked.push(name);
        if (killedAt && !recoveredAt) recoveredAt = Date.now();
      } else {
        failures++;
        await new Promise((r2) => setTimeout(r2, 100));
      }
      if (recoveredAt && acked.length >= 60) break;
    }
    expect(killedAt).toBeGreaterThan(0);
    expect(recoveredAt).toBeGreaterThan(0);
    log(
      `etcd leader kill: writes answered again after ${recoveredAt - killedAt} ms; ${failures} failed writes; ${acked.length} acknowledged`,
    );
    expect(recoveredAt - killedAt).toBeLessThan(15_000);
    for (const name of acked) {
      const r = await api.get(`/api/v1/namespaces/default/configmaps/${name}`);
      expect(`${name} ${r.status}`).toBe(`${name} 200`);
    }
    const list = await api.get('/api/v1/namespaces/default/configmaps');
    const names = new Set(
      list.json<{ items: Array<{ metadata: { name: string } }> }>().items.map((c) => c.metadata.name),
    );
    expect(acked.filter((n) => !names.has(n))).toEqual([]);
  }, 150_000);

  it('keeps answering through the LB when one API server is killed', async () => {
    const pid = await killPidFile(join(dir, 'apiserver-1.pid'));
    const killedAt = Date.now();
    log(`killed apiserver-1 (pid ${pid})`);
    const statuses: number[] = [];
    let firstOk = 0;
    for (let i = 0; i < 40; i++) {
      const s = await freshGet(`${lbUrl}/api/v1/namespaces/default/configmaps?limit=1`, ca, token).catch(() => 0);
      statuses.push(s);
      if (s === 200 && !firstOk) firstOk = Date.now();
    }
    log(
      `LB failover: first answer ${firstOk - killedAt} ms after the kill; ${statuses.filter((s) => s !== 200).length} of 40 requests failed`,
    );
    expect(statuses.every((s) => s === 200)).toBe(true);
    // kubectl too (its own connections), and the health checks mark the dead backend.
    const k = await kubectl(join(dir, 'admin.svcconfig'), ['get', 'configmaps', 'w-0', '-o', 'name'], {
      timeoutMs: 30_000,
    });
    expect(k.stdout.trim()).toBe('configmap/w-0');
    await waitFor(
      'the LB marking apiserver-1 unhealthy',
      async () => (await readFile(join(dir, 'lb.log'), 'utf8')).includes(`${env.SVC_APISERVER_1_PORT} unhealthy`),
      { timeoutMs: 10_000, intervalMs: 200 },
    );
  }, 120_000);

  /** SIGKILLs the leader of `component` (found by its "became leader" log line); resolves once the standby holds the Lease. */
  async function killLeader(component: 'controller-manager' | 'scheduler'): Promise<void> {
    const leasePath = `/apis/coordination.svc.io/v1/namespaces/svc-system/leases/svc-${component}`;
    const holder = await waitFor(
      'a Lease holder',
      async () => (await api.get(leasePath)).json<Lease>().spec?.holderIdentity,
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const logs = await Promise.all([1, 2].map((i) => readFile(join(dir, `${component}-${i}.log`), 'utf8')));
    const idx = logs.findIndex((l) =>
      l.split('\n').some((line) => line.includes('became leader') && line.includes(holder)),
    );
    expect(idx).toBeGreaterThanOrEqual(0);
    // The standby must still be running for a takeover to happen; if it is not, say why.
    const standby = 2 - idx;
    const standbyPid = Number((await readFile(join(dir, `${component}-${standby}.pid`), 'utf8')).trim());
    try {
      process.kill(standbyPid, 0);
    } catch {
      const tail = (logs[standby - 1] ?? '').trim().split('\n').slice(-5).join('\n');
      throw new Error(`the standby ${component}-${standby} is not running; its log ends:\n${tail}`);
    }
    await killPidFile(join(dir, `${component}-${idx + 1}.pid`));
    const killedAt = Date.now();
    const next = await waitFor(
      'a new Lease holder',
      async () => {
        const h = (await api.get(leasePath)).json<Lease>().spec?.holderIdentity;
        return h && h !== holder ? h : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const took = Date.now() - killedAt;
    log(`${component} takeover: ${holder} -> ${next} in ${took} ms (lease ${LEASE_S}s + retry ${RETRY_S}s)`);
    expect(took).toBeLessThan((LEASE_S + RETRY_S) * 1000 + 3000);
  }
});
