// NamespaceAutoProvision, NamespaceExists and AlwaysAdmit on real servers (etcd, HTTPS) sharing one
// etcd, with stock kubectl: a namespace created with the first object in it (not by a dry run), and
// writes to objects left in a namespace that is gone refused with a 404 (allowed without the
// plugin). AlwaysDeny has only its unit test: a server running it refuses its own start-up writes,
// as Kubernetes does, and never becomes ready.
import {
  createNamespace,
  expectCode,
  startEtcd,
  startKubectlEnv,
  startTestApiServer,
  uniqueName,
  type EtcdHandle,
  type KubectlEnv,
  type TestApiServer,
} from '@svc/testing';

let etcd: EtcdHandle;

beforeAll(async () => {
  etcd = await startEtcd();
});
afterAll(async () => {
  await etcd.stop();
});

describe('NamespaceAutoProvision', () => {
  let env: KubectlEnv;
  beforeAll(async () => {
    env = await startKubectlEnv({ etcd, args: ['--enable-admission-plugins=NamespaceAutoProvision'] });
  });
  afterAll(async () => {
    await env.stop();
  });

  it('creates the namespace of an object created in one that does not exist', async () => {
    const ns = uniqueName('auto');
    await env.ok(['create', 'configmap', 'c', '--from-literal=k=v', '-n', ns]);
    expect((await env.ok(['get', 'namespace', ns, '-o', 'jsonpath={.status.phase}'])).stdout).toBe('Active');
    expect((await env.ok(['get', 'configmap', 'c', '-n', ns, '-o', 'jsonpath={.data.k}'])).stdout).toBe('v');
    const managers = (await env.ok(['get', 'namespace', ns, '-o', 'jsonpath={.metadata.managedFields[*].manager}']))
      .stdout;
    expect(managers).toBe('svc-apiserver');
  });

  it('creates nothing for a dry run, which then fails as NamespaceLifecycle says', async () => {
    const ns = uniqueName('dry');
    const r = await env.run(['create', 'configmap', 'c', '-n', ns, '--dry-run=server']);
    expect(r.stderr.trim()).toBe(`error: failed to create configmap: namespaces "${ns}" not found`);
    expect((await env.server.client.get(`/api/v1/namespaces/${ns}`)).status).toBe(404);
  });
});

describe('NamespaceExists', () => {
  let plain: TestApiServer;
  let exists: KubectlEnv;
  beforeAll(async () => {
    plain = await startTestApiServer({ etcd });
    // The same storage: objects the plain server leaves behind are seen by this one.
    exists = await startKubectlEnv({
      etcd,
      args: ['--store-prefix', plain.storePrefix, '--enable-admission-plugins=NamespaceExists,AlwaysAdmit'],
    });
  });
  afterAll(async () => {
    await exists.stop();
    await plain.stop();
  });

  /** A ConfigMap left behind in a namespace that is gone (no namespace controller runs here). */
  async function orphan(): Promise<{ ns: string; name: string }> {
    const c = plain.client;
    const ns = await createNamespace(c, 'gone');
    const name = uniqueName('cm');
    expectCode(await c.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name }, data: { k: 'v' } }), 201);
    expectCode(await c.delete(`/api/v1/namespaces/${ns}`), 200);
    const finalize = { metadata: { name: ns }, spec: { finalizers: [] } };
    expectCode(await c.put(`/api/v1/namespaces/${ns}/finalize`, finalize), 200);
    expect((await c.get(`/api/v1/namespaces/${ns}`)).status).toBe(404);
    return { ns, name };
  }

  it('refuses updates and deletes of objects in a namespace that is gone', async () => {
    const { ns, name } = await orphan();
    for (const args of [
      ['label', 'configmap', name, 'x=y', '-n', ns],
      ['delete', 'configmap', name, '-n', ns],
    ]) {
      const r = await exists.run(args);
      expect(r.stderr.trim()).toBe(`Error from server (NotFound): namespaces "${ns}" not found`);
    }
    const r = await exists.run(['create', 'configmap', 'new', '-n', ns]);
    expect(r.stderr.trim()).toBe(`error: failed to create configmap: namespaces "${ns}" not found`);
    // Without the plugin, NamespaceLifecycle refuses only creates.
    const c = plain.client;
    expectCode(
      await c.patch(
        `/api/v1/namespaces/${ns}/configmaps/${name}`,
        { data: { k: 'w' } },
        'application/merge-patch+json',
      ),
      200,
    );
    expectCode(await c.delete(`/api/v1/namespaces/${ns}/configmaps/${name}`), 200);
  });

  it('lets writes in existing namespaces and of cluster-scoped objects through (AlwaysAdmit too)', async () => {
    const ns = await createNamespace(exists.server.client, 'here');
    await exists.ok(['create', 'configmap', 'c', '-n', ns]);
    await exists.ok(['label', 'configmap', 'c', 'x=y', '-n', ns]);
    await exists.ok(['delete', 'configmap', 'c', '-n', ns]);
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: uniqueName('node') } };
    await exists.ok(['create', '-f', await exists.manifest(node)]);
  });
});
