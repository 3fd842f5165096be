// The scale run (issue 21): simulated nodes, then Deployments totalling many pods scheduled
// and Running, on one API server, one etcd, the controller manager and the scheduler, all on
// this machine (`./scripts/cluster.sh up --nodes 0 --simulated-nodes N`).
//
// SVC_SCALE_NODES (default 1000) nodes and SVC_SCALE_PODS (default 30000) pods, in
// Deployments of at most 1,000 replicas; SVC_SCALE_TIMEOUT_S (default 2700) bounds the wait;
// progress is logged every SVC_SCALE_LOG_S (default 30) seconds. SVC_SCALE_HEAP_SNAPSHOT=<file>
// saves the server's heap snapshot after the lists.
// The controller manager and the scheduler get a client rate limit of SVC_SCALE_QPS (default
// 50, burst twice that) instead of their 20/50 per-second defaults, as Kubernetes' own scale
// tests raise them; the simulated nodes keep the svclet's per-node default. The API server's
// total concurrency limit is sized to this machine: --max-requests-inflight
// SVC_SCALE_MAX_REQUESTS_INFLIGHT (default 100) and --max-mutating-requests-inflight
// SVC_SCALE_MAX_MUTATING_REQUESTS_INFLIGHT (default 50) instead of Kubernetes' 400 and 200, so
// that what one process cannot finish waits in priority and fairness's queues, where the
// leader-election and node-high levels have seats of their own (docs/simulated-nodes.md,
// session 38). SVC_APISERVER_ARGS adds to them.
//
// While the pods come up, probes run at a fixed rate: a ConfigMap update every 100 ms (a
// mutating request) and a GET of one pod every 100 ms (a single-object get). When all pods
// are Running: 10 consistent lists of every pod. Figures and ceilings (raw etcd through the
// bench's etcd3 client, same run, same etcd, another prefix):
//
//  1. create of the Deployments → every pod Running, against raw etcd writing as many
//     pod-sized values three times (create, binding, status) at 64 in flight
//  2. mutating request p99 (target < 1 s, Kubernetes' SLO), against a raw etcd put p99
//  3. single-object get p99 (target < 1 s), against a raw etcd get p99
//  4. list of all pods p99 (target < 5 s), against a raw etcd range over as many pod values
//  5. the API server's RSS against the JSON size of everything stored (target ≤ 2×)
//  6. etcd's database size against the same JSON size (no target)
// The detail also gives the p99 of every mutating request the API server served during the
// run (from its request-duration histogram, bucket upper bound) and how often a node left
// Ready (must be 0: the run fails otherwise). The run also fails at once when a component
// exits (the controller manager and the scheduler exit when they lose their Lease).
//
// First runs (27 November 2026, 2 cores): 50 nodes / 1,000 pods in 28-39 s. 1,000 nodes /
// 5,000 pods did not finish: after ~3 minutes the controller manager and the scheduler both
// failed to renew their Leases within the 10 s renew deadline and exited (4,592 pods Running,
// 408 Pending; the API server's RSS 947 MB). 28 November, with the components as their own
// users, the node graph kept incrementally and the scheduler's node sampling: 1,000 nodes /
// 5,000 pods Running in 250 s, mutating p99 1.10 s, get p99 0.55 s, no node flap. 29 November,
// with 16 accept handles, the client's retries on 429 and these defaults: 1,000 nodes / 30,000
// pods Running in 1,895 s, no node flap, no Lease lost (mutating p99 2.56 s, get p99 2.16 s,
// list p99 6.61 s, RSS 6.6x). See docs/simulated-nodes.md.

import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { join } from 'node:path';
import {
  Scope,
  clusterClient,
  clusterUp,
  etcd3,
  percentile,
  result,
  runIfMain,
  runLoad,
  sleep,
  watchObjects,
} from './lib.mjs';

