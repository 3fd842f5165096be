// Priority and fairness under a flood (issue 18), in one run (one etcd; for each variant a
// fresh API server with its defaults: --enable-priority-and-fairness, 400 + 200 seats):
//
//  ceiling: a second user's and a system:masters user's ConfigMap creates, one each per
//           100 ms, p99 latency with nothing else going on
//  figure:  the same p99 while a third user keeps 2,000 ConfigMap creates in flight (each of
//           its 2,000 workers creates, and on a 429 waits the Retry-After it was given, as
//           client-go does); target: each p99 < 1 s. Also reported: how many of the flood's
//           creates got 429 (its ceiling: every create the flood sent).
//
// Two variants, both reported:
//  h2:  (the figure) every client speaks HTTP/2 as client-go does: the flood's 2,000 creates
//       are streams multiplexed over as few connections as the server's SETTINGS allow (a
//       connection takes streams up to the server's MAX_CONCURRENT_STREAMS, 100 by default as
//       Kubernetes 1.32; when all are busy the client opens another, as Go's transport does:
//       20 connections); the measured users have a connection each.
//  h1:  the flood as 2,000 HTTP/1.1 keep-alive connections (a client that opens a connection
//       per request in flight); the measured users on HTTP/1.1 keep-alive sockets.
//
// The users are the admin token impersonating `flood` and `steady` (priority and fairness
// classifies the impersonated user: both fall in the global-default level, each its own
// flow) and the admin itself (exempt). The flood's streams or connections each have had an
// answer (the time that takes is logged), and they stay busy for FLOOD_RAMP_MS more before the
// steady users are measured. The server runs as a separate process and the flood in a worker
// thread; etcd, the server and both share the machine's CPUs. The load average is logged
// with each variant's figures. SVC_BENCH_APF_VARIANTS=h2 (or h1) runs one variant only.

import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { connect as h2connect } from 'node:http2';
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { Scope, fmtNum, percentile, result, runIfMain, sleep, spawnApiServer, startEtcdInScope } from './lib.mjs';

const FLOOD = Number(process.env.SVC_BENCH_APF_FLOOD ?? 2000);
const VARIANTS = (process.env.SVC_BENCH_APF_VARIANTS ?? 'h2,h1').split(',').filter(Boolean);
const PERIOD_MS = 100;
const BASELINE_MS = 5000;
const FLOOD_RAMP_MS = 3000;
const FLOOD_CONNECT_LIMIT_MS = 180_000;
const MEASURE_MS = Number(process.env.SVC_BENCH_APF_MEASURE_MS ?? 10_000);
const PAYLOAD = 'x'.repeat(256);
const PATH = '/api/v1/namespaces/default/configmaps';
/** Go's http2 client: streams it assumes a connection allows before the server's SETTINGS arrive. */
const GO_INITIAL_MAX_STREAMS = 100;

const loadLine = () =>
  `load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(', ')}`;

function createBody(name) {
  return Buffer.from(
    JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { payload: PAYLOAD } }),
  );
}

function requestHeaders(server, impersonate) {
  const headers = { authorization: `Bearer ${server.token}`, accept: 'application/json' };
  if (impersonate) headers['impersonate-user'] = impersonate;
  return headers;
}

/** HTTP/1.1 keep-alive: up to `maxSockets` connections, a request in flight on each. */
function h1Client(server, { maxSockets, impersonate }) {
  const agent = new HttpsAgent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, ca: server.caPem });
  const headers = requestHeaders(server, impersonate);
  const sockets = new WeakSet();
  let opened = 0;
  const create = (name) =>
    new Promise((resolve, reject) => {
      const body = createBody(name);
      const req = httpsRequest(
        `${server.url}${PATH}`,
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
      req.on('socket', (socket) => {
        if (sockets.has(socket)) return;
        sockets.add(socket);
        opened++;
      });
      req.end(body);
    });
  return {
    create,
    connections: () => opened,
    close: () => agent.destroy(),
  };
}

/**
 * HTTP/2 as Go's transport multiplexes: a request goes on the first connection with a free
 * stream (the server's MAX_CONCURRENT_STREAMS, 100 assumed until its SETTINGS come); when every
 * connection is full, another is opened. A connection that is going away takes no new streams.
 */
