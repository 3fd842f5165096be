// ImagePolicyWebhook on a real server (etcd, HTTPS) against a real HTTPS backend in this process,
// configured as Kubernetes' file format (by path from the AdmissionConfiguration, a kubeconfig with
// the backend's CA, a client certificate and a token): ImageReviews sent, denials printed by
// stock kubectl, audit annotations in the audit log, the cache, retries of a failing backend, and
// defaultAllow admitting (and annotating) pods when the backend is down.
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditEvent, Pod } from '@svc/api';
import {
  createDefaultServiceAccount,
  createNamespace,
  createTestCa,
  expectCode,
  closedPort,
  startEtcd,
  startKubectlEnv,
  startTestApiServer,
  uniqueName,
  waitFor,
  type EtcdHandle,
  type Json,
  type KubectlEnv,
} from '@svc/testing';

const TOKEN = 'backend-token';
interface Received {
  review: Json;
  path: string;
  authorization?: string;
  clientCn?: string;
}
const received: Received[] = [];

let etcd: EtcdHandle;
let backend: Server;
let dir: string;
let caPem: string;
let client: { certPem: string; keyPem: string };

/** The backend: `trusted/` images allowed (with an audit annotation), `flaky/` a 500, anything else denied. */
async function startBackend(): Promise<Server> {
  const ca = await createTestCa('image-policy-ca');
  caPem = ca.certPem;
  const serving = await ca.issue({ commonName: 'backend', hosts: ['127.0.0.1'], usages: ['server'] });
  client = await ca.issue({ commonName: 'svc-apiserver', usages: ['client'] });
  const s = createServer(
    { cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const review = JSON.parse(body) as Json;
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        received.push({
          review,
          path: req.url ?? '',
          authorization: req.headers.authorization,
          clientCn: String(peer.subject?.CN),
        });
        const images = ((review.spec.containers ?? []) as Array<{ image: string }>).map((c) => c.image);
        if (images.some((i) => i.startsWith('flaky/'))) {
          res.writeHead(500, { 'Content-Type': 'text/plain' });
          res.end('boom');
          return;
        }
        const allowed = images.every((i) => i.startsWith('trusted/'));
        const status = allowed
          ? { allowed, auditAnnotations: { checked: images.join(',') } }
          : { allowed, reason: 'only trusted/ images may run' };
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'ImageReview', status }));
      });
    },
  );
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return s;
}

/** An AdmissionConfiguration naming ImagePolicyWebhook's file by path, which names the kubeconfig. */
async function admissionConfig(o: { server: string; defaultAllow: boolean }): Promise<string> {
  const name = uniqueName('cfg');
  const kubeconfig = join(dir, `${name}-backend.yaml`);
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  await writeFile(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: backend',
      '  cluster:',
      `    server: ${o.server}`,
      `    certificate-authority-data: ${b64(caPem)}`,
      'users:',
      '- name: apiserver',
      '  user:',
      `    token: ${TOKEN}`,
      `    client-certificate-data: ${b64(client.certPem)}`,
      `    client-key-data: ${b64(client.keyPem)}`,
      'contexts:',
      '- name: c',
      '  context: {cluster: backend, user: apiserver}',
      'current-context: c',
    ].join('\n'),
  );
  await writeFile(
    join(dir, `${name}-image-policy.yaml`),
    `imagePolicy:\n  kubeConfigFile: ${kubeconfig}\n  allowTTL: 50\n  denyTTL: 50\n  retryBackoff: 10\n  defaultAllow: ${o.defaultAllow}\n`,
  );
  const file = join(dir, `${name}.yaml`);
  await writeFile(
    file,
    `apiVersion: apiserver.config.svc.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ImagePolicyWebhook\n  path: ${name}-image-policy.yaml\n`,
  );
  return file;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-image-policy-int-'));
  etcd = await startEtcd();
  backend = await startBackend();
});
afterAll(async () => {
  await new Promise((resolve) => backend.close(resolve));
  await etcd.stop();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  received.length = 0;
});

const pod = (ns: string, image: string, annotations?: Record<string, string>): Json => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: uniqueName('p'), namespace: ns, ...(annotations ? { annotations } : {}) },
  spec: { containers: [{ name: 'c', image }], initContainers: [{ name: 'i', image: 'trusted/init:1' }] },
});

