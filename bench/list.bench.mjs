// Lists of 10,000 pods (~2 KiB of JSON each) served from the watch cache, against the same
// range read straight from etcd, plus the server's memory per cached object.
//
//  1. figures: GET /api/v1/pods?resourceVersion=0 (Any, from the cache) and GET /api/v1/pods
//              (consistent, from the cache once it proved it is current), over HTTPS
//     ceiling: the same list read straight from etcd by a server started with
//              --watch-cache=false (what the cache saves); the bare etcd range read through
//              the etcd3 client (no JSON, no HTTP) is shown alongside
//  2. memory: server RSS growth per cached pod (slope between 10k and 20k cached pods, each
//     listed once so their serialized form is held too), against the pod's JSON size (≤ 3×)
//
// The pods are written straight into etcd under the server's store prefix (setup speed);
// the server's cache picks them up through its watch like any other write.

import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import {
  Scope,
  median,
  result,
  runIfMain,
  runLoad,
  spawnApiServer,
  sleep,
  startEtcdInScope,
  svcTesting,
} from './lib.mjs';

const PODS = 10_000;
const ROUNDS = 8;

function pod(i) {
  const name = `pod-${String(i).padStart(5, '0')}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'bench',
      uid: randomUUID(),
      creationTimestamp: '2026-11-21T00:00:00Z',
      labels: { app: 'bench', shard: String(i % 10) },
    },
    spec: {
      containers: [
        {
          name: 'main',
          image: 'registry.example/bench:1.0',
          command: ['/bin/app', '--serve'],
          env: Array.from({ length: 12 }, (_, j) => ({ name: `VAR_${j}`, value: randomBytes(36).toString('hex') })),
          resources: { requests: { cpu: '100m', memory: '64Mi' } },
          terminationMessagePath: '/dev/termination-log',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      nodeName: `node-${i % 50}`,
      schedulerName: 'default-scheduler',
    },
    status: {
      phase: 'Running',
      podIP: `10.0.${Math.floor(i / 250)}.${i % 250}`,
      hostIP: '192.0.2.1',
      startTime: '2026-11-21T00:00:00Z',
    },
  };
}

function rssBytes(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

/** GETs a path and drains the body; resolves {status, bytes}. */
function fetchBytes(agent, server, path) {
  return new Promise((res, rej) => {
    const req = httpsRequest(
      `${server.url}${path}`,
      { agent, headers: { authorization: `Bearer ${server.token}`, accept: 'application/json' } },
      (r) => {
        let bytes = 0;
        let head = '';
        r.on('data', (c) => {
          bytes += c.length;
          if (head.length < 300) head += c.toString('utf8', 0, Math.min(c.length, 300));
        });
        r.on('end', () => res({ status: r.statusCode ?? 0, bytes, head }));
        r.on('error', rej);
      },
    );
    req.on('error', rej);
    req.end();
  });
}

async function timeRounds(fn) {
  const ms = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  return median(ms);
}

export default async function run({ log = () => undefined } = {}) {
  return Scope.run(async (scope) => {
    const { waitFor } = await svcTesting();
    const { etcd, client } = await startEtcdInScope(scope, { grpcOptions: { 'grpc.max_receive_message_length': -1 } });

    log('  spawning svc-apiserver (watch cache on) ...');
    const server = await spawnApiServer({ etcdEndpoints: etcd.endpoints });
    scope.defer(() => server.stop());
    const pid = server.proc.child.pid;
    const agent = new HttpsAgent({ keepAlive: true, maxSockets: 4, ca: server.caPem });
    scope.defer(() => agent.destroy());
    await sleep(500);
    const rssBeforeFill = rssBytes(pid);

    log(`  writing ${PODS} pods into etcd ...`);
    const prefix = `${server.storePrefix}/core/pods/bench/`;
    const values = Array.from({ length: PODS }, (_, i) => JSON.stringify(pod(i)));
    const avgJson = values.reduce((s, v) => s + v.length, 0) / PODS;
    await runLoad({
      concurrency: 64,
      count: PODS,
      op: async (i) => {
        await client.put(`${prefix}${values[i].match(/"name":"(pod-\d+)"/)[1]}`).value(values[i]);
      },
    });
    await waitFor(
      'the cache to hold every pod',
      async () => {
        const r = await fetchBytes(agent, server, '/api/v1/pods?resourceVersion=0&limit=1');
        return r.status === 200 && /"remainingItemCount":9999\b/.test(r.head);
      },
      60_000,
      100,
    );

    log('  listing ...');
    const check = await fetchBytes(agent, server, '/api/v1/pods?resourceVersion=0');
    if (check.status !== 200) throw new Error(`list: HTTP ${check.status}`);

    const cacheAny = await timeRounds(async () => {
      const r = await fetchBytes(agent, server, '/api/v1/pods?resourceVersion=0');
      if (r.bytes !== check.bytes) throw new Error('list size changed');
    });
    const cacheConsistent = await timeRounds(async () => {
      const r = await fetchBytes(agent, server, '/api/v1/pods');
      if (r.status !== 200) throw new Error(`HTTP ${r.status}`);
    });
    const rawEtcd = await timeRounds(async () => {
      const r = await client.getAll().prefix(prefix).exec();
      if (r.kvs.length !== PODS) throw new Error(`etcd range: ${r.kvs.length} keys`);
    });
    const rssPeak = rssBytes(pid);
    const rssBefore = rssBeforeFill;

    log('  spawning svc-apiserver --watch-cache=false ...');
    const direct = await spawnApiServer({
      etcdEndpoints: etcd.endpoints,
      extraArgs: ['--watch-cache=false', '--store-prefix', server.storePrefix],
    });
    scope.defer(() => direct.stop());
    const agent2 = new HttpsAgent({ keepAlive: true, maxSockets: 4, ca: direct.caPem });
    scope.defer(() => agent2.destroy());
    const apiEtcd = await timeRounds(async () => {
      const r = await fetchBytes(agent2, direct, '/api/v1/pods');
      if (r.status !== 200) throw new Error(`HTTP ${r.status}`);
    });

    // Memory per cached object, on a fresh server: the slope between 10k and 20k cached pods
    // (each listed once, so their serialized form is held too). The slope leaves out fixed
    // growth such as V8's young generation expanding under load.
    log('  memory: fresh svc-apiserver, 10k then 20k cached pods ...');
    const mem = await spawnApiServer({ etcdEndpoints: etcd.endpoints });
    scope.defer(() => mem.stop());
    const agent3 = new HttpsAgent({ keepAlive: true, maxSockets: 4, ca: mem.caPem });
    scope.defer(() => agent3.destroy());
    const memPid = mem.proc.child.pid;
    const memPrefix = `${mem.storePrefix}/core/pods/bench/`;
    const fillAndList = async (from) => {
      await runLoad({
        concurrency: 64,
        count: PODS,
        op: async (i) => {
          await client.put(`${memPrefix}pod-${from + i}`).value(values[i]);
        },
      });
      await waitFor(
        'the cache to hold every pod',
        async () => {
          const r = await fetchBytes(agent3, mem, '/api/v1/pods?resourceVersion=0&limit=1');
          return r.status === 200 && new RegExp(`"remainingItemCount":${from + PODS - 1}\\b`).test(r.head);
        },
        60_000,
        100,
      );
      await fetchBytes(agent3, mem, '/api/v1/pods?resourceVersion=0');
      await sleep(3000);
      return rssBytes(memPid);
    };
    const memEmpty = rssBytes(memPid);
    const rss10k = await fillAndList(0);
    const rss20k = await fillAndList(PODS);
    const perObject = (rss20k - rss10k) / PODS;
    const mb = (check.bytes / 1e6).toFixed(1);
    return [
      result({
        name: `List of ${PODS} pods (${mb} MB), resourceVersion=0 from the cache vs the same list straight from etcd (median of ${ROUNDS})`,
        short: 'list 10k pods: cache (any) vs from etcd',
        value: cacheAny,
        ceiling: apiEtcd,
        unit: 'ms',
        target: { kind: 'ratio', op: '<=', limit: 1 / 3 },
        detail: `${(apiEtcd / cacheAny).toFixed(2)}× faster; bare etcd range through the etcd3 client ${rawEtcd.toFixed(0)} ms`,
      }),
      result({
        name: `List of ${PODS} pods, consistent (no resourceVersion) from the cache vs the same list straight from etcd`,
        short: 'list 10k pods: cache (consistent) vs from etcd',
        value: cacheConsistent,
        ceiling: apiEtcd,
        unit: 'ms',
        target: { kind: 'ratio', op: '<=', limit: 1 / 3 },
        detail: `${(apiEtcd / cacheConsistent).toFixed(2)}× faster; bare etcd range ${rawEtcd.toFixed(0)} ms`,
      }),
      result({
        name: "Server RSS growth per cached pod vs the pod's JSON size",
        short: 'RSS per cached object vs JSON size',
        value: perObject,
        ceiling: avgJson,
        unit: 'B',
        target: { kind: 'ratio', op: '<=', limit: 3 },
        detail: `RSS ${(memEmpty / 1e6).toFixed(0)} MB empty → ${(rss10k / 1e6).toFixed(0)} MB with ${PODS} → ${(rss20k / 1e6).toFixed(0)} MB with ${2 * PODS} pods of ${avgJson.toFixed(0)} B, each listed once (serialized forms included); first ${PODS} incl. fixed growth ${((rss10k - memEmpty) / PODS).toFixed(0)} B/pod; the timing server: ${(rssBefore / 1e6).toFixed(0)} → ${(rssPeak / 1e6).toFixed(0)} MB after ${2 * ROUNDS + 1} lists of 10k`,
      }),
    ];
  });
}

await runIfMain(import.meta.url, run);
