// Audit with the log backend against real servers over HTTPS and etcd: the Audit-ID header, each
// level and stage, failed authentication, impersonation, authorization decisions, managed fields
// omitted, the deprecated annotation, stock kubectl's requests, the json and legacy formats, batch
// mode flushed at shutdown, standard output, rotation by size, truncation, blocking-strict mode
// failing requests, the metrics, and --naming=kubernetes.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditEvent } from '@svc/api';
import {
  createNamespace,
  crdManifest,
  expectCode,
  kubectl,
  startTestApiServer,
  uniqueName,
  waitFor,
  type HttpResponse,
  type Json,
  type TestApiServer,
} from '@svc/testing';

const ALICE = 'alice-token';
const QUIET = 'quiet-token';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-audit-int-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function policyFile(rules: string, head = 'apiVersion: audit.svc.io/v1\nkind: Policy\n'): Promise<string> {
  const file = join(dir, `${uniqueName('policy')}.yaml`);
  await writeFile(file, `${head}rules:\n${rules}`);
  return file;
}

async function readEvents(file: string): Promise<AuditEvent[]> {
  if (!existsSync(file)) return [];
  const text = await readFile(file, 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent);
}

/** The events of one request, once `stages` of them are in the log. */
async function eventsOf(file: string, id: string, stages: number): Promise<AuditEvent[]> {
  return waitFor(`${stages} events of ${id}`, async () => {
    const evs = (await readEvents(file)).filter((e) => e.auditID === id);
    return evs.length >= stages ? evs : undefined;
  });
}

const idOf = (res: HttpResponse): string => String(res.headers['audit-id']);

/** One read of /metrics: the value of a sample by its name and labels (0 when absent). */
async function metrics(t: TestApiServer): Promise<(sample: string) => number> {
  const lines = (await t.client.get('/metrics')).text.split('\n');
  return (sample) => {
    const line = lines.find((l) => l.startsWith(`${sample} `));
    return line ? Number(line.split(' ').pop()) : 0;
  };
}

async function metric(t: TestApiServer, sample: string): Promise<number> {
  return (await metrics(t))(sample);
}

const configMap = (name: string, data: Record<string, string> = { a: 'b' }): Json => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data,
});

