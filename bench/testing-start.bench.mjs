// @svc/testing's control plane (etcd + svc-apiserver) as a Jest test file gets it (issue 21:
// "ready in a jest test ≤ 2 s").
//
//  ceiling: etcd alone through the same harness (startEtcd: spawn on free loopback ports until
//           its /health answers), in this process, median of RUNS
//  figure:  in a Jest test (bench/fixtures/control-plane-start.bench-test.ts, run by Jest with the
//           suite's own transform and module mapping): startTestApiServer() — a fresh etcd and
//           svc-apiserver in the test's process, a new --cert-dir and store prefix — until /readyz
//           answers 200; median of RUNS Jest runs, one after another. Jest's own start and the
//           loading of the test's modules come before the clock starts (reported in the detail).

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { ROOT, median, result, runIfMain, svcTesting } from './lib.mjs';

const RUNS = Number(process.env.SVC_BENCH_TESTING_RUNS ?? 5);

function jestConfig() {
  const base = createRequire(import.meta.url)(join(ROOT, 'jest.config.cjs'));
  return JSON.stringify({
    ...base,
    rootDir: ROOT,
    roots: ['<rootDir>/bench/fixtures'],
    testMatch: ['**/control-plane-start.bench-test.ts'],
    maxWorkers: 1,
  });
}

function runJest(out) {
  return new Promise((ok, fail) => {
    const t0 = performance.now();
    const child = spawn(
      process.execPath,
      [join(ROOT, 'node_modules/jest/bin/jest.js'), '--ci', '--silent', '--config', jestConfig()],
      { cwd: ROOT, env: { ...process.env, SVC_BENCH_OUT: out }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.once('error', fail);
    child.once('exit', (code) => {
      if (code !== 0) return fail(new Error(`jest exited ${code}:\n${err.slice(-3000)}`));
      ok({ wallMs: performance.now() - t0, ms: JSON.parse(readFileSync(out, 'utf8')).ms });
    });
  });
}

export default async function run({ log = () => undefined } = {}) {
  const { startEtcd } = await svcTesting();
  const etcdMs = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const etcd = await startEtcd();
    etcdMs.push(performance.now() - t0);
    await etcd.stop();
  }
  log(`  etcd alone (startEtcd): ${etcdMs.map((x) => x.toFixed(0)).join(', ')} ms`);
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-testing-'));
  const runs = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      const r = await runJest(join(dir, `run-${i}.json`));
      runs.push(r);
      log(
        `  jest run ${i + 1}: control plane ready in ${r.ms.toFixed(0)} ms (jest spawn → exit ${r.wallMs.toFixed(0)} ms)`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const figure = median(runs.map((r) => r.ms));
  return [
    result({
      name: `@svc/testing control plane (etcd + svc-apiserver) ready in a Jest test, median of ${RUNS}, vs etcd alone`,
      short: 'testing control plane ready vs etcd start',
      value: figure,
      ceiling: median(etcdMs),
      unit: 'ms',
      target: { kind: 'value', op: '<=', limit: 2000 },
      detail: `Jest spawn → exit median ${median(runs.map((r) => r.wallMs)).toFixed(0)} ms`,
    }),
  ];
}

await runIfMain(import.meta.url, run);