describe('with the backend up', () => {
  let env: KubectlEnv;
  let ns: string;
  let auditLog: string;
  beforeAll(async () => {
    auditLog = join(dir, 'audit.log');
    const policy = join(dir, 'audit-policy.yaml');
    await writeFile(
      policy,
      'apiVersion: audit.svc.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{group: "", resources: [pods]}]\n',
    );
    const port = (backend.address() as AddressInfo).port;
    env = await startKubectlEnv({
      etcd,
      args: [
        '--enable-admission-plugins=ImagePolicyWebhook',
        `--admission-control-config-file=${await admissionConfig({ server: `https://127.0.0.1:${port}/review`, defaultAllow: false })}`,
        '--audit-policy-file',
        policy,
        '--audit-log-path',
        auditLog,
      ],
    });
    ns = await createNamespace(env.server.client, 'images');
    await createDefaultServiceAccount(env.server.client, ns);
  });
  afterAll(async () => {
    await env.stop();
  });

  it('sends an ImageReview over HTTPS with the client certificate and token, and admits what it allows', async () => {
    const p = pod(ns, 'trusted/app:1', { 'team.image-policy.svc.io/ticket': 'T-1', unrelated: 'x' });
    const created = expectCode(await env.server.client.post(`/api/v1/namespaces/${ns}/pods`, p), 201) as Pod;
    expect(received).toEqual([
      {
        path: '/review?timeout=30s',
        authorization: `Bearer ${TOKEN}`,
        clientCn: 'svc-apiserver',
        review: {
          kind: 'ImageReview',
          apiVersion: 'imagepolicy.svc.io/v1alpha1',
          metadata: { creationTimestamp: null },
          spec: {
            containers: [{ image: 'trusted/app:1' }, { image: 'trusted/init:1' }],
            annotations: { 'team.image-policy.svc.io/ticket': 'T-1' },
            namespace: ns,
          },
          status: { allowed: false },
        },
      },
    ]);
    // The backend's audit annotations are the request's, under the plugin's prefix.
    const events = await waitFor('the audit event of the create', async () => {
      if (!existsSync(auditLog)) return undefined;
      const all = (await readFile(auditLog, 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as AuditEvent);
      const mine = all.filter((e) => e.verb === 'create' && e.objectRef?.name === created.metadata.name);
      return mine.length > 0 ? mine : undefined;
    });
    expect(events[0]?.annotations).toMatchObject({
      'imagepolicywebhook.image-policy.svc.io/checked': 'trusted/app:1,trusted/init:1',
    });
  });

  it('refuses what the backend denies; kubectl prints the reason', async () => {
    const p = pod(ns, 'evil/miner:1');
    const file = await env.manifest(p);
    const r = await env.run(['create', '-f', file]);
    expect(r.stderr.trim()).toBe(
      `Error from server (Forbidden): error when creating "${file}": pods "${p.metadata.name}" is forbidden: image policy webhook backend denied one or more images: only trusted/ images may run`,
    );
  });

  it('caches answers: the same review is not sent again within allowTTL', async () => {
    const c = env.server.client;
    expectCode(await c.post(`/api/v1/namespaces/${ns}/pods`, pod(ns, 'trusted/cached:1')), 201);
    expectCode(await c.post(`/api/v1/namespaces/${ns}/pods`, pod(ns, 'trusted/cached:1')), 201);
    expect(received).toHaveLength(1);
  });

  it('retries a failing backend, then refuses the pod with the error', async () => {
    const p = pod(ns, 'flaky/app:1');
    const r = await env.server.client.post(`/api/v1/namespaces/${ns}/pods`, p);
    expect(r.status).toBe(403);
    expect(r.json<{ message: string }>().message).toBe(
      `pods "${p.metadata.name}" is forbidden: an error on the server ("boom") has prevented the request from succeeding`,
    );
    expect(received).toHaveLength(5);
  });
});

it('defaultAllow: a backend that is down admits the pod and marks it failed-open', async () => {
  const port = await closedPort();
  const t = await startTestApiServer({
    etcd,
    args: [
      '--enable-admission-plugins=ImagePolicyWebhook',
      `--admission-control-config-file=${await admissionConfig({ server: `https://127.0.0.1:${port}/review`, defaultAllow: true })}`,
    ],
  });
  try {
    const ns = await createNamespace(t.client, 'open');
    await createDefaultServiceAccount(t.client, ns);
    const created = expectCode(
      await t.client.post(`/api/v1/namespaces/${ns}/pods`, pod(ns, 'evil/miner:1')),
      201,
    ) as Pod;
    expect(created.metadata.annotations).toEqual({ 'alpha.image-policy.svc.io/failed-open': 'true' });
  } finally {
    await t.stop();
  }
});
