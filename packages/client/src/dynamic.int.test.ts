// The dynamic client and informers on custom resources, against a real API server with CRDs:
// discovery by kind, typed verbs, scope rules, informers (shared and not), relist on 410.
import { isNotFound, type ApiObject } from '@svc/api';
import {
  createNamespace,
  crdManifest,
  startControlPlane,
  uniqueName,
  waitFor,
  type ControlPlane,
  type CrdManifest,
} from '@svc/testing';
import {
  Informer,
  SharedInformerFactory,
  discoverResource,
  dynamicInformer,
  dynamicResource,
  listWatcherFor,
  resourceFor,
  waitForResource,
  type ListerWatcher,
  type ResourceRef,
} from './index.js';

interface Widget extends ApiObject {
  spec: { color: string };
  status?: { phase?: string };
}

const GROUP = `${uniqueName('dyn')}.example.com`;

function crd(o: { plural: string; kind: string; scope: 'Namespaced' | 'Cluster' }): CrdManifest {
  return crdManifest({
    ...o,
    group: GROUP,
    names: { shortNames: [`${o.plural[0]}x`] },
    versions: [
      {
        name: 'v1',
        schema: {
          type: 'object',
          properties: {
            spec: { type: 'object', properties: { color: { type: 'string' } } },
            status: { type: 'object', properties: { phase: { type: 'string' } } },
          },
        },
        subresources: { status: {} },
      },
    ],
    naming: 'kubernetes',
  });
}

const widget = (name: string, ns?: string, color = 'red'): Widget => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'Widget',
  metadata: { name, ...(ns ? { namespace: ns } : {}) },
  spec: { color },
});

let cp: ControlPlane;
let ns: string;
beforeAll(async () => {
  cp = await startControlPlane({
    crds: [
      crd({ plural: 'widgets', kind: 'Widget', scope: 'Namespaced' }),
      crd({ plural: 'gadgets', kind: 'Gadget', scope: 'Cluster' }),
    ],
  });
  ns = await createNamespace(cp.restClient, 'dyn');
});
afterAll(async () => {
  await cp?.stop();
});

const widgetRef: ResourceRef = { group: GROUP, version: 'v1', resource: 'widgets', namespaced: true };

describe('discovery', () => {
  it('resolves a custom kind, its scope and subresources; an unknown one is NotFound', async () => {
    const w = await discoverResource(cp.restClient, { apiVersion: `${GROUP}/v1`, kind: 'Widget' });
    expect(w).toMatchObject({ ...widgetRef, kind: 'Widget', singular: 'widget', shortNames: ['wx'] });
    expect(w.subresources).toEqual(['status']);
    expect(w.verbs).toEqual(expect.arrayContaining(['create', 'get', 'list', 'watch', 'patch', 'delete']));
    const g = await waitForResource(cp.restClient, { apiVersion: `${GROUP}/v1`, resource: 'gx' });
    expect(g).toMatchObject({ resource: 'gadgets', kind: 'Gadget', namespaced: false });
    const none = await discoverResource(cp.restClient, { apiVersion: `${GROUP}/v1`, kind: 'Sprocket' }).catch((e) => e);
    expect(isNotFound(none)).toBe(true);
    const noGroup = await discoverResource(cp.restClient, { apiVersion: 'nothing.example.com/v1', kind: 'X' }).catch(
      (e) => e,
    );
    expect(isNotFound(noGroup)).toBe(true);
    expect(cp.crds.map((r) => r.resource)).toEqual(['widgets', 'gadgets']);
  });
});

describe('a typed ResourceClient of a custom resource', () => {
  it('creates, gets, lists, updates, patches status and deletes, typed by the caller', async () => {
    const widgets = await resourceFor<Widget>(cp.restClient, { apiVersion: `${GROUP}/v1`, kind: 'Widget' });
    const mine = widgets.namespace(ns);
    const created = await mine.create(widget('w1'));
    expect(created.metadata.uid).toBeDefined();
    expect((await mine.get('w1')).spec.color).toBe('red');
    const updated = await mine.update({ ...created, spec: { color: 'blue' } });
    expect(updated.spec.color).toBe('blue');
    const patched = await mine.patch('w1', { status: { phase: 'Ready' } }, { type: 'merge', subresource: 'status' });
    expect(patched.status?.phase).toBe('Ready');
    // A client with no namespace writes a namespaced object to its own namespace.
    await widgets.create(widget('w2', ns));
    expect((await widgets.list()).items.map((w) => w.metadata.name).sort()).toEqual(['w1', 'w2']);
    expect((await mine.list({ fieldSelector: 'metadata.name=w2' })).items).toHaveLength(1);
    await mine.delete('w2');
    expect(await mine.find('w2')).toBeUndefined();
  });

  it('serves a cluster-scoped custom resource, which refuses a namespace', async () => {
    const gadgets = await resourceFor(cp.restClient, { apiVersion: `${GROUP}/v1`, resource: 'gadgets' });
    expect(() => gadgets.namespace(ns)).toThrow(/cluster-scoped/);
    const name = uniqueName('g');
    await gadgets.create({ apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name } });
    expect((await gadgets.get(name)).metadata.namespace).toBeUndefined();
  });

  it('watches from a resourceVersion', async () => {
    const mine = dynamicResource<Widget>(cp.restClient, widgetRef).namespace(ns);
    const rv = (await mine.list()).metadata.resourceVersion;
    const ac = new AbortController();
    const events = await mine.watch({ resourceVersion: rv, signal: ac.signal });
    await mine.create(widget('watched'));
    for await (const ev of events) {
      if (ev.type === 'BOOKMARK') continue;
      expect(ev.type).toBe('ADDED');
      expect((ev.object as Widget).metadata.name).toBe('watched');
      break;
    }
    ac.abort();
  });
});

