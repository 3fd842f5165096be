// What audit costs a write, in one run (one API server per configuration, one etcd):
//
//  ceiling: ConfigMap creates (1 KiB of data) over HTTPS, 64 in flight, with no audit
//  (b) figure: the same with a Metadata policy written to a log file (the log's default
//      blocking mode; target ≥ 0.85 of the ceiling)
//  (c) figure: the same with a RequestResponse policy sent to a webhook in batch mode (the
//      defaults: batches of up to 400, throttled; an HTTPS receiver in this process that parses
//      every EventList; target ≥ 0.7 of the ceiling)
//
// Each audited run checks that every create's events were recorded (two per create, nothing
// counted in apiserver_audit_error_total). The API servers run as separate processes; etcd,
// the servers, the load generator and the receiver share the machine's CPUs.

import { randomBytes } from 'node:crypto';
import { readFile, rm, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ROOT,
  Scope,
  apiClient,
  checkBuilt,
  fmtLatency,
  mustNotFail,
  result,
  runIfMain,
  runLoad,
  sleep,
  spawnApiServer,
  startEtcdInScope,
  svcTesting,
} from './lib.mjs';

const IN_FLIGHT = 64;
const WARMUP_MS = 1000;
const MEASURE_MS = 5000;
const PAYLOAD = randomBytes(768).toString('base64'); // 1024 characters

/** The product's spellings come from @svc/api's names module (the servers run with the default naming). */
async function names() {
  checkBuilt();
  const api = await import(pathToFileURL(join(ROOT, 'packages/api/dist/index.js')).href);
  return { audit: api.group('audit') };
}

/** An HTTPS receiver that parses each EventList and counts its events per stage. */
async function startReceiver(scope) {
  const { createTestCa, svcconfigYaml } = await svcTesting();
  const ca = await createTestCa('bench-audit-ca');
  const serving = await ca.issue({ commonName: 'bench-audit', usages: ['server'], hosts: ['127.0.0.1'] });
  const receiver = { events: 0, batches: 0, complete: 0 };
  const server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const list = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      receiver.batches++;
      receiver.events += list.items.length;
      for (const e of list.items) if (e.stage === 'ResponseComplete' && e.responseObject) receiver.complete++;
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '2' });
      res.end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  scope.defer(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );
  receiver.kubeconfig = svcconfigYaml({
    server: `https://127.0.0.1:${server.address().port}/audit`,
    caPem: ca.certPem,
    token: 'bench',
  });
  return receiver;
}

function loadCreates(api, prefix) {
  const path = '/api/v1/namespaces/default/configmaps';
  return runLoad({
    concurrency: IN_FLIGHT,
    warmupMs: WARMUP_MS,
    durationMs: MEASURE_MS,
    op: async (i) => {
      const r = await api.call('POST', path, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `${prefix}-${i}` },
        data: { payload: PAYLOAD },
      });
      if (r.status !== 201) throw new Error(`POST ${path}: HTTP ${r.status} ${r.body.slice(0, 300)}`);
    },
  });
}

/** Starts a server with `extraArgs`, loads it with creates, and stops it; `after` runs before the stop. */
async function measure({ etcd, log, what, prefix, extraArgs = [], after }) {
  return Scope.run(async (scope) => {
    log(`  spawning svc-apiserver (${what}) ...`);
    const server = await spawnApiServer({ etcdEndpoints: etcd.endpoints, extraArgs });
    scope.defer(() => server.stop());
    const api = apiClient(server, { maxSockets: IN_FLIGHT });
    scope.defer(() => api.close());
    log(`  ConfigMap creates, ${what}, ${IN_FLIGHT} in flight, ${MEASURE_MS / 1000} s ...`);
    const load = await loadCreates(api, prefix);
    mustNotFail(`ConfigMap create (${what})`, load);
    log(`  ${load.opsPerSec.toFixed(0)}/s`);
    if (after) await after(api, load);
    return load;
  });
}

