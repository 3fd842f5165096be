// Priority and fairness under a flood (issue 18), in one run (one API server with its
// defaults: --enable-priority-and-fairness, 400 + 200 seats; one etcd):
//
//  ceiling: a second user's and a system:masters user's ConfigMap creates, one each per
//           100 ms, p99 latency with nothing else going on
//  figure:  the same p99 while a third user keeps 2,000 ConfigMap creates in flight (each of
//           its 2,000 workers creates, and on a 429 waits the Retry-After it was given, as
//           client-go does); target: each p99 < 1 s. Also reported: how many of the flood's
//           creates got 429 (its ceiling: every create the flood sent).
//
// The users are the admin token impersonating `flood` and `steady` (priority and fairness
// classifies the impersonated user: both fall in the global-default level, each its own
// flow) and the admin itself (exempt). The flood's 2,000 connections are opened, each has had
// an answer (the time that takes is logged), and they stay busy for FLOOD_RAMP_MS more before
// the steady users are measured. The server runs as a separate
// process and the flood in a worker thread; etcd, the server and both share the machine's CPUs.

import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { Scope, fmtNum, percentile, result, runIfMain, sleep, spawnApiServer, startEtcdInScope } from './lib.mjs';

const FLOOD = Number(process.env.SVC_BENCH_APF_FLOOD ?? 2000);
const PERIOD_MS = 100;
const BASELINE_MS = 5000;
const FLOOD_RAMP_MS = 3000;
const FLOOD_CONNECT_LIMIT_MS = 180_000;
const MEASURE_MS = Number(process.env.SVC_BENCH_APF_MEASURE_MS ?? 10_000);
const PAYLOAD = 'x'.repeat(256);

function client(server, { maxSockets, impersonate }) {
  const agent = new HttpsAgent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, ca: server.caPem });
  const headers = { authorization: `Bearer ${server.token}`, accept: 'application/json' };
  if (impersonate) headers['impersonate-user'] = impersonate;
  const create = (name) =>
    new Promise((resolve, reject) => {
      const body = Buffer.from(
        JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { payload: PAYLOAD } }),
      );
      const req = httpsRequest(
        `${server.url}/api/v1/namespaces/default/configmaps`,
        {
          method: 'POST',
          agent,
          headers: { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) },
        },
        (r) => {
          r.resume();
          r.on('end', () => resolve({ status: r.statusCode ?? 0, retryAfter: Number(r.headers['retry-after'] ?? 1) }));
          r.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  return { create, close: () => agent.destroy() };
}

