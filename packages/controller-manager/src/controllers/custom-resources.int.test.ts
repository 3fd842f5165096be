// The garbage collector and the namespace controller with custom resources of a CRD created
// while the controller manager runs (no restart): owner references from a custom resource to
// a ConfigMap and back are followed, and a deleted namespace takes its custom resources with it.
import type { ApiObject, OwnerReference } from '@svc/api';
import { ResourceClient, dynamicResource, waitForResource } from '@svc/client';
import { createNamespace, crdClient, crdManifest, waitFor } from '@svc/testing';
import { refTo, withControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';

const env = withControllerManager(['--controllers=garbagecollector,namespace']);
const GROUP = 'gc.example.com';

beforeAll(async () => {
  await crdClient(env.api).create(
    crdManifest({
      group: GROUP,
      plural: 'things',
      kind: 'Thing',
      versions: [
        {
          name: 'v1',
          schema: { type: 'object', properties: { spec: { type: 'object', properties: { n: { type: 'integer' } } } } },
        },
      ],
    }),
  );
  await waitForResource(env.api, { apiVersion: `${GROUP}/v1`, kind: 'Thing' });
});

describe('custom resources in the controller manager', () => {
  const things = (ns: string): ResourceClient =>
    dynamicResource(env.api, { group: GROUP, version: 'v1', resource: 'things', namespaced: true }).namespace(ns);
  const configMaps = (ns: string): ResourceClient => new ResourceClient(env.api, R.configMaps()).namespace(ns);
  const gone = async (c: ResourceClient, name: string): Promise<boolean> => (await c.find(name)) === undefined;
  const thing = (name: string, owners: OwnerReference[] = []): ApiObject => ({
    apiVersion: `${GROUP}/v1`,
    kind: 'Thing',
    metadata: { name, ownerReferences: owners },
    spec: { n: 1 },
  });
  const cm = (name: string, owners: OwnerReference[] = []): ApiObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, ownerReferences: owners },
  });

  const namespace = (): Promise<string> => createNamespace(env.api, 'crgc');

  it('the garbage collector follows owner references between custom and built-in objects, both ways', async () => {
    const ns = await namespace();
    const ownerThing = await things(ns).create(thing('owner-thing'));
    await configMaps(ns).create(cm('dep-cm', [refTo(ownerThing)]));
    const ownerCm = await configMaps(ns).create(cm('owner-cm'));
    await things(ns).create(thing('dep-thing', [refTo(ownerCm)]));
    await things(ns).delete('owner-thing');
    await configMaps(ns).delete('owner-cm');
    await waitFor('the ConfigMap owned by a custom resource to be collected', () => gone(configMaps(ns), 'dep-cm'), {
      timeoutMs: 20_000,
    });
    await waitFor('the custom resource owned by a ConfigMap to be collected', () => gone(things(ns), 'dep-thing'), {
      timeoutMs: 20_000,
    });
  });

  it('the namespace controller deletes a namespace custom resources and all', async () => {
    const ns = await namespace();
    for (const n of ['a', 'b']) await things(ns).create(thing(n));
    await new ResourceClient(env.api, R.namespaces()).delete(ns);
    await waitFor(
      'the namespace to go',
      async () => (await env.api.request('GET', `/api/v1/namespaces/${ns}`)).status === 404,
      {
        timeoutMs: 20_000,
      },
    );
    const left = await env.api.request('GET', `/apis/${GROUP}/v1/namespaces/${ns}/things`);
    expect(left.json<{ items: unknown[] }>().items).toEqual([]);
  });
});
