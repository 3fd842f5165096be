import { ResourceClient } from '@svc/client';
import { uniqueName, waitFor } from '@svc/testing';
import type { ApiObject, Namespace } from '@svc/api';
import { withControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';

const env = withControllerManager(['--controllers=namespace']);
// A namespace is gone after passes over every namespaced resource (a list and a delete of
// each, through the controller manager's rate-limited client): the held-content test takes
// ~7.5 s on an idle machine; two of the three missed their former 15 s in a loaded clean-clone run.
const NAMESPACE_GONE_MS = 45_000;

describe('namespace-controller', () => {
  const namespaces = () => new ResourceClient<Namespace>(env.api, R.namespaces());
  const gone = async (path: string) => (await env.api.request('GET', path)).status === 404;

  async function namespaceWithContent(): Promise<string> {
    const ns = uniqueName('nsc');
    await namespaces().create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const cms = new ResourceClient(env.api, R.configMaps()).namespace(ns);
    for (let i = 0; i < 3; i++)
      await cms.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${i}` },
        data: { i: String(i) },
      } as ApiObject);
    await new ResourceClient(env.api, R.secrets())
      .namespace(ns)
      .create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: {} } as ApiObject);
    await new ResourceClient(env.api, R.leases())
      .namespace(ns)
      .create({ apiVersion: 'coordination.svc.io/v1', kind: 'Lease', metadata: { name: 'l' }, spec: {} } as ApiObject);
    return ns;
  }

  it('deletes everything in a terminating namespace, then the namespace itself', async () => {
    const ns = await namespaceWithContent();
    await namespaces().delete(ns);
    await waitFor('the namespace to disappear', async () => gone(`/api/v1/namespaces/${ns}`), {
      timeoutMs: NAMESPACE_GONE_MS,
    });
    const leftovers = await env.api.request('GET', `/api/v1/namespaces/${ns}/configmaps`);
    expect(leftovers.json<{ items: unknown[] }>().items).toEqual([]);
    expect(
      (await env.api.request('GET', `/apis/coordination.svc.io/v1/namespaces/${ns}/leases`)).json<{
        items: unknown[];
      }>().items,
    ).toEqual([]);
  });

  it('reports remaining content with a finalizer in the status conditions and waits for it', async () => {
    const ns = await namespaceWithContent();
    const cms = new ResourceClient(env.api, R.configMaps()).namespace(ns);
    await cms.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'held', finalizers: ['example.com/hold'] },
    } as ApiObject);
    await namespaces().delete(ns);
    const status = await waitFor('the remaining-content conditions', async () => {
      const s = (await namespaces().get(ns)).status ?? {};
      const remaining = s.conditions?.find((c) => c.type === 'NamespaceContentRemaining');
      return remaining?.status === 'True' ? s : undefined;
    });
    expect(status.phase).toBe('Terminating');
    expect(status.conditions?.find((c) => c.type === 'NamespaceContentRemaining')?.message).toMatch(
      /configmaps has 1 resource instances/,
    );
    expect(status.conditions?.find((c) => c.type === 'NamespaceFinalizersRemaining')).toMatchObject({
      status: 'True',
      reason: 'SomeFinalizersRemain',
    });
    expect(status.conditions?.find((c) => c.type === 'NamespaceDeletionDiscoveryFailure')).toMatchObject({
      status: 'False',
      reason: 'ResourcesDiscovered',
    });
    // The held object is the only thing left; releasing it lets the namespace go.
    expect((await cms.list()).items.map((c) => c.metadata.name)).toEqual(['held']);
    const held = await cms.get('held');
    await cms.update({ ...held, metadata: { ...held.metadata, finalizers: [] } });
    await waitFor('the namespace to disappear', async () => gone(`/api/v1/namespaces/${ns}`), {
      timeoutMs: NAMESPACE_GONE_MS,
    });
  });

  it('leaves active namespaces and their content alone', async () => {
    const ns = await namespaceWithContent();
    const other = await namespaceWithContent();
    await namespaces().delete(other);
    await waitFor('the other namespace to disappear', async () => gone(`/api/v1/namespaces/${other}`), {
      timeoutMs: NAMESPACE_GONE_MS,
    });
    expect((await new ResourceClient(env.api, R.configMaps()).namespace(ns).list()).items).toHaveLength(3);
  });
});