const NODES = Number(process.env.SVC_SCALE_NODES ?? 1000);
const PODS = Number(process.env.SVC_SCALE_PODS ?? 30_000);
const TIMEOUT_S = Number(process.env.SVC_SCALE_TIMEOUT_S ?? 2700);
const QPS = Number(process.env.SVC_SCALE_QPS ?? 50);
const INFLIGHT = Number(process.env.SVC_SCALE_MAX_REQUESTS_INFLIGHT ?? 100);
const MUTATING_INFLIGHT = Number(process.env.SVC_SCALE_MAX_MUTATING_REQUESTS_INFLIGHT ?? 50);
const PER_DEPLOYMENT = 1000;
const NS = 'scale';
const PROBE_MS = 100;
const LISTS = 10;
const SNAPSHOT = process.env.SVC_SCALE_HEAP_SNAPSHOT;
const LOG_S = Number(process.env.SVC_SCALE_LOG_S ?? 30);

export default async function scale({ log = () => undefined } = {}) {
  return Scope.run(async (scope) => {
    const clientRate = `--svc-api-qps=${QPS} --svc-api-burst=${QPS * 2}`;
    log(`  cluster.sh up --nodes 0 --simulated-nodes ${NODES} ...`);
    const { dir, upMs, ports } = await clusterUp(scope, {
      nodes: 0,
      prefix: 'svc-bench-scale-',
      timeoutMs: 600_000,
      args: ['--simulated-nodes', String(NODES)],
      env: {
        SVC_CONTROLLER_MANAGER_ARGS: clientRate,
        SVC_SCHEDULER_ARGS: clientRate,
        SVC_APISERVER_ARGS: [
          `--max-requests-inflight=${INFLIGHT} --max-mutating-requests-inflight=${MUTATING_INFLIGHT}`,
          SNAPSHOT ? `--debug-socket-path=${SNAPSHOT}.sock` : '',
          process.env.SVC_APISERVER_ARGS ?? '',
        ]
          .join(' ')
          .trim(),
      },
    });
    log(`  ${NODES} nodes Ready; up took ${(upMs / 1000).toFixed(1)} s`);
    const { server, api, must } = await clusterClient(scope, { dir, ports });

    const flaps = await watchNodeReadiness(server, must, scope);
    await must('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    await must('POST', `/api/v1/namespaces/${NS}/configmaps`, { metadata: { name: 'probe' }, data: { n: '0' } });

    // Probes at a fixed rate while the pods come up.
    const mutating = [];
    const gets = [];
    let probing = true;
    let probePod;
    const probeLoop = async (period, fn) => {
      while (probing) {
        const t = performance.now();
        await fn().catch(() => undefined);
        await sleep(Math.max(0, period - (performance.now() - t)));
      }
    };
    let n = 0;
    const probes = Promise.all([
      probeLoop(PROBE_MS, async () => {
        const t = performance.now();
        const r = await api.call(
          'PATCH',
          `/api/v1/namespaces/${NS}/configmaps/probe`,
          { data: { n: String(++n) } },
          'application/merge-patch+json',
        );
        if (r.status === 200) mutating.push(performance.now() - t);
      }),
      probeLoop(PROBE_MS, async () => {
        if (!probePod) return;
        const t = performance.now();
        const r = await api.call('GET', `/api/v1/namespaces/${NS}/pods/${probePod}`);
        if (r.status === 200) gets.push(performance.now() - t);
      }),
    ]);

    const deployments = Math.ceil(PODS / PER_DEPLOYMENT);
    log(`  creating ${deployments} Deployments for ${PODS} pods ...`);
    const t0 = performance.now();
    for (let i = 0; i < deployments; i++) {
      const replicas = Math.min(PER_DEPLOYMENT, PODS - i * PER_DEPLOYMENT);
      await must('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, deployment(`d${i}`, replicas));
    }
    let running = 0;
    let lastLog = 0;
    for (;;) {
      await mustBeAlive(dir, ['apiserver', 'controller-manager', 'scheduler', 'node-simulated']);
      const list = await must('GET', `/apis/apps/v1/namespaces/${NS}/deployments`);
      running = list.items.reduce((sum, d) => sum + (d.status?.readyReplicas ?? 0), 0);
      const created = list.items.reduce((sum, d) => sum + (d.status?.replicas ?? 0), 0);
      if (!probePod && running > 0) {
        const one = await must('GET', `/api/v1/namespaces/${NS}/pods?limit=1`);
        probePod = one.items[0]?.metadata.name;
      }
      const s = (performance.now() - t0) / 1000;
      if (running >= PODS) break;
      if (s > TIMEOUT_S) throw new Error(`${running} of ${PODS} pods Running after ${TIMEOUT_S} s`);
      if (s - lastLog >= LOG_S) {
        lastLog = s;
        log(`  ${s.toFixed(0)} s: ${created} pods created, ${running} Running`);
      }
      await sleep(1000);
    }
    const toRunningMs = performance.now() - t0;
    probing = false;
    await probes;
    log(`  ${PODS} pods Running after ${(toRunningMs / 1000).toFixed(1)} s`);

    const rssBeforeLists = await rssOf(join(dir, 'apiserver.pid'));
    // Lists of every pod (consistent: served by the watch cache once fresh, as Kubernetes 1.32).
    const listMs = [];
    let listed = 0;
    for (let i = 0; i < LISTS; i++) {
      const t = performance.now();
      const r = await api.call('GET', '/api/v1/pods');
      listMs.push(performance.now() - t);
      if (r.status !== 200) throw new Error(`list pods: ${r.status}`);
      listed = JSON.parse(r.body).items.length;
    }
    if (listed < PODS) throw new Error(`a list of every pod had ${listed} items, not ${PODS}`);

    const metrics = (await api.call('GET', '/metrics')).body;
    const mutatingP99 = histogramP99(metrics, /verb="(POST|PUT|PATCH|DELETE|APPLY)"/);
    const rssBytes = await rssOf(join(dir, 'apiserver.pid'));
    // SVC_SCALE_HEAP_SNAPSHOT=<file>: the server's heap snapshot after the lists, to see what it
    // holds at this size (freezes the server for a minute or more; the figures are taken before).
    // Through --debug-socket-path: over HTTPS the request timeout (1 min) cuts a long snapshot.
    if (SNAPSHOT) await heapSnapshot(SNAPSHOT, log);
    const Etcd3 = etcd3().Etcd3;
    const etcd = new Etcd3({ hosts: `http://127.0.0.1:${ports.etcd}` });
    scope.defer(() => etcd.close());
    const stored = await storedBytes(etcd);
    const dbBytes = await etcdDbSize(ports.etcd);
    const podBytes = stored.podBytes / Math.max(1, stored.pods);

    // Ceilings: raw etcd through the same client, the same etcd, under another prefix.
    log('  ceilings: raw etcd ...');
    const value = Buffer.alloc(Math.round(podBytes), 'x');
    const raw = (i) => `/bench-scale-ceiling/${i}`;
    const puts = (concurrency, count) =>
      runLoad({
        op: (i) =>
          etcd
            .put(raw(i % PODS))
            .value(value)
            .exec(),
        concurrency,
        count,
      });
    const writes = await puts(64, PODS * 3);
    const putProbe = await puts(1, 300);
    const getProbe = await runLoad({ op: (i) => etcd.get(raw(i % PODS)).buffer(), concurrency: 1, count: 300 });
    const rangeMs = [];
    for (let i = 0; i < LISTS; i++) {
      const t = performance.now();
      await rangeAll(etcd, '/bench-scale-ceiling/', () => undefined);
      rangeMs.push(performance.now() - t);
    }
    await etcd.delete().prefix('/bench-scale-ceiling/').exec();

    const p99 = (xs) => percentile(Float64Array.from(xs).sort(), 0.99);
    const mb = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`;
    const runDetail = `${NODES} simulated nodes, ${deployments} Deployments; node Ready → not Ready transitions: ${flaps.count}; every mutating request served in the run: p99 ≤ ${mutatingP99} s (histogram bucket)`;
    // Said before a flap fails the run, so that a failed run still shows where it stood.
    log(
      `  API server memory: RSS ${mb(rssBeforeLists)} before the lists, ${mb(rssBytes)} after; V8 heap ${mb(gauge(metrics, 'nodejs_heap_size_used_bytes'))} used of ${mb(gauge(metrics, 'nodejs_heap_size_total_bytes'))}, external ${mb(gauge(metrics, 'nodejs_external_memory_bytes'))}`,
    );
    log(
      `  API server RSS ${mb(rssBytes)} against ${mb(stored.bytes)} of JSON stored (${(rssBytes / stored.bytes).toFixed(1)}x); etcd database ${mb(dbBytes)}; mutating p99 ≤ ${mutatingP99} s; lists of every pod p99 ${p99(listMs).toFixed(0)} ms`,
    );
    if (flaps.count > 0)
      throw new Error(`nodes left Ready ${flaps.count} times during the run: ${flaps.names.slice(0, 5).join(', ')}`);
    return [
      result({
        name: `Deployments create → ${PODS} pods Running vs raw etcd: ${PODS * 3} puts of ${value.length} B at 64 in flight`,
        short: `create → ${PODS} Running vs raw etcd`,
        value: toRunningMs / 1000,
        ceiling: writes.seconds,
        unit: 's',
        detail: runDetail,
      }),
      result({
        name: `mutating request p99 during the run (ConfigMap PATCH every ${PROBE_MS} ms) vs raw etcd put p99`,
        short: 'mutating p99 vs etcd put',
        value: p99(mutating),
        ceiling: putProbe.p99,
        unit: 'ms',
        target: { kind: 'value', op: '<=', limit: 1000 },
        detail: `${mutating.length} probes, p50 ${percentile(Float64Array.from(mutating).sort(), 0.5).toFixed(1)} ms`,
      }),
      result({
        name: `single-object get p99 during the run (pod GET every ${PROBE_MS} ms) vs raw etcd get p99`,
        short: 'get p99 vs etcd get',
        value: p99(gets),
        ceiling: getProbe.p99,
        unit: 'ms',
        target: { kind: 'value', op: '<=', limit: 1000 },
        detail: `${gets.length} probes`,
      }),
      result({
        name: `list of all ${PODS} pods p99 (${LISTS} lists) vs raw etcd range of ${PODS} values`,
        short: 'list all pods p99 vs etcd range',
        value: p99(listMs),
        ceiling: p99(rangeMs),
        unit: 'ms',
        target: { kind: 'value', op: '<=', limit: 5000 },
      }),
      result({
        name: 'API server RSS vs the JSON size of everything stored',
        short: 'apiserver RSS vs stored JSON',
        value: rssBytes / 2 ** 20,
        ceiling: stored.bytes / 2 ** 20,
        unit: 'MiB',
        target: { kind: 'ratio', op: '<=', limit: 2 },
        detail: `${stored.keys} keys, ${stored.pods} pods of ${podBytes.toFixed(0)} B on average`,
      }),
      result({
        name: "etcd's database size vs the JSON size of everything stored",
        short: 'etcd db size vs stored JSON',
        value: dbBytes / 2 ** 20,
        ceiling: stored.bytes / 2 ** 20,
        unit: 'MiB',
        detail: `db ${mb(dbBytes)}`,
      }),
    ];
  });
}

/** Throws, with its last log lines, when a component cluster.sh started has exited (e.g. on a lost leader election). */
async function mustBeAlive(dir, components) {
  for (const c of components) {
    const pid = Number((await readFile(join(dir, `${c}.pid`), 'utf8')).trim());
    try {
      process.kill(pid, 0);
    } catch {
      const log = (await readFile(join(dir, `${c}.log`), 'utf8')).trim().split('\n').slice(-5).join('\n');
      throw new Error(`${c} exited during the run; its last log lines:\n${log}`);
    }
  }
}

function deployment(name, replicas) {
  return {
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }] },
      },
    },
  };
}

/** Watches the nodes from now on and counts each Ready → not Ready transition. */
async function watchNodeReadiness(server, must, scope) {
  const flaps = { count: 0, names: [] };
  const ready = new Map();
  const list = await must('GET', '/api/v1/nodes');
  const isReady = (node) => node.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  for (const node of list.items) ready.set(node.metadata.name, isReady(node));
  watchObjects(server, {
    path: '/api/v1/nodes',
    resourceVersion: list.metadata.resourceVersion,
    scope,
    onObject: (node) => {
      const name = node.metadata.name;
      const now = isReady(node);
      if (ready.get(name) === true && !now) {
        flaps.count++;
        flaps.names.push(name);
      }
      ready.set(name, now);
    },
  });
  return flaps;
}

/** The p99 of the API server's request-duration histogram over the series matching `labels` (a bucket's upper bound, seconds). */
function histogramP99(text, labels) {
  const buckets = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_duration_seconds_bucket{') || !labels.test(line)) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    const v = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (le) buckets.set(le, (buckets.get(le) ?? 0) + v);
  }
  const total = buckets.get('+Inf') ?? 0;
  const sorted = [...buckets].map(([le, v]) => [le === '+Inf' ? Infinity : Number(le), v]).sort((a, b) => a[0] - b[0]);
  return sorted.find(([, v]) => v >= total * 0.99)?.[0] ?? NaN;
}

/** The value of an unlabelled gauge in a /metrics text (NaN when absent). */
function gauge(text, name) {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.slice(name.length + 1) ?? NaN);
}

/** The RSS of the process in `pidFile` and of its children (the workers of `--workers`). */
/** Streams the server's `/debug/pprof/heap` (from its debug socket `<file>.sock`) into `file`; a failure is logged. */
async function heapSnapshot(file, log) {
  const t = performance.now();
  try {
    await new Promise((resolve, reject) => {
      const req = httpRequest({ socketPath: `${file}.sock`, path: '/debug/pprof/heap' }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`status ${res.statusCode}`));
          return;
        }
        pipeline(res, createWriteStream(file)).then(resolve, reject);
      });
      req.on('error', reject);
      req.end();
    });
    log(`  heap snapshot in ${file} (${((performance.now() - t) / 1000).toFixed(0)} s)`);
  } catch (e) {
    log(`  heap snapshot failed: ${e?.message ?? e}`);
  }
}

async function rssOf(pidFile) {
  const pid = (await readFile(pidFile, 'utf8')).trim();
  const children = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => ''))
    .split(' ')
    .filter(Boolean);
  let bytes = 0;
  for (const p of [pid, ...children]) {
    const status = await readFile(`/proc/${p}/status`, 'utf8');
    bytes += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) * 1024;
  }
  return bytes;
}

/** Every key-value under `prefix`, in pages of 500 (a page stays below gRPC's 4 MiB message limit). */
async function rangeAll(etcd, prefix, each) {
  let from = Buffer.from(prefix);
  const end = Buffer.from(prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1));
  for (;;) {
    const page = await etcd.kv.range({ key: from, range_end: end, limit: 500 });
    for (const kv of page.kvs) each(kv);
    if (!page.more || page.kvs.length === 0) return;
    from = Buffer.concat([page.kvs[page.kvs.length - 1].key, Buffer.of(0)]);
  }
}

/** Keys and value bytes stored under /registry/, and the pods' share. */
async function storedBytes(etcd) {
  const s = { keys: 0, bytes: 0, pods: 0, podBytes: 0 };
  await rangeAll(etcd, '/registry/', (kv) => {
    s.keys++;
    s.bytes += kv.value.length;
    if (kv.key.toString().startsWith('/registry/core/pods/')) {
      s.pods++;
      s.podBytes += kv.value.length;
    }
  });
  return s;
}

async function etcdDbSize(port) {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  const text = await res.text();
  return Number(/^etcd_mvcc_db_total_size_in_bytes (\S+)/m.exec(text)?.[1] ?? NaN);
}

await runIfMain(import.meta.url, scale);
