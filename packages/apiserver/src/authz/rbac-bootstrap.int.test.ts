// The default policy across restarts: missing permissions and subjects re-added on start,
// objects annotated autoupdate=false left as they are.
import { startEtcd, startTestApiServer, waitFor, type EtcdHandle, type TestApiServer } from '@svc/testing';

const RBAC = '/apis/rbac.authorization.svc.io/v1';
let etcd: EtcdHandle;
let prefix = '';
const running: TestApiServer[] = [];

async function start(): Promise<TestApiServer> {
  const t = await startTestApiServer({
    etcd,
    args: ['--authorization-mode=RBAC,AlwaysDeny', ...(prefix ? ['--store-prefix', prefix] : [])],
    tokens: ['u-token,u,u-uid'],
  });
  // The first server picks the prefix; later ones share it (the flag given last wins).
  prefix ||= t.storePrefix;
  running.push(t);
  return t;
}

beforeAll(async () => {
  etcd = await startEtcd();
}, 30_000);

afterAll(async () => {
  for (const t of running) await t.stop().catch(() => undefined);
  await etcd?.stop();
});

it('restores changed defaults on restart unless annotated autoupdate=false', async () => {
  let t = await start();
  const get = async (
    path: string,
  ): Promise<Record<string, unknown> & { metadata: { annotations: Record<string, string> } }> =>
    (await t.client.get(`${RBAC}/${path}`)).json();
  const put = async (path: string, o: object): Promise<void> => {
    expect((await t.client.put(`${RBAC}/${path}`, o)).status).toBe(200);
  };

  // Strip system:basic-user's rules and system:discovery's subjects (autoupdate stays on)...
  await put('clusterroles/system:basic-user', { ...(await get('clusterroles/system:basic-user')), rules: [] });
  await put('clusterrolebindings/system:discovery', {
    ...(await get('clusterrolebindings/system:discovery')),
    subjects: [],
  });
  // ...and change system:public-info-viewer with autoupdate off.
  const piv = await get('clusterroles/system:public-info-viewer');
  await put('clusterroles/system:public-info-viewer', {
    ...piv,
    metadata: {
      ...piv.metadata,
      annotations: { ...piv.metadata.annotations, 'rbac.authorization.svc.io/autoupdate': 'false' },
    },
    rules: [{ verbs: ['get'], nonResourceURLs: ['/version'] }],
  });
  // Deleted defaults come back too.
  expect((await t.client.delete(`${RBAC}/clusterroles/system:monitoring`)).status).toBe(200);
  await t.stop();
  running.pop();

  t = await start();
  const basic = await get('clusterroles/system:basic-user');
  expect(basic.rules).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ resources: expect.arrayContaining(['selfsubjectaccessreviews']) }),
    ]),
  );
  expect((await get('clusterrolebindings/system:discovery')).subjects).toEqual([
    { kind: 'Group', apiGroup: 'rbac.authorization.svc.io', name: 'system:authenticated' },
  ]);
  expect((await get('clusterroles/system:public-info-viewer')).rules).toEqual([
    { verbs: ['get'], nonResourceURLs: ['/version'] },
  ]);
  expect((await t.client.get(`${RBAC}/clusterroles/system:monitoring`)).status).toBe(200);

  // RBAC,AlwaysDeny: what RBAC does not allow is denied, and the reviews say so. The
  // authorizer reads bindings through its informer, which sees the restored system:discovery
  // subjects when their watch event arrives (after /readyz, as in Kubernetes): wait for it.
  const client = t.client.withToken('u-token');
  await waitFor('system:discovery restored in the authorizer', async () => (await client.get('/api')).status === 200, {
    timeoutMs: 10_000,
    intervalMs: 50,
  });
  expect((await client.get('/api/v1/namespaces')).status).toBe(403);
  const anon = t.client.withToken(undefined);
  expect((await anon.get('/version')).status).toBe(200);
  expect((await anon.get('/healthz')).status).toBe(403);
  const r = await client.post('/apis/authorization.svc.io/v1/selfsubjectaccessreviews', {
    apiVersion: 'authorization.svc.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: { resourceAttributes: { verb: 'list', resource: 'pods' } },
  });
  expect(r.json()).toMatchObject({ status: { allowed: false, denied: true, reason: 'Everything is forbidden.' } });
}, 90_000);
