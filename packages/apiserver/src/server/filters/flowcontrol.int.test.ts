import { request as httpsRequest } from 'node:https';
import { randomBytes } from 'node:crypto';
import { CommanderError } from 'commander';
import { apfResponseHeaders } from '@svc/api';
import { parseApiServerOptions } from '@svc/apiserver';
import { startEtcd, startTestApiServer, waitFor, type EtcdHandle, type TestApiServer } from '@svc/testing';

// Max in-flight and API priority and fairness (issue 18): real servers over HTTPS on one etcd.
// A request holds its seat while the server waits for the rest of its body, so "a slow
// create" keeps one seat taken for as long as a test needs it.

const FC = '/apis/flowcontrol.apiserver.svc.io/v1';
const TABLE = 'application/json;as=Table;v=v1;g=meta.svc.io';
const token = (): string => randomBytes(12).toString('hex');
const users = { bob: token(), carol: token(), dave: token() };
const tokenLines = Object.entries(users).map(([name, t]) => `${t},${name},${name}-uid,"team"`);

let etcd: EtcdHandle;
beforeAll(async () => {
  etcd = await startEtcd();
});
afterAll(async () => {
  await etcd?.stop();
});

function configMap(name: string): object {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } };
}

/** A create whose body is sent only when `finish` is called: it holds a seat until then. */
function slowCreate(
  t: TestApiServer,
  o: { token: string; name: string },
): { response: Promise<{ status: number; headers: Record<string, unknown> }>; finish(): void } {
  const body = Buffer.from(JSON.stringify(configMap(o.name)));
  const req = httpsRequest(new URL('/api/v1/namespaces/default/configmaps', t.server.url), {
    method: 'POST',
    ca: t.server.caPem,
    headers: { authorization: `Bearer ${o.token}`, 'content-type': 'application/json', 'content-length': body.length },
  });
  const response = new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
  });
  req.write(body.subarray(0, 1));
  return { response, finish: () => req.end(body.subarray(1)) };
}

async function metricValue(t: TestApiServer, line: RegExp): Promise<number | undefined> {
  const text = (await t.client.get('/metrics')).text;
  const m = text.split('\n').find((l) => line.test(l));
  return m === undefined ? undefined : Number(m.split(' ').pop());
}

describe('max in-flight (--enable-priority-and-fairness=false)', () => {
  let t: TestApiServer;
  beforeAll(async () => {
    t = await startTestApiServer({
      etcd,
      tokens: tokenLines,
      args: ['--enable-priority-and-fairness=false', '--max-requests-inflight=0', '--max-mutating-requests-inflight=1'],
    });
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
  });

  it('a full mutating cap answers 429 with Retry-After and a Status; reads, system:masters and watches go on', async () => {
    const bob = t.client.withToken(users.bob);
    const held = slowCreate(t, { token: users.bob, name: 'held' });
    const refused = await waitFor('a 429 while the only mutating seat is taken', async () => {
      const r = await bob.post('/api/v1/namespaces/default/configmaps?dryRun=All', configMap('second'));
      return r.status === 429 ? r : undefined;
    });
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'TooManyRequests',
      code: 429,
      message: 'Too many requests, please try again later.',
      details: { retryAfterSeconds: 1 },
    });
    // No flow-control headers without priority and fairness.
    expect(refused.headers[apfResponseHeaders().flowSchemaUid.toLowerCase()]).toBeUndefined();
    // --max-requests-inflight=0: reads are not limited.
    const reads = await Promise.all(Array.from({ length: 20 }, () => bob.get('/api/v1/namespaces/default/configmaps')));
    expect(reads.map((r) => r.status)).toEqual(Array(20).fill(200));
    // system:masters is served past a full cap.
    expect((await t.client.post('/api/v1/namespaces/default/configmaps', configMap('by-admin'))).status).toBe(201);
    // A watch is long-running: it takes no seat and is not refused.
    const w = await bob.watch('/api/v1/namespaces/default/configmaps?watch=true');
    w.close();
    const gauge = await waitFor('apiserver_current_inflight_requests{request_kind="mutating"} 1', async () =>
      (await metricValue(t, /^apiserver_current_inflight_requests\{request_kind="mutating"\}/)) === 1 ? 1 : undefined,
    );
    expect(gauge).toBe(1);
    held.finish();
    expect((await held.response).status).toBe(201);
    expect((await bob.post('/api/v1/namespaces/default/configmaps', configMap('after'))).status).toBe(201);
  });

  it('the configuration objects are still served and kept', async () => {
    const r = await t.client.get(`${FC}/flowschemas/exempt`);
    expect(r.status).toBe(200);
  });
});

