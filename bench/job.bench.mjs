// A Job of 200 completions at parallelism 20 on a 3-node cluster (issue 19): from the Job's
// create to its Complete condition, on real node agents (`cluster.sh up --nodes 3`: three
// svclets with their svc-runtime, each pod a real `sh -c true` process). Simulated nodes
// would not do: they take pods to Running and never end them, and a Job needs its pods to
// exit (docs/simulated-nodes.md).
//
// The figure counts what the Job costs the whole cluster: the job-controller creating pods
// and removing their tracking finalizers, the scheduler binding them, the svclets starting
// the processes and reporting Running and Succeeded, and the Job's status writes.
// The ceiling: the same number of writes the run made (2xx mutating requests on pods and
// Jobs, read from the API server's apiserver_request_total before and after) as raw etcd
// puts of a pod's size through the bench's etcd3 client, on the cluster's own etcd under
// another prefix, 20 in flight (the Job's parallelism) — what the storage alone would need.
//
// SVC_JOB_COMPLETIONS (default 200) and SVC_JOB_PARALLELISM (default 20) change the shape;
// SVC_JOB_QPS gives the controller manager and the scheduler that client rate limit (burst
// twice that) instead of their defaults (20 and 50 per second, as Kubernetes').

import { Scope, clusterClient, clusterUp, etcd3, mutatingRequests, result, runIfMain, runLoad, sleep } from './lib.mjs';

const COMPLETIONS = Number(process.env.SVC_JOB_COMPLETIONS ?? 200);
const PARALLELISM = Number(process.env.SVC_JOB_PARALLELISM ?? 20);
const NODES = 3;
const NS = 'jobbench';
const TIMEOUT_MS = 600_000;
const QPS = process.env.SVC_JOB_QPS ? Number(process.env.SVC_JOB_QPS) : undefined;

export default async function job({ log = () => undefined } = {}) {
  return Scope.run(async (scope) => {
    log(`  cluster.sh up --nodes ${NODES} ...`);
    const clientRate = QPS ? `--svc-api-qps=${QPS} --svc-api-burst=${QPS * 2}` : '';
    const env = QPS ? { SVC_CONTROLLER_MANAGER_ARGS: clientRate, SVC_SCHEDULER_ARGS: clientRate } : {};
    const cluster = await clusterUp(scope, { nodes: NODES, prefix: 'svc-bench-job-', env });
    log(`  ${NODES} nodes Ready; up took ${(cluster.upMs / 1000).toFixed(1)} s`);
    const { api, must } = await clusterClient(scope, cluster);
    await must('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    // Service accounts are made by their controller: the pods need the namespace's default one.
    for (const deadline = Date.now() + 60_000; ; await sleep(100)) {
      const r = await api.call('GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`);
      if (r.status === 200) break;
      if (Date.now() > deadline) throw new Error(`no default service account in ${NS}`);
    }

    const before = (await api.call('GET', '/metrics')).body;
    log(`  Job of ${COMPLETIONS} completions, parallelism ${PARALLELISM} ...`);
    const t0 = performance.now();
    await must('POST', `/apis/batch/v1/namespaces/${NS}/jobs`, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'bench' },
      spec: {
        completions: COMPLETIONS,
        parallelism: PARALLELISM,
        template: {
          spec: {
            restartPolicy: 'Never',
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'true'] }],
          },
        },
      },
    });
    let last = '';
    let lastLog = performance.now();
    for (;;) {
      const j = await must('GET', `/apis/batch/v1/namespaces/${NS}/jobs/bench`);
      const conditions = j.status?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Complete' && c.status === 'True')) break;
      const failed = conditions.find((c) => c.type === 'Failed' && c.status === 'True');
      if (failed) throw new Error(`the Job failed: ${failed.reason}: ${failed.message}`);
      last = `succeeded ${j.status?.succeeded ?? 0}, active ${j.status?.active ?? 0}, failed ${j.status?.failed ?? 0}`;
      if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`no Complete after ${TIMEOUT_MS / 1000} s (${last})`);
      if (performance.now() - lastLog > 10_000) {
        log(`  ${((performance.now() - t0) / 1000).toFixed(0)} s: ${last}`);
        lastLog = performance.now();
      }
      await sleep(50);
    }
    const completeS = (performance.now() - t0) / 1000;
    const after = (await api.call('GET', '/metrics')).body;
    const podWrites = mutatingRequests(after, 'pods') - mutatingRequests(before, 'pods');
    const jobWrites = mutatingRequests(after, 'jobs') - mutatingRequests(before, 'jobs');
    const podList = await must('GET', `/api/v1/namespaces/${NS}/pods?limit=1`);
    const podBytes = podList.items[0] ? JSON.stringify(podList.items[0]).length : 2000;

    log('  ceiling: raw etcd ...');
    const etcd = new (etcd3().Etcd3)({ hosts: `http://127.0.0.1:${cluster.ports.etcd}` });
    scope.defer(() => etcd.close());
    const value = Buffer.alloc(podBytes, 'x');
    const writes = podWrites + jobWrites;
    const raw = await runLoad({
      op: (i) =>
        etcd
          .put(`/bench-job-ceiling/${i % COMPLETIONS}`)
          .value(value)
          .exec(),
      concurrency: PARALLELISM,
      count: writes,
    });
    await etcd.delete().prefix('/bench-job-ceiling/').exec();
    if (raw.errors > 0) throw new Error(`raw etcd puts failed: ${raw.firstError}`);
    return [
      result({
        name: `Job of ${COMPLETIONS} completions (parallelism ${PARALLELISM}, ${NODES} real nodes) create → Complete vs raw etcd: ${writes} puts of ${podBytes} B at ${PARALLELISM} in flight`,
        short: `Job ${COMPLETIONS}×${PARALLELISM} → Complete vs raw etcd`,
        value: completeS,
        ceiling: raw.seconds,
        unit: 's',
        detail: `${QPS ? `controller manager and scheduler at ${QPS} QPS; ` : ''}${podWrites} pod writes (${(podWrites / COMPLETIONS).toFixed(1)} per pod: create, binding, status, finalizer) and ${jobWrites} Job writes; ${(COMPLETIONS / completeS).toFixed(1)} completions/s`,
      }),
    ];
  });
}

await runIfMain(import.meta.url, job);
