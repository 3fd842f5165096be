// `./scripts/cluster.sh up` from a cold cluster directory, against a cold etcd alone.
//
//  1. ceiling: etcd (the same binary and flags cluster.sh uses, fresh data dir) from spawn to
//              the first /health 200
//     figure:  `cluster.sh up --nodes 1` in a fresh temp SVC_CLUSTER_DIR from spawn to exit
//              (PKI, etcd, svc-apiserver /readyz, controller manager and scheduler /healthz,
//              the node joined with a bootstrap token and Ready); the build is done before
//              (cluster.sh still runs its incremental `tsc -b`, timed on its own in the detail)
//  2. ceiling: the same etcd cold start
//     figure:  from the spawn of `cluster.sh up` to the first pod Running (busybox running
//              `sleep 3600`, created with kubectl right after `up` returned, polled every 100 ms)
//  3. ceiling: one `kubectl get pod` spawn → exit against the running cluster (the client's
//              own cost, paid by each poll)
//     figure:  `kubectl run --command` spawn → the pod's phase Running
//
// Everything runs as separate processes on this machine; `cluster.sh down` and removal of
// the directory run also on failure, and leftovers (processes naming the directory) fail it.

import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, Scope, median, result, runIfMain, sleep, spawnTracked, stopProcess, svcTesting } from './lib.mjs';

const POLL_MS = 100;

export default async function run({ log = () => undefined } = {}) {
  return Scope.run(async (scope) => {
    const { freePorts } = await svcTesting();

    // The build is done already; this is what cluster.sh's own incremental check costs.
    log('  tsc -b (no-op, as cluster.sh runs it) ...');
    const tscMs = await timed(async () => {
      const p = spawnTracked(join(ROOT, 'node_modules/.bin/tsc'), ['-b', ...packagesTsconfigs()], { cwd: ROOT });
      const code = await p.exited;
      if (code !== 0) throw new Error(`tsc -b failed: ${p.output()}`);
    });

    // Ceiling: etcd alone, cold (median of 3).
    log('  etcd cold start → /health 200 (3 runs) ...');
    const etcdMs = [];
    for (let i = 0; i < 3; i++) etcdMs.push(await etcdColdStart(freePorts));

    // The figure: cluster.sh up from a cold directory.
    const dir = await mkdtemp(join(tmpdir(), 'svc-bench-cluster-up-'));
    const p = await freePorts(5);
    const env = {
      ...process.env, SVC_CLUSTER_DIR: dir,
      SVC_ETCD_PORT: String(p[0]), SVC_ETCD_PEER_PORT: String(p[1]), SVC_APISERVER_PORT: String(p[2]),
      SVC_CONTROLLER_MANAGER_PORT: String(p[3]), SVC_SCHEDULER_PORT: String(p[4]),
      SVC_NODE_PORT_BASE: String(await freeBase(freePorts, 1)), SVC_NODE_HEALTHZ_PORT_BASE: String(await freeBase(freePorts, 100)),
    };
    scope.defer(async () => {
      const down = spawnTracked('bash', ['scripts/cluster.sh', 'down'], { cwd: ROOT, env });
      await down.exited;
      let left = '';
      for (let i = 0; i < 50; i++) {
        left = spawnSync('pgrep', ['-af', dir], { encoding: 'utf8' }).stdout.trim();
        if (!left) break;
        await sleep(200);
      }
      if (left) spawnSync('pkill', ['-9', '-f', dir]);
      await rm(dir, { recursive: true, force: true });
      if (left) throw new Error(`processes left after cluster.sh down:\n${left}`);
    });

    log('  cluster.sh up --nodes 1 (cold directory) ...');
    const t0 = performance.now();
    const up = spawnTracked('bash', ['scripts/cluster.sh', 'up', '--nodes', '1'], { cwd: ROOT, env });
    const timer = setTimeout(() => up.child.kill('SIGKILL'), 240_000);
    const code = await up.exited;
    clearTimeout(timer);
    const upMs = performance.now() - t0;
    if (code !== 0) throw new Error(`cluster.sh up exited with ${code}:\n${up.output()}`);

    const kubeconfig = join(dir, 'admin.svcconfig');
    const kenv = { ...process.env, KUBECONFIG: kubeconfig };
    const kc = async (...args) => {
      const k = spawnTracked('kubectl', args, { env: kenv });
      const c = await k.exited;
      return { code: c, out: k.output() };
    };

    log('  first pod → Running ...');
    const tPod = performance.now();
    const created = await kc('run', 'first', '--image=busybox', '--restart=Never', '--command', '--', 'sh', '-c', 'sleep 3600');
    if (created.code !== 0) throw new Error(`kubectl run failed: ${created.out}`);
    const getMs = [];
    for (;;) {
      const tg = performance.now();
      const g = await kc('get', 'pod', 'first', '-o', 'jsonpath={.status.phase}');
      getMs.push(performance.now() - tg);
      if (g.code === 0 && g.out.includes('Running')) break;
      if (performance.now() - tPod > 60_000) {
        const d = await kc('describe', 'pod', 'first');
        throw new Error(`pod not Running after 60 s (last: ${g.out.trim()}):\n${d.out}`);
      }
      await sleep(POLL_MS);
    }
    const now = performance.now();
    const podMs = now - tPod;
    const totalMs = now - t0;

    const etcdMed = median(etcdMs);
    const etcdDetail = `etcd runs ${etcdMs.map((x) => x.toFixed(0)).join(', ')} ms`;
    return [
      result({
        name: '`cluster.sh up --nodes 1` cold dir → exit (nodes Ready) vs cold etcd → /health 200 (median of 3)',
        short: 'cluster.sh up vs cold etcd',
        value: upMs, ceiling: etcdMed, unit: 'ms',
        detail: `${etcdDetail}; of which no-op tsc -b ≈ ${tscMs.toFixed(0)} ms`,
      }),
      result({
        name: '`cluster.sh up` spawn → first pod Running vs cold etcd → /health 200 (median of 3)',
        short: 'up → first pod Running vs cold etcd',
        value: totalMs, ceiling: etcdMed, unit: 'ms',
        detail: etcdDetail,
      }),
      result({
        name: '`kubectl run` → pod Running vs one `kubectl get pod` spawn → exit (median)',
        short: 'pod create → Running vs kubectl get',
        value: podMs, ceiling: median(getMs), unit: 'ms',
        detail: `${getMs.length} polls every ${POLL_MS} ms`,
      }),
    ];
  });
}

