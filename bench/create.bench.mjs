// Creates and reads through svc-apiserver against the same figures straight to etcd.
//
//  1. ceiling: raw etcd create-if-absent txns (1 KiB values, 64 in flight, etcd3 client)
//     figure:  ConfigMap creates (1 KiB of data) over HTTPS, 64 in flight, keep-alive agent
//  2. ceiling: raw etcd gets of one 1 KiB key, 64 in flight
//     figure:  consistent GETs of one ConfigMap over HTTPS, 64 in flight (read etcd)
//     figure:  GETs of that ConfigMap with resourceVersion=0 (served by the watch cache)
//  3. ceiling: `node -e 0` from spawn to exit (Node's own start cost)
//     figure:  svc-apiserver from spawn to the first /readyz 200 (median of 5 spawns against
//              an already-running etcd; fresh cert dir and store prefix each time)
//
// The API server runs as a separate process (`node packages/apiserver/dist/bin/svc-apiserver.js`)
// so that it and the load generator do not share one event loop. Everything runs on one
// machine: etcd, the server and the load generator compete for the same CPUs, as they do for
// the ceiling (etcd and the load generator).

import { randomBytes } from 'node:crypto';
import {
  Scope,
  apiClient,
  fmtLatency,
  median,
  mustNotFail,
  result,
  runIfMain,
  runLoad,
  spawnApiServer,
  spawnTracked,
  startEtcdInScope,
} from './lib.mjs';

const IN_FLIGHT = 64;
const WARMUP_MS = 1000;
const MEASURE_MS = 5000;
const SPAWNS = 5;
const PAYLOAD = randomBytes(768).toString('base64'); // 1024 characters

