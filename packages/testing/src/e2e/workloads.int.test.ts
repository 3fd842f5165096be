// `./scripts/cluster.sh up --nodes 2` as real processes (needs the build), driven with stock
// kubectl: a Deployment running a real command becomes Available, scales up and down, rolls
// out a new command, mounts a ConfigMap that kubectl exec reads and kubectl edit changes, and
// survives the loss of node-2's svclet (its pods are replaced on node-1); a DaemonSet, a
// StatefulSet, a Job made from a CronJob and an eviction refused by a PodDisruptionBudget;
// more controllers (DaemonSet rollout and undo, StatefulSet restart, ReplicationController,
// ttl-after-finished, endpointslice-mirroring, legacy token Secrets, the node TTL annotation,
// node-ipam's pod CIDRs, podgc on an unscheduled terminating pod, a CronJob firing on its schedule);
// expose, a taken ClusterIP refused, autoscale, cordon/uncordon and get all. Every port is free
// and passed through SVC_*_PORT; the cluster lives in a temp SVC_CLUSTER_DIR, and nothing
// started for it may outlive `cluster.sh down`.
import { spawnSync } from 'node:child_process';
import { readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { endpointSliceLabel, endpointsControllerKey, nodeTtlAnnotation, serviceAccountTokenSecretKey } from '@svc/api';
import { freePorts } from '../free-port.js';
import { kubectl, type KubectlResult } from '../kubectl.js';
import { waitFor } from '../wait.js';
import { runCommand } from '../run-command.js';

const ROOT = resolve(__dirname, '../../../..');
const DEP = 'ticker';
const OLD_CMD = ['sh', '-c', 'while true; do echo tick; sleep 1; done'];
const NEW_CMD = ['sh', '-c', 'while true; do echo tock-v2; sleep 1; done'];
// The nodes renew their Lease every 2 s here (nodeLeaseDurationSeconds 8: a quarter of it), so a
// grace period of 10 s spans five heartbeats. A grace period shorter than the heartbeat makes every
// node flap to Unknown between beats: the node lifecycle controller then sees "no node ready",
// enters full disruption mode and stops NoExecute tainting, and node-2's pods are never evicted.
const LEASE_S = 8;
const GRACE_S = 10;
// ConfigMap volumes are rewritten at the svclet's sync period (Kubernetes: 1 min); 5 s here.
const SVCLET_CONFIG = `nodeLeaseDurationSeconds: ${LEASE_S}\nsyncFrequency: 5s`;

interface Pod {
  metadata: { name: string; deletionTimestamp?: string };
  spec: { nodeName?: string; containers: Array<{ command?: string[] }> };
  status?: { phase?: string; conditions?: Array<{ type: string; status: string }> };
}
interface Deployment {
  status?: { availableReplicas?: number; updatedReplicas?: number; replicas?: number; readyReplicas?: number };
}
interface Node {
  metadata: { name: string };
  status?: { conditions?: Array<{ type: string; status: string }> };
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

function isFree(port: number): Promise<boolean> {
  return new Promise((ok) => {
    const s = createServer();
    s.once('error', () => ok(false));
    s.listen({ host: '127.0.0.1', port, exclusive: true }, () => s.close(() => ok(true)));
  });
}

/** A base such that base+step*1 and base+step*2 were free a moment ago (node i uses base+step*i). */
async function freeBase(step: number): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const [p] = await freePorts(1);
    if (p === undefined || p + step > 65535) continue;
    if (await isFree(p + step)) return p - step;
  }
  throw new Error(`no free port pair ${step} apart`);
}

const log = (s: string): void => {
  process.stderr.write(`[workloads] ${s}\n`);
};

/** Processes whose working directory is inside `dir`: containers, whose command lines do not name it. */
function runningIn(dir: string): number[] {
  const real = realpathSync(dir);
  const pids: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readlinkSync(`/proc/${e}/cwd`).startsWith(`${real}/`)) pids.push(Number(e));
    } catch {
      /* gone, or not ours to read */
    }
  }
  return pids;
}

