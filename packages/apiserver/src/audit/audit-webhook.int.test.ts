// Audit with the webhook backend against a real HTTPS receiver (client certificate and token
// required): EventLists in batch mode, blocking and blocking-strict modes, retries with backoff,
// and the burst of the issue — requests while the receiver is down for 10 s, then back: every
// event the policy selects arrives exactly once or is counted in apiserver_audit_error_total.
// SVC_AUDIT_BURST sets the burst size (default 1000; the issue's is 5000).
import { createServer, type Server } from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditEvent, AuditEventList } from '@svc/api';
import {
  createNamespace,
  createTestCa,
  expectCode,
  startTestApiServer,
  svcconfigYaml,
  uniqueName,
  waitFor,
  type HttpResponse,
  type TestApiServer,
} from '@svc/testing';

const BURST = Number(process.env.SVC_AUDIT_BURST ?? 1000);
const TOKEN = 'audit-hook-token';

/** An HTTPS audit receiver; `answer` picks each POST's status (200 by default). */
class Receiver {
  readonly lists: Array<{ list: AuditEventList; auth?: string; cn?: string }> = [];
  answer: () => number = () => 200;
  posts = 0;
  port = 0;
  private server?: Server;

  constructor(private readonly tls: { cert: string; key: string; ca: string }) {}

  get events(): AuditEvent[] {
    return this.lists.flatMap((l) => l.list.items);
  }