function h2Client(server, { impersonate }) {
  const headers = requestHeaders(server, impersonate);
  const conns = [];
  let opened = 0;
  const connection = () => {
    for (const c of conns) if (c.usable && c.active < c.max) return c;
    const session = h2connect(server.url, { ca: server.caPem });
    const c = { session, active: 0, max: GO_INITIAL_MAX_STREAMS, usable: true };
    opened++;
    const drop = () => {
      c.usable = false;
      const i = conns.indexOf(c);
      if (i >= 0) conns.splice(i, 1);
    };
    session.on('remoteSettings', (s) => {
      if (s.maxConcurrentStreams !== undefined) c.max = s.maxConcurrentStreams;
    });
    session.on('goaway', drop);
    session.on('close', drop);
    session.on('error', drop);
    conns.push(c);
    return c;
  };
  const create = (name) =>
    new Promise((resolve, reject) => {
      const c = connection();
      c.active++;
      const body = createBody(name);
      let status = 0;
      let retryAfter = 1;
      let stream;
      try {
        stream = c.session.request({
          ':method': 'POST',
          ':path': PATH,
          ...headers,
          'content-type': 'application/json',
          'content-length': String(body.length),
        });
      } catch (e) {
        c.active--;
        c.usable = false;
        reject(e);
        return;
      }
      stream.on('response', (h) => {
        status = Number(h[':status']);
        retryAfter = Number(h['retry-after'] ?? 1);
      });
      stream.resume();
      stream.on('error', () => undefined);
      stream.on('close', () => {
        c.active--;
        if (status) resolve({ status, retryAfter });
        else reject(new Error(`stream closed without an answer (code ${stream.rstCode})`));
      });
      stream.end(body);
    });
  return {
    create,
    connections: () => opened,
    close: () => {
      for (const c of conns.splice(0)) c.session.close();
    },
  };
}

function client(server, { protocol, maxSockets, impersonate }) {
  return protocol === 'h2' ? h2Client(server, { impersonate }) : h1Client(server, { maxSockets, impersonate });
}

