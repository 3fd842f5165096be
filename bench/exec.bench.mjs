// kubectl exec and port-forward through the whole path (issue 20), on `cluster.sh up --nodes 1`:
//
//  1. ceiling: a 100 MiB HTTP GET from a pod's server straight over loopback (median of 3)
//     figure:  the same GET through `kubectl port-forward` (WebSocket tunnel, kubectl 1.32's
//              default): kubectl → svc-apiserver → svclet → svc-runtime → the pod's port
//              (median of 3; target ≥ 0.3 of the ceiling)
//  2. ceiling: one `kubectl get pod` spawn → exit (the client's own cost)
//     figure:  `kubectl exec <pod> -- true` spawn → exit, p50 of 20 (target < 150 ms)
//
// Everything runs as separate processes on this machine and shares its CPUs.

import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { Scope, clusterUp, median, result, runIfMain, sleep, spawnTracked, stopProcess, svcTesting } from './lib.mjs';

const MIB = 1024 * 1024;
const SIZE_MIB = 100;

/** The web pod's server: `/` answers ok, `/big` SIZE_MIB MiB. */
function webScript(port) {
  return [
    "const http = require('http');",
    'const chunk = Buffer.alloc(1024 * 1024, 97);',
    'http.createServer((req, res) => {',
    "  if (req.url !== '/big') return res.end('ok');",
    `  res.writeHead(200, { 'content-length': ${SIZE_MIB * MIB} });`,
    `  let left = ${SIZE_MIB};`,
    "  const more = () => { while (left > 0) { left--; if (!res.write(chunk)) return res.once('drain', more); } res.end(); };",
    '  more();',
    `}).listen(${port}, '127.0.0.1');`,
  ].join('\n');
}

/** GETs the path and counts the bytes; resolves with { bytes, ms }. */
function timedGet(port, path) {
  return new Promise((ok, fail) => {
    const t0 = performance.now();
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (b) => (bytes += b.length));
      res.on('end', () => ok({ bytes, ms: performance.now() - t0 }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}

export default async function run({ log = () => undefined } = {}) {
  return Scope.run(async (scope) => {
    const { freePorts } = await svcTesting();
    log('  cluster.sh up --nodes 1 ...');
    const { dir } = await clusterUp(scope, { nodes: 1, prefix: 'svc-bench-exec-' });
    const env = { ...process.env, KUBECONFIG: join(dir, 'admin.svcconfig') };
    const kc = async (...args) => {
      const k = spawnTracked('kubectl', args, { env });
      const code = await k.exited;
      if (code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${code}\n${k.output()}`);
      return k.output();
    };
    const [webPort] = await freePorts(1);
    await kc('run', 'web', '--image=busybox', '--restart=Never', '--', 'node', '-e', webScript(webPort));
    await kc('run', 'shell', '--image=busybox', '--restart=Never', '--', 'sleep', '3600');
    await kc('wait', '--for=condition=Ready', 'pod/web', 'pod/shell', '--timeout=90s');
    for (let i = 0; ; i++) {
      const up = await timedGet(webPort, '/').then(
        () => true,
        () => false,
      );
      if (up) break;
      if (i > 200) throw new Error('the web pod does not serve');
      await sleep(100);
    }

    log(`  ${SIZE_MIB} MiB direct and through kubectl port-forward (3 each) ...`);
    const pf = spawn('kubectl', ['port-forward', 'pod/web', `:${webPort}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const forward = { child: pf, exited: new Promise((r) => pf.once('exit', r)) };
    scope.defer(() => stopProcess(forward));
    let out = '';
    pf.stdout.on('data', (b) => (out += b));
    let localPort;
    for (let i = 0; !localPort; i++) {
      localPort = Number(/Forwarding from 127\.0\.0\.1:(\d+)/.exec(out)?.[1]) || undefined;
      if (i > 200) throw new Error(`kubectl port-forward did not start: ${out}`);
      if (!localPort) await sleep(50);
    }
    const direct = [];
    const forwarded = [];
    for (let i = 0; i < 3; i++) {
      const d = await timedGet(webPort, '/big');
      const f = await timedGet(localPort, '/big');
      if (d.bytes !== SIZE_MIB * MIB || f.bytes !== SIZE_MIB * MIB)
        throw new Error(`short transfer: direct ${d.bytes}, forwarded ${f.bytes}`);
      direct.push(d.ms);
      forwarded.push(f.ms);
    }
    const rate = (ms) => SIZE_MIB / (ms / 1000);

    log('  kubectl exec -- true (20) and kubectl get pod (20) ...');
    const execMs = [];
    const getMs = [];
    for (let i = 0; i < 20; i++) {
      let t = performance.now();
      await kc('exec', 'shell', '--', 'true');
      execMs.push(performance.now() - t);
      t = performance.now();
      await kc('get', 'pod', 'shell', '-o', 'name');
      getMs.push(performance.now() - t);
    }
    return [
      result({
        name: `port-forward ${SIZE_MIB} MiB (WebSocket, kubectl → apiserver → svclet → runtime) vs direct loopback (median of 3)`,
        short: 'port-forward throughput vs direct',
        value: rate(median(forwarded)),
        ceiling: rate(median(direct)),
        unit: 'MiB/s',
        target: { kind: 'ratio', op: '>=', limit: 0.3 },
        detail: `forwarded ${forwarded.map((x) => x.toFixed(0)).join(', ')} ms; direct ${direct.map((x) => x.toFixed(0)).join(', ')} ms`,
      }),
      result({
        name: '`kubectl exec <pod> -- true` p50 vs `kubectl get pod` p50 (20 each)',
        short: 'kubectl exec -- true p50',
        value: median(execMs),
        ceiling: median(getMs),
        unit: 'ms',
        target: { kind: 'value', op: '<=', limit: 150, unit: 'ms' },
      }),
    ];
  });
}

await runIfMain(import.meta.url, run);
