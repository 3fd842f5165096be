// Stock kubectl (on PATH) end to end against svc-apiserver and a real etcd, with a svcconfig
// written by the test and a HOME of its own (kubectl's discovery cache is per run).
import {
  startKubectlEnv,
  uniqueName,
  type Json,
  type KubectlEnv,
  type KubectlResult,
  type TestApiServer,
} from '@svc/testing';

let env: KubectlEnv;
let t: TestApiServer;
let ns: string;

/** Runs kubectl and requires exit code 0. */
const k = (args: string[], stdin?: string): Promise<KubectlResult> => env.ok(args, { stdin });

const cmPath = (name = ''): string => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;

async function getCm(name: string): Promise<{ status: number; body: Json }> {
  const res = await t.client.get(cmPath(name));
  return { status: res.status, body: res.json<Json>() };
}

async function createCm(name: string, extra: Json = {}): Promise<Json> {
  const { metadata, ...rest } = extra;
  const res = await t.client.post(cmPath(), {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, ...(metadata as Json | undefined) },
    ...rest,
  });
  if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${res.text}`);
  return res.json<Json>();
}

beforeAll(async () => {
  env = await startKubectlEnv();
  t = env.server;
  ns = uniqueName('kubectl');
  const res = await t.client.post('/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: ns },
  });
  expect(res.status).toBe(201);
});

afterAll(async () => {
  await env?.stop();
});

it('version -o json shows the server at minor 32', async () => {
  const r = await k(['version', '-o', 'json']);
  const v = JSON.parse(r.stdout) as { serverVersion?: { major?: string; minor?: string; gitVersion?: string } };
  expect(v.serverVersion?.major).toBe('1');
  expect(v.serverVersion?.minor).toBe('32');
  expect(v.serverVersion?.gitVersion).toMatch(/^v1\.32\./);
});

it('create -f creates the object', async () => {
  const name = uniqueName('created');
  const file = await env.manifest({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels: { app: 'web' } },
    data: { greeting: 'hello' },
  });
  const r = await k(['create', '-f', file, '-n', ns, '--validate=false']);
  expect(r.stdout.trim()).toBe(`configmap/${name} created`);
  const got = await getCm(name);
  expect(got.status).toBe(200);
  expect(got.body).toMatchObject({
    metadata: { name, namespace: ns, labels: { app: 'web' } },
    data: { greeting: 'hello' },
  });
});

it('create -f of a namespace and a node (cluster-scoped)', async () => {
  const nsName = uniqueName('made-by-kubectl');
  const node = uniqueName('node');
  const file = await env.manifest({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: nsName } });
  expect((await k(['create', '-f', file, '--validate=false'])).stdout.trim()).toBe(`namespace/${nsName} created`);
  const nodeFile = await env.manifest({ apiVersion: 'v1', kind: 'Node', metadata: { name: node } });
  expect((await k(['create', '-f', nodeFile, '--validate=false'])).stdout.trim()).toBe(`node/${node} created`);
  expect((await k(['get', 'namespace', nsName, '-o', 'name'])).stdout.trim()).toBe(`namespace/${nsName}`);
  expect((await k(['get', 'nodes', '-o', 'name'])).stdout.split('\n')).toContain(`node/${node}`);
});

it('get -o json prints the object', async () => {
  const name = uniqueName('json');
  const created = await createCm(name, { data: { a: '1' } });
  const r = await k(['get', 'configmap', name, '-n', ns, '-o', 'json']);
  const obj = JSON.parse(r.stdout) as Json;
  expect(obj).toMatchObject({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns, uid: created.metadata.uid },
    data: { a: '1' },
  });
});

it('get -l selects by label', async () => {
  const app = uniqueName('app');
  const a = uniqueName('sel-a');
  const b = uniqueName('sel-b');
  const other = uniqueName('sel-other');
  await createCm(a, { metadata: { labels: { app } } });
  await createCm(b, { metadata: { labels: { app } } });
  await createCm(other, { metadata: { labels: { app: `${app}-x` } } });
  const names = await k(['get', 'configmaps', '-n', ns, '-l', `app=${app}`, '-o', 'name']);
  expect(
    names.stdout
      .split('\n')
      .filter((l) => l !== '')
      .sort(),
  ).toEqual([`configmap/${a}`, `configmap/${b}`].sort());
  const table = await k(['get', 'configmaps', '-n', ns, '-l', `app=${app}`]);
  expect(table.stdout).toMatch(/^NAME\b/);
  expect(table.stdout).toContain(a);
  expect(table.stdout).toContain(b);
  expect(table.stdout).not.toContain(other);
});

it('label adds a label', async () => {
  const name = uniqueName('label');
  await createCm(name);
  const r = await k(['label', 'configmap', name, '-n', ns, 'tier=gold']);
  expect(r.stdout.trim()).toBe(`configmap/${name} labeled`);
  expect((await getCm(name)).body.metadata.labels).toEqual({ tier: 'gold' });
  await k(['label', 'configmap', name, '-n', ns, 'tier-']);
  expect((await getCm(name)).body.metadata.labels ?? {}).toEqual({});
});

it('annotate adds an annotation', async () => {
  const name = uniqueName('annotate');
  await createCm(name);
  const r = await k(['annotate', 'configmap', name, '-n', ns, 'example.com/note=hello world']);
  expect(r.stdout.trim()).toBe(`configmap/${name} annotated`);
  expect((await getCm(name)).body.metadata.annotations).toEqual({ 'example.com/note': 'hello world' });
});

it('replace -f replaces the object', async () => {
  const name = uniqueName('replace');
  const created = await createCm(name, { data: { a: '1', b: '2' } });
  const file = await env.manifest({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns },
    data: { c: '3' },
  });
  const r = await k(['replace', '-f', file, '--validate=false']);
  expect(r.stdout.trim()).toBe(`configmap/${name} replaced`);
  const got = (await getCm(name)).body;
  expect(got.data).toEqual({ c: '3' });
  expect(got.metadata.uid).toBe(created.metadata.uid);
  expect(got.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
});

it('patch --type merge', async () => {
  const name = uniqueName('merge');
  await createCm(name, { data: { a: '1', b: '2' } });
  const r = await k([
    'patch',
    'configmap',
    name,
    '-n',
    ns,
    '--type',
    'merge',
    '-p',
    '{"data":{"b":null,"m":"merged"}}',
  ]);
  expect(r.stdout.trim()).toBe(`configmap/${name} patched`);
  expect((await getCm(name)).body.data).toEqual({ a: '1', m: 'merged' });
});

it('patch --type json', async () => {
  const name = uniqueName('jsonpatch');
  await createCm(name, { data: { a: '1' } });
  const r = await k([
    'patch',
    'configmap',
    name,
    '-n',
    ns,
    '--type',
    'json',
    '-p',
    '[{"op":"replace","path":"/data/a","value":"one"},{"op":"add","path":"/data/j","value":"2"}]',
  ]);
  expect(r.stdout.trim()).toBe(`configmap/${name} patched`);
  expect((await getCm(name)).body.data).toEqual({ a: 'one', j: '2' });

  const failed = await env.run([
    'patch',
    'configmap',
    name,
    '-n',
    ns,
    '--type',
    'json',
    '-p',
    '[{"op":"test","path":"/data/a","value":"nope"},{"op":"remove","path":"/data/a"}]',
  ]);
  expect(failed.code).not.toBe(0);
  expect(failed.stderr).toMatch(/invalid/i);
  expect((await getCm(name)).body.data).toEqual({ a: 'one', j: '2' });
});

it('delete removes the object', async () => {
  const name = uniqueName('delete');
  await createCm(name);
  const r = await k(['delete', 'configmap', name, '-n', ns]);
  expect(r.stdout.trim()).toBe(`configmap "${name}" deleted`);
  expect((await getCm(name)).status).toBe(404);
  const again = await env.run(['get', 'configmap', name, '-n', ns]);
  expect(again.code).not.toBe(0);
  expect(again.stderr).toContain(`Error from server (NotFound): configmaps "${name}" not found`);
});

it('api-resources lists the served types', async () => {
  const r = await k(['api-resources']);
  const rows = r.stdout.split('\n').map((l) => l.trim().split(/\s+/));
  expect(rows[0]).toEqual(['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND']);
  const row = (name: string): string[] | undefined => rows.find((x) => x[0] === name);
  expect(row('configmaps')).toEqual(['configmaps', 'cm', 'v1', 'true', 'ConfigMap']);
  expect(row('nodes')).toEqual(['nodes', 'no', 'v1', 'false', 'Node']);
  expect(row('namespaces')).toEqual(expect.arrayContaining(['namespaces', 'v1', 'false', 'Namespace']));
  expect(row('secrets')).toEqual(['secrets', 'v1', 'true', 'Secret']);
  expect(row('leases')).toEqual(expect.arrayContaining(['leases', 'coordination.svc.io/v1', 'true', 'Lease']));
  for (const name of ['pods', 'services', 'serviceaccounts', 'events']) expect(row(name)).toBeDefined();
});

it('api-versions lists the served group versions', async () => {
  const r = await k(['api-versions']);
  const l = r.stdout.split('\n').filter((x) => x !== '');
  expect(l).toEqual(expect.arrayContaining(['v1', 'coordination.svc.io/v1']));
});

it("get --raw '/readyz?verbose'", async () => {
  const r = await k(['get', '--raw', '/readyz?verbose']);
  const l = r.stdout.split('\n').filter((x) => x !== '');
  expect(l).toEqual(expect.arrayContaining(['[+]ping ok', '[+]log ok', '[+]store ok', '[+]shutdown ok']));
  expect(l.at(-1)).toBe('healthz check passed');
});

it('explain works under the default naming (definitions carry the x-kubernetes- group-version-kind too)', async () => {
  const r = await k(['explain', 'configmaps.data']);
  expect(r.stdout).toContain('KIND:       ConfigMap');
  expect(r.stdout).toMatch(/FIELD:\s+data/);
  const lease = await k(['explain', 'leases.spec']);
  expect(lease.stdout).toContain('holderIdentity');
});
