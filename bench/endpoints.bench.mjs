// Endpoints propagation (issue 19): from a pod turning Ready to the EndpointSlice of its
// Service listing it as ready, p50 and p99 over 100 pods (target p99 < 1 s on 2 cores), on a
// `cluster.sh up --nodes 0` cluster (etcd, API server, controller manager, scheduler).
//
// The pods are bound to a Node object the bench registers, and their status is written as
// their node agent would write it (Running with an IP, Ready False; then Ready True, one pod
// at a time): no process runs, so the figure is the control plane's part alone — the status
// write, the endpointslice controller's pod watch, its slice update and the slice watch event
// reaching a client. Each latency runs from just before the pod's status PATCH is sent to the
// slice watch event that shows the pod's address ready.
// The ceiling, in the same run on the cluster's own etcd under another prefix: a raw etcd put
// of a pod-sized value → the etcd3 client's watch event for it, 100 times one after another.

import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ROOT,
  Scope,
  checkBuilt,
  clusterClient,
  clusterUp,
  etcd3,
  percentile,
  result,
  runIfMain,
  sleep,
  watchObjects,
} from './lib.mjs';

const PODS = Number(process.env.SVC_ENDPOINTS_PODS ?? 100);
const NS = 'epbench';
const NODE = 'bench-node';
const WAIT_MS = 30_000;

/** The product's spellings come from @svc/api's names module (the cluster runs with the default naming). */
async function discoveryGroup() {
  checkBuilt();
  const api = await import(pathToFileURL(join(ROOT, 'packages/api/dist/index.js')).href);
  return api.group('discovery');
}