/** apiserver_audit_error_total over all plugins, from the server's /metrics. */
async function auditErrors(api) {
  const r = await api.call('GET', '/metrics');
  return r.body
    .split('\n')
    .filter((l) => l.startsWith('apiserver_audit_error_total'))
    .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
}

export default async function run({ log = () => undefined } = {}) {
  return Scope.run(async (scope) => {
    const n = await names();
    const { etcd } = await startEtcdInScope(scope);
    const dir = await mkdtemp(join(tmpdir(), 'svc-bench-audit-'));
    scope.defer(() => rm(dir, { recursive: true, force: true }));
    const receiver = await startReceiver(scope);
    const metadataPolicy = join(dir, 'metadata.yaml');
    await writeFile(metadataPolicy, `apiVersion: ${n.audit}/v1\nkind: Policy\nrules:\n- level: Metadata\n`);
    const rrPolicy = join(dir, 'request-response.yaml');
    await writeFile(
      rrPolicy,
      `apiVersion: ${n.audit}/v1\nkind: Policy\nrules:\n- level: RequestResponse\n  resources: [{group: "", resources: [configmaps]}]\n- level: None\n`,
    );
    const kubeconfig = join(dir, 'webhook.svcconfig');
    await writeFile(kubeconfig, receiver.kubeconfig);
    const logFile = join(dir, 'audit.log');

    // (a) No audit.
    const plain = await measure({ etcd, log, what: 'no audit', prefix: 'plain' });

    // (b) Metadata to a log file (blocking).
    let logged = 0;
    const metadata = await measure({
      etcd,
      log,
      what: 'Metadata to a log file',
      prefix: 'log',
      extraArgs: ['--audit-policy-file', metadataPolicy, '--audit-log-path', logFile],
      after: async (api) => {
        if ((await auditErrors(api)) !== 0) throw new Error('the log backend lost events');
      },
    });
    const text = await readFile(logFile, 'utf8');
    for (const line of text.split('\n'))
      if (line.includes('"verb":"create"') && line.includes('ResponseComplete')) logged++;
    if (logged < metadata.ops) throw new Error(`the log holds ${logged} create events for ${metadata.ops} creates`);

    // (c) RequestResponse to the batch webhook.
    const webhook = await measure({
      etcd,
      log,
      what: 'RequestResponse to a batch webhook',
      prefix: 'hook',
      extraArgs: ['--audit-policy-file', rrPolicy, '--audit-webhook-config-file', kubeconfig],
      after: async (api, load) => {
        // Batches go out up to 30 s after their first event (the default wait): wait for the last.
        const deadline = performance.now() + 60_000;
        while (receiver.complete < load.ops && performance.now() < deadline) await sleep(100);
        if ((await auditErrors(api)) !== 0) throw new Error('the webhook backend lost events');
        if (receiver.complete < load.ops)
          throw new Error(`the receiver got ${receiver.complete} ResponseComplete events for ${load.ops} creates`);
      },
    });

    return [
      result({
        name: 'ConfigMap creates/s with a Metadata policy to a log file (blocking; HTTPS, 64 in flight) vs no audit',
        short: 'creates/s, Metadata to log vs no audit',
        value: metadata.opsPerSec,
        ceiling: plain.opsPerSec,
        unit: '/s',
        target: { kind: 'ratio', op: '>=', limit: 0.85 },
        detail: `log ${fmtLatency(metadata)}; none ${fmtLatency(plain)}; ${logged} create events logged`,
      }),
      result({
        name: 'ConfigMap creates/s with RequestResponse to a batch webhook (HTTPS receiver in the bench) vs no audit',
        short: 'creates/s, RequestResponse to webhook vs no audit',
        value: webhook.opsPerSec,
        ceiling: plain.opsPerSec,
        unit: '/s',
        target: { kind: 'ratio', op: '>=', limit: 0.7 },
        detail: `webhook ${fmtLatency(webhook)}; ${receiver.events} events in ${receiver.batches} batches`,
      }),
    ];
  });
}

await runIfMain(import.meta.url, run);