describe('the log backend (json, blocking)', () => {
  let t: TestApiServer;
  let log: string;
  const ns = {} as Record<'rr' | 'omit' | 'req' | 'nostage' | 'none' | 'meta', string>;

  beforeAll(async () => {
    log = join(dir, 'main', 'audit.log');
    const names = ['rr', 'omit', 'req', 'nostage', 'none', 'meta'] as const;
    for (const n of names) ns[n] = `audit-${n}-${Math.random().toString(36).slice(2, 7)}`;
    const policy = await policyFile(
      [
        '- level: None',
        '  users: [quiet]',
        '- level: None',
        `  namespaces: [${ns.none}]`,
        '- level: RequestResponse',
        `  namespaces: [${ns.rr}]`,
        '- level: RequestResponse',
        `  namespaces: [${ns.omit}]`,
        '  omitManagedFields: true',
        '- level: Request',
        `  namespaces: [${ns.req}]`,
        '- level: Metadata',
        `  namespaces: [${ns.nostage}]`,
        '  omitStages: [RequestReceived]',
        '- level: Metadata',
        '',
      ].join('\n'),
    );
    t = await startTestApiServer({
      args: ['--audit-policy-file', policy, '--audit-log-path', log, '--authorization-mode', 'RBAC'],
      tokens: [`${ALICE},alice,alice-uid,"dev"`, `${QUIET},quiet,quiet-uid,""`],
    });
    for (const n of names) {
      expectCode(await t.client.post('/api/v1/namespaces', { metadata: { name: ns[n] } }), 201);
    }
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('answers every request with an Audit-ID, the client’s own when it sends one', async () => {
    const res = await t.client.get('/version');
    expect(idOf(res)).toMatch(/^[0-9a-f-]{36}$/);
    expect(idOf(await t.client.get('/version', { token: 'wrong' }))).toMatch(/^[0-9a-f-]{36}$/);
    const mine = await t.client.get(`/api/v1/namespaces/${ns.none}/configmaps`, { headers: { 'Audit-ID': 'my-id-1' } });
    expect(idOf(mine)).toBe('my-id-1');
    const evs = await eventsOf(log, idOf(res), 2);
    expect(evs.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseComplete']);
  });

  it('Metadata: who, what and the answer, without objects', async () => {
    const res = await t.client.post(`/api/v1/namespaces/${ns.meta}/configmaps?fieldManager=me`, configMap('m1'), {
      headers: { 'User-Agent': 'audit-test/1.0', 'X-Forwarded-For': '10.1.2.3' },
    });
    expectCode(res, 201);
    const [received, complete] = await eventsOf(log, idOf(res), 2);
    expect(received).toMatchObject({
      kind: 'Event',
      apiVersion: 'audit.svc.io/v1',
      level: 'Metadata',
      stage: 'RequestReceived',
      requestURI: `/api/v1/namespaces/${ns.meta}/configmaps?fieldManager=me`,
      verb: 'create',
      user: { username: 'admin', uid: 'admin-uid', groups: ['system:masters', 'system:authenticated'] },
      sourceIPs: ['10.1.2.3', '127.0.0.1'],
      userAgent: 'audit-test/1.0',
      objectRef: { resource: 'configmaps', namespace: ns.meta, apiVersion: 'v1' },
    });
    expect(received?.stageTimestamp).toBe(received?.requestReceivedTimestamp);
    expect(received?.annotations).toBeUndefined();
    expect(complete).toMatchObject({
      stage: 'ResponseComplete',
      objectRef: { resource: 'configmaps', namespace: ns.meta, name: 'm1', apiVersion: 'v1' },
      responseStatus: { metadata: {}, code: 201 },
      annotations: { 'authorization.svc.io/decision': 'allow', 'authorization.svc.io/reason': '' },
    });
    expect(complete?.requestReceivedTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect((complete?.stageTimestamp ?? '') >= (complete?.requestReceivedTimestamp ?? '')).toBe(true);
    expect(complete?.requestObject).toBeUndefined();
    expect(complete?.responseObject).toBeUndefined();
  });

  it('Request: the request object too; RequestResponse: the answer too', async () => {
    const req = await t.client.post(`/api/v1/namespaces/${ns.req}/configmaps`, configMap('r1'));
    expectCode(req, 201);
    const [, reqDone] = await eventsOf(log, idOf(req), 2);
    expect(reqDone?.level).toBe('Request');
    expect(reqDone?.requestObject).toEqual(configMap('r1'));
    expect(reqDone?.responseObject).toBeUndefined();

    const rr = await t.client.post(`/api/v1/namespaces/${ns.rr}/configmaps`, configMap('rr1'));
    const created = expectCode(rr, 201);
    const [rrReceived, rrDone] = await eventsOf(log, idOf(rr), 2);
    expect(rrReceived?.requestObject).toBeUndefined();
    expect(rrDone?.level).toBe('RequestResponse');
    expect(rrDone?.requestObject).toEqual(configMap('rr1'));
    expect(rrDone?.responseObject).toEqual(created);
    expect((rrDone?.responseObject as Json).metadata.managedFields).toBeDefined();

    const patch = await t.client.patch(
      `/api/v1/namespaces/${ns.rr}/configmaps/rr1`,
      { data: { c: 'd' } },
      'application/merge-patch+json',
    );
    const patched = expectCode(patch, 200);
    const [, patchDone] = await eventsOf(log, idOf(patch), 2);
    expect(patchDone).toMatchObject({ verb: 'patch', requestObject: { data: { c: 'd' } }, responseObject: patched });
    expect(patchDone?.objectRef).toMatchObject({ name: 'rr1', namespace: ns.rr });
  });

  it('records a Status answer in responseStatus (and as the answer at RequestResponse)', async () => {
    const res = await t.client.get(`/api/v1/namespaces/${ns.rr}/configmaps/missing`);
    expect(res.status).toBe(404);
    const [, done] = await eventsOf(log, idOf(res), 2);
    expect(done?.responseStatus).toEqual({
      metadata: {},
      status: 'Failure',
      message: 'configmaps "missing" not found',
      reason: 'NotFound',
      details: { name: 'missing', kind: 'configmaps' },
      code: 404,
    });
    expect(done?.responseObject).toMatchObject({ kind: 'Status', code: 404 });
  });

  it('omits managed fields where the policy says so', async () => {
    const res = await t.client.post(`/api/v1/namespaces/${ns.omit}/configmaps`, configMap('o1'));
    expect((expectCode(res, 201).metadata as Json).managedFields).toBeDefined();
    const [, done] = await eventsOf(log, idOf(res), 2);
    expect((done?.responseObject as Json).metadata.managedFields).toBeUndefined();
    expect((done?.responseObject as Json).metadata.name).toBe('o1');
    const list = await t.client.get(`/api/v1/namespaces/${ns.omit}/configmaps`);
    const [, listed] = await eventsOf(log, idOf(list), 2);
    expect((listed?.responseObject as Json).items[0].metadata.managedFields).toBeUndefined();
  });

  it('leaves out the stages the policy omits, and requests of level None', async () => {
    const res = await t.client.get(`/api/v1/namespaces/${ns.nostage}/configmaps`);
    const evs = await eventsOf(log, idOf(res), 1);
    expect(evs.map((e) => e.stage)).toEqual(['ResponseComplete']);
    const none = await t.client.get(`/api/v1/namespaces/${ns.none}/configmaps`);
    const quiet = await t.client.get('/version', { token: QUIET });
    expect(quiet.status).toBe(200);
    // A later request's events are in: the earlier ones would be too.
    const later = await t.client.get('/version');
    await eventsOf(log, idOf(later), 2);
    const ids = new Set((await readEvents(log)).map((e) => e.auditID));
    expect(ids.has(idOf(none))).toBe(false);
    expect(ids.has(idOf(quiet))).toBe(false);
  });

  it('a watch: RequestReceived, ResponseStarted at its first header, ResponseComplete when it ends', async () => {
    const res = await t.client.get(`/api/v1/namespaces/${ns.rr}/configmaps?watch=1&timeoutSeconds=1`);
    expect(res.status).toBe(200);
    const evs = await eventsOf(log, idOf(res), 3);
    expect(evs.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
    expect(evs[1]?.responseStatus).toEqual({ metadata: {}, code: 200 });
    expect(evs[1]?.verb).toBe('watch');
    expect(evs[2]?.responseObject).toBeUndefined();
    const started = Date.parse(evs[1]?.stageTimestamp ?? '');
    expect(Date.parse(evs[2]?.stageTimestamp ?? '') - started).toBeGreaterThanOrEqual(900);
  });

  it('a refused credential: one ResponseStarted event naming what was tried', async () => {
    const res = await t.client.get(`/api/v1/namespaces/${ns.rr}/configmaps`, { token: 'not-a-token' });
    expect(res.status).toBe(401);
    const [ev] = await eventsOf(log, idOf(res), 1);
    expect(ev).toMatchObject({
      stage: 'ResponseStarted',
      verb: 'list',
      user: {},
      responseStatus: { metadata: {}, message: 'Authentication failed, attempted: bearer', code: 401 },
    });
    await new Promise((r) => setTimeout(r, 100));
    expect((await readEvents(log)).filter((e) => e.auditID === idOf(res))).toHaveLength(1);
  });

  it('names the impersonated user beside the requester', async () => {
    const res = await t.client.get('/version', { headers: { 'Impersonate-User': 'bob', 'Impersonate-Group': 'g1' } });
    expect(res.status).toBe(200);
    const [received, done] = await eventsOf(log, idOf(res), 2);
    expect(received?.impersonatedUser).toBeUndefined();
    expect(done?.user.username).toBe('admin');
    expect(done?.impersonatedUser).toEqual({ username: 'bob', groups: ['g1', 'system:authenticated'] });
  });

  it('records authorization’s decision and reason', async () => {
    const res = await t.client.get(`/api/v1/namespaces/${ns.meta}/secrets`, { token: ALICE });
    expect(res.status).toBe(403);
    const [, done] = await eventsOf(log, idOf(res), 2);
    expect(done?.user).toEqual({ username: 'alice', uid: 'alice-uid', groups: ['dev', 'system:authenticated'] });
    expect(done?.annotations?.['authorization.svc.io/decision']).toBe('forbid');
    expect(done?.responseStatus).toMatchObject({ code: 403, reason: 'Forbidden' });
  });

  it('marks requests to a deprecated custom resource version', async () => {
    const g = `${uniqueName('g')}.example.com`;
    const crd = crdManifest({
      group: g,
      plural: 'gadgets',
      kind: 'Gadget',
      versions: [
        {
          name: 'v1beta1',
          deprecated: true,
          storage: true,
          schema: { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } } },
        },
      ],
    });
    expectCode(await t.client.post('/apis/apiextensions.svc.io/v1/customresourcedefinitions', crd), 201);
    const res = await waitFor('the custom resource to be served', async () => {
      const r = await t.client.get(`/apis/${g}/v1beta1/namespaces/${ns.meta}/gadgets`);
      return r.status === 200 ? r : undefined;
    });
    const [, done] = await eventsOf(log, idOf(res), 2);
    expect(done?.annotations?.['svc.io/deprecated']).toBe('true');
  });

  it('audits stock kubectl’s requests with its user, verb and user agent', async () => {
    const name = uniqueName('kc');
    const home = await mkdtemp(join(dir, 'kubectl-home-'));
    const run = async (args: string[]): Promise<void> => {
      const r = await kubectl(t.svcconfigPath, args, { home, timeoutMs: 60_000 });
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    };
    await run(['-n', ns.meta, 'create', 'configmap', name, '--from-literal=k=v']);
    await run(['-n', ns.meta, 'get', 'configmap', name, '-o', 'name']);
    await run(['-n', ns.meta, 'delete', 'configmap', name]);
    const mine = await waitFor('kubectl’s three requests', async () => {
      const evs = (await readEvents(log)).filter(
        (e) => e.stage === 'ResponseComplete' && e.objectRef?.name === name && e.userAgent?.startsWith('kubectl/'),
      );
      return evs.length >= 3 ? evs : undefined;
    });
    // kubectl delete then waits for the object to be gone (a get answered 404).
    expect(mine.map((e) => [e.verb, e.responseStatus?.code]).slice(0, 3)).toEqual([
      ['create', 201],
      ['get', 200],
      ['delete', 200],
    ]);
    for (const e of mine) expect(e.user.username).toBe('admin');
  });

  it('counts events and levels', async () => {
    const before = await metrics(t);
    await t.client.get('/version');
    await t.client.get('/version', { token: QUIET });
    const after = await metrics(t);
    // Between the two reads: the first read's ResponseComplete, /version's two events and the second read's
    // RequestReceived; the second read and /version are Metadata, the quiet request None.
    expect(after('apiserver_audit_event_total') - before('apiserver_audit_event_total')).toBe(4);
    const level = (l: string): string => `apiserver_audit_level_total{level="${l}"}`;
    expect(after(level('Metadata')) - before(level('Metadata'))).toBe(2);
    expect(after(level('None')) - before(level('None'))).toBe(1);
    expect(after('apiserver_audit_requests_rejected_total')).toBe(0);
    expect((await t.client.get('/metrics')).text).not.toMatch(/^apiserver_audit_error_total\{/m);
  });
});

describe('legacy format in batch mode', () => {
  it('writes Kubernetes’ text lines, held in batches and flushed at shutdown', async () => {
    const log = join(dir, 'legacy.log');
    const t = await startTestApiServer({
      args: [
        ...['--audit-policy-file', await policyFile('- level: Metadata\n'), '--audit-log-path', log],
        ...['--audit-log-format=legacy', '--audit-log-mode=batch', '--audit-log-batch-max-size=1000'],
        '--audit-log-batch-max-wait=10m',
      ],
    });
    let res: HttpResponse;
    try {
      res = await t.client.get('/api/v1/namespaces/default/configmaps?limit=1', {
        headers: { 'User-Agent': 'ua "x"' },
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(await readFile(log, 'utf8')).toBe('');
    } finally {
      await t.stop();
    }
    const lines = (await readFile(log, 'utf8')).split('\n').filter((l) => l.includes(idOf(res)));
    expect(lines).toHaveLength(2);
    const stamp = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`;
    expect(lines[0]).toMatch(
      new RegExp(
        `^${stamp} AUDIT: id="${idOf(res)}" stage="RequestReceived" ip="127.0.0.1" method="list" user="admin" ` +
          String.raw`groups="\\"system:masters\\",\\"system:authenticated\\"" as="<self>" asgroups="<lookup>" ` +
          String.raw`user-agent="ua \\"x\\"" namespace="default" uri="/api/v1/namespaces/default/configmaps\?limit=1" response="<deferred>"$`,
      ),
    );
    expect(lines[1]).toMatch(/stage="ResponseComplete" .* response="200"$/);
  });
});

describe('standard output and --naming=kubernetes', () => {
  it('writes events to standard out with Kubernetes’ spellings', async () => {
    const out: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
    const policy = await policyFile('- level: Metadata\n', 'apiVersion: audit.k8s.io/v1\nkind: Policy\n');
    let t: TestApiServer | undefined;
    try {
      t = await startTestApiServer({
        args: ['--naming=kubernetes', '--audit-policy-file', policy, '--audit-log-path', '-'],
      });
      const res = await t.client.get('/api/v1/namespaces');
      const evs = await waitFor('the events on stdout', () => {
        const found = out
          .join('')
          .split('\n')
          .filter((l) => l.includes(idOf(res)))
          .map((l) => JSON.parse(l) as AuditEvent);
        return found.length >= 2 ? found : undefined;
      });
      expect(evs[1]?.apiVersion).toBe('audit.k8s.io/v1');
      expect(evs[1]?.annotations).toEqual({
        'authorization.k8s.io/decision': 'allow',
        'authorization.k8s.io/reason': '',
      });
    } finally {
      await t?.stop();
      spy.mockRestore();
    }
  });
});

describe('rotation and truncation', () => {
  const big = (): Record<string, string> => ({ payload: 'x'.repeat(200 * 1024) });

  it('rotates the file by size, keeping --audit-log-maxbackup gzipped files', async () => {
    const sub = await mkdtemp(join(dir, 'rotate-'));
    const log = join(sub, 'audit.log');
    const t = await startTestApiServer({
      args: [
        ...['--audit-policy-file', await policyFile('- level: RequestResponse\n  verbs: [create]\n')],
        ...['--audit-log-path', log, '--audit-log-maxsize=1', '--audit-log-maxbackup=2', '--audit-log-compress'],
      ],
    });
    try {
      const ns = await createNamespace(t.client, 'rot');
      // Each create writes about 400 KiB (request and answer): twenty of them rotate the file several times.
      for (let i = 0; i < 20; i++)
        expectCode(await t.client.post(`/api/v1/namespaces/${ns}/configmaps`, configMap(`c${i}`, big())), 201);
      const files = await waitFor('two gzipped backups', async () => {
        const f = (await readdir(sub)).sort();
        return f.length === 3 && f.filter((x) => x.endsWith('.log.gz')).length === 2 ? f : undefined;
      });
      expect(files[2]).toBe('audit.log');
      for (const f of files.slice(0, 2)) expect(f).toMatch(/^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log\.gz$/);
      expect((await stat(log)).size).toBeLessThanOrEqual(1024 * 1024);
    } finally {
      await t.stop();
    }
  });

  it('truncates an over-size event to its metadata and drops (and counts) one still too large', async () => {
    const log = join(dir, 'truncate.log');
    const t = await startTestApiServer({
      args: [
        ...['--audit-policy-file', await policyFile('- level: RequestResponse\n'), '--audit-log-path', log],
        ...['--audit-log-truncate-enabled', '--audit-log-truncate-max-event-size=8000'],
      ],
    });
    try {
      const ns = await createNamespace(t.client, 'trunc');
      const res = await t.client.post(
        `/api/v1/namespaces/${ns}/configmaps`,
        configMap('t1', { p: 'y'.repeat(30_000) }),
      );
      expectCode(res, 201);
      const [received, done] = await eventsOf(log, idOf(res), 2);
      expect(received?.annotations).toBeUndefined();
      expect(done?.requestObject).toBeUndefined();
      expect(done?.responseObject).toBeUndefined();
      expect(done?.annotations?.['audit.svc.io/truncated']).toBe('true');
      expect(done?.responseStatus?.code).toBe(201);
      // A URI longer than the limit cannot be cut down: both its events are dropped and counted.
      const long = await t.client.get(`/api/v1/namespaces/${ns}/configmaps?labelSelector=a%3D${'b'.repeat(10_000)}`);
      expect(long.status).toBe(400);
      const later = await t.client.get('/version');
      await eventsOf(log, idOf(later), 2);
      expect((await readEvents(log)).some((e) => e.auditID === idOf(long))).toBe(false);
      expect(await metric(t, 'apiserver_audit_error_total{plugin="truncate"}')).toBe(2);
    } finally {
      await t.stop();
    }
  });
});

describe('blocking-strict', () => {
  it('fails a request whose first event cannot be written, and counts it', async () => {
    const t = await startTestApiServer({
      args: [
        ...['--audit-policy-file', await policyFile('- level: Metadata\n  verbs: [list]\n')],
        ...['--audit-log-path', '/dev/full', '--audit-log-mode=blocking-strict'],
      ],
    });
    try {
      const res = await t.client.get('/api/v1/namespaces');
      expect(res.status).toBe(500);
      expect(res.json()).toMatchObject({
        kind: 'Status',
        reason: 'InternalError',
        message: 'Internal Server Error: "/api/v1/namespaces": failed to store audit event',
      });
      expect(idOf(res)).toMatch(/^[0-9a-f-]{36}$/);
      expect((await t.client.get('/api/v1/namespaces/default')).status).toBe(200);
      expect(await metric(t, 'apiserver_audit_requests_rejected_total')).toBe(1);
      expect(await metric(t, 'apiserver_audit_error_total{plugin="log"}')).toBe(1);
    } finally {
      await t.stop();
    }
  });

  it('blocking mode (the default) keeps serving and only counts', async () => {
    const t = await startTestApiServer({
      args: [
        '--audit-policy-file',
        await policyFile('- level: Metadata\n  verbs: [list]\n'),
        '--audit-log-path',
        '/dev/full',
      ],
    });
    try {
      expect((await t.client.get('/api/v1/namespaces')).status).toBe(200);
      expect(await metric(t, 'apiserver_audit_error_total{plugin="log"}')).toBe(2);
      expect(await metric(t, 'apiserver_audit_requests_rejected_total')).toBe(0);
    } finally {
      await t.stop();
    }
  });
});
