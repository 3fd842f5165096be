// What admission costs a write, in one run on one API server:
//
//  ceiling: ConfigMap creates (1 KiB of data) over HTTPS, 64 in flight, with no webhook or policy
//  (b) figure: the same with one ValidatingWebhookConfiguration whose webhook allows everything
//      (an HTTPS webhook server in this process; target ≥ 0.5 of the ceiling)
//  (c) figure: the same with a ValidatingAdmissionPolicy of three CEL rules bound with Deny
//      instead of the webhook (target ≥ 0.8 of the ceiling); measured only when the server
//      serves `admissionregistration.<suffix>/v1` validatingadmissionpolicies and enforces them
//
// The API server runs as a separate process so that it and the load generator do not share one
// event loop; etcd, the server, the load generator and the webhook server share the machine's CPUs.

import { randomBytes } from 'node:crypto';
import { createServer } from 'node:https';
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

/** The product's spellings come from @svc/api's names module (the server runs with the default naming). */
async function names() {
  checkBuilt();
  const api = await import(pathToFileURL(join(ROOT, 'packages/api/dist/index.js')).href);
  return { admissionregistration: api.group('admissionregistration') };
}

/** An HTTPS webhook that allows every AdmissionReview; `calls` counts them. */
async function startAllowingWebhook(scope) {
  const { createTestCa } = await svcTesting();
  const ca = await createTestCa('bench-webhook-ca');
  const serving = await ca.issue({ commonName: 'bench-webhook', usages: ['server'], hosts: ['127.0.0.1'] });
  const hook = { calls: 0 };
  const server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      hook.calls++;
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const body = JSON.stringify({
        apiVersion: review.apiVersion,
        kind: 'AdmissionReview',
        response: { uid: review.request.uid, allowed: true },
      });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) });
      res.end(body);
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
  hook.url = `https://127.0.0.1:${server.address().port}/validate`;
  hook.caBundle = Buffer.from(ca.certPem).toString('base64');
  return hook;
}

const configMapRule = { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] };

async function createOrFail(api, path, body) {
  const r = await api.call('POST', path, body);
  if (r.status !== 201) throw new Error(`POST ${path}: HTTP ${r.status} ${r.body.slice(0, 300)}`);
}

/** Polls until `check` holds (admission configuration reaches the server's informers asynchronously). */
async function until(what, check, timeoutMs = 30_000) {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`${what}: not after ${timeoutMs} ms`);
    await sleep(20);
  }
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

