// The official JavaScript client, @kubernetes/client-node, against a control plane started with
// --naming=kubernetes: it reads the harness's svcconfig as a kubeconfig, then creates, gets,
// lists and merge-patches a custom object (CustomObjectsApi) and lists namespaces (CoreV1Api).
import * as k8s from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane } from '../control-plane.js';
import { uniqueName } from '../api-assertions.js';
import { crdManifest } from '../crd-manifest.js';

interface Widget {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; uid?: string };
  spec: { color: string; size?: number };
}

const GROUP = `${uniqueName('cn')}.example.com`;
const crd = crdManifest({
  group: GROUP,
  plural: 'widgets',
  kind: 'Widget',
  versions: [
    {
      name: 'v1',
      schema: {
        type: 'object',
        properties: {
          spec: { type: 'object', properties: { color: { type: 'string' }, size: { type: 'integer' } } },
        },
      },
    },
  ],
  naming: 'kubernetes',
});

let cp: ControlPlane;
let kc: k8s.KubeConfig;
beforeAll(async () => {
  cp = await startControlPlane({ naming: 'kubernetes', crds: [crd] });
  kc = new k8s.KubeConfig();
  kc.loadFromFile(cp.svcconfigPath);
});
afterAll(async () => {
  await cp?.stop();
});

it('loads the svcconfig as a kubeconfig', () => {
  expect(kc.getCurrentCluster()?.server).toBe(cp.url);
  expect(kc.getCurrentUser()?.token).toBe(cp.token);
  expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('default');
});

it('CoreV1Api lists namespaces', async () => {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const list = await core.listNamespace();
  expect(list.items.map((n) => n.metadata?.name)).toEqual(
    expect.arrayContaining(['default', 'kube-system', 'kube-public', 'kube-node-lease']),
  );
});

it('CustomObjectsApi creates, gets, lists and merge-patches a custom object', async () => {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const where = { group: GROUP, version: 'v1', namespace: 'default', plural: 'widgets' };
  const body: Widget = {
    apiVersion: `${GROUP}/v1`,
    kind: 'Widget',
    metadata: { name: 'w1' },
    spec: { color: 'red', size: 1 },
  };
  const created = (await api.createNamespacedCustomObject({ ...where, body })) as Widget;
  expect(created.metadata).toMatchObject({ name: 'w1', namespace: 'default' });
  expect(created.metadata.uid).toBeDefined();

  const got = (await api.getNamespacedCustomObject({ ...where, name: 'w1' })) as Widget;
  expect(got.spec).toEqual({ color: 'red', size: 1 });

  const list = (await api.listNamespacedCustomObject(where)) as { kind: string; items: Widget[] };
  expect(list.kind).toBe('WidgetList');
  expect(list.items.map((w) => w.metadata.name)).toEqual(['w1']);

  const patched = (await api.patchNamespacedCustomObject(
    { ...where, name: 'w1', body: { spec: { color: 'blue' } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  )) as Widget;
  expect(patched.spec).toEqual({ color: 'blue', size: 1 });
  expect(Number(patched.metadata.resourceVersion)).toBeGreaterThan(Number(got.metadata.resourceVersion));

  // A refusal comes back as client-node's ApiException carrying the server's code.
  const missing = await api.getNamespacedCustomObject({ ...where, name: 'nope' }).catch((e: unknown) => e);
  expect(missing).toBeInstanceOf(k8s.ApiException);
  expect((missing as k8s.ApiException<unknown>).code).toBe(404);
});