export default async function endpoints({ log = () => undefined } = {}) {
  const slicesPath = `/apis/${await discoveryGroup()}/v1/namespaces/${NS}/endpointslices`;
  return Scope.run(async (scope) => {
    log('  cluster.sh up --nodes 0 ...');
    const cluster = await clusterUp(scope, { nodes: 0, prefix: 'svc-bench-endpoints-' });
    const { server, api, must } = await clusterClient(scope, cluster);
    await must('POST', '/api/v1/nodes', { metadata: { name: NODE } });
    await must('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    for (const deadline = Date.now() + 60_000; ; await sleep(100)) {
      if ((await api.call('GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`)).status === 200) break;
      if (Date.now() > deadline) throw new Error(`no default service account in ${NS}`);
    }
    await must('POST', `/api/v1/namespaces/${NS}/services`, {
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    const slices = watchSliceReadiness(server, { path: slicesPath, scope });
    const podWatch = watchPodReadiness(server, { path: `/api/v1/namespaces/${NS}/pods`, scope });

    log(`  ${PODS} pods, Running and not Ready ...`);
    const ipOf = (i) => `10.77.${Math.floor(i / 250)}.${(i % 250) + 1}`;
    const statusOf = (i, ready) => ({
      status: {
        phase: 'Running',
        podIP: ipOf(i),
        podIPs: [{ ip: ipOf(i) }],
        conditions: [
          { type: 'Initialized', status: 'True' },
          { type: 'ContainersReady', status: ready ? 'True' : 'False' },
          {
            type: 'Ready',
            status: ready ? 'True' : 'False',
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          },
          { type: 'PodScheduled', status: 'True' },
        ],
      },
    });
    const patchStatus = (i, ready) =>
      api.call(
        'PATCH',
        `/api/v1/namespaces/${NS}/pods/p${i}/status`,
        statusOf(i, ready),
        'application/merge-patch+json',
      );
    for (let i = 0; i < PODS; i++) {
      await must('POST', `/api/v1/namespaces/${NS}/pods`, {
        metadata: { name: `p${i}`, labels: { app: 'web' } },
        spec: {
          nodeName: NODE,
          containers: [{ name: 'c', image: 'busybox', ports: [{ containerPort: 8080 }] }],
        },
      });
      const r = await patchStatus(i, false);
      if (r.status !== 200) throw new Error(`pod p${i} status: ${r.status} ${r.body.slice(0, 300)}`);
    }
    await slices.until(
      () => slices.listed.size >= PODS,
      async () => {
        const list = await must('GET', slicesPath);
        const pod = await must('GET', `/api/v1/namespaces/${NS}/pods/p0`);
        return `all ${PODS} pods listed (not ready): the watch saw ${slices.listed.size}; slices ${JSON.stringify(list.items).slice(0, 1500)}; p0 ${JSON.stringify(pod.status).slice(0, 800)}`;
      },
    );

    log(`  ${PODS} pods turning Ready one after another ...`);
    const latencies = [];
    const podEvents = [];
    for (let i = 0; i < PODS; i++) {
      const ip = ipOf(i);
      const t0 = performance.now();
      const seen = slices.readyAt(ip);
      const podSeen = podWatch.readyAt(`p${i}`);
      const r = await patchStatus(i, true);
      if (r.status !== 200) throw new Error(`pod p${i} Ready: ${r.status} ${r.body.slice(0, 300)}`);
      latencies.push((await seen) - t0);
      podEvents.push((await podSeen) - t0);
    }

    log('  ceiling: raw etcd put → watch ...');
    const podBytes = JSON.stringify(await must('GET', `/api/v1/namespaces/${NS}/pods/p0`)).length;
    const etcd = new (etcd3().Etcd3)({ hosts: `http://127.0.0.1:${cluster.ports.etcd}` });
    scope.defer(() => etcd.close());
    const raw = await putToWatch(etcd, { count: PODS, bytes: podBytes });
    await etcd.delete().prefix('/bench-endpoints-ceiling/').exec();

    const sorted = (xs) => Float64Array.from(xs).sort();
    const figure = sorted(latencies);
    const ceiling = sorted(raw);
    const podHop = sorted(podEvents);
    return [
      result({
        name: `pod Ready → EndpointSlice lists it ready, p99 of ${PODS} vs raw etcd put → watch event p99`,
        short: 'pod Ready → EndpointSlice p99 vs etcd put→watch',
        value: percentile(figure, 0.99),
        ceiling: percentile(ceiling, 0.99),
        unit: 'ms',
        target: { kind: 'value', op: '<=', limit: 1000 },
        detail: `p50 ${percentile(figure, 0.5).toFixed(1)} ms (etcd ${percentile(ceiling, 0.5).toFixed(2)} ms), max ${figure[figure.length - 1].toFixed(1)} ms; the pod's own watch event (one hop): p50 ${percentile(podHop, 0.5).toFixed(1)} ms, p99 ${percentile(podHop, 0.99).toFixed(1)} ms`,
      }),
      result({
        name: `pod Ready → EndpointSlice lists it ready, p50 of ${PODS} vs raw etcd put → watch event p50`,
        short: 'pod Ready → EndpointSlice p50 vs etcd put→watch',
        value: percentile(figure, 0.5),
        ceiling: percentile(ceiling, 0.5),
        unit: 'ms',
      }),
    ];
  });
}

/** `count` raw puts of `bytes`-byte values one after another, each timed to its watch event (ms). */
async function putToWatch(etcd, { count, bytes }) {
  const prefix = '/bench-endpoints-ceiling/';
  const watcher = await etcd.watch().prefix(prefix).create();
  const waiting = new Map();
  watcher.on('put', (kv) => {
    const key = kv.key.toString();
    const done = waiting.get(key);
    if (done) {
      waiting.delete(key);
      done(performance.now());
    }
  });
  const value = Buffer.alloc(bytes, 'x');
  const out = [];
  try {
    for (let i = 0; i < count; i++) {
      const key = `${prefix}${i}`;
      const seen = new Promise((ok) => waiting.set(key, ok));
      const t0 = performance.now();
      await etcd.put(key).value(value).exec();
      out.push((await seen) - t0);
    }
  } finally {
    await watcher.cancel();
  }
  return out;
}

/** `readyAt(key)` resolves with the time of the first `mark(key, t)` after the call (30 s at most). */
function readinessWaiters() {
  const waiters = new Map();
  return {
    mark(key, t) {
      const w = waiters.get(key);
      if (w) {
        waiters.delete(key);
        w(t);
      }
    },
    readyAt: (key) =>
      new Promise((ok, fail) => {
        const timer = setTimeout(() => fail(new Error(`${key} not seen ready within ${WAIT_MS} ms`)), WAIT_MS);
        waiters.set(key, (t) => {
          clearTimeout(timer);
          ok(t);
        });
      }),
  };
}

/**
 * Watches the namespace's EndpointSlices: `listed` holds every address seen, `readyAt(ip)`
 * resolves with the time of the first event after the call that shows `ip` ready, `until(cond)`
 * waits (30 s at most) for a condition on what has been seen.
 */
function watchSliceReadiness(server, { path, scope }) {
  const listed = new Set();
  const ready = readinessWaiters();
  watchObjects(server, {
    path,
    scope,
    onObject: (slice, now) => {
      for (const e of slice.endpoints ?? [])
        for (const ip of e.addresses ?? []) {
          listed.add(ip);
          if (e.conditions?.ready === true) ready.mark(ip, now);
        }
    },
  });
  return {
    listed,
    readyAt: ready.readyAt,
    until: async (cond, what) => {
      for (const deadline = Date.now() + WAIT_MS; !cond(); await sleep(50))
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${await what()}`);
    },
  };
}

/** Watches the namespace's pods: `readyAt(name)` resolves with the time of the first event showing the pod Ready. */
function watchPodReadiness(server, { path, scope }) {
  const ready = readinessWaiters();
  watchObjects(server, {
    path,
    scope,
    onObject: (pod, now) => {
      if (pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
        ready.mark(pod.metadata.name, now);
    },
  });
  return ready;
}

await runIfMain(import.meta.url, endpoints);
