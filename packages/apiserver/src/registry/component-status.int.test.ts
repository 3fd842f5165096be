// core/v1 ComponentStatus (issue 19) on a real API server and etcd over HTTPS, read with stock
// kubectl: `get componentstatuses` / `get cs` list etcd-0 Healthy with Kubernetes' deprecation
// warning and kubectl's columns; list selectors, Protobuf = JSON, discovery's verbs and short
// name; 405 for writes; 404 for an unknown name. The probes themselves against
// real HTTPS health servers of our own: ok, a 500, a refused connection, a server that never
// answers. The controller manager's fixed port (10257) is only taken by a health server of our
// own when it is free on this machine.
import { createServer as createHttpsServer, type Server } from 'node:https';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { builtinCatalog, type ObjectSchema } from '@svc/api';
import { decodeProtobufObject } from '@svc/machinery';
import { naming } from '@svc/api';
import { createTestCa, expectCode, startKubectlEnv, type KubectlEnv } from '@svc/testing';
import { CONTROLLER_MANAGER_PORT, httpsHealthProbe, type ComponentHealth } from './component-status.js';

let env: KubectlEnv;
let tls: { cert: string; key: string };
/** Our stand-in controller manager on 10257, when that port was free. */
let standIn: Server | undefined;
const servers: Server[] = [];

const WARNING = 'v1 ComponentStatus is deprecated in v1.19+';

function listen(server: Server, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
}

async function healthServer(handler: Parameters<typeof createHttpsServer>[1], port = 0): Promise<Server | undefined> {
  const server = createHttpsServer(tls, handler);
  if (!(await listen(server, port))) return undefined;
  servers.push(server);
  return server;
}

const portOf = (s: Server): number => (s.address() as AddressInfo).port;

/** A port nothing listens on: bound by us, then closed. */
async function closedPort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  const ca = await createTestCa('component-status-test');
  const leaf = await ca.issue({ commonName: 'localhost', usages: ['server'], hosts: ['127.0.0.1'] });
  tls = { cert: leaf.chainPem, key: leaf.keyPem };
  standIn = await healthServer((req, res) => {
    res.writeHead(req.url === '/healthz' ? 200 : 404, { 'Content-Type': 'text/plain' });
    res.end(req.url === '/healthz' ? 'ok' : 'not found');
  }, CONTROLLER_MANAGER_PORT);
  env = await startKubectlEnv();
}, 60_000);
afterAll(async () => {
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  await env?.stop();
});

/** kubectl's table as rows of cells (two or more spaces apart). */
const rows = (stdout: string): string[][] =>
  stdout
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}/));

it('kubectl get componentstatuses and get cs: NAME STATUS MESSAGE ERROR, etcd-0 Healthy ok, the deprecation warning', async () => {
  for (const resource of ['componentstatuses', 'cs']) {
    const got = await env.ok(['get', resource]);
    expect(got.stderr).toContain(`Warning: ${WARNING}`);
    const table = rows(got.stdout);
    expect(table[0]).toEqual(['NAME', 'STATUS', 'MESSAGE', 'ERROR']);
    const names = table.slice(1).map((r) => r[0]);
    expect([...names].sort()).toEqual(['controller-manager', 'etcd-0', 'scheduler']);
    expect(table.find((r) => r[0] === 'etcd-0')).toEqual(['etcd-0', 'Healthy', 'ok']);
    if (standIn)
      expect(table.find((r) => r[0] === 'controller-manager')).toEqual(['controller-manager', 'Healthy', 'ok']);
    // Whatever listens on the scheduler's port (or nothing), the row is Healthy or Unhealthy.
    expect(['Healthy', 'Unhealthy']).toContain(table.find((r) => r[0] === 'scheduler')?.[1]);
  }
  const one = await env.ok([
    'get',
    'cs',
    'etcd-0',
    '-o',
    'jsonpath={.conditions[0].type} {.conditions[0].status} {.conditions[0].message}',
  ]);
  expect(one.stdout).toBe('Healthy True ok');
  expect(one.stderr).toContain(WARNING);
});

it('answers get and list in JSON, Protobuf and as a Table with the Healthy condition; selectors filter as Kubernetes', async () => {
  const c = env.server.client;
  const got = await c.get('/api/v1/componentstatuses/etcd-0');
  expect(got.status).toBe(200);
  expect(String(got.headers.warning)).toContain(WARNING);
  expect(got.json()).toEqual({
    kind: 'ComponentStatus',
    apiVersion: 'v1',
    metadata: { name: 'etcd-0' },
    conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }],
  });
  const proto = await c.get('/api/v1/componentstatuses/etcd-0', { headers: { Accept: naming().protobufMediaType } });
  expect(proto.status).toBe(200);
  const schema = builtinCatalog().lookup('', 'v1', 'componentstatuses')?.schema as ObjectSchema;
  expect(decodeProtobufObject(proto.body, schema)).toEqual(got.json());

  const list = expectCode(await c.get('/api/v1/componentstatuses'), 200) as { kind: string; items: unknown[] };
  expect(list.kind).toBe('ComponentStatusList');
  expect(list.items).toHaveLength(3);
  const byName = expectCode(await c.get('/api/v1/componentstatuses?fieldSelector=metadata.name%3Detcd-0'), 200) as {
    items: Array<{ metadata: { name: string } }>;
  };
  expect(byName.items.map((i) => i.metadata.name)).toEqual(['etcd-0']);
  const notEtcd = expectCode(await c.get('/api/v1/componentstatuses?fieldSelector=metadata.name!%3Detcd-0'), 200) as {
    items: Array<{ metadata: { name: string } }>;
  };
  expect(notEtcd.items.map((i) => i.metadata.name).sort()).toEqual(['controller-manager', 'scheduler']);
  // Component statuses carry no labels: any label selector that needs one matches nothing.
  const labelled = expectCode(await c.get('/api/v1/componentstatuses?labelSelector=tier%3Dcontrol'), 200) as {
    items: unknown[];
  };
  expect(labelled.items).toEqual([]);

  const table = expectCode(
    await c.get('/api/v1/componentstatuses/etcd-0', {
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
    }),
    200,
  ) as { kind: string; columnDefinitions: Array<{ name: string }>; rows: Array<{ cells: unknown[] }> };
  expect(table.kind).toBe('Table');
  expect(table.columnDefinitions.map((d) => d.name)).toEqual(['Name', 'Status', 'Message', 'Error']);
  expect(table.rows[0]?.cells).toEqual(['etcd-0', 'Healthy', 'ok', '']);
});

