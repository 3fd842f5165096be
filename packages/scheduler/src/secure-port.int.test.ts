import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createTestCa,
  HttpsClient,
  startTestApiServer,
  waitFor,
  type TestApiServer,
  createDefaultServiceAccount,
} from '@svc/testing';
import { nodeObject, podObject, startTestScheduler, type TestScheduler } from './scheduler-testing.js';

const READER = 'reader-token-0123456789';
const NOBODY = 'nobody-token-0123456789';
const RBAC = '/apis/rbac.authorization.svc.io/v1';

describe("the scheduler's secure port", () => {
  let server: TestApiServer;
  let sched: TestScheduler;
  let client: HttpsClient;

  beforeAll(async () => {
    server = await startTestApiServer({
      // No node lifecycle controller lifts the not-ready taint TaintNodesByCondition gives new nodes.
      args: ['--authorization-mode=RBAC', '--disable-admission-plugins=TaintNodesByCondition'],
      tokens: [`${READER},metrics-reader,uid-r,""`, `${NOBODY},nobody,uid-n,""`],
    });
    await createDefaultServiceAccount(server.client, 'default');
    await server.client.request('POST', `${RBAC}/clusterroles`, {
      body: { metadata: { name: 'metrics-reader' }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] },
    });
    await server.client.request('POST', `${RBAC}/clusterrolebindings`, {
      body: {
        metadata: { name: 'metrics-reader' },
        roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: 'metrics-reader' },
        subjects: [{ apiGroup: 'rbac.authorization.svc.io', kind: 'User', name: 'metrics-reader' }],
      },
    });
    const ca = await createTestCa('client-ca');
    const caFile = join(server.dir, 'client-ca.crt');
    await writeFile(caFile, ca.certPem);
    sched = await startTestScheduler(server, [
      '--client-ca-file',
      caFile,
      '--authentication-kubeconfig',
      server.svcconfigPath,
      '--authorization-kubeconfig',
      server.svcconfigPath,
    ]);
    const s = sched.scheduler.server;
    if (!s) throw new Error('no secure server');
    client = new HttpsClient(s.url, s.caPem);
    await waitFor('leadership', () => sched.scheduler.isLeader(), { timeoutMs: 15_000 });
  });
  afterAll(async () => {
    await sched?.stop();
    await server?.stop();
  });

  it('serves /healthz without credentials, with the leaderElection and sched-handler-sync checks', async () => {
    // sched-handler-sync passes once the scheduler's informers synced, shortly after leading.
    const plain = await waitFor('a healthy /healthz', async () => {
      const r = await client.request('GET', '/healthz');
      return r.status === 200 ? r : undefined;
    });
    expect(plain.text).toBe('ok');
    const verbose = await waitFor('a healthy verbose /healthz', async () => {
      const r = await client.request('GET', '/healthz?verbose');
      return r.status === 200 ? r : undefined;
    });
    expect(verbose.text.split('\n')).toEqual([
      '[+]ping ok',
      '[+]log ok',
      '[+]leaderElection ok',
      '[+]sched-handler-sync ok',
      'healthz check passed',
      '',
    ]);
    expect((await client.request('GET', '/healthz/leaderElection')).status).toBe(401);
  });

  it('answers 401 without a credential or with a bad token, 403 without RBAC rights', async () => {
    for (const token of [undefined, 'not-a-real-token']) {
      const r = await client.request('GET', '/metrics', { token: token ?? null });
      expect(r.status).toBe(401);
      expect(r.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    }
    const r = await client.request('GET', '/metrics', { token: NOBODY });
    expect(r.status).toBe(403);
    expect(r.json<{ message: string }>().message).toMatch(/User "nobody" cannot get path "\/metrics"/);
  });

  it('serves /metrics to a user RBAC allows: attempts by result, pending pods by queue, cache size, leader, client and process metrics', async () => {
    await server.client.request('POST', '/api/v1/nodes', { body: nodeObject('metrics-node', { cpu: '1' }) });
    await server.client.request('POST', '/api/v1/namespaces/default/pods', {
      body: podObject('fits', { cpu: '100m' }),
    });
    await server.client.request('POST', '/api/v1/namespaces/default/pods', {
      body: podObject('too-big', { cpu: '2' }),
    });
    const text = await waitFor('one scheduled, one unschedulable', async () => {
      const r = await client.request('GET', '/metrics', { token: READER });
      return /^scheduler_schedule_attempts_total\{result="scheduled",profile="default-scheduler"\} [1-9]/m.test(
        r.text,
      ) && /^scheduler_pending_pods\{queue="unschedulable"\} 1$/m.test(r.text)
        ? r.text
        : undefined;
    });
    expect(text).toMatch(
      /^scheduler_schedule_attempts_total\{result="unschedulable",profile="default-scheduler"\} [1-9]\d*$/m,
    );
    expect(text).toMatch(/^scheduler_schedule_attempts_total\{result="error",profile="default-scheduler"\} 0$/m);
    expect(text).toMatch(/^scheduler_pending_pods\{queue="active"\} 0$/m);
    expect(text).toMatch(/^scheduler_pending_pods\{queue="backoff"\} 0$/m);
    expect(text).toMatch(/^scheduler_pending_pods\{queue="gated"\} 0$/m);
    expect(text).toMatch(
      /^scheduler_scheduling_attempt_duration_seconds_count\{result="scheduled",profile="default-scheduler"\} [1-9]/m,
    );
    // One node; the bound pod (the unschedulable one is not in the cache), nothing assumed once bound.
    expect(text).toMatch(/^scheduler_scheduler_cache_size\{type="nodes"\} 1$/m);
    expect(text).toMatch(/^scheduler_scheduler_cache_size\{type="pods"\} 1$/m);
    expect(text).toMatch(/^leader_election_master_status\{name="svc-scheduler"\} 1$/m);
    expect(text).toMatch(/^rest_client_requests_total\{code="201",method="POST",host="127\.0\.0\.1:\d+"\} [1-9]\d*$/m);
    expect(text).toMatch(/^process_cpu_seconds_total /m);
  });

  it('takes the lease svc-scheduler in svc-system', async () => {
    const lease = await server.client.request(
      'GET',
      '/apis/coordination.svc.io/v1/namespaces/svc-system/leases/svc-scheduler',
    );
    expect(lease.status).toBe(200);
    expect(lease.json<{ spec: { holderIdentity: string } }>().spec.holderIdentity).toBe(sched.scheduler.identity);
  });
});