function packagesTsconfigs() {
  const out = spawnSync('bash', ['-c', 'ls packages/*/tsconfig.json'], { cwd: ROOT, encoding: 'utf8' }).stdout;
  return out.split('\n').filter(Boolean);
}

async function timed(fn) {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** etcd as cluster.sh starts it, in a fresh data dir: spawn → first /health 200, in ms. */
async function etcdColdStart(freePorts) {
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-etcd-'));
  const [client, peer] = await freePorts(2);
  const t0 = performance.now();
  const p = spawnTracked('etcd', [
    '--name', 'svc', '--data-dir', join(dir, 'etcd'),
    '--listen-client-urls', `http://127.0.0.1:${client}`, '--advertise-client-urls', `http://127.0.0.1:${client}`,
    '--listen-peer-urls', `http://127.0.0.1:${peer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
    '--initial-cluster', `svc=http://127.0.0.1:${peer}`, '--initial-cluster-state', 'new',
  ]);
  try {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${client}/health`).then((r) => r.status === 200).catch(() => false);
      if (ok) return performance.now() - t0;
      if (p.child.exitCode !== null) throw new Error(`etcd exited: ${p.output()}`);
      if (performance.now() - t0 > 30_000) throw new Error(`etcd not healthy after 30 s: ${p.output()}`);
      await sleep(10);
    }
  } finally {
    await stopProcess(p);
    await rm(dir, { recursive: true, force: true });
  }
}

/** A base such that base+step was free a moment ago (node 1 uses base+step). */
async function freeBase(freePorts, step) {
  const [port] = await freePorts(1);
  return port - step;
}

await runIfMain(import.meta.url, run);
