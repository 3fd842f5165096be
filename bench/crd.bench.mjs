// Custom resources against built-in ConfigMaps, in one run on one API server:
//
//  1. ceiling: ConfigMap creates (about 1 KiB of data) over HTTPS, 64 in flight
//     figure:  custom resource creates of a type whose schema has 20 fields and 3 CEL rules,
//              objects of about the same size, 64 in flight (target ≥ 0.8 of the ConfigMaps)
//  2. figure:  time from the CRD's create to the first successful create of one of its custom
//              resources (polling every 5 ms; target < 1 s); the median of 5 fresh CRDs
//
// The API server runs as a separate process so that it and the load generator do not share
// one event loop; etcd, the server and the load generator share the machine's CPUs.

import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ROOT,
  Scope,
  apiClient,
  checkBuilt,
  fmtLatency,
  median,
  mustNotFail,
  result,
  runIfMain,
  runLoad,
  spawnApiServer,
  startEtcdInScope,
} from './lib.mjs';

/** The product's spellings come from @svc/api's names module (the server runs with the default naming). */
async function names() {
  checkBuilt();
  const api = await import(pathToFileURL(join(ROOT, 'packages/api/dist/index.js')).href);
  return { crdGroup: api.group('apiextensions'), ext: api.naming().schemaExtensionPrefix };
}

const IN_FLIGHT = 64;
const WARMUP_MS = 1000;
const MEASURE_MS = 5000;
const FIELDS = 20;
const CRD_SAMPLES = 5;
const FIELD_VALUE = randomBytes(24).toString('base64'); // 32 characters; 20 of them ≈ 1 KiB with names

function crd(n, { group, plural }) {
  const properties = {};
  for (let i = 0; i < FIELDS; i++) properties[`field${i}`] = { type: 'string', maxLength: 64 };
  properties.replicas = { type: 'integer', minimum: 0 };
  return {
    apiVersion: `${n.crdGroup}/v1`,
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: plural.slice(0, -1), kind: 'Bench' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties,
                  [`${n.ext}validations`]: [
                    { rule: 'self.replicas <= 100', message: 'at most 100 replicas' },
                    { rule: 'self.field0 != self.field1' },
                    { rule: "!has(self.field2) || self.field2.startsWith('x') || size(self.field2) > 0" },
                  ],
                },
              },
            },
          },
        },
      ],
    },
  };
}

function spec(i) {
  const s = { replicas: i % 100 };
  for (let f = 0; f < FIELDS; f++) s[`field${f}`] = `${f === 0 ? 'a' : 'b'}${FIELD_VALUE}`;
  return s;
}

async function createCrd(api, n, { group, plural }) {
  const r = await api.call('POST', `/apis/${n.crdGroup}/v1/customresourcedefinitions`, crd(n, { group, plural }));
  if (r.status !== 201) throw new Error(`POST CRD: HTTP ${r.status} ${r.body.slice(0, 300)}`);
}