it('discovery lists componentstatuses cluster-scoped with [get list] and short name cs; writes answer 405; an unknown name is 404', async () => {
  const discovery = expectCode(await env.server.client.get('/api/v1'), 200) as {
    resources: Array<{ name: string; namespaced: boolean; kind: string; verbs: string[]; shortNames?: string[] }>;
  };
  const cs = discovery.resources.find((r) => r.name === 'componentstatuses');
  expect(cs).toMatchObject({ namespaced: false, kind: 'ComponentStatus', verbs: ['get', 'list'], shortNames: ['cs'] });
  const resources = await env.ok(['api-resources', '--api-group=', '-o', 'wide']);
  const line = resources.stdout.split('\n').find((l) => l.startsWith('componentstatuses'));
  expect(line?.trim().split(/\s+/)).toEqual(['componentstatuses', 'cs', 'v1', 'false', 'ComponentStatus', 'get,list']);

  const explained = await env.ok(['explain', 'cs.conditions']);
  expect(explained.stdout).toContain('KIND:       ComponentStatus');
  expect(explained.stdout).toMatch(/FIELDS:[\s\S]*error\s+<string>[\s\S]*message\s+<string>[\s\S]*status\s+<string>/);

  const c = env.server.client;
  const body = { apiVersion: 'v1', kind: 'ComponentStatus', metadata: { name: 'x' } };
  for (const r of [
    await c.post('/api/v1/componentstatuses', body),
    await c.put('/api/v1/componentstatuses/etcd-0', { ...body, metadata: { name: 'etcd-0' } }),
    await c.patch('/api/v1/componentstatuses/etcd-0', '{}', 'application/merge-patch+json'),
    await c.delete('/api/v1/componentstatuses/etcd-0'),
    await c.delete('/api/v1/componentstatuses'),
    await c.get('/api/v1/componentstatuses?watch=true'),
  ]) {
    expect(r.status).toBe(405);
    expect(r.json()).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', code: 405 });
  }
  const deleted = await env.run(['delete', 'cs', 'etcd-0']);
  expect(deleted.code).toBe(1);
  expect(deleted.stderr).toContain('MethodNotAllowed');

  // An unknown name is a 404 (Kubernetes 1.32 answers "Component not found: <name>" as a 500;
  // svc keeps 500 for server faults).
  const unknown = await c.get('/api/v1/componentstatuses/etcd-9');
  expect(unknown.status).toBe(404);
  expect(unknown.json()).toMatchObject({
    kind: 'Status',
    status: 'Failure',
    reason: 'NotFound',
    message: 'componentstatuses "etcd-9" not found',
    details: { name: 'etcd-9', kind: 'componentstatuses' },
    code: 404,
  });
  const byKubectl = await env.run(['get', 'cs', 'etcd-9']);
  expect(byKubectl.code).toBe(1);
  expect(byKubectl.stderr).toContain('Error from server (NotFound): componentstatuses "etcd-9" not found');
  // A namespaced path to a cluster-scoped type is not found.
  expect((await c.get('/api/v1/namespaces/default/componentstatuses')).status).toBe(404);
});

describe('the health probe (Kubernetes pkg/probe/http as componentstatus uses it)', () => {
  const probe = (port: number, timeoutMs?: number): Promise<ComponentHealth> =>
    httpsHealthProbe({ name: 'x', host: '127.0.0.1', port, path: '/healthz', timeoutMs }).check();

  it("2xx is True with the body; another code is False with the code; a refused connection is False with Go's text", async () => {
    const ok = (await healthServer((_req, res) => res.end('ok'))) as Server;
    expect(await probe(portOf(ok))).toEqual({ status: 'True', message: 'ok', error: '' });
    const failing = (await healthServer((_req, res) => {
      res.writeHead(500);
      res.end('[-]informers failed');
    })) as Server;
    expect(await probe(portOf(failing))).toEqual({
      status: 'False',
      message: 'HTTP probe failed with statuscode: 500',
      error: '',
    });
    const port = await closedPort();
    expect(await probe(port)).toEqual({
      status: 'False',
      message: `Get "https://127.0.0.1:${port}/healthz": dial tcp 127.0.0.1:${port}: connect: connection refused`,
      error: '',
    });
  });

  it('a server that never answers is False with the client timeout once the probe times out', async () => {
    const silent = (await healthServer(() => undefined)) as Server;
    const port = portOf(silent);
    expect(await probe(port, 300)).toEqual({
      status: 'False',
      message: `Get "https://127.0.0.1:${port}/healthz": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
      error: '',
    });
  });
});
