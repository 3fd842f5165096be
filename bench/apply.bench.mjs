// Server-side apply of a Pod with 50 containers, repeated alternately by two field managers,
// through a spawned svc-apiserver; and how much of an apply is the merge itself.
//
//  1. figure:  applies/s (application/apply-patch+yaml, force=false) at concurrency 1, manager
//              `alpha` owning containers 0-24 and `beta` containers 25-49, each apply changing
//              the images of its own containers (never a conflict)
//     ceiling: the same number of plain PUTs (updates) of the same object, each changing 25
//              images the same way (the server still records managedFields for them)
//  2. the same at 8 in flight
//  3. figure:  milliseconds per `applyPatch` (the merge, field sets and managedFields, from the
//              BUILT @svc/machinery) run in this process on the same objects
//     ceiling: the mean API apply latency at concurrency 1; the ratio is the share of an
//              apply's time spent in the merge
//
// The API server runs as a separate process; etcd, the server and this load generator share
// the machine's CPUs.

import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ROOT,
  Scope,
  apiClient,
  fmtLatency,
  mustNotFail,
  result,
  runIfMain,
  runLoad,
  spawnApiServer,
  startEtcdInScope,
} from './lib.mjs';

const CONTAINERS = 50;
const HALF = CONTAINERS / 2;
const WARMUP_MS = 1000;
const MEASURE_MS = 4000;
const IN_FLIGHT = 8;
const MERGE_ROUNDS = 300;
const NAMESPACE = 'default';
const NAME = 'apply-bench';
const PATH = `/api/v1/namespaces/${NAMESPACE}/pods/${NAME}`;
const MANAGERS = ['alpha', 'beta'];

const containerName = (i) => `c${String(i).padStart(2, '0')}`;

/** The containers manager `m` (0 or 1) applies, with image tag `tag`. */
function containersOf(m, tag) {
  return Array.from({ length: HALF }, (_, j) => {
    const i = m * HALF + j;
    return {
      name: containerName(i),
      image: `registry.example/${containerName(i)}:${tag}`,
      ports: [{ containerPort: 8000 + i, protocol: 'TCP' }],
    };
  });
}

function applied(containers) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: NAME, namespace: NAMESPACE }, spec: { containers } };
}

/** One request with an explicit content type on the client's keep-alive agent. */
async function apply(api, server, m, tag) {
  const r = await api.call(
    'PATCH',
    `${PATH}?fieldManager=${MANAGERS[m]}&force=false`,
    applied(containersOf(m, tag)),
    'application/apply-patch+yaml',
  );
  if (r.status !== 200 && r.status !== 201)
    throw new Error(`apply by ${MANAGERS[m]}: HTTP ${r.status} ${r.body.slice(0, 400)}`);
  return JSON.parse(r.body);
}

