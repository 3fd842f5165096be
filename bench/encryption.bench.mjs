// Encryption at rest: Secret creates through svc-apiserver with secrets encrypted by aescbc and by
// aesgcm, against the same creates with the identity provider (no encryption).
//
//  1. ceiling: Secret creates/s with `identity` (HTTPS, 64 in flight, 1 KiB of data)
//     figure:  the same with `aescbc` (32-byte key)
//  2. ceiling: the same with `identity`
//     figure:  the same with `aesgcm` (32-byte key)
//
// Three servers run side by side on one etcd (each its own store prefix and encryption
// config); they are measured in the order identity, aescbc, aesgcm, aesgcm, aescbc, identity
// and each figure is the mean of its two runs, so a drift of the shared machine during the run
// weighs on all three alike. Only the measured server takes load at a time.

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
} from './lib.mjs';

const IN_FLIGHT = 64;
const WARMUP_MS = 1000;
const MEASURE_MS = 5000;
const PAYLOAD = randomBytes(768).toString('base64'); // 1024 characters

const PROVIDERS = {
  identity: { identity: {} },
  aescbc: { aescbc: { keys: [{ name: 'key1', secret: randomBytes(32).toString('base64') }] } },
  aesgcm: { aesgcm: { keys: [{ name: 'key1', secret: randomBytes(32).toString('base64') }] } },
};

export default async function run({ log = () => undefined } = {}) {
  return Scope.run(async (scope) => {
    const { etcd } = await startEtcdInScope(scope);
    const dir = await mkdtemp(join(tmpdir(), 'svc-bench-encryption-'));
    scope.defer(() => rm(dir, { recursive: true, force: true }));

    const apis = {};
    for (const [name, provider] of Object.entries(PROVIDERS)) {
      const file = join(dir, `${name}.json`);
      await writeFile(
        file,
        JSON.stringify({
          apiVersion: 'apiserver.config.svc.io/v1',
          kind: 'EncryptionConfiguration',
          resources: [{ resources: ['secrets'], providers: [provider] }],
        }),
      );
      log(`  spawning svc-apiserver with ${name} ...`);
      const server = await spawnApiServer({
        etcdEndpoints: etcd.endpoints,
        extraArgs: ['--encryption-provider-config', file],
      });
      scope.defer(() => server.stop());
      const api = apiClient(server, { maxSockets: IN_FLIGHT });
      scope.defer(() => api.close());
      apis[name] = api;
    }

    const runs = { identity: [], aescbc: [], aesgcm: [] };
    let round = 0;
    for (const name of ['identity', 'aescbc', 'aesgcm', 'aesgcm', 'aescbc', 'identity']) {
      round++;
      log(`  Secret creates with ${name}, ${IN_FLIGHT} in flight, ${MEASURE_MS / 1000} s ...`);
      const path = '/api/v1/namespaces/default/secrets';
      const r = await runLoad({
        concurrency: IN_FLIGHT,
        warmupMs: WARMUP_MS,
        durationMs: MEASURE_MS,
        op: async (i) => {
          const res = await apis[name].call('POST', path, {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: `bench-${round}-${i}` },
            data: { payload: Buffer.from(PAYLOAD).toString('base64') },
          });
          if (res.status !== 201) throw new Error(`POST ${path}: HTTP ${res.status} ${res.body.slice(0, 300)}`);
        },
      });
      mustNotFail(`${name} create`, r);
      runs[name].push(r);
      log(`  ${r.opsPerSec.toFixed(0)}/s`);
    }

    const mean = (rs) => rs.reduce((a, r) => a + r.opsPerSec, 0) / rs.length;
    const latency = (rs) => rs.map(fmtLatency).join(' | ');
    const identity = mean(runs.identity);
    return ['aescbc', 'aesgcm'].map((name) =>
      result({
        name: `Secret creates/s encrypted with ${name} vs identity (HTTPS, 64 in flight, 1 KiB)`,
        short: `${name} creates/s vs identity`,
        value: mean(runs[name]),
        ceiling: identity,
        unit: '/s',
        target: { kind: 'ratio', op: '>=', limit: 0.8 },
        detail: `${name} ${latency(runs[name])}; identity ${latency(runs.identity)}`,
      }),
    );
  });
}

await runIfMain(import.meta.url, run);