export default async function run({ log = () => undefined } = {}) {
  return Scope.run(async (scope) => {
    const n = await names();
    const { etcd } = await startEtcdInScope(scope);
    log('  spawning svc-apiserver ...');
    const server = await spawnApiServer({ etcdEndpoints: etcd.endpoints });
    scope.defer(() => server.stop());
    const api = apiClient(server, { maxSockets: IN_FLIGHT });
    scope.defer(() => api.close());
    const hook = await startAllowingWebhook(scope);
    const base = `/apis/${n.admissionregistration}/v1`;
    const results = [];

    // (a) No webhook, no policy.
    log(`  ConfigMap creates, no webhook, ${IN_FLIGHT} in flight, ${MEASURE_MS / 1000} s ...`);
    const plain = await loadCreates(api, 'plain');
    mustNotFail('ConfigMap create (no admission)', plain);
    log(`  ${plain.opsPerSec.toFixed(0)}/s`);

    // (b) One validating webhook that allows everything.
    const webhookConfig = 'bench-allow';
    await createOrFail(api, `${base}/validatingwebhookconfigurations`, {
      apiVersion: `${n.admissionregistration}/v1`,
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: webhookConfig },
      webhooks: [
        {
          name: 'allow.bench.example.com',
          clientConfig: { url: hook.url, caBundle: hook.caBundle },
          rules: [configMapRule],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    let probes = 0;
    await until('the webhook to be called', async () => {
      await createOrFail(api, '/api/v1/namespaces/default/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `webhook-probe-${probes++}` },
      });
      return hook.calls > 0;
    });
    log(`  ConfigMap creates, one validating webhook, ${IN_FLIGHT} in flight, ${MEASURE_MS / 1000} s ...`);
    const before = hook.calls;
    const webhooked = await loadCreates(api, 'webhook');
    mustNotFail('ConfigMap create (validating webhook)', webhooked);
    const called = hook.calls - before;
    if (called < webhooked.ops) throw new Error(`the webhook saw ${called} of ${webhooked.ops} creates`);
    results.push(
      result({
        name: 'ConfigMap creates/s with one validating webhook (allows all; HTTPS, 64 in flight) vs without',
        short: 'creates/s with a webhook vs without',
        value: webhooked.opsPerSec,
        ceiling: plain.opsPerSec,
        unit: '/s',
        target: { kind: 'ratio', op: '>=', limit: 0.5 },
        detail: `webhook ${fmtLatency(webhooked)}; none ${fmtLatency(plain)}`,
      }),
    );
    log(`  ${webhooked.opsPerSec.toFixed(0)}/s vs ${plain.opsPerSec.toFixed(0)}/s`);
    const del = await api.call('DELETE', `${base}/validatingwebhookconfigurations/${webhookConfig}`);
    if (del.status !== 200)
      throw new Error(`DELETE webhook configuration: HTTP ${del.status} ${del.body.slice(0, 300)}`);
    await until('the webhook to be gone', async () => {
      const calls = hook.calls;
      await createOrFail(api, '/api/v1/namespaces/default/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `webhook-probe-${probes++}` },
      });
      return hook.calls === calls;
    });

    // (c) A ValidatingAdmissionPolicy with three CEL rules (another issue builds the plugin): measured
    //     only when the server serves the type and enforces the policy, else skipped with a note.
    const policies = await api.call('GET', `${base}/validatingadmissionpolicies`);
    if (policies.status !== 200) {
      log('  (c) skipped: validatingadmissionpolicies are not served');
      return results;
    }
    await createOrFail(api, `${base}/validatingadmissionpolicies`, {
      apiVersion: `${n.admissionregistration}/v1`,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'bench-policy' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [configMapRule] },
        validations: [
          { expression: "object.metadata.name.startsWith('policy-') || object.metadata.name.startsWith('ok-')" },
          { expression: '!has(object.data) || size(object.data) <= 10' },
          { expression: "!has(object.metadata.labels) || !('forbidden' in object.metadata.labels)" },
        ],
      },
    });
    await createOrFail(api, `${base}/validatingadmissionpolicybindings`, {
      apiVersion: `${n.admissionregistration}/v1`,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'bench-policy' },
      spec: { policyName: 'bench-policy', validationActions: ['Deny'] },
    });
    // Enforced when a name the first rule refuses is refused.
    let enforced = false;
    try {
      await until(
        'the policy to be enforced',
        async () => {
          const r = await api.call('POST', '/api/v1/namespaces/default/configmaps', {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `refused-${randomBytes(4).toString('hex')}` },
          });
          if (r.status === 201) return false;
          enforced = true;
          return true;
        },
        10_000,
      );
    } catch {
      // not enforced: the plugin is not there yet
    }
    if (!enforced) {
      log('  (c) skipped: the ValidatingAdmissionPolicy is served but not enforced');
      return results;
    }
    log(`  ConfigMap creates, a 3-rule ValidatingAdmissionPolicy, ${IN_FLIGHT} in flight, ${MEASURE_MS / 1000} s ...`);
    const policed = await loadCreates(api, 'policy');
    mustNotFail('ConfigMap create (ValidatingAdmissionPolicy)', policed);
    results.push(
      result({
        name: 'ConfigMap creates/s with a 3-rule ValidatingAdmissionPolicy (HTTPS, 64 in flight) vs without',
        short: 'creates/s with a policy vs without',
        value: policed.opsPerSec,
        ceiling: plain.opsPerSec,
        unit: '/s',
        target: { kind: 'ratio', op: '>=', limit: 0.8 },
        detail: `policy ${fmtLatency(policed)}; none ${fmtLatency(plain)}`,
      }),
    );
    log(`  ${policed.opsPerSec.toFixed(0)}/s vs ${plain.opsPerSec.toFixed(0)}/s`);
    return results;
  });
}

await runIfMain(import.meta.url, run);
