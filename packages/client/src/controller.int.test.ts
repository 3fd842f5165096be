import { uniqueName, waitFor } from '@svc/testing';
import type { ApiObject } from '@svc/api';
import { Controller, Informer, type RestClient, listWatcherFor, splitKey } from './index.js';
import { withServerAndClient } from './server-testing.js';

// A controller copying a ConfigMap's `app` label into its `copied-app` annotation, end to end.
const env = withServerAndClient();
let c: RestClient;
beforeAll(() => {
  c = env.client;
});

const cmPath = (ns: string, name = ''): string => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;

async function get(ns: string, name: string): Promise<ApiObject | undefined> {
  const r = await c.request('GET', cmPath(ns, name));
  return r.status === 200 ? r.json<ApiObject>() : undefined;
}

it('reconciles ConfigMaps from an informer: copies a label, follows updates, retries failures with back-off', async () => {
  const ns = uniqueName('ctl');
  expect(
    (
      await c.request('POST', '/api/v1/namespaces', {
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
      })
    ).status,
  ).toBe(201);
  expect(
    (await c.request('POST', cmPath(ns), { body: { metadata: { name: 'pre', labels: { app: 'one' } } } })).status,
  ).toBe(201);

  const inf = new Informer(listWatcherFor(c, { group: '', version: 'v1', resource: 'configmaps' }, { namespace: ns }));
  const failures = new Map<string, number>();
  let concurrentSameKey = false;
  const active = new Set<string>();
  const ctl = new Controller({
    name: 'label-copier',
    workers: 3,
    reconcile: async (key, signal) => {
      if (active.has(key)) concurrentSameKey = true;
      active.add(key);
      try {
        const cached = inf.store.get(key);
        if (!cached) return;
        const { name = '' } = splitKey(key);
        if (name.startsWith('flaky') && (failures.get(key) ?? 0) < 2) {
          failures.set(key, (failures.get(key) ?? 0) + 1);
          throw new Error('transient');
        }
        const want = cached.metadata.labels?.app;
        if (want === undefined || cached.metadata.annotations?.['copied-app'] === want) return;
        // Cached objects are frozen: build a changed copy.
        const next = {
          ...cached,
          metadata: { ...cached.metadata, annotations: { ...cached.metadata.annotations, 'copied-app': want } },
        };
        const r = await c.request('PUT', cmPath(ns, name), { body: next, signal });
        if (r.status === 409) return { requeueAfter: 10 };
        if (r.status !== 200) throw new Error(`update: ${r.status}`);
        return undefined;
      } finally {
        active.delete(key);
      }
    },
  });
  ctl.watch(inf);
  const ac = new AbortController();
  const informing = inf.run(ac.signal);
  const running = ctl.run(ac.signal);
  try {
    await waitFor('pre annotated', async () => (await get(ns, 'pre'))?.metadata.annotations?.['copied-app'] === 'one');
    expect(
      (await c.request('POST', cmPath(ns), { body: { metadata: { name: 'new', labels: { app: 'two' } } } })).status,
    ).toBe(201);
    await waitFor('new annotated', async () => (await get(ns, 'new'))?.metadata.annotations?.['copied-app'] === 'two');
    const cur = await get(ns, 'new');
    expect(
      (
        await c.request('PUT', cmPath(ns, 'new'), {
          body: { ...cur, metadata: { ...cur?.metadata, labels: { app: 'three' } } },
        })
      ).status,
    ).toBe(200);
    await waitFor(
      'new re-annotated',
      async () => (await get(ns, 'new'))?.metadata.annotations?.['copied-app'] === 'three',
    );
    expect(
      (await c.request('POST', cmPath(ns), { body: { metadata: { name: 'flaky', labels: { app: 'four' } } } })).status,
    ).toBe(201);
    await waitFor(
      'flaky annotated after retries',
      async () => (await get(ns, 'flaky'))?.metadata.annotations?.['copied-app'] === 'four',
    );
    expect(failures.get(`${ns}/flaky`)).toBe(2);
    // Success forgets the back-off (once the controller has its PUT's answer, which may come
    // after this test's GET already saw the annotation).
    await waitFor('the back-off forgotten', () => ctl.queue.numRequeues(`${ns}/flaky`) === 0);
    expect(concurrentSameKey).toBe(false);
  } finally {
    ac.abort();
    await running;
    await informing;
  }
});