describe('informers on a custom resource', () => {
  it('a dynamic informer lists, then sees adds, updates and deletes in order, the objects typed', async () => {
    const space = await createNamespace(cp.restClient, 'inf');
    const widgets = dynamicResource<Widget>(cp.restClient, widgetRef).namespace(space);
    await widgets.create(widget('before'));
    const inf = dynamicInformer<Widget>(cp.restClient, widgetRef, { namespace: space });
    const log: string[] = [];
    inf.addEventHandler({
      onAdd: (w) => log.push(`add ${w.metadata.name} ${w.spec.color}`),
      onUpdate: (_, w) => log.push(`update ${w.metadata.name} ${w.spec.color}`),
      onDelete: (w) => log.push(`delete ${w.metadata.name}`),
    });
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    try {
      await inf.waitForSync({ timeoutMs: 10_000 });
      const after = await widgets.create(widget('after'));
      await widgets.update({ ...after, spec: { color: 'green' } });
      await widgets.delete('before');
      await waitFor('the delete', () => log.includes('delete before'));
      expect(log).toEqual(['add before red', 'add after red', 'update after green', 'delete before']);
      expect(inf.store.list().map((w) => w.spec.color)).toEqual(['green']);
    } finally {
      ac.abort();
      await run;
    }
  });

  it('a shared informer factory serves custom resources across namespaces', async () => {
    const f = new SharedInformerFactory(cp.restClient);
    const a = f.informerFor<Widget>(widgetRef);
    expect(f.informerFor<Widget>(widgetRef)).toBe(a);
    const ac = new AbortController();
    f.start(ac.signal);
    try {
      await f.waitForCacheSync({ timeoutMs: 10_000 });
      const name = uniqueName('shared');
      await dynamicResource<Widget>(cp.restClient, widgetRef).create(widget(name, ns));
      await waitFor('the shared informer to see it', () => a.store.get(`${ns}/${name}`));
    } finally {
      ac.abort();
      await f.stopped();
    }
  });

  it('relists after a 410 (its watch from a compacted resourceVersion), then keeps watching', async () => {
    const space = await createNamespace(cp.restClient, 'gone');
    const widgets = dynamicResource<Widget>(cp.restClient, widgetRef).namespace(space);
    await widgets.create(widget('before'));
    const etcd = cp.server.etcd.endpoints[0] ?? '';
    const post = async (path: string, body: object): Promise<{ header: { revision: string } }> =>
      (await (await fetch(`${etcd}${path}`, { method: 'POST', body: JSON.stringify(body) })).json()) as {
        header: { revision: string };
      };
    const { header } = await post('/v3/kv/range', { key: Buffer.from('/nothing').toString('base64') });
    await post('/v3/kv/compaction', { revision: header.revision, physical: true });
    // The same list+watch a dynamic informer uses; its first watch starts from revision 1, long compacted.
    const base = listWatcherFor<Widget>(cp.restClient, widgetRef, { namespace: space });
    let watches = 0;
    const lw: ListerWatcher<Widget> = {
      list: (o) => base.list(o),
      watch: (o) => base.watch(++watches === 1 ? { ...o, resourceVersion: '1' } : o),
    };
    const inf = new Informer<Widget>(lw, { backoffInitialMs: 50 });
    const log: string[] = [];
    inf.addEventHandler({ onAdd: (w) => log.push(`add ${w.metadata.name}`) });
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    try {
      await waitFor('a relist', () => inf.reflector.listCount >= 2);
      await widgets.create(widget('after'));
      await waitFor('the object created after the relist', () => inf.store.get(`${space}/after`));
      expect(log).toEqual(['add before', 'add after']);
    } finally {
      ac.abort();
      await run;
    }
  });
});
