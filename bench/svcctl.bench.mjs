// svcctl start-up (issue 22: "start-up to the first request ≤ 150 ms, benchmarked against
// kubectl version --client start-up in the same run"):
//
//  1. ceiling: `kubectl version --client` spawn → exit
//     figure:  `svcctl version --client` spawn → exit (target ≤ 150 ms)
//  2. ceiling: `kubectl get namespaces` spawn → its first request arriving at an HTTPS server
//     figure:  `svcctl get namespaces` spawn → its first request arriving (target ≤ 150 ms)
//
// RUNS runs of each, the two clients interleaved so machine load hits both alike; the figure
// is the median, the detail gives min/median/max. The server answers a Status 404 at once,
// so only the client's own start-up is measured. `node -e 0` runs interleaved too: Node's own
// start, the floor of any Node client, is in the detail.
//
// The binary measured is the one installed (the `bin` entry): dist/bundle/svcctl.cjs, the
// loader that compiles the CommonJS bundle with its V8 code cache (scripts/bundle.mjs).

import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, median, result, runIfMain, svcTesting } from './lib.mjs';

const RUNS = 15;
const SVCCTL = join(ROOT, 'packages/svcctl/dist/bundle/svcctl.cjs');

function run(cmd, args, env) {
  return new Promise((ok, fail) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { stdio: 'ignore', env: { ...process.env, ...env } });
    child.once('error', fail);
    child.once('exit', () => ok({ t0, ms: performance.now() - t0 }));
  });
}

function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: median(s), max: s[s.length - 1] };
}

const fmt = (s) => `min ${s.min.toFixed(0)} / median ${s.median.toFixed(0)} / max ${s.max.toFixed(0)} ms`;

export default async function svcctlStartup({ log }) {
  const { createTestCa } = await svcTesting();
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-svcctl-'));
  const ca = await createTestCa('bench-ca');
  const cert = await ca.issue({ commonName: 'localhost', usages: ['server'], hosts: ['127.0.0.1'] });
  let arrived = 0;
  const server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    arrived = performance.now();
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const config = join(dir, 'config');
  await writeFile(
    config,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `- name: bench\n  cluster:\n    server: https://127.0.0.1:${server.address().port}\n    certificate-authority-data: ${Buffer.from(ca.certPem).toString('base64')}`,
      'users:',
      '- name: bench\n  user:\n    token: bench',
      'contexts:',
      '- name: bench\n  context:\n    cluster: bench\n    user: bench',
      'current-context: bench',
      '',
    ].join('\n'),
  );
  const env = { KUBECONFIG: config, HOME: dir };
  const clients = {
    svcctl: ['node', [SVCCTL]],
    kubectl: ['kubectl', []],
  };
  const version = { svcctl: [], kubectl: [] };
  const nodeFloor = [];
  const first = { svcctl: [], kubectl: [] };
  try {
    // One warm-up each (file cache), then interleaved runs.
    for (const [cmd, pre] of Object.values(clients)) await run(cmd, [...pre, 'version', '--client'], env);
    for (let i = 0; i < RUNS; i++) {
      nodeFloor.push((await run('node', ['-e', '0'], env)).ms);
      for (const [name, [cmd, pre]] of Object.entries(clients)) {
        version[name].push((await run(cmd, [...pre, 'version', '--client'], env)).ms);
        arrived = 0;
        const r = await run(cmd, [...pre, 'get', 'namespaces', '--request-timeout=5s'], env);
        if (arrived === 0) throw new Error(`${name} get namespaces sent no request`);
        first[name].push(arrived - r.t0);
      }
    }
  } finally {
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
  const v = { svcctl: stats(version.svcctl), kubectl: stats(version.kubectl) };
  const f = { svcctl: stats(first.svcctl), kubectl: stats(first.kubectl) };
  const floor = `node -e 0 median ${stats(nodeFloor).median.toFixed(0)} ms`;
  log(`version --client: svcctl ${fmt(v.svcctl)}; kubectl ${fmt(v.kubectl)}; ${floor}`);
  log(`spawn → first request: svcctl ${fmt(f.svcctl)}; kubectl ${fmt(f.kubectl)}`);
  return [
    result({
      name: 'svcctl version --client (spawn → exit, median)',
      short: 'svcctl version',
      value: v.svcctl.median,
      ceiling: v.kubectl.median,
      unit: 'ms',
      target: { kind: 'value', op: '<=', limit: 150, unit: 'ms' },
      detail: `svcctl ${fmt(v.svcctl)}; kubectl ${fmt(v.kubectl)}; ${floor}`,
    }),
    result({
      name: 'svcctl get: spawn → first request (median)',
      short: 'svcctl first request',
      value: f.svcctl.median,
      ceiling: f.kubectl.median,
      unit: 'ms',
      target: { kind: 'value', op: '<=', limit: 150, unit: 'ms' },
      detail: `svcctl ${fmt(f.svcctl)}; kubectl ${fmt(f.kubectl)}; ${floor}`,
    }),
  ];
}

await runIfMain(import.meta.url, svcctlStartup);