/** The server's own view (admin, exempt): metrics lines of interest, summed by name over the labels that match. */
function serverMetrics(server) {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${server.url}/metrics`,
      { ca: server.caPem, headers: { authorization: `Bearer ${server.token}` } },
      (r) => {
        let text = '';
        r.setEncoding('utf8');
        r.on('data', (c) => (text += c));
        r.on('end', () => {
          const pick = (name, labels) =>
            text
              .split('\n')
              .filter((l) => l.startsWith(`${name}{`) && labels.every((x) => l.includes(x)))
              .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
          const post = ['verb="POST"', 'resource="configmaps"'];
          const gd = ['priority_level="global-default"'];
          resolve({
            createSeconds: pick('apiserver_request_duration_seconds_sum', post),
            creates: pick('apiserver_request_duration_seconds_count', post),
            waitSeconds: pick('apiserver_flowcontrol_request_wait_duration_seconds_sum', [...gd, 'execute="true"']),
            waited: pick('apiserver_flowcontrol_request_wait_duration_seconds_count', [...gd, 'execute="true"']),
            executingSeats: pick('apiserver_flowcontrol_current_executing_seats', gd),
            inqueue: pick('apiserver_flowcontrol_current_inqueue_requests', gd),
          });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
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
    const results = [];
    for (const protocol of VARIANTS) results.push(...(await variant({ etcd, protocol, log })));
    return results;
  });
}

const VARIANT_NAMES = {
  h2: 'over HTTP/2 (client-go)',
  h1: `as ${FLOOD.toLocaleString('en')} HTTP/1.1 connections`,
};

async function variant({ etcd, protocol, log }) {
  return Scope.run(async (scope) => {
    const how = VARIANT_NAMES[protocol];
    if (!how) throw new Error(`SVC_BENCH_APF_VARIANTS: unknown variant ${protocol} (h2 or h1)`);
    log(`  [${protocol}] spawning svc-apiserver (defaults: priority and fairness on, 400 + 200 seats) ...`);
    // SVC_BENCH_APF_ARGS: extra server flags, e.g. `--enable-priority-and-fairness=false` to compare.
    const extraArgs = (process.env.SVC_BENCH_APF_ARGS ?? '').split(' ').filter(Boolean);
    const server = await spawnApiServer({ etcdEndpoints: etcd.endpoints, extraArgs });
    scope.defer(() => server.stop());
    // HTTP/1.1: 64 sockets each, so a create queues in the client only once answers take over 6.4 s.
    const user = client(server, { protocol, maxSockets: 64, impersonate: 'steady' });
    const admin = client(server, { protocol, maxSockets: 64 });
    for (const c of [user, admin]) scope.defer(() => c.close());

    log(
      `  [${protocol}] baseline: a create each per ${PERIOD_MS} ms by 'steady' and the admin, ${BASELINE_MS / 1000} s ...`,
    );
    let until = performance.now() + BASELINE_MS;
    const [userIdle, adminIdle] = await Promise.all([
      steady(user, { prefix: `idle-user-${protocol}`, until }),
      steady(admin, { prefix: `idle-admin-${protocol}`, until }),
    ]);

    log(`  [${protocol}] flood: ${FLOOD} creates in flight by 'flood' ${how} (429s wait their Retry-After) ...`);
    // The flood runs in a worker thread: in this thread its thousands of answers would delay
    // the measured users' own answers (the figure would be the load generator's, not the server's).
    const worker = new Worker(new URL(import.meta.url), {
      workerData: { apfFlood: { url: server.url, caPem: server.caPem, token: server.token, flood: FLOOD, protocol } },
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
    // The flood counts once every one of its requests has had an answer: measuring before
    // would measure the flood's start (2,000 TLS handshakes at once for HTTP/1.1).
    const rampStart = performance.now();
    while ((counts.answered ?? 0) < FLOOD && performance.now() - rampStart < FLOOD_CONNECT_LIMIT_MS) await sleep(200);
    const rampMs = performance.now() - rampStart;
    log(
      `  [${protocol}] ${counts.answered} of the flood's ${FLOOD} workers answered after ${(rampMs / 1000).toFixed(1)} s, over ${counts.connections} connections`,
    );
    await sleep(FLOOD_RAMP_MS);
    const before = { ...counts };
    const serverBefore = await serverMetrics(server);
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    const loadBefore = loadLine();
    log(
      `  [${protocol}] measuring 'steady' and the admin for ${MEASURE_MS / 1000} s under the flood (${loadBefore}) ...`,
    );
    until = performance.now() + MEASURE_MS;
    const [userFlood, adminFlood] = await Promise.all([
      steady(user, { prefix: `flood-user-${protocol}`, until }),
      steady(admin, { prefix: `flood-admin-${protocol}`, until }),
    ]);
    lag.disable();
    const serverAfter = await serverMetrics(server);
    const loadAfter = loadLine();
    const mean = (sum, n) => (n > 0 ? ((1000 * sum) / n).toFixed(0) : '-');
    log(
      `  [${protocol}] the server's view of the measured window: creates ${serverAfter.creates - serverBefore.creates}, mean ${mean(serverAfter.createSeconds - serverBefore.createSeconds, serverAfter.creates - serverBefore.creates)} ms from its chain's start to the answer; global-default mean queue wait ${mean(serverAfter.waitSeconds - serverBefore.waitSeconds, serverAfter.waited - serverBefore.waited)} ms, ${serverAfter.executingSeats} seats executing and ${serverAfter.inqueue} requests queued at the end`,
    );
    log(
      `  [${protocol}] measured (${loadAfter}); the bench's own event loop lag meanwhile: p99 ${(lag.percentile(99) / 1e6).toFixed(0)} ms, max ${(lag.max / 1e6).toFixed(0)} ms`,
    );
    const during = {
      created: counts.created - before.created,
      refused: counts.refused - before.refused,
    };
    worker.postMessage('stop');
    await workerDone;
    // SVC_BENCH_APF_SERVER_LOG=<file>: the server's last 32 KiB of output, to look for errors under the flood.
    if (process.env.SVC_BENCH_APF_SERVER_LOG)
      await writeFile(`${process.env.SVC_BENCH_APF_SERVER_LOG}.${protocol}`, server.proc.output());
    log(
      `  [${protocol}] flood: ${counts.created} created, ${counts.refused} refused with 429, ${counts.other} other answers ${JSON.stringify(counts.otherStatuses ?? {})}, ${counts.errors} connection errors; its answers p50 ${counts.p50.toFixed(0)} ms, p99 ${counts.p99.toFixed(0)} ms (in the measured ${MEASURE_MS / 1000} s: ${during.created} created, ${during.refused} refused)`,
    );
    for (const [who, r] of [
      ['steady', userFlood],
      ['admin', adminFlood],
    ])
      if (r.n === 0)
        throw new Error(`none of ${who}'s creates succeeded under the flood: ${r.failures.slice(0, 5).join(', ')}`);

    const detail = (idle, busy) =>
      `${busy.n} creates (${busy.failures.length} failed: ${busy.failures.slice(0, 3).join(', ') || 'none'}), p50 ${busy.p50.toFixed(1)} ms under the flood; idle p50 ${idle.p50.toFixed(1)} ms; ${loadAfter}`;
    return [
      result({
        name: `a second user's ConfigMap create p99 (one per 100 ms) while one user keeps ${FLOOD.toLocaleString('en')} creates in flight ${how}, vs idle`,
        short: `second user p99 under flood ${protocol} vs idle`,
        value: userFlood.p99,
        ceiling: userIdle.p99,
        unit: 'ms',
        target: { kind: 'value', op: '<=', limit: 1000, unit: 'ms' },
        detail: detail(userIdle, userFlood),
      }),
      result({
        name: `system:masters' ConfigMap create p99 (one per 100 ms) while one user keeps ${FLOOD.toLocaleString('en')} creates in flight ${how}, vs idle`,
        short: `admin p99 under flood ${protocol} vs idle`,
        value: adminFlood.p99,
        ceiling: adminIdle.p99,
        unit: 'ms',
        target: { kind: 'value', op: '<=', limit: 1000, unit: 'ms' },
        detail: detail(adminIdle, adminFlood),
      }),
      result({
        name: `the flood's creates (${how}) answered 429 (Retry-After honoured) vs every create it sent`,
        short: `flood ${protocol} 429s vs sent`,
        value: counts.refused,
        ceiling: counts.refused + counts.created + counts.other,
        unit: '',
        detail: `${fmtNum(counts.created, '')} created; ${counts.other} other answers; ${counts.errors} connection errors; ${counts.connections} connections`,
      }),
    ];
  });
}