export default async function run({ log = () => undefined } = {}) {
  return Scope.run(async (scope) => {
    const n = await names();
    const { etcd } = await startEtcdInScope(scope);
    log('  spawning svc-apiserver ...');
    const server = await spawnApiServer({ etcdEndpoints: etcd.endpoints });
    scope.defer(() => server.stop());
    const api = apiClient(server, { maxSockets: IN_FLIGHT });
    scope.defer(() => api.close());
    const results = [];

    // 2 first, on a quiet server: CRD create → first custom resource create, against one
    // ConfigMap create's round trip (the ceiling: the least a create can take here).
    log(`  CRD create → first custom resource create, ${CRD_SAMPLES} CRDs ...`);
    const roundTripMs = [];
    for (let k = 0; k < CRD_SAMPLES; k++) {
      const started = performance.now();
      const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `round-trip-${k}` } };
      const r = await api.call('POST', '/api/v1/namespaces/default/configmaps', body);
      if (r.status !== 201) throw new Error(`POST ConfigMap: HTTP ${r.status} ${r.body.slice(0, 300)}`);
      roundTripMs.push(performance.now() - started);
    }
    const readyMs = [];
    for (let k = 0; k < CRD_SAMPLES; k++) {
      const group = `ready${k}.bench.example`;
      const started = performance.now();
      await createCrd(api, n, { group, plural: 'benches' });
      const path = `/apis/${group}/v1/namespaces/default/benches`;
      for (;;) {
        const r = await api.call('POST', path, {
          apiVersion: `${group}/v1`,
          kind: 'Bench',
          metadata: { name: 'first' },
          spec: spec(1),
        });
        if (r.status === 201) break;
        if (r.status !== 404) throw new Error(`POST ${path}: HTTP ${r.status} ${r.body.slice(0, 300)}`);
        if (performance.now() - started > 30_000)
          throw new Error('custom resources not served 30 s after the CRD create');
        await new Promise((res) => setTimeout(res, 5));
      }
      readyMs.push(performance.now() - started);
    }

    // 1. ConfigMaps, then custom resources of the same size.
    const cmPath = '/api/v1/namespaces/default/configmaps';
    const data = spec(0);
    log(`  ConfigMap creates over HTTPS, ${IN_FLIGHT} in flight, ${MEASURE_MS / 1000} s ...`);
    const cms = await runLoad({
      concurrency: IN_FLIGHT,
      warmupMs: WARMUP_MS,
      durationMs: MEASURE_MS,
      op: async (i) => {
        const body = {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `bench-${i}` },
          data: { ...data, replicas: '1' },
        };
        const r = await api.call('POST', cmPath, body);
        if (r.status !== 201) throw new Error(`POST ${cmPath}: HTTP ${r.status} ${r.body.slice(0, 300)}`);
      },
    });
    mustNotFail('ConfigMap create', cms);

    const group = 'load.bench.example';
    await createCrd(api, n, { group, plural: 'benches' });
    const crPath = `/apis/${group}/v1/namespaces/default/benches`;
    for (;;) {
      const r = await api.call('GET', crPath);
      if (r.status === 200) break;
      await new Promise((res) => setTimeout(res, 10));
    }
    log(
      `  custom resource creates (${FIELDS}-field schema, 3 CEL rules), ${IN_FLIGHT} in flight, ${MEASURE_MS / 1000} s ...`,
    );
    const crs = await runLoad({
      concurrency: IN_FLIGHT,
      warmupMs: WARMUP_MS,
      durationMs: MEASURE_MS,
      op: async (i) => {
        const body = { apiVersion: `${group}/v1`, kind: 'Bench', metadata: { name: `bench-${i}` }, spec: spec(i) };
        const r = await api.call('POST', crPath, body);
        if (r.status !== 201) throw new Error(`POST ${crPath}: HTTP ${r.status} ${r.body.slice(0, 300)}`);
      },
    });
    mustNotFail('custom resource create', crs);

    results.push(
      result({
        name: `custom resource creates/s (${FIELDS}-field schema, 3 CEL rules, HTTPS, 64 in flight) vs ConfigMap creates/s`,
        short: 'CR creates/s vs ConfigMap creates/s',
        value: crs.opsPerSec,
        ceiling: cms.opsPerSec,
        unit: '/s',
        target: { kind: 'ratio', op: '>=', limit: 0.8 },
        detail: `cr ${fmtLatency(crs)}; configmap ${fmtLatency(cms)}`,
      }),
    );
    log(`  ${crs.opsPerSec.toFixed(0)}/s vs ${cms.opsPerSec.toFixed(0)}/s`);
    results.push(
      result({
        name: `CRD create → first custom resource created (median of ${CRD_SAMPLES})`,
        short: 'CRD create → first CR create',
        value: median(readyMs),
        ceiling: median(roundTripMs),
        unit: 'ms',
        target: { kind: 'value', op: '<=', limit: 1000, unit: 'ms' },
        detail: `runs ${readyMs.map((ms) => ms.toFixed(0)).join(', ')} ms; ceiling: one ConfigMap create's round trip`,
      }),
    );
    return results;
  });
}

await runIfMain(import.meta.url, run);