export default async function run({ log = () => undefined } = {}) {
  return Scope.run(async (scope) => {
    const machinery = await import(pathToFileURL(join(ROOT, 'packages/machinery/dist/index.js')).href);
    const apiTypes = await import(pathToFileURL(join(ROOT, 'packages/api/dist/index.js')).href);
    const podSchema = apiTypes.builtinResources().find((r) => r.group === '' && r.kind === 'Pod').schema;

    const { etcd } = await startEtcdInScope(scope);
    log('  spawning svc-apiserver ...');
    const server = await spawnApiServer({ etcdEndpoints: etcd.endpoints });
    scope.defer(() => server.stop());
    const api = apiClient(server, { maxSockets: IN_FLIGHT });
    scope.defer(() => api.close());
    // No controller manager runs: the ServiceAccount admission plugin needs the namespace's account.
    const sa = await api.call('POST', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, {
      metadata: { name: 'default' },
    });
    if (sa.status !== 201) throw new Error(`default service account: HTTP ${sa.status} ${sa.body.slice(0, 400)}`);

    // Ownership set-up: alpha creates all 50 containers, beta shares 25-49 by applying the same
    // values, then alpha stops applying 25-49 (beta keeps them). From then on each manager
    // changes only its own containers and no apply conflicts.
    const all = [...containersOf(0, 'v0'), ...containersOf(1, 'v0')];
    const createRes = await api.call(
      'PATCH',
      `${PATH}?fieldManager=alpha`,
      applied(all),
      'application/apply-patch+yaml',
    );
    if (createRes.status !== 201)
      throw new Error(`create by apply: HTTP ${createRes.status} ${createRes.body.slice(0, 400)}`);
    await apply(api, server, 1, 'v0');
    const live = await apply(api, server, 0, 'v0');
    const owners = (live.metadata.managedFields ?? [])
      .map((e) => `${e.manager}/${e.operation}`)
      .sort()
      .join(',');
    if (owners !== 'alpha/Apply,beta/Apply') throw new Error(`unexpected managers after set-up: ${owners}`);
    log(
      `  pod with ${live.spec.containers.length} containers, ${JSON.stringify(live).length} bytes of JSON with managedFields`,
    );

    // 1. Applies, concurrency 1, alternating managers.
    const applyOp = async (i) => {
      await apply(api, server, i % 2, `v${i + 1}`);
    };
    log(`  applies at concurrency 1, ${MEASURE_MS / 1000} s ...`);
    const apply1 = await runLoad({ op: applyOp, concurrency: 1, warmupMs: WARMUP_MS, durationMs: MEASURE_MS });
    mustNotFail('apply (concurrency 1)', apply1);

    // 2. The same at 8 in flight (applies and PUTs of one object retry on conflicts inside the server).
    log(`  applies at ${IN_FLIGHT} in flight, ${MEASURE_MS / 1000} s ...`);
    const base = 1_000_000;
    const applyN = await runLoad({
      op: (i) => applyOp(base + i),
      concurrency: IN_FLIGHT,
      warmupMs: WARMUP_MS,
      durationMs: MEASURE_MS,
    });
    mustNotFail(`apply (${IN_FLIGHT} in flight)`, applyN);

    // 3. The merge alone, in this process, on the same objects: the live pod as the server
    //    holds it (managedFields included) and the same alternating apply bodies.
    log(`  applyPatch in-process, ${MERGE_ROUNDS} rounds ...`);
    let obj = JSON.parse((await api.call('GET', PATH)).body);
    const mergeOnce = (i) => {
      const m = i % 2;
      const out = machinery.applyPatch({
        live: obj,
        applied: applied(containersOf(m, `m${i}`)),
        manager: MANAGERS[m],
        force: false,
        schema: podSchema,
        apiVersion: 'v1',
        now: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
        ignoreStatus: true,
        lastAppliedAnnotation: apiTypes.naming().lastAppliedAnnotation,
      });
      obj = out.object;
    };
    for (let i = 0; i < 50; i++) mergeOnce(i);
    const t0 = performance.now();
    for (let i = 0; i < MERGE_ROUNDS; i++) mergeOnce(50 + i);
    const mergeMs = (performance.now() - t0) / MERGE_ROUNDS;
    const apiMeanMs = 1000 / apply1.opsPerSec;

    // The ceilings last: PUTs take the images over (manager `unknown`), after which the
    // managers' applies would conflict. The PUT body is the object as read, without
    // resourceVersion (unconditional update) and managedFields (the server keeps its own),
    // with half of the images changed per PUT, as each apply changes half.
    const current = JSON.parse((await api.call('GET', PATH)).body);
    delete current.metadata.resourceVersion;
    delete current.metadata.managedFields;
    const putOp = async (i) => {
      const m = i % 2;
      const body = structuredClone(current);
      for (let j = 0; j < HALF; j++)
        body.spec.containers[m * HALF + j].image = `registry.example/${containerName(m * HALF + j)}:p${i}`;
      const r = await api.call('PUT', PATH, body, 'application/json');
      if (r.status !== 200) throw new Error(`PUT: HTTP ${r.status} ${r.body.slice(0, 400)}`);
    };
    log(`  ${apply1.ops} PUTs at concurrency 1 ...`);
    const put1 = await runLoad({ op: putOp, concurrency: 1, warmupMs: WARMUP_MS, count: apply1.ops });
    mustNotFail('PUT (concurrency 1)', put1);

    log(`  ${applyN.ops} PUTs at ${IN_FLIGHT} in flight ...`);
    const putN = await runLoad({
      op: (i) => putOp(2 * base + i),
      concurrency: IN_FLIGHT,
      warmupMs: WARMUP_MS,
      count: applyN.ops,
    });
    mustNotFail(`PUT (${IN_FLIGHT} in flight)`, putN);

    return [
      result({
        name: `apply of a ${CONTAINERS}-container Pod, 2 managers alternating (concurrency 1) vs PUTs of the same object`,
        short: 'applies/s vs PUTs/s (c=1)',
        value: apply1.opsPerSec,
        ceiling: put1.opsPerSec,
        unit: '/s',
        detail: `apply ${fmtLatency(apply1)}; PUT ${fmtLatency(put1)}; ${apply1.ops} each`,
      }),
      result({
        name: `apply of a ${CONTAINERS}-container Pod, 2 managers alternating (${IN_FLIGHT} in flight) vs PUTs of the same object`,
        short: `applies/s vs PUTs/s (c=${IN_FLIGHT})`,
        value: applyN.opsPerSec,
        ceiling: putN.opsPerSec,
        unit: '/s',
        detail: `apply ${fmtLatency(applyN)}; PUT ${fmtLatency(putN)}; ${applyN.ops} each`,
      }),
      result({
        name: 'merge (applyPatch, in-process) per apply vs mean API apply latency at concurrency 1 (ratio = share of the apply spent merging)',
        short: 'merge ms vs apply latency',
        value: mergeMs,
        ceiling: apiMeanMs,
        unit: 'ms',
        detail: `merge share ${((100 * mergeMs) / apiMeanMs).toFixed(0)}% (${MERGE_ROUNDS} rounds)`,
      }),
    ];
  });
}

await runIfMain(import.meta.url, run);
