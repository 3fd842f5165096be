// Events on etcd against Events on Redis (`--store-servers-overrides /events#redis://...`), in one run.
//
//  1. figure:  Event creates/s over HTTPS (64 in flight, 10,000 Events) with Events on Redis
//     ceiling: the same with Events on etcd
//  2. figure:  growth of etcd's database (dbSize) per 10,000 Events with Events on Redis
//     ceiling: the same with Events on etcd
//
// Each server has an etcd of its own, so each growth is its own; Redis runs with the append-only
// file and appendfsync always (as `startRedis()`, cluster.sh and compose run it).

import {
  Scope,
  apiClient,
  fmtLatency,
  mustNotFail,
  result,
  runIfMain,
  runLoad,
  spawnApiServer,
  startEtcdInScope,
  svcTesting,
} from './lib.mjs';

const IN_FLIGHT = 64;
const EVENTS = 10_000;

function event(i) {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `bench-${i}.${Date.now().toString(36)}` },
    involvedObject: { kind: 'Pod', name: `pod-${i % 100}`, namespace: 'default' },
    reason: 'Scheduled',
    message: `Successfully assigned default/pod-${i % 100} to node-${i % 10}`,
    type: 'Normal',
    source: { component: 'bench' },
  };
}

async function measure(scope, { log, label, extraArgs = [] }) {
  const { etcd, client } = await startEtcdInScope(scope);
  const server = await spawnApiServer({ etcdEndpoints: etcd.endpoints, extraArgs });
  scope.defer(() => server.stop());
  const api = apiClient(server, { maxSockets: IN_FLIGHT });
  scope.defer(() => api.close());
  const path = '/api/v1/namespaces/default/events';
  const before = Number((await client.maintenance.status()).dbSize);
  log(`  ${EVENTS} Event creates with Events on ${label}, ${IN_FLIGHT} in flight ...`);
  const load = await runLoad({
    concurrency: IN_FLIGHT,
    count: EVENTS,
    op: async (i) => {
      const r = await api.call('POST', path, event(i));
      if (r.status !== 201) throw new Error(`POST ${path}: HTTP ${r.status} ${r.body.slice(0, 300)}`);
    },
  });
  mustNotFail(`Event creates on ${label}`, load);
  const after = Number((await client.maintenance.status()).dbSize);
  log(`  ${load.opsPerSec.toFixed(0)}/s, etcd db ${before} → ${after} bytes`);
  return { load, growth: after - before };
}

export default async function run({ log = () => undefined } = {}) {
  return Scope.run(async (scope) => {
    const { startRedis } = await svcTesting();
    const redis = await startRedis();
    scope.defer(() => redis.stop());
    const onEtcd = await measure(scope, { log, label: 'etcd' });
    const overrides = `/events#${redis.url},events.svc.io/events#${redis.url}`;
    const onRedis = await measure(scope, { log, label: 'Redis', extraArgs: ['--store-servers-overrides', overrides] });
    return [
      result({
        name: 'Event creates/s (HTTPS, 64 in flight) with Events on Redis vs on etcd',
        short: 'event creates/s redis vs etcd',
        value: onRedis.load.opsPerSec,
        ceiling: onEtcd.load.opsPerSec,
        unit: '/s',
        detail: `redis ${fmtLatency(onRedis.load)}; etcd ${fmtLatency(onEtcd.load)}`,
      }),
      result({
        name: 'etcd database growth per 10,000 Events with Events on Redis vs on etcd',
        short: 'etcd growth/10k events redis vs etcd',
        value: (onRedis.growth * 10_000) / EVENTS,
        ceiling: (onEtcd.growth * 10_000) / EVENTS,
        unit: 'B',
      }),
    ];
  });
}

await runIfMain(import.meta.url, run);