export default async function run({ log = () => undefined } = {}) {
  return Scope.run(async (scope) => {
    const { etcd, client } = await startEtcdInScope(scope);
    const results = [];

    // 1. Creates.
    log(`  raw etcd create txns, ${IN_FLIGHT} in flight, ${MEASURE_MS / 1000} s ...`);
    const rawCreate = await runLoad({
      concurrency: IN_FLIGHT,
      warmupMs: WARMUP_MS,
      durationMs: MEASURE_MS,
      op: async (i) => {
        const key = `/bench-raw/create/${i}`;
        const r = await client.if(key, 'Create', '==', 0).then(client.put(key).value(PAYLOAD)).commit();
        if (!r.succeeded) throw new Error(`create txn on ${key} did not succeed`);
      },
    });
    mustNotFail('raw create', rawCreate);

    log('  spawning svc-apiserver ...');
    const server = await spawnApiServer({ etcdEndpoints: etcd.endpoints });
    scope.defer(() => server.stop());
    const api = apiClient(server, { maxSockets: IN_FLIGHT });
    scope.defer(() => api.close());

    log(`  ConfigMap creates over HTTPS, ${IN_FLIGHT} in flight, ${MEASURE_MS / 1000} s ...`);
    const path = '/api/v1/namespaces/default/configmaps';
    const apiCreate = await runLoad({
      concurrency: IN_FLIGHT,
      warmupMs: WARMUP_MS,
      durationMs: MEASURE_MS,
      op: async (i) => {
        const r = await api.call('POST', path, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `bench-${i}` },
          data: { payload: PAYLOAD },
        });
        if (r.status !== 201) throw new Error(`POST ${path}: HTTP ${r.status} ${r.body.slice(0, 300)}`);
      },
    });
    mustNotFail('API create', apiCreate);
    results.push(
      result({
        name: 'ConfigMap creates/s (HTTPS, 64 in flight, 1 KiB) vs raw etcd create txns/s',
        short: 'creates/s vs raw create txns/s',
        value: apiCreate.opsPerSec,
        ceiling: rawCreate.opsPerSec,
        unit: '/s',
        target: { kind: 'ratio', op: '>=', limit: 0.45 },
        detail: `api ${fmtLatency(apiCreate)}; raw ${fmtLatency(rawCreate)}`,
      }),
    );
    log(`  ${results.at(-1).value.toFixed(0)}/s vs ${results.at(-1).ceiling.toFixed(0)}/s`);

    // 2. Reads of one object.
    log(`  raw etcd gets, ${IN_FLIGHT} in flight, ${MEASURE_MS / 1000} s ...`);
    await client.put('/bench-raw/get').value(PAYLOAD);
    const rawGet = await runLoad({
      concurrency: IN_FLIGHT,
      warmupMs: WARMUP_MS,
      durationMs: MEASURE_MS,
      op: async () => {
        const v = await client.get('/bench-raw/get').buffer();
        if (v === null) throw new Error('raw get: key missing');
      },
    });
    mustNotFail('raw get', rawGet);

    log(`  ConfigMap GETs over HTTPS, ${IN_FLIGHT} in flight, ${MEASURE_MS / 1000} s ...`);
    const created = await api.call('POST', path, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'bench-get' },
      data: { payload: PAYLOAD },
    });
    if (created.status !== 201) throw new Error(`POST ${path}: HTTP ${created.status} ${created.body.slice(0, 300)}`);
    const getPath = `${path}/bench-get`;
    /** GETs of `target` at IN_FLIGHT, as a result against the raw etcd gets. */
    const getsAgainstRaw = async (o) => {
      const load = await runLoad({
        concurrency: IN_FLIGHT,
        warmupMs: WARMUP_MS,
        durationMs: MEASURE_MS,
        op: async () => {
          const r = await api.call('GET', o.target);
          if (r.status !== 200) throw new Error(`GET ${o.target}: HTTP ${r.status} ${r.body.slice(0, 300)}`);
        },
      });
      mustNotFail(o.what, load);
      results.push(
        result({
          name: o.name,
          short: o.short,
          value: load.opsPerSec,
          ceiling: rawGet.opsPerSec,
          unit: '/s',
          target: { kind: 'ratio', op: '>=', limit: o.limit },
          detail: `api ${fmtLatency(load)}; raw ${fmtLatency(rawGet)}`,
        }),
      );
      log(`  ${results.at(-1).value.toFixed(0)}/s vs ${results.at(-1).ceiling.toFixed(0)}/s`);
    };
    await getsAgainstRaw({
      target: getPath,
      what: 'API get',
      name: 'ConfigMap GETs/s (one object, HTTPS, 64 in flight) vs raw etcd gets/s',
      short: 'GETs/s vs raw gets/s',
      limit: 0.6,
    });

    log(`  ConfigMap GETs with resourceVersion=0 (watch cache), ${IN_FLIGHT} in flight, ${MEASURE_MS / 1000} s ...`);
    await getsAgainstRaw({
      target: `${getPath}?resourceVersion=0`,
      what: 'API cached get',
      name: 'ConfigMap GETs/s with resourceVersion=0 (watch cache, HTTPS, 64 in flight) vs raw etcd gets/s',
      short: 'cached GETs/s vs raw gets/s',
      limit: 1.5,
    });

    // The load server would only take CPU from the start-up measurement.
    api.close();
    await server.stop();

    // 3. Spawn → /readyz 200.
    log(`  svc-apiserver spawn → /readyz 200, ${SPAWNS} times ...`);
    const readyMs = [];
    for (let i = 0; i < SPAWNS; i++) {
      const s = await spawnApiServer({ etcdEndpoints: etcd.endpoints, pollMs: 10 });
      readyMs.push(s.readyMs);
      await s.stop();
    }
    // 4. A restart: the same --cert-dir (CA, serving certificate, service-account key) and store
    // prefix (the default RBAC policy and APF configuration already written), as a server that is
    // stopped and started again finds them.
    log(`  svc-apiserver restart → /readyz 200, ${SPAWNS} times ...`);
    let last = await spawnApiServer({ etcdEndpoints: etcd.endpoints, pollMs: 10 });
    const restartMs = [];
    try {
      for (let i = 0; i < SPAWNS; i++) {
        await last.stop({ keep: true });
        last = await spawnApiServer({ etcdEndpoints: etcd.endpoints, pollMs: 10, restartOf: last });
        restartMs.push(last.readyMs);
      }
    } finally {
      await last.stop();
    }
    const nodeMs = [];
    for (let i = 0; i < SPAWNS; i++) nodeMs.push(await timeNodeNoop());
    results.push(
      result({
        name: 'svc-apiserver spawn → first /readyz 200 (median of 5) vs `node -e 0` spawn → exit',
        short: 'spawn → /readyz 200 vs node -e 0',
        value: median(readyMs),
        ceiling: median(nodeMs),
        unit: 'ms',
        target: { kind: 'value', op: '<=', limit: 1500, unit: 'ms' },
        detail: `runs ${readyMs.map((x) => x.toFixed(0)).join(', ')} ms; node -e 0 ${nodeMs.map((x) => x.toFixed(0)).join(', ')} ms`,
      }),
    );
    results.push(
      result({
        name: 'svc-apiserver restart (its --cert-dir and store as it left them) → first /readyz 200 (median of 5) vs `node -e 0`',
        short: 'restart → /readyz 200 vs node -e 0',
        value: median(restartMs),
        ceiling: median(nodeMs),
        unit: 'ms',
        target: { kind: 'value', op: '<=', limit: 800, unit: 'ms' },
        detail: `runs ${restartMs.map((x) => x.toFixed(0)).join(', ')} ms`,
      }),
    );
    return results;
  });
}

async function timeNodeNoop() {
  const t0 = performance.now();
  const p = spawnTracked(process.execPath, ['-e', '0']);
  const code = await p.exited;
  if (code !== 0) throw new Error(`node -e 0 exited with ${code}: ${p.output()}`);
  return performance.now() - t0;
}

await runIfMain(import.meta.url, run);