  async up(): Promise<void> {
    const server = createServer({ ...this.tls, requestCert: true, rejectUnauthorized: true }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.posts++;
        const code = req.headers.authorization === `Bearer ${TOKEN}` ? this.answer() : 401;
        if (code === 200) {
          const peer = (req.socket as TLSSocket).getPeerCertificate();
          this.lists.push({
            list: JSON.parse(Buffer.concat(chunks).toString('utf8')) as AuditEventList,
            auth: req.headers.authorization,
            cn: String(peer.subject?.CN ?? ''),
          });
        }
        res.writeHead(code, { 'Content-Type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(this.port, '127.0.0.1', r));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }

  ofRequest(res: HttpResponse): AuditEvent[] {
    return this.events.filter((e) => e.auditID === res.headers['audit-id']);
  }
}

let dir: string;
let receiver: Receiver;
let hookConfig: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-audit-webhook-'));
  const ca = await createTestCa('audit-hook-ca');
  const serving = await ca.issue({ commonName: 'audit-hook', usages: ['server'], hosts: ['127.0.0.1'] });
  const client = await ca.issue({ commonName: 'svc-apiserver-audit', usages: ['client'] });
  receiver = new Receiver({ cert: serving.certPem, key: serving.keyPem, ca: ca.certPem });
  await receiver.up();
  hookConfig = join(dir, 'hook.svcconfig');
  await writeFile(
    hookConfig,
    svcconfigYaml({
      server: `https://127.0.0.1:${receiver.port}/audit`,
      caPem: ca.certPem,
      token: TOKEN,
      clientCertPem: client.certPem,
      clientKeyPem: client.keyPem,
    }),
  );
});

afterAll(async () => {
  await receiver?.down();
  if (dir) await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  receiver.answer = () => 200;
});

async function policyFile(rules: string): Promise<string> {
  const file = join(dir, `${uniqueName('policy')}.yaml`);
  await writeFile(file, `apiVersion: audit.svc.io/v1\nkind: Policy\nrules:\n${rules}`);
  return file;
}

async function metric(t: TestApiServer, sample: string): Promise<number> {
  const line = (await t.client.get('/metrics')).text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line ? Number(line.split(' ').pop()) : 0;
}

async function server(args: string[]): Promise<TestApiServer> {
  return startTestApiServer({ args: ['--audit-webhook-config-file', hookConfig, ...args] });
}

/**
 * A batch of two is sent as soon as both are queued; the long wait keeps a slow request's two
 * events in one batch, so the POSTs counted are one batch's.
 */
const ONE_BATCH_PER_REQUEST = ['--audit-webhook-batch-max-size=2', '--audit-webhook-batch-max-wait=5s'];

describe('batch mode (the default)', () => {
  it('POSTs EventLists of up to --audit-webhook-batch-max-size events with the kubeconfig’s credentials', async () => {
    const t = await server([
      ...['--audit-policy-file', await policyFile('- level: RequestResponse\n  verbs: [create]\n')],
      ...['--audit-webhook-batch-max-size=3', '--audit-webhook-batch-max-wait=100ms'],
    ]);
    const before = receiver.lists.length;
    try {
      const ns = await createNamespace(t.client, 'hook');
      const res = await t.client.post(`/api/v1/namespaces/${ns}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'c1' },
        data: { k: 'v' },
      });
      const created = expectCode(res, 201);
      const evs = await waitFor('the configmap’s events', () => {
        const e = receiver.ofRequest(res);
        return e.length === 2 ? e : undefined;
      });
      // Batches are POSTed concurrently (as Kubernetes' batch backend does), so the request's two
      // events may arrive in either order when they fall into two batches.
      const stages = evs.map((e) => e.stage);
      expect([...stages].sort()).toEqual(['RequestReceived', 'ResponseComplete']);
      expect(evs.find((e) => e.stage === 'ResponseComplete')).toMatchObject({
        apiVersion: 'audit.svc.io/v1',
        kind: 'Event',
        level: 'RequestResponse',
        verb: 'create',
        responseObject: created,
        requestObject: { metadata: { name: 'c1' } },
      });
      const mine = receiver.lists.slice(before);
      for (const l of mine) {
        expect(l.list).toMatchObject({ kind: 'EventList', apiVersion: 'audit.svc.io/v1', metadata: {} });
        expect(l.list.items.length).toBeLessThanOrEqual(3);
        expect(l.auth).toBe(`Bearer ${TOKEN}`);
        expect(l.cn).toBe('svc-apiserver-audit');
      }
    } finally {
      await t.stop();
    }
  });

  it('retries a batch the receiver refuses, with backoff from --audit-webhook-initial-backoff', async () => {
    const t = await server([
      ...['--audit-policy-file', await policyFile('- level: Metadata\n  nonResourceURLs: [/version]\n')],
      ...ONE_BATCH_PER_REQUEST,
      '--audit-webhook-initial-backoff=300ms',
    ]);
    try {
      let refusals = 2;
      receiver.answer = () => (refusals-- > 0 ? 503 : 200);
      const posts = receiver.posts;
      const t0 = Date.now();
      const res = await t.client.get('/version');
      const evs = await waitFor('the retried events', () => {
        const e = receiver.ofRequest(res);
        return e.length === 2 ? e : undefined;
      });
      // The batch (both events) waited 300 ms, then 450 ms (each with up to 20% more) before it got through.
      expect(Date.now() - t0).toBeGreaterThanOrEqual(700);
      expect(receiver.posts - posts).toBe(3);
      expect(new Set(evs.map((e) => e.stage)).size).toBe(2);
      expect(await metric(t, 'apiserver_audit_error_total{plugin="webhook"}')).toBe(0);
    } finally {
      await t.stop();
    }
  });

  it('counts a batch that never gets through after five attempts', async () => {
    const t = await server([
      ...['--audit-policy-file', await policyFile('- level: Metadata\n  nonResourceURLs: [/version]\n')],
      ...ONE_BATCH_PER_REQUEST,
      '--audit-webhook-initial-backoff=10ms',
    ]);
    try {
      receiver.answer = () => 500;
      const posts = receiver.posts;
      await t.client.get('/version');
      await waitFor(
        'the batch to be given up',
        async () => (await metric(t, 'apiserver_audit_error_total{plugin="webhook"}')) === 2,
      );
      expect(receiver.posts - posts).toBe(5);
    } finally {
      await t.stop();
    }
  });
});

describe('blocking modes', () => {
  it('blocking: the request’s RequestReceived event is delivered before it is served', async () => {
    const t = await server([
      ...['--audit-policy-file', await policyFile('- level: Metadata\n  nonResourceURLs: [/version]\n')],
      ...['--audit-webhook-mode=blocking', '--audit-webhook-initial-backoff=10ms'],
    ]);
    try {
      const res = await t.client.get('/version');
      expect(receiver.ofRequest(res).map((e) => e.stage)).toContain('RequestReceived');
      await waitFor('ResponseComplete', () => receiver.ofRequest(res).length === 2);
      receiver.answer = () => 500;
      // A failing receiver does not fail requests in blocking mode; each event is tried five times, then counted.
      expect((await t.client.get('/version')).status).toBe(200);
      await waitFor(
        'both events counted',
        async () => (await metric(t, 'apiserver_audit_error_total{plugin="webhook"}')) === 2,
      );
    } finally {
      await t.stop();
    }
  });

  it('blocking-strict: a request whose RequestReceived event cannot be delivered fails', async () => {
    const t = await server([
      ...['--audit-policy-file', await policyFile('- level: Metadata\n  nonResourceURLs: [/version]\n')],
      ...['--audit-webhook-mode=blocking-strict', '--audit-webhook-initial-backoff=10ms'],
    ]);
    try {
      receiver.answer = () => 500;
      const res = await t.client.get('/version');
      expect(res.status).toBe(500);
      expect(res.json()).toMatchObject({ message: 'Internal Server Error: "/version": failed to store audit event' });
      expect(await metric(t, 'apiserver_audit_requests_rejected_total')).toBe(1);
      expect(await metric(t, 'apiserver_audit_error_total{plugin="webhook"}')).toBe(1);
      receiver.answer = () => 200;
      expect((await t.client.get('/version')).status).toBe(200);
    } finally {
      await t.stop();
    }
  });
});

describe('the burst of the issue', () => {
  it(`${BURST} creates while the receiver is down for 10 s: each selected event arrives once or is counted`, async () => {
    const ns = `burst-${Math.random().toString(36).slice(2, 8)}`;
    const t = await server([
      '--audit-policy-file',
      await policyFile(
        `- level: Metadata\n  verbs: [create]\n  namespaces: [${ns}]\n  resources: [{group: "", resources: [configmaps]}]\n- level: None\n`,
      ),
      // Kubernetes' defaults but a shorter wait for the last partial batch.
      '--audit-webhook-batch-max-wait=2s',
    ]);
    try {
      expectCode(await t.client.post('/api/v1/namespaces', { metadata: { name: ns } }), 201);
      const before = receiver.events.length;
      await receiver.down();
      const downAt = Date.now();
      const back = new Promise<void>((resolve, reject) => {
        setTimeout(() => void receiver.up().then(resolve, reject), 10_000);
      });
      const ids: string[] = [];
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < BURST) {
          const i = next++;
          const res = await t.client.post(`/api/v1/namespaces/${ns}/configmaps`, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `b${i}` },
          });
          expect(res.status).toBe(201);
          ids.push(String(res.headers['audit-id']));
        }
      };
      await Promise.all(Array.from({ length: 32 }, worker));
      const sentIn = Date.now() - downAt;
      await back;
      const expected = BURST * 2;
      const outcome = await waitFor(
        'every event delivered or counted',
        async () => {
          const mine = receiver.events.slice(before).filter((e) => e.objectRef?.namespace === ns);
          const lost = await metric(t, 'apiserver_audit_error_total');
          return mine.length + lost >= expected ? { mine, lost } : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 200 },
      );
      const keys = outcome.mine.map((e) => `${e.auditID}/${e.stage}`);
      expect(new Set(keys).size).toBe(keys.length); // nothing twice
      expect(outcome.mine.length + outcome.lost).toBe(expected);
      if (outcome.lost === 0) {
        const delivered = new Set(keys);
        for (const id of ids) {
          expect(delivered.has(`${id}/RequestReceived`)).toBe(true);
          expect(delivered.has(`${id}/ResponseComplete`)).toBe(true);
        }
      }
      process.stderr.write(
        `audit burst: ${BURST} creates in ${sentIn} ms while the receiver was down; ${outcome.mine.length} events delivered once, ${outcome.lost} counted lost, all in ${Date.now() - downAt} ms\n`,
      );
    } finally {
      await t.stop();
    }
  }, 180_000);
});