describe('priority and fairness', () => {
  let t: TestApiServer;
  const uid = async (path: string): Promise<string> =>
    (await t.client.get(path)).json<{ metadata: { uid: string } }>().metadata.uid;
  const pfHeaders = (r: { headers: Record<string, unknown> }): { fs: unknown; pl: unknown } => {
    const h = apfResponseHeaders();
    return { fs: r.headers[h.flowSchemaUid.toLowerCase()], pl: r.headers[h.priorityLevelUid.toLowerCase()] };
  };
  const level = (name: string, limitResponse: object): object => ({
    apiVersion: 'flowcontrol.apiserver.svc.io/v1',
    kind: 'PriorityLevelConfiguration',
    metadata: { name },
    spec: {
      type: 'Limited',
      limited: { nominalConcurrencyShares: 1, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse },
    },
  });
  const schema = (name: string, o: { level: string; user: string; precedence?: number }): object => ({
    apiVersion: 'flowcontrol.apiserver.svc.io/v1',
    kind: 'FlowSchema',
    metadata: { name },
    spec: {
      priorityLevelConfiguration: { name: o.level },
      matchingPrecedence: o.precedence ?? 100,
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [{ kind: 'User', user: { name: o.user } }],
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
          nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        },
      ],
    },
  });

  beforeAll(async () => {
    t = await startTestApiServer({
      etcd,
      tokens: tokenLines,
      // Two seats in all; a queued request waits at most a quarter of the request timeout (2 s).
      // Objects counted every second for the work estimator.
      args: [
        '--max-requests-inflight=1',
        '--max-mutating-requests-inflight=1',
        '--request-timeout=8s',
        '--store-count-metric-poll-period=1s',
      ],
    });
    for (const [path, body] of [
      [`${FC}/prioritylevelconfigurations`, level('test-reject', { type: 'Reject' })],
      [
        `${FC}/prioritylevelconfigurations`,
        level('test-queue', { type: 'Queue', queuing: { queues: 1, handSize: 1, queueLengthLimit: 1 } }),
      ],
      [`${FC}/flowschemas`, schema('test-reject', { level: 'test-reject', user: 'bob' })],
      [`${FC}/flowschemas`, schema('test-queue', { level: 'test-queue', user: 'carol' })],
    ] as const) {
      const r = await t.client.post(path, body);
      expect([r.status, r.text]).toEqual([201, expect.any(String)]);
    }
    const fsUid = await uid(`${FC}/flowschemas/test-queue`);
    await waitFor('the new schemas classify', async () => {
      const r = await t.client.withToken(users.carol).get('/api/v1/namespaces/default/configmaps');
      return pfHeaders(r).fs === fsUid;
    });
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
  });

  it("creates Kubernetes 1.32's mandatory and suggested objects, annotated for auto-update; readyz has the producer hook", async () => {
    const names = async (plural: string): Promise<string[]> =>
      (await t.client.get(`${FC}/${plural}`))
        .json<{ items: Array<{ metadata: { name: string; annotations?: Record<string, string> } }> }>()
        .items.filter((i) => i.metadata.annotations?.['apf.svc.io/autoupdate-spec'] === 'true')
        .map((i) => i.metadata.name)
        .sort();
    expect(await names('prioritylevelconfigurations')).toEqual(
      [
        'catch-all',
        'exempt',
        'global-default',
        'leader-election',
        'node-high',
        'system',
        'workload-high',
        'workload-low',
      ].sort(),
    );
    expect(await names('flowschemas')).toEqual(
      [
        'catch-all',
        'endpoint-controller',
        'exempt',
        'global-default',
        'svc-system-service-accounts',
        'probes',
        'service-accounts',
        'svc-controller-manager',
        'svc-scheduler',
        'system-leader-election',
        'system-node-high',
        'system-nodes',
        'workload-leader-election',
      ].sort(),
    );
    const catchAll = (await t.client.get(`${FC}/prioritylevelconfigurations/catch-all`)).json();
    expect(catchAll.spec).toEqual({
      type: 'Limited',
      limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Reject' } },
    });
    const probes = (await t.client.get(`${FC}/flowschemas/probes`)).json();
    expect(probes.spec).toMatchObject({ priorityLevelConfiguration: { name: 'exempt' }, matchingPrecedence: 2 });
    const readyz = await t.client.get('/readyz?verbose');
    expect(readyz.text).toContain('[+]poststarthook/priority-and-fairness-config-producer ok');
  });

  it('defaults nominalConcurrencyShares to 30 only when unspecified (an explicit 0 stays 0) and the queuing numbers', async () => {
    const create = async (name: string, limited: object): Promise<Record<string, unknown>> => {
      const r = await t.client.post(`${FC}/prioritylevelconfigurations?dryRun=All`, {
        apiVersion: 'flowcontrol.apiserver.svc.io/v1',
        kind: 'PriorityLevelConfiguration',
        metadata: { name },
        spec: { type: 'Limited', limited },
      });
      expect(r.status).toBe(201);
      return r.json<{ spec: { limited: Record<string, unknown> } }>().spec.limited;
    };
    expect(await create('unspecified', { limitResponse: { type: 'Queue', queuing: {} } })).toEqual({
      nominalConcurrencyShares: 30,
      lendablePercent: 0,
      limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 } },
    });
    expect(await create('zero', { nominalConcurrencyShares: 0, limitResponse: { type: 'Reject' } })).toMatchObject({
      nominalConcurrencyShares: 0,
    });
    const fs = await t.client.post(`${FC}/flowschemas?dryRun=All`, {
      ...schema('defaulted', { level: 'global-default', user: 'x' }),
      spec: { priorityLevelConfiguration: { name: 'global-default' } },
    });
    expect(fs.json<{ spec: { matchingPrecedence: number } }>().spec.matchingPrecedence).toBe(1000);
  });

  it("validates with Kubernetes' paths and messages", async () => {
    const invalid = async (path: string, body: object): Promise<string[]> => {
      const r = await t.client.post(`${FC}/${path}`, body);
      expect(r.status).toBe(422);
      return r
        .json<{ details: { causes: Array<{ field: string; message: string }> } }>()
        .details.causes.map((c) => `${c.field}: ${c.message}`);
    };
    const bad = schema('bad', { level: 'global-default', user: 'x', precedence: 1 }) as {
      spec: Record<string, unknown>;
    };
    bad.spec.distinguisherMethod = { type: 'ByGroup' };
    bad.spec.rules = [{ subjects: [], resourceRules: [{ verbs: ['get', '*'], apiGroups: [], resources: ['pods'] }] }];
    expect(await invalid('flowschemas', bad)).toEqual([
      "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
      'spec.distinguisherMethod.type: Unsupported value: {"type":"ByGroup"}: supported values: "ByNamespace", "ByUser"',
      'spec.rules[0].subjects: Required value: subjects must contain at least one value',
      'spec.rules[0].resourceRules[0].verbs: Invalid value: ["get","*"]: if \'*\' is present, must not specify other verbs',
      'spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group',
      'spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace',
    ]);
    expect(
      await invalid('prioritylevelconfigurations', {
        ...level('bad', { type: 'Queue', queuing: { queues: 4, handSize: 5, queueLengthLimit: -1 } }),
        spec: {
          type: 'Limited',
          limited: {
            nominalConcurrencyShares: -1,
            lendablePercent: 101,
            limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 5, queueLengthLimit: -1 } },
          },
        },
      }),
    ).toEqual([
      'spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer',
      'spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: -1: must be positive',
      'spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be greater than queues (4)',
      'spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive',
    ]);
    const catchAll = (await t.client.get(`${FC}/prioritylevelconfigurations/catch-all`)).json<{
      spec: { limited: { nominalConcurrencyShares: number } };
    }>();
    catchAll.spec.limited.nominalConcurrencyShares = 50;
    const r = await t.client.put(`${FC}/prioritylevelconfigurations/catch-all`, catchAll);
    expect(r.status).toBe(422);
    expect(r.json<{ message: string }>().message).toContain("spec of 'catch-all' must equal the fixed value");
  });

  it('a level that rejects answers 429 with Retry-After and the schema and level UIDs; other users, system:masters and probes go on', async () => {
    const [fsUid, plUid] = [
      await uid(`${FC}/flowschemas/test-reject`),
      await uid(`${FC}/prioritylevelconfigurations/test-reject`),
    ];
    const bob = t.client.withToken(users.bob);
    const held = slowCreate(t, { token: users.bob, name: 'bob-held' });
    const refused = await waitFor('bob refused while his one seat is taken', async () => {
      const r = await bob.get('/api/v1/namespaces/default/configmaps');
      return r.status === 429 ? r : undefined;
    });
    expect(refused.headers['retry-after']).toBe('1');
    expect(pfHeaders(refused)).toEqual({ fs: fsUid, pl: plUid });
    expect(refused.json()).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', code: 429 });
    // system:masters is exempt.
    const admin = await t.client.get('/api/v1/namespaces/default/configmaps');
    expect(admin.status).toBe(200);
    expect(pfHeaders(admin)).toEqual({
      fs: await uid(`${FC}/flowschemas/exempt`),
      pl: await uid(`${FC}/prioritylevelconfigurations/exempt`),
    });
    // The health probes are exempt for anyone.
    const probe = await bob.get('/readyz');
    expect(probe.status).toBe(200);
    expect(pfHeaders(probe)).toEqual({
      fs: await uid(`${FC}/flowschemas/probes`),
      pl: await uid(`${FC}/prioritylevelconfigurations/exempt`),
    });
    // Another user is in another level (global-default, by user).
    const dave = await t.client.withToken(users.dave).get('/api/v1/namespaces/default/configmaps');
    expect(dave.status).toBe(200);
    expect(pfHeaders(dave).fs).toBe(await uid(`${FC}/flowschemas/global-default`));
    expect(
      await metricValue(
        t,
        /^apiserver_flowcontrol_current_executing_seats\{flow_schema="test-reject",priority_level="test-reject"\}/,
      ),
    ).toBe(1);
    held.finish();
    expect((await held.response).status).toBe(201);
    expect((await bob.get('/api/v1/namespaces/default/configmaps')).status).toBe(200);
    expect(
      await metricValue(
        t,
        /^apiserver_flowcontrol_rejected_requests_total\{flow_schema="test-reject",priority_level="test-reject",reason="concurrency-limit"\}/,
      ),
    ).toBeGreaterThanOrEqual(1);
    expect(
      await metricValue(
        t,
        /^apiserver_flowcontrol_dispatched_requests_total\{flow_schema="exempt",priority_level="exempt"\}/,
      ),
    ).toBeGreaterThanOrEqual(1);
  });

  it('a queueing level queues, refuses a full queue, serves the queued request when the seat frees, and times a wait out', async () => {
    const carol = t.client.withToken(users.carol);
    const held = slowCreate(t, { token: users.carol, name: 'carol-held' });
    await waitFor('carol holds her one seat', async () =>
      (await metricValue(
        t,
        /^apiserver_flowcontrol_current_executing_seats\{flow_schema="test-queue",priority_level="test-queue"\}/,
      )) === 1
        ? true
        : undefined,
    );
    const queued = carol.get('/api/v1/namespaces/default/configmaps');
    await waitFor('one request in the queue', async () =>
      (await metricValue(
        t,
        /^apiserver_flowcontrol_current_inqueue_requests\{flow_schema="test-queue",priority_level="test-queue"\}/,
      )) === 1
        ? true
        : undefined,
    );
    const full = await carol.get('/api/v1/namespaces/default/configmaps');
    expect(full.status).toBe(429);
    expect(full.headers['retry-after']).toBe('1');
    held.finish();
    expect((await held.response).status).toBe(201);
    expect((await queued).status).toBe(200);

    const heldAgain = slowCreate(t, { token: users.carol, name: 'carol-held-2' });
    await waitFor('carol holds her seat again', async () =>
      (await metricValue(
        t,
        /^apiserver_flowcontrol_current_executing_seats\{flow_schema="test-queue",priority_level="test-queue"\}/,
      )) === 1
        ? true
        : undefined,
    );
    const started = Date.now();
    const timedOut = await carol.get('/api/v1/namespaces/default/configmaps');
    expect(timedOut.status).toBe(429);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900); // a quarter of --request-timeout=8s
    heldAgain.finish();
    expect((await heldAgain.response).status).toBe(201);
    const text = (await t.client.get('/metrics')).text;
    for (const reason of ['queue-full', 'time-out'])
      expect(text).toMatch(
        new RegExp(
          `^apiserver_flowcontrol_rejected_requests_total\\{flow_schema="test-queue",priority_level="test-queue",reason="${reason}"\\} 1$`,
          'm',
        ),
      );
    expect(text).toMatch(
      /^apiserver_flowcontrol_request_wait_duration_seconds_count\{execute="true",flow_schema="test-queue",priority_level="test-queue"\} \d+$/m,
    );
  });

  it('a watch holds its seat only while it starts', async () => {
    const bob = t.client.withToken(users.bob);
    const w = await bob.watch('/api/v1/namespaces/default/configmaps?watch=true');
    try {
      // bob's level has one seat: his create is served while the watch stays open.
      const r = await bob.post('/api/v1/namespaces/default/configmaps', configMap('during-watch'));
      expect(r.status).toBe(201);
    } finally {
      w.close();
    }
  });

  it('marks a schema naming a missing level Dangling (MissingPL in its table row)', async () => {
    const r = await t.client.post(`${FC}/flowschemas`, schema('orphan', { level: 'no-such-level', user: 'nobody' }));
    expect(r.status).toBe(201);
    const condition = await waitFor('the Dangling condition', async () => {
      const fs = (await t.client.get(`${FC}/flowschemas/orphan`)).json<{
        status?: { conditions?: Array<Record<string, string>> };
      }>();
      return fs.status?.conditions?.find((c) => c.type === 'Dangling');
    });
    expect(condition).toMatchObject({
      status: 'True',
      reason: 'NotFound',
      message:
        'This FlowSchema references the PriorityLevelConfiguration object named "no-such-level" but there is no such object',
    });
    const table = (await t.client.get(`${FC}/flowschemas`, { headers: { accept: TABLE } })).json<{
      columnDefinitions: Array<{ name: string }>;
      rows: Array<{ cells: unknown[] }>;
    }>();
    expect(table.columnDefinitions.map((c) => c.name)).toEqual([
      'Name',
      'PriorityLevel',
      'MatchingPrecedence',
      'DistinguisherMethod',
      'Age',
      'MissingPL',
    ]);
    expect(table.rows.find((row) => row.cells[0] === 'orphan')?.cells).toEqual([
      'orphan',
      'no-such-level',
      100,
      'ByUser',
      expect.any(String),
      'True',
    ]);
    const exempt = table.rows.find((row) => row.cells[0] === 'exempt')?.cells;
    expect(exempt).toEqual(['exempt', 'exempt', 1, '<none>', expect.any(String), 'False']);
    const levels = (await t.client.get(`${FC}/prioritylevelconfigurations`, { headers: { accept: TABLE } })).json<{
      columnDefinitions: Array<{ name: string }>;
      rows: Array<{ cells: unknown[] }>;
    }>();
    expect(levels.columnDefinitions.map((c) => c.name)).toEqual([
      'Name',
      'Type',
      'NominalConcurrencyShares',
      'Queues',
      'HandSize',
      'QueueLengthLimit',
      'Age',
    ]);
    expect(levels.rows.find((row) => row.cells[0] === 'global-default')?.cells.slice(0, 6)).toEqual([
      'global-default',
      'Limited',
      20,
      128,
      6,
      50,
    ]);
    expect(levels.rows.find((row) => row.cells[0] === 'exempt')?.cells.slice(0, 6)).toEqual([
      'exempt',
      'Exempt',
      '<none>',
      '<none>',
      '<none>',
      '<none>',
    ]);
  });

  it('at start, restores suggested objects while their annotation allows and leaves the others as the admin wrote them', async () => {
    const edit = async (name: string, annotation: string): Promise<void> => {
      const pl = (await t.client.get(`${FC}/prioritylevelconfigurations/${name}`)).json<{
        metadata: { annotations: Record<string, string> };
        spec: { limited: { nominalConcurrencyShares: number } };
      }>();
      pl.metadata.annotations['apf.svc.io/autoupdate-spec'] = annotation;
      pl.spec.limited.nominalConcurrencyShares = 7;
      expect((await t.client.put(`${FC}/prioritylevelconfigurations/${name}`, pl)).status).toBe(200);
    };
    await edit('workload-low', 'true');
    await edit('global-default', 'false');
    expect((await t.client.delete(`${FC}/flowschemas/service-accounts`)).status).toBe(200);
    const again = await startTestApiServer({ etcd, args: ['--store-prefix', t.storePrefix] });
    try {
      const shares = async (name: string): Promise<number> =>
        (await again.client.get(`${FC}/prioritylevelconfigurations/${name}`)).json<{
          spec: { limited: { nominalConcurrencyShares: number } };
        }>().spec.limited.nominalConcurrencyShares;
      expect(await shares('workload-low')).toBe(100);
      expect(await shares('global-default')).toBe(7);
      expect((await again.client.get(`${FC}/flowschemas/service-accounts`)).status).toBe(200);
    } finally {
      await again.stop();
    }
  }, 60_000);

  // Last in this block: the ConfigMaps it makes make every later list of them wider.
  it('estimates a list by the stored objects (a seat per 100) and runs one wider than its level alone', async () => {
    const ns = `apf-wide-${token().slice(0, 6)}`;
    const created = await t.client.post('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    });
    expect(created.status).toBe(201);
    for (let batch = 0; batch < 15; batch++)
      await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          const r = await t.client.post(`/api/v1/namespaces/${ns}/configmaps`, configMap(`cm-${batch}-${i}`));
          expect(r.status).toBe(201);
        }),
      );
    // bob's level rejects (no queues: the estimator's own cap of 10 seats applies) and has one
    // seat; once the object count poll (every second here) saw the 150 objects, his list is
    // estimated at 2 or more seats, and runs because nothing else of his level does.
    const bob = t.client.withToken(users.bob);
    const wide = async (): Promise<number> => {
      const text = (await t.client.get('/metrics')).text;
      const value = (suffix: string, le?: string): number =>
        Number(
          text
            .split('\n')
            .find(
              (l) =>
                l.startsWith(`apiserver_flowcontrol_work_estimated_seats_${suffix}{`) &&
                l.includes('flow_schema="test-reject"') &&
                (le === undefined || l.includes(`le="${le}"`)),
            )
            ?.split(' ')
            .pop() ?? 0,
        );
      return value('count') - value('bucket', '1');
    };
    const before = await wide();
    await waitFor(
      'a list of the ConfigMaps estimated at more than one seat',
      async () => {
        const r = await bob.get(`/api/v1/namespaces/${ns}/configmaps`);
        expect(r.status).toBe(200);
        return (await wide()) > before ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
  }, 60_000);
});

describe('flags', () => {
  it.each([
    [['--max-requests-inflight=-1'], '--max-requests-inflight can not be negative value'],
    [['--max-mutating-requests-inflight=-5'], '--max-mutating-requests-inflight can not be negative value'],
    [
      ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0'],
      '--max-requests-inflight plus --max-mutating-requests-inflight must be positive if --enable-priority-and-fairness is true',
    ],
    [['--enable-priority-and-fairness=maybe'], '--enable-priority-and-fairness'],
  ])('%j is refused', (args, message) => {
    expect(() => parseApiServerOptions(['--store-servers=http://127.0.0.1:2379', ...args], { quiet: true })).toThrow(
      CommanderError,
    );
    expect(() => parseApiServerOptions(['--store-servers=http://127.0.0.1:2379', ...args], { quiet: true })).toThrow(
      message,
    );
  });

  it('both caps at 0 are accepted without priority and fairness (no limit at all)', () => {
    const o = parseApiServerOptions(
      [
        '--store-servers=http://127.0.0.1:2379',
        '--enable-priority-and-fairness=false',
        '--max-requests-inflight=0',
        '--max-mutating-requests-inflight=0',
      ],
      { quiet: true },
    );
    expect(o.enablePriorityAndFairness).toBe(false);
  });
});