describe('workloads on cluster.sh up --nodes 2 (stock kubectl)', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let admin: string;
  let upOk = false;
  /** The pod of the Deployment mounting a ConfigMap, and when the ConfigMap was edited. */
  let webPod = '';
  let editedAt = 0;

  const k = async (...args: string[]): Promise<KubectlResult> => kubectl(admin, args, { timeoutMs: 120_000 });
  const kOk = async (...args: string[]): Promise<string> => {
    const r = await k(...args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: exit ${r.code}\n${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  const cat = async (): Promise<string> => kOk('exec', webPod, '--', 'cat', '/etc/config/greeting');
  const pods = async (): Promise<Pod[]> =>
    (JSON.parse(await kOk('get', 'pods', '-l', `app=${DEP}`, '-o', 'json')) as { items: Pod[] }).items;
  const live = (ps: Pod[]): Pod[] => ps.filter((p) => !p.metadata.deletionTimestamp);
  const running = (ps: Pod[]): Pod[] => live(ps).filter((p) => p.status?.phase === 'Running');
  const deployment = async (): Promise<Deployment> =>
    JSON.parse(await kOk('get', 'deployment', DEP, '-o', 'json')) as Deployment;
  const ready = (n: Node | undefined): string | undefined =>
    n?.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  const summary = (ps: Pod[]): string =>
    ps
      .map(
        (p) =>
          `${p.metadata.name}@${p.spec.nodeName ?? '-'}:${p.status?.phase ?? '-'}${p.metadata.deletionTimestamp ? '(terminating)' : ''}`,
      )
      .join(', ');

  /** Waits until exactly `n` pods exist (none terminating), all Running; returns them. */
  async function settle(n: number, timeoutMs: number): Promise<Pod[]> {
    let last: Pod[] = [];
    try {
      return await waitFor(
        `exactly ${n} Running pods`,
        async () => {
          last = await pods();
          return last.length === n && running(last).length === n ? last : undefined;
        },
        { timeoutMs, intervalMs: 500 },
      );
    } catch (e) {
      throw new Error(`${(e as Error).message}; last seen: ${summary(last)}`, { cause: e });
    }
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-workloads-'));
    admin = join(dir, 'admin.svcconfig');
    const p = await freePorts(5);
    const at = (i: number): string => String(p[i]);
    env = {
      ...process.env,
      SVC_CLUSTER_DIR: dir,
      SVC_ETCD_PORT: at(0),
      SVC_ETCD_PEER_PORT: at(1),
      SVC_APISERVER_PORT: at(2),
      SVC_CONTROLLER_MANAGER_PORT: at(3),
      SVC_SCHEDULER_PORT: at(4),
      // Node i serves on base+i and base+100*i.
      SVC_NODE_PORT_BASE: String(await freeBase(1)),
      SVC_NODE_HEALTHZ_PORT_BASE: String(await freeBase(100)),
      SVC_APISERVER_ARGS: '--default-not-ready-toleration-seconds=3 --default-unreachable-toleration-seconds=3',
      // node-ipam gives each node a /24 of the cluster CIDR (checked with the other controllers).
      SVC_CONTROLLER_MANAGER_ARGS: `--node-monitor-grace-period=${GRACE_S}s --node-monitor-period=500ms --allocate-node-cidrs --cluster-cidr=10.244.0.0/16`,
      SVC_SVCLET_CONFIG: SVCLET_CONFIG,
    };
    const started = Date.now();
    const up = await run('bash', ['scripts/cluster.sh', 'up', '--nodes', '2'], { env, timeoutMs: 240_000 });
    log(`up: exit ${up.code} in ${Date.now() - started} ms`);
    if (up.code !== 0) throw new Error(`cluster.sh up --nodes 2 failed:\n${up.out}`);
    upOk = true;
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
          left = [
            spawnSync('pgrep', ['-af', dir], { encoding: 'utf8' }).stdout.trim(),
            ...runningIn(dir).map((p) => `${p} (cwd in the cluster dir)`),
          ]
            .filter(Boolean)
            .join('\n');
          return left === '';
        },
        { timeoutMs: 10_000, intervalMs: 200 },
      );
    } catch {
      /* reported below */
    }
    if (left) {
      log(`left behind after down:\n${left}`);
      spawnSync('pkill', ['-9', '-f', dir]);
      for (const p of runningIn(dir)) process.kill(p, 'SIGKILL');
    }
    await rm(dir, { recursive: true, force: true });
    expect(left).toBe('');
  }, 180_000);

  it('runs a 3-replica Deployment of a real command until it is Available', async () => {
    expect(upOk).toBe(true);
    const nodes = (JSON.parse(await kOk('get', 'nodes', '-o', 'json')) as { items: Node[] }).items;
    expect(nodes.map((n) => `${n.metadata.name}=${ready(n)}`).sort()).toEqual(['node-1=True', 'node-2=True']);
    const t0 = Date.now();
    await kOk('create', 'deployment', DEP, '--image=busybox', '--replicas=3', '--', ...OLD_CMD);
    await kOk('rollout', 'status', `deployment/${DEP}`, '--timeout=90s');
    log(`rollout of 3 replicas: ${Date.now() - t0} ms`);
    const ps = await settle(3, 30_000);
    log(`pods: ${summary(ps)}`);
    await waitFor('3 available replicas', async () => (await deployment()).status?.availableReplicas === 3, {
      timeoutMs: 30_000,
      intervalMs: 500,
    });
    const first = ps[0]?.metadata.name ?? '';
    await waitFor(`"tick" in the logs of ${first}`, async () => (await kOk('logs', first)).includes('tick'), {
      timeoutMs: 20_000,
      intervalMs: 500,
    });
  }, 150_000);

  it('create configmap, a Deployment mounting it, exec cat of the mounted file, then kubectl edit of the ConfigMap', async () => {
    await kOk('create', 'configmap', 'web-config', '--from-literal=greeting=hello');
    const manifest = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            volumes: [{ name: 'config', configMap: { name: 'web-config' } }],
            containers: [
              {
                name: 'web',
                image: 'busybox',
                command: ['sh', '-c', 'exec sleep 3600'],
                volumeMounts: [{ name: 'config', mountPath: '/etc/config' }],
              },
            ],
          },
        },
      },
    };
    const applied = await kubectl(admin, ['apply', '-f', '-'], { stdin: JSON.stringify(manifest), timeoutMs: 60_000 });
    expect(applied.code).toBe(0);
    await kOk('rollout', 'status', 'deployment/web', '--timeout=90s');
    webPod = await waitFor(
      'the web pod Running',
      async () => {
        const items = (JSON.parse(await kOk('get', 'pods', '-l', 'app=web', '-o', 'json')) as { items: Pod[] }).items;
        return running(items)[0]?.metadata.name;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(await cat()).toBe('hello');
    // kubectl edit with an editor that changes the value (kubectl runs KUBE_EDITOR through sh).
    const edited = await runCommand('kubectl', ['edit', 'configmap', 'web-config'], {
      env: { ...process.env, KUBECONFIG: admin, KUBE_EDITOR: 'sed -i s/greeting:\\ hello/greeting:\\ hi-again/' },
      timeoutMs: 60_000,
    });
    expect(edited.stdout + edited.stderr).toContain('configmap/web-config edited');
    editedAt = Date.now();
  }, 150_000);

  it('runs a Job to completion on the node agents, and fails one whose pod fails past its backoffLimit', async () => {
    await kOk('create', 'job', 'once', '--image=busybox', '--', 'sh', '-c', 'echo job ran');
    await kOk('wait', '--for=condition=complete', 'job/once', '--timeout=90s');
    expect(await kOk('logs', 'job/once')).toContain('job ran');
    const failing = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'fails' },
      spec: {
        backoffLimit: 0,
        template: {
          spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['false'] }] },
        },
      },
    };
    const created = await kubectl(admin, ['apply', '-f', '-'], { stdin: JSON.stringify(failing), timeoutMs: 60_000 });
    expect(created.code).toBe(0);
    await kOk('wait', '--for=condition=failed', 'job/fails', '--timeout=90s');
    const reason = await kOk('get', 'job', 'fails', '-o', 'jsonpath={.status.conditions[?(@.type=="Failed")].reason}');
    expect(reason).toBe('BackoffLimitExceeded');
  }, 200_000);

  it('scales to 5 and back to 3', async () => {
    await kOk('scale', 'deployment', DEP, '--replicas=5');
    let t0 = Date.now();
    await settle(5, 60_000);
    await waitFor('5 available replicas', async () => (await deployment()).status?.availableReplicas === 5, {
      timeoutMs: 30_000,
      intervalMs: 500,
    });
    log(`scale 3 -> 5: ${Date.now() - t0} ms`);
    await kOk('scale', 'deployment', DEP, '--replicas=3');
    t0 = Date.now();
    await settle(3, 60_000);
    await waitFor(
      '3 replicas in the Deployment status',
      async () => {
        const s = (await deployment()).status;
        return s?.replicas === 3 && s.availableReplicas === 3;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    log(`scale 5 -> 3: ${Date.now() - t0} ms`);
  }, 150_000);

  it('rolls out a new command', async () => {
    const before = new Set((await pods()).map((p) => p.metadata.name));
    const t0 = Date.now();
    await kOk(
      'patch',
      'deployment',
      DEP,
      '--type',
      'json',
      '-p',
      JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/command', value: NEW_CMD }]),
    );
    await kOk('rollout', 'status', `deployment/${DEP}`, '--timeout=120s');
    const ps = await settle(3, 60_000);
    log(`rolling update: ${Date.now() - t0} ms; pods: ${summary(ps)}`);
    for (const p of ps) {
      expect(before.has(p.metadata.name)).toBe(false);
      expect(p.spec.containers[0]?.command).toEqual(NEW_CMD);
    }
    await waitFor(
      '3 updated and available replicas in the Deployment status',
      async () => {
        const d = (await deployment()).status;
        return d?.updatedReplicas === 3 && d.availableReplicas === 3 && d.replicas === 3;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    const one = ps[0]?.metadata.name ?? '';
    const out = await waitFor(
      `"tock-v2" in the logs of ${one}`,
      async () => {
        const o = await kOk('logs', one);
        return o.includes('tock-v2') ? o : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 500 },
    );
    expect(out).not.toContain('tick');
  }, 240_000);

  // Checked two tests later: the svclet rewrites the volume at its sync period (5 s here, see
  // SVCLET_CONFIG), as Kubernetes does, so the wait overlaps the scaling and the rollout.
  it('the ConfigMap edit is seen in the mounted file', async () => {
    expect(webPod).not.toBe('');
    await waitFor('the edit in the mounted file', async () => (await cat()) === 'hi-again', {
      timeoutMs: 30_000,
      intervalMs: 1000,
    });
    log(`ConfigMap edit seen in the mounted file ${Date.now() - editedAt} ms after kubectl edit`);
    await kOk('delete', 'deployment', 'web');
    await kOk('delete', 'configmap', 'web-config');
  }, 120_000);

  it('a DaemonSet on each node, a StatefulSet in order, a Job from a CronJob, and an eviction a budget refuses', async () => {
    const sleepy = { image: 'busybox', command: ['sleep', '3600'] };
    const manifest = [
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'agent' },
        spec: {
          selector: { matchLabels: { app: 'agent' } },
          template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', ...sleepy }] } },
        },
      },
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'db' },
        spec: {
          serviceName: 'db',
          replicas: 2,
          selector: { matchLabels: { app: 'db' } },
          template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'c', ...sleepy }] } },
        },
      },
      {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: 'nightly' },
        spec: {
          schedule: '0 3 * * *',
          jobTemplate: {
            spec: {
              template: {
                spec: {
                  restartPolicy: 'Never',
                  containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'true'] }],
                },
              },
            },
          },
        },
      },
    ];
    await kubectl(admin, ['apply', '-f', '-'], {
      stdin: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifest }),
      timeoutMs: 60_000,
    }).then((r) => expect(r.code).toBe(0));
    await kOk('rollout', 'status', 'daemonset/agent', '--timeout=90s');
    const agents = (JSON.parse(await kOk('get', 'pods', '-l', 'app=agent', '-o', 'json')) as { items: Pod[] }).items;
    expect(
      live(agents)
        .map((p) => p.spec.nodeName)
        .sort(),
    ).toEqual(['node-1', 'node-2']);
    await kOk('rollout', 'status', 'statefulset/db', '--timeout=90s');
    expect((await kOk('get', 'pods', '-l', 'app=db', '-o', 'name')).trim().split('\n').sort()).toEqual([
      'pod/db-0',
      'pod/db-1',
    ]);
    await kOk('scale', 'statefulset', 'db', '--replicas=1');
    await waitFor(
      'db-1 to go (scale down from the highest ordinal)',
      async () => (await k('get', 'pod', 'db-1')).code !== 0,
      {
        timeoutMs: 60_000,
        intervalMs: 500,
      },
    );
    await kOk('create', 'job', 'manual', '--from=cronjob/nightly');
    await kOk('wait', '--for=condition=complete', 'job/manual', '--timeout=90s');
    // One replica and minAvailable 1: the budget allows no disruption, so the eviction is refused.
    await kOk('create', 'poddisruptionbudget', 'db', '--selector=app=db', '--min-available=1');
    await waitFor(
      'the budget to count db-0 healthy',
      async () => (await kOk('get', 'pdb', 'db', '-o', 'jsonpath={.status.currentHealthy}')) === '1',
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    const evicted = await kubectl(
      admin,
      ['create', '--raw', '/api/v1/namespaces/default/pods/db-0/eviction', '-f', '-'],
      {
        stdin: JSON.stringify({
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name: 'db-0', namespace: 'default' },
        }),
        timeoutMs: 30_000,
      },
    );
    expect(evicted.code).not.toBe(0);
    expect(evicted.stderr).toMatch(/Cannot evict pod as it would violate the pod's disruption budget/);
    await kOk('delete', 'pdb', 'db');
    await kOk('delete', 'daemonset', 'agent', '--wait=true');
    await kOk('delete', 'statefulset', 'db', '--wait=true');
    await kOk('delete', 'cronjob', 'nightly', '--wait=true');
  }, 300_000);

  it('more controllers on the node agents: DaemonSet undo, StatefulSet restart, ReplicationController, TTL after finished, mirroring, legacy tokens, node TTL, node CIDRs, pod GC, a scheduled CronJob', async () => {
    // podgc: a pod never scheduled (no such scheduler) and held by a finalizer, then deleted: the
    // garbage collector's sweep (every 20 s) marks it Failed and deletes it with grace 0.
    const held = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'stranded', finalizers: ['example.com/hold'] },
      spec: { schedulerName: 'nobody', containers: [{ name: 'c', image: 'busybox', command: ['true'] }] },
    };
    expect((await kubectl(admin, ['create', '-f', '-'], { stdin: JSON.stringify(held), timeoutMs: 30_000 })).code).toBe(
      0,
    );
    await kOk('delete', 'pod', 'stranded', '--wait=false');
    // cronjob: a schedule of every minute starts a Job at the next minute (checked at the end).
    await kOk('create', 'cronjob', 'minutely', '--image=busybox', '--schedule=* * * * *', '--', 'true');
    const cmd = (text: string): string[] => ['sh', '-c', `while true; do echo ${text}; sleep 1; done`];
    const template = (app: string, command: string[]): object => ({
      metadata: { labels: { app } },
      spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'busybox', command }] },
    });
    const items = [
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'beacon' },
        spec: { selector: { matchLabels: { app: 'beacon' } }, template: template('beacon', cmd('beacon-v1')) },
      },
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'shelf' },
        spec: {
          replicas: 2,
          serviceName: 'shelf',
          selector: { matchLabels: { app: 'shelf' } },
          template: template('shelf', cmd('shelf')),
        },
      },
      {
        apiVersion: 'v1',
        kind: 'ReplicationController',
        metadata: { name: 'legacy' },
        spec: { replicas: 2, template: template('legacy', cmd('legacy')) },
      },
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'brief' },
        spec: {
          ttlSecondsAfterFinished: 0,
          template: {
            spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['true'] }] },
          },
        },
      },
      // A Service without a selector and its Endpoints written by hand: mirrored into an EndpointSlice.
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'outside' }, spec: { ports: [{ port: 80 }] } },
      {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'outside' },
        subsets: [{ addresses: [{ ip: '10.1.2.3' }], ports: [{ port: 80 }] }],
      },
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 'robot-token',
          annotations: { [serviceAccountTokenSecretKey('service-account.name')]: 'default' },
        },
        type: serviceAccountTokenSecretKey('type'),
      },
    ];
    const created = await kubectl(admin, ['create', '-f', '-'], {
      stdin: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }),
      timeoutMs: 60_000,
    });
    expect(created.code).toBe(0);
    const commandsOf = async (app: string): Promise<string[]> =>
      live((JSON.parse(await kOk('get', 'pods', '-l', `app=${app}`, '-o', 'json')) as { items: Pod[] }).items)
        .filter((p) => p.status?.phase === 'Running')
        .map((p) => `${p.spec.nodeName ?? '-'}:${p.spec.containers[0]?.command?.[2] ?? ''}`)
        .sort();
    const waitCommands = async (app: string, want: string[]): Promise<void> => {
      let last: string[] = [];
      try {
        await waitFor(
          `${app} pods running ${want.join(', ')}`,
          async () => {
            last = await commandsOf(app);
            return JSON.stringify(last) === JSON.stringify(want);
          },
          { timeoutMs: 90_000, intervalMs: 500 },
        );
      } catch (e) {
        throw new Error(`${(e as Error).message}; last seen: ${last.join(', ')}`, { cause: e });
      }
    };

    // DaemonSet: a new command rolls out on both nodes; undo goes back to revision 1's.
    await kOk('rollout', 'status', 'daemonset/beacon', '--timeout=90s');
    const v1 = cmd('beacon-v1')[2] ?? '';
    const v2 = cmd('beacon-v2')[2] ?? '';
    await waitCommands('beacon', [`node-1:${v1}`, `node-2:${v1}`]);
    await kOk(
      'patch',
      'daemonset',
      'beacon',
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/command', value: cmd('beacon-v2') }]),
    );
    await kOk('rollout', 'status', 'daemonset/beacon', '--timeout=120s');
    await waitCommands('beacon', [`node-1:${v2}`, `node-2:${v2}`]);
    const history = await kOk('rollout', 'history', 'daemonset/beacon');
    expect(history).toMatch(/^1\s/m);
    expect(history).toMatch(/^2\s/m);
    await kOk('rollout', 'undo', 'daemonset/beacon');
    await kOk('rollout', 'status', 'daemonset/beacon', '--timeout=120s');
    await waitCommands('beacon', [`node-1:${v1}`, `node-2:${v1}`]);

    // StatefulSet: a restart replaces both pods (new uids) under the same names.
    await kOk('rollout', 'status', 'statefulset/shelf', '--timeout=90s');
    const uids = async (): Promise<string> =>
      (await kOk('get', 'pods', 'shelf-0', 'shelf-1', '-o', 'jsonpath={.items[*].metadata.uid}')).trim();
    const before = await uids();
    await kOk('rollout', 'restart', 'statefulset/shelf');
    await kOk('rollout', 'status', 'statefulset/shelf', '--timeout=120s');
    const after = await uids();
    expect(after.split(' ')).toHaveLength(2);
    for (const uid of before.split(' ')) expect(after).not.toContain(uid);

    // ReplicationController: two pods, then one.
    await waitFor(
      'legacy to have 2 ready replicas',
      async () => (await kOk('get', 'rc', 'legacy', '-o', 'jsonpath={.status.readyReplicas}')) === '2',
      {
        timeoutMs: 90_000,
        intervalMs: 500,
      },
    );
    await kOk('scale', 'rc', 'legacy', '--replicas=1');
    await waitFor(
      'legacy to be down to 1 pod',
      async () =>
        (await commandsOf('legacy')).length === 1 &&
        (await kOk('get', 'rc', 'legacy', '-o', 'jsonpath={.status.replicas}')) === '1',
      {
        timeoutMs: 60_000,
        intervalMs: 500,
      },
    );

    // ttl-after-finished: the Job goes once complete.
    await waitFor(
      'job/brief to complete and be deleted (ttlSecondsAfterFinished 0)',
      async () => (await k('get', 'job', 'brief')).code !== 0,
      {
        timeoutMs: 90_000,
        intervalMs: 500,
      },
    );

    // endpointslice-mirroring: the hand-written Endpoints in a slice of its own.
    await waitFor(
      'the mirrored EndpointSlice',
      async () => {
        const slices = JSON.parse(
          await kOk('get', 'endpointslices', '-l', `${endpointSliceLabel('service-name')}=outside`, '-o', 'json'),
        ) as {
          items: Array<{ metadata: { labels?: Record<string, string> }; endpoints?: Array<{ addresses: string[] }> }>;
        };
        return slices.items.some(
          (sl) =>
            sl.metadata.labels?.[endpointSliceLabel('managed-by')] === endpointsControllerKey('mirroring-manager') &&
            sl.endpoints?.[0]?.addresses[0] === '10.1.2.3',
        );
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );

    // serviceaccount-token: the legacy token Secret gets its token, CA and namespace.
    const filled = await waitFor(
      'the token in robot-token',
      async () => {
        const data = (
          JSON.parse(await kOk('get', 'secret', 'robot-token', '-o', 'json')) as { data?: Record<string, string> }
        ).data;
        return data?.token ? data : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(Object.keys(filled).sort()).toEqual(['ca.crt', 'namespace', 'token']);
    // The token authenticates as the account (which may not list pods).
    const asRobot = await kubectl(
      admin,
      ['get', 'pods', '--token', Buffer.from(filled.token ?? '', 'base64').toString()],
      { timeoutMs: 30_000 },
    );
    expect(asRobot.stderr).toContain('User "system:serviceaccount:default:default" cannot list resource "pods"');

    // ttl: every node carries the annotation of how long its agent may cache objects (0 s below 100 nodes).
    const ttls = (
      await kOk(
        'get',
        'nodes',
        '-o',
        `jsonpath={.items[*].metadata.annotations.${nodeTtlAnnotation().replace(/\./g, '\\.')}}`,
      )
    ).trim();
    expect(ttls).toBe('0 0');

    // node-ipam: a distinct /24 of --cluster-cidr on each node.
    const cidrs = (await kOk('get', 'nodes', '-o', 'jsonpath={.items[*].spec.podCIDR}')).trim().split(' ');
    expect(cidrs).toHaveLength(2);
    for (const c of cidrs) expect(c).toMatch(/^10\.244\.\d+\.0\/24$/);
    expect(new Set(cidrs).size).toBe(2);

    // podgc: the stranded pod is Failed (its finalizer still holds it); then let it go.
    await waitFor(
      'podgc to mark the unscheduled terminating pod Failed',
      async () => (await kOk('get', 'pod', 'stranded', '-o', 'jsonpath={.status.phase}')).trim() === 'Failed',
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    await kOk('patch', 'pod', 'stranded', '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]');
    await waitFor('the stranded pod to go', async () => (await k('get', 'pod', 'stranded')).code !== 0, {
      timeoutMs: 30_000,
      intervalMs: 500,
    });

    // cronjob: by now (or within a minute) the schedule has fired and its Job completed.
    await waitFor(
      'a Job of cronjob/minutely to complete and the CronJob to record it',
      async () => {
        const jobs = JSON.parse(await kOk('get', 'jobs', '-o', 'json')) as {
          items: Array<{
            metadata: { ownerReferences?: Array<{ kind: string; name: string }> };
            status?: { succeeded?: number };
          }>;
        };
        const done = jobs.items.some(
          (j) =>
            j.metadata.ownerReferences?.some((o) => o.kind === 'CronJob' && o.name === 'minutely') &&
            (j.status?.succeeded ?? 0) > 0,
        );
        return (
          done && (await kOk('get', 'cronjob', 'minutely', '-o', 'jsonpath={.status.lastSuccessfulTime}')).trim() !== ''
        );
      },
      { timeoutMs: 150_000, intervalMs: 1000 },
    );

    for (const [kind, name] of [
      ['cronjob', 'minutely'],
      ['daemonset', 'beacon'],
      ['statefulset', 'shelf'],
      ['rc', 'legacy'],
      ['service', 'outside'],
      ['secret', 'robot-token'],
    ] as const)
      await kOk('delete', kind, name, '--wait=true');
  }, 480_000);

  it('expose, a ClusterIP already taken, autoscale, cordon and uncordon, get all', async () => {
    await kOk('expose', 'deployment', DEP, '--port=80', '--target-port=8080');
    const ip = (await kOk('get', 'service', DEP, '-o', 'jsonpath={.spec.clusterIP}')).trim();
    expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    const taken = await k('create', 'service', 'clusterip', 'again', `--clusterip=${ip}`, '--tcp=80:8080');
    expect(taken.code).not.toBe(0);
    expect(taken.stderr).toMatch(/provided IP is already allocated/);
    await kOk('autoscale', 'deployment', DEP, '--min=3', '--max=4', '--cpu-percent=80');
    expect(await kOk('get', 'hpa', DEP, '-o', 'jsonpath={.spec.maxReplicas}')).toBe('4');
    await kOk('cordon', 'node-1');
    expect(await kOk('get', 'node', 'node-1', '-o', 'jsonpath={.spec.unschedulable}')).toBe('true');
    await kOk('uncordon', 'node-1');
    const all = await kOk('get', 'all');
    for (const name of [`service/${DEP}`, `deployment.apps/${DEP}`, `horizontalpodautoscaler.autoscaling/${DEP}`])
      expect(all).toContain(name);
    await kOk('delete', 'hpa', DEP);
    await kOk('delete', 'service', DEP);
  }, 120_000);

  it('replaces the pods of a node whose svclet was killed, on node-1', async () => {
    const onNode = async (node: string): Promise<string[]> =>
      running(await pods())
        .filter((p) => p.spec.nodeName === node)
        .map((p) => p.metadata.name);
    let onNode2 = await onNode('node-2');
    log(`pods on node-2 before the kill: ${onNode2.join(', ') || '(none)'}`);
    if (onNode2.length === 0) {
      // The scores put every replica on node-1 (the other tests' pods weigh on node-2 too, and
      // the rolling update places each new pod beside the old ones): move one over, so node-2
      // has a pod to lose. With node-1 cordoned, the replacement can only go to node-2.
      await kOk('cordon', 'node-1');
      const [first] = await onNode('node-1');
      await kOk('delete', 'pod', first ?? '', '--wait=false');
      onNode2 = await waitFor(
        'a replacement on node-2',
        async () => {
          const on2 = await onNode('node-2');
          return on2.length > 0 && running(await pods()).length === 3 ? on2 : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      await kOk('uncordon', 'node-1');
      log(`moved one replica to node-2: ${onNode2.join(', ')}`);
    }
    expect(onNode2.length).toBeGreaterThan(0);
    // Both nodes Ready (and stay so between heartbeats, see GRACE_S) before the kill.
    const nodes = (JSON.parse(await kOk('get', 'nodes', '-o', 'json')) as { items: Node[] }).items;
    expect(nodes.map((n) => `${n.metadata.name}=${ready(n)}`).sort()).toEqual(['node-1=True', 'node-2=True']);
    // svcadm join starts svclet as a child: kill the svclet itself (node, svclet.mjs), of this cluster only.
    const lines = spawnSync('pgrep', ['-af', 'hostname-override node-2'], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter((l) => l.includes(`${dir}/node-2`) && /svclet\.m?js/.test(l) && !/svcadm\.m?js/.test(l));
    expect(lines).toHaveLength(1);
    const pid = Number(lines[0]?.split(' ')[0]);
    process.kill(pid, 'SIGKILL');
    const killedAt = Date.now();
    log(`killed node-2's svclet (pid ${pid})`);
    await waitFor(
      'node-2 NotReady/Unknown',
      async () => {
        const n = JSON.parse(await kOk('get', 'node', 'node-2', '-o', 'json')) as Node;
        return ready(n) !== 'True';
      },
      { timeoutMs: (GRACE_S + 30) * 1000, intervalMs: 250 },
    );
    log(`node-2 not Ready after ${Date.now() - killedAt} ms`);
    // The last renewal was at most one beat (LEASE_S / 4) before the kill.
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual((GRACE_S - LEASE_S / 4) * 1000);
    let last: Pod[] = [];
    try {
      await waitFor(
        '3 available replicas, all on node-1',
        async () => {
          last = await pods();
          const r = running(last);
          const d = (await deployment()).status;
          return (
            r.length === 3 &&
            live(last).length === 3 &&
            r.every((p) => p.spec.nodeName === 'node-1') &&
            d?.availableReplicas === 3
          );
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
    } catch (e) {
      throw new Error(`${(e as Error).message}; last seen: ${summary(last)}`, { cause: e });
    }
    log(`pods replaced after ${Date.now() - killedAt} ms: ${summary(last)}`);
    for (const name of onNode2) expect(live(last).map((p) => p.metadata.name)).not.toContain(name);
    const n1 = JSON.parse(await kOk('get', 'node', 'node-1', '-o', 'json')) as Node;
    expect(ready(n1)).toBe('True');
  }, 200_000);

  it('joins one more node with a fresh bootstrap token: cluster.sh join', async () => {
    const joined = await run('bash', ['scripts/cluster.sh', 'join'], { env, timeoutMs: 120_000 });
    if (joined.code !== 0) throw new Error(`cluster.sh join exited ${joined.code}:\n${joined.out}`);
    const m =
      /^joining (node-\d+): svcadm join 127\.0\.0\.1:\d+ --token ([a-z0-9]{6})\.[a-z0-9]{16} --discovery-token-ca-cert-hash sha256:[0-9a-f]{64}/m.exec(
        joined.out,
      );
    expect(m).not.toBeNull();
    const [, name, tokenId] = m ?? [];
    const n = JSON.parse(await kOk('get', 'node', name ?? '', '-o', 'json')) as Node;
    expect(ready(n)).toBe('True');
    // The token is one the command made for this join.
    expect(await kOk('get', 'secrets', '-n', 'svc-system', `bootstrap-token-${tokenId}`, '-o', 'name')).toContain(
      `bootstrap-token-${tokenId}`,
    );
    log(`cluster.sh join: ${name} Ready`);
  }, 150_000);

  it('drains node-1 under a PodDisruptionBudget: its pods move to node-2 one disruption at a time', async () => {
    await kOk('create', 'poddisruptionbudget', DEP, `--selector=app=${DEP}`, '--max-unavailable=1');
    await waitFor(
      'the budget to count 3 healthy pods and allow 1 disruption',
      async () =>
        (await kOk('get', 'pdb', DEP, '-o', 'jsonpath={.status.currentHealthy}/{.status.disruptionsAllowed}')) ===
        '3/1',
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const healthy = (ps: Pod[]): number =>
      live(ps).filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
    // Watch the healthy count while kubectl drains: the budget allows one pod down at a time.
    let fewest = 3;
    let draining = true;
    const watching = (async () => {
      while (draining) {
        fewest = Math.min(fewest, healthy(await pods()));
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const drained = await k('drain', 'node-1', '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=150s');
    draining = false;
    await watching;
    if (drained.code !== 0) throw new Error(`kubectl drain: exit ${drained.code}\n${drained.stderr}${drained.stdout}`);
    expect(drained.stdout).toContain('node/node-1 drained');
    expect(await kOk('get', 'node', 'node-1', '-o', 'jsonpath={.spec.unschedulable}')).toBe('true');
    const after = await settle(3, 60_000);
    expect(after.map((p) => p.spec.nodeName)).toEqual(['node-2', 'node-2', 'node-2']);
    const onNode1 = JSON.parse(
      await kOk('get', 'pods', '-A', '--field-selector=spec.nodeName=node-1', '-o', 'json'),
    ) as { items: Pod[] };
    expect(live(onNode1.items).filter((p) => !['Succeeded', 'Failed'].includes(p.status?.phase ?? ''))).toEqual([]);
    expect(fewest).toBeGreaterThanOrEqual(2);
    log(`drain of node-1: fewest healthy ${DEP} pods while draining ${fewest} (budget: 3 - 1)`);
    await kOk('uncordon', 'node-1');
    await kOk('delete', 'pdb', DEP);
  }, 240_000);
});
