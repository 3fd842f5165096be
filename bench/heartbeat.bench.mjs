// `./scripts/cluster.sh up --nodes 50`: 50 svclets (and their svc-runtimes) on this machine,
// all heartbeating through one API server, then the API server's mutating latency while they do.
//
//  1. ceiling: a put of the same Lease body straight to the cluster's etcd (the etcd3 client),
//              p99 over the same window, one put every PROBE_MS, interleaved with the figure's
//     figure:  the p99 of a Lease PUT through the API server (HTTPS, admin token), one every
//              PROBE_MS for WINDOW_MS while the 50 nodes heartbeat (Lease renewals every 10 s,
//              status updates); the detail has the server's own
//              apiserver_request_duration_seconds for mutating verbs over the window (request
//              rate and the bucket holding the p99) and the time `up` took to 50 Ready nodes.
//
// Everything runs as separate processes on this machine (2 cores: the 100 node processes
// share them with etcd and the control plane). `cluster.sh down` runs also on failure.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'node:https';
import { Scope, clusterUp, etcd3, percentile, result, runIfMain, sleep } from './lib.mjs';

const NODES = Number(process.env.SVC_BENCH_NODES ?? 50);
const WINDOW_MS = 60_000;
const PROBE_MS = 100;
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY']);

export default async function run({ log = () => undefined } = {}) {
  return Scope.run(async (scope) => {
    log(`  cluster.sh up --nodes ${NODES} ...`);
    const { dir, upMs, ports } = await clusterUp(scope, {
      nodes: NODES,
      prefix: 'svc-bench-heartbeat-',
      timeoutMs: 600_000,
    });

    const ca = await readFile(join(dir, 'pki', 'ca.crt'));
    const token = (await readFile(join(dir, 'tokens.csv'), 'utf8')).split(',')[0];
    const api = (method, path, body) => call({ port: ports.apiserver, ca, token }, method, path, body);
    const leasePath = '/apis/coordination.svc.io/v1/namespaces/default/leases';
    const lease = (n) => ({
      apiVersion: 'coordination.svc.io/v1',
      kind: 'Lease',
      metadata: { name: 'bench-probe' },
      spec: {
        holderIdentity: 'bench',
        leaseDurationSeconds: 40,
        renewTime: new Date(Date.now() + n).toISOString().replace('Z', '000Z'),
      },
    });
    const created = await api('POST', leasePath, lease(0));
    if (created.status !== 201) throw new Error(`creating the probe Lease: ${created.status} ${created.body}`);

    const { Etcd3 } = etcd3();
    const raw = new Etcd3({ hosts: `http://127.0.0.1:${ports.etcd}` });
    scope.defer(() => raw.close());

    log(`  ${WINDOW_MS / 1000} s window: a Lease PUT through the API and an etcd put every ${PROBE_MS} ms ...`);
    const before = await mutatingHistogram(api);
    const apiMs = [];
    const etcdMs = [];
    const end = performance.now() + WINDOW_MS;
    for (let n = 1; performance.now() < end; n++) {
      const tick = performance.now();
      const body = lease(n);
      const r = await api('PUT', `${leasePath}/bench-probe`, body);
      if (r.status !== 200) throw new Error(`Lease PUT: ${r.status} ${r.body}`);
      apiMs.push(performance.now() - tick);
      const te = performance.now();
      await raw.put('/bench/heartbeat-probe').value(JSON.stringify(body));
      etcdMs.push(performance.now() - te);
      await sleep(Math.max(0, PROBE_MS - (performance.now() - tick)));
    }
    const after = await mutatingHistogram(api);
    const windowS = WINDOW_MS / 1000;
    const requests = after.count - before.count - apiMs.length;
    const serverP99 = bucketQuantile(before, after, 0.99);
    const sorted = (xs) => [...xs].sort((a, b) => a - b);
    const a = sorted(apiMs);
    const e = sorted(etcdMs);
    return [
      result({
        name: `Lease PUT p99 through the API server while ${NODES} nodes heartbeat vs an etcd put of the same body (p99)`,
        short: `mutating p99 with ${NODES} nodes vs etcd put`,
        value: percentile(a, 0.99),
        ceiling: percentile(e, 0.99),
        unit: 'ms',
        detail:
          `${a.length} probes, API p50 ${percentile(a, 0.5).toFixed(1)} ms, etcd p50 ${percentile(e, 0.5).toFixed(1)} ms; ` +
          `server: ${(requests / windowS).toFixed(1)} mutating requests/s from the nodes and controllers, p99 ≤ ${serverP99} s (apiserver_request_duration_seconds); ` +
          `up → ${NODES} nodes Ready in ${(upMs / 1000).toFixed(1)} s`,
      }),
    ];
  });
}

/** The API server's apiserver_request_duration_seconds summed over mutating verbs: cumulative buckets and count. */
async function mutatingHistogram(api) {
  const r = await api('GET', '/metrics');
  if (r.status !== 200) throw new Error(`/metrics: ${r.status}`);
  const buckets = new Map();
  let count = 0;
  for (const line of r.body.split('\n')) {
    const m = /^apiserver_request_duration_seconds_(bucket|count)\{(.*)\} (\S+)$/.exec(line);
    if (!m || !MUTATING.has(/verb="([^"]*)"/.exec(m[2])?.[1] ?? '')) continue;
    if (m[1] === 'count') count += Number(m[3]);
    else {
      const le = /le="([^"]*)"/.exec(m[2])?.[1] ?? '';
      buckets.set(le, (buckets.get(le) ?? 0) + Number(m[3]));
    }
  }
  return { buckets, count };
}

/** The upper bound of the bucket holding quantile `q` of the requests between two scrapes. */
function bucketQuantile(before, after, q) {
  const total = after.count - before.count;
  const bounds = [...after.buckets.keys()].sort((x, y) =>
    x === '+Inf' ? 1 : y === '+Inf' ? -1 : Number(x) - Number(y),
  );
  for (const le of bounds) {
    if ((after.buckets.get(le) ?? 0) - (before.buckets.get(le) ?? 0) >= q * total) return le;
  }
  return '+Inf';
}

function call({ port, ca, token }, method, path, body) {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        ca,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      },
      (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (c) => {
            text += c;
          })
          .on('end', () => resolve({ status: res.statusCode, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

await runIfMain(import.meta.url, run);