/** One create every PERIOD_MS (not waiting for the previous one) until `until`; resolves the latencies (ms) and failures. */
async function steady(c, { prefix, until }) {
  const latencies = [];
  const failures = [];
  const pending = [];
  for (let i = 0; performance.now() < until; i++) {
    const t = performance.now();
    pending.push(
      c.create(`${prefix}-${i}`).then(
        (r) => {
          if (r.status === 201) latencies.push(performance.now() - t);
          else failures.push(r.status);
        },
        (e) => failures.push(e.message),
      ),
    );
    await sleep(Math.max(0, t + PERIOD_MS - performance.now()));
  }
  await Promise.all(pending);
  const sorted = Float64Array.from(latencies).sort();
  return { n: latencies.length, failures, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
}

export default async function run({ log = () => undefined } = {}) {
  return Scope.run(async (scope) => {
    const { etcd } = await startEtcdInScope(scope);
    log('  spawning svc-apiserver (defaults: priority and fairness on, 400 + 200 seats) ...');
    // SVC_BENCH_APF_ARGS: extra server flags, e.g. `--enable-priority-and-fairness=false` to compare.
    const extraArgs = (process.env.SVC_BENCH_APF_ARGS ?? '').split(' ').filter(Boolean);
    const server = await spawnApiServer({ etcdEndpoints: etcd.endpoints, extraArgs });
    scope.defer(() => server.stop());
    // 64 sockets each: the client queues a create only once answers take over 6.4 s.
    const user = client(server, { maxSockets: 64, impersonate: 'steady' });
    const admin = client(server, { maxSockets: 64 });
    for (const c of [user, admin]) scope.defer(() => c.close());

    log(`  baseline: a create each per ${PERIOD_MS} ms by 'steady' and the admin, ${BASELINE_MS / 1000} s ...`);
    let until = performance.now() + BASELINE_MS;
    const [userIdle, adminIdle] = await Promise.all([
      steady(user, { prefix: 'idle-user', until }),
      steady(admin, { prefix: 'idle-admin', until }),
    ]);

    log(`  flood: ${FLOOD} creates in flight by 'flood' (429s wait their Retry-After) ...`);
    // The flood runs in a worker thread: in this thread its thousands of answers would delay
    // the measured users' own answers (the figure would be the load generator's, not the server's).
    const worker = new Worker(new URL(import.meta.url), {
      workerData: { apfFlood: { url: server.url, caPem: server.caPem, token: server.token, flood: FLOOD } },
    });
    let counts = { created: 0, refused: 0, other: 0, errors: 0 };
    worker.on('message', (m) => {
      counts = m;
    });
    const workerDone = new Promise((resolve, reject) => {
      worker.once('exit', resolve);
      worker.once('error', reject);
    });
    scope.defer(() => worker.terminate());
    // The flood runs once every one of its connections has had an answer: 2,000 TLS handshakes
    // at once take the server a while, and measuring during them would measure the connect storm.
    const rampStart = performance.now();
    while ((counts.answered ?? 0) < FLOOD && performance.now() - rampStart < FLOOD_CONNECT_LIMIT_MS) await sleep(200);
    const rampMs = performance.now() - rampStart;
    log(`  all ${counts.answered} flood connections answered after ${(rampMs / 1000).toFixed(1)} s`);
    await sleep(FLOOD_RAMP_MS);
    const before = { ...counts };
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    log(`  measuring 'steady' and the admin for ${MEASURE_MS / 1000} s under the flood ...`);
    until = performance.now() + MEASURE_MS;
    const [userFlood, adminFlood] = await Promise.all([
      steady(user, { prefix: 'flood-user', until }),
      steady(admin, { prefix: 'flood-admin', until }),
    ]);
    lag.disable();
    log(
      `  the bench's own event loop lag while measuring: p99 ${(lag.percentile(99) / 1e6).toFixed(0)} ms, max ${(lag.max / 1e6).toFixed(0)} ms`,
    );
    const during = {
      created: counts.created - before.created,
      refused: counts.refused - before.refused,
    };
    worker.postMessage('stop');
    await workerDone;
    log(
      `  flood: ${counts.created} created, ${counts.refused} refused with 429, ${counts.other} other answers, ${counts.errors} connection errors; its answers p50 ${counts.p50.toFixed(0)} ms, p99 ${counts.p99.toFixed(0)} ms (in the measured ${MEASURE_MS / 1000} s: ${during.created} created, ${during.refused} refused)`,
    );
    for (const [who, r] of [
      ['steady', userFlood],
      ['admin', adminFlood],
    ])
      if (r.n === 0)
        throw new Error(`none of ${who}'s creates succeeded under the flood: ${r.failures.slice(0, 5).join(', ')}`);

    const detail = (idle, busy) =>
      `${busy.n} creates (${busy.failures.length} failed: ${busy.failures.slice(0, 3).join(', ') || 'none'}), p50 ${busy.p50.toFixed(1)} ms under the flood; idle p50 ${idle.p50.toFixed(1)} ms`;
    return [
      result({
        name: "a second user's ConfigMap create p99 (one per 100 ms) while one user keeps 2,000 creates in flight, vs idle",
        short: 'second user p99 under flood vs idle',
        value: userFlood.p99,
        ceiling: userIdle.p99,
        unit: 'ms',
        target: { kind: 'value', op: '<=', limit: 1000, unit: 'ms' },
        detail: detail(userIdle, userFlood),
      }),
      result({
        name: "system:masters' ConfigMap create p99 (one per 100 ms) while one user keeps 2,000 creates in flight, vs idle",
        short: 'admin p99 under flood vs idle',
        value: adminFlood.p99,
        ceiling: adminIdle.p99,
        unit: 'ms',
        target: { kind: 'value', op: '<=', limit: 1000, unit: 'ms' },
        detail: detail(adminIdle, adminFlood),
      }),
      result({
        name: "the flood's creates answered 429 (Retry-After honoured) vs every create it sent",
        short: 'flood 429s vs sent',
        value: counts.refused,
        ceiling: counts.refused + counts.created + counts.other,
        unit: '',
        detail: `${fmtNum(counts.created, '')} created; ${counts.other} other answers; ${counts.errors} connection errors`,
      }),
    ];
  });
}

/** The flooding user, in a worker thread: FLOOD workers each creating, waiting Retry-After on a 429. */
async function flood({ url, caPem, token, flood: n }) {
  const c = client({ url, caPem, token }, { maxSockets: n, impersonate: 'flood' });
  const counts = { created: 0, refused: 0, other: 0, errors: 0, answered: 0, p50: NaN, p99: NaN };
  const latencies = [];
  let flooding = true;
  parentPort.on('message', () => {
    flooding = false;
  });
  const report = setInterval(() => parentPort.postMessage(counts), 200);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      let first = true;
      while (flooding) {
        try {
          const t0 = performance.now();
          const r = await c.create(`flood-${next++}`);
          latencies.push(performance.now() - t0);
          if (first) {
            first = false;
            counts.answered++;
          }
          if (r.status === 201) counts.created++;
          else if (r.status === 429) {
            counts.refused++;
            await sleep(r.retryAfter * 1000);
          } else counts.other++;
        } catch {
          counts.errors++;
        }
      }
    }),
  );
  clearInterval(report);
  const sorted = Float64Array.from(latencies).sort();
  counts.p50 = percentile(sorted, 0.5);
  counts.p99 = percentile(sorted, 0.99);
  parentPort.postMessage(counts);
  c.close();
  parentPort.close();
}

if (!isMainThread && workerData?.apfFlood) await flood(workerData.apfFlood);
else await runIfMain(import.meta.url, run);