/** The flooding user, in a worker thread: FLOOD workers each creating, waiting Retry-After on a 429. */
async function flood({ url, caPem, token, flood: n, protocol }) {
  const c = client({ url, caPem, token }, { protocol, maxSockets: n, impersonate: 'flood' });
  const counts = {
    created: 0,
    refused: 0,
    other: 0,
    otherStatuses: {},
    errors: 0,
    answered: 0,
    connections: 0,
    p50: NaN,
    p99: NaN,
  };
  const latencies = [];
  let flooding = true;
  parentPort.on('message', () => {
    flooding = false;
  });
  const report = setInterval(() => {
    counts.connections = c.connections();
    parentPort.postMessage(counts);
  }, 200);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      let first = true;
      while (flooding) {
        try {
          const t0 = performance.now();
          const r = await c.create(`flood-${protocol}-${next++}`);
          latencies.push(performance.now() - t0);
          if (first) {
            first = false;
            counts.answered++;
          }
          if (r.status === 201) counts.created++;
          else if (r.status === 429) {
            counts.refused++;
            await sleep(r.retryAfter * 1000);
          } else {
            counts.other++;
            counts.otherStatuses[r.status] = (counts.otherStatuses[r.status] ?? 0) + 1;
          }
        } catch {
          counts.errors++;
          await sleep(100);
        }
      }
    }),
  );
  clearInterval(report);
  const sorted = Float64Array.from(latencies).sort();
  counts.p50 = percentile(sorted, 0.5);
  counts.p99 = percentile(sorted, 0.99);
  counts.connections = c.connections();
  parentPort.postMessage(counts);
  c.close();
  parentPort.close();
}

if (!isMainThread && workerData?.apfFlood) await flood(workerData.apfFlood);
else await runIfMain(import.meta.url, run);
