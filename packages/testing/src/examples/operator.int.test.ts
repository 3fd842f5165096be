// The operator test of docs/testing-controllers.md (keep the two the same): a real control
// plane with a CRD, a dynamic informer and a reconcile that writes status.phase.
import { join } from 'node:path';
import type { ApiObject } from '@svc/api';
import { Controller, dynamicInformer, splitKey } from '@svc/client';
import { startControlPlane, waitFor, type ControlPlane } from '@svc/testing';

interface Widget extends ApiObject {
  spec: { color: string };
  status?: { phase?: string };
}
const WIDGETS = { group: 'example.com', version: 'v1', resource: 'widgets', namespaced: true };

let cp: ControlPlane;
beforeAll(async () => {
  cp = await startControlPlane({ crds: [join(__dirname, 'widget-crd.yaml')] });
});
afterAll(() => cp.stop());

it('paints every Widget: status.phase follows spec.color', async () => {
  const widgets = cp.resource<Widget>(WIDGETS);
  const informer = dynamicInformer<Widget>(cp.restClient, WIDGETS);
  const controller = new Controller({
    name: 'widget-painter',
    reconcile: async (key) => {
      const w = informer.store.get(key); // the cache is frozen: patch, never mutate
      const phase = w && `Painted ${w.spec.color}`;
      if (!w || w.status?.phase === phase) return;
      const { namespace = '', name } = splitKey(key);
      await widgets.namespace(namespace).patch(name, { status: { phase } }, { type: 'merge', subresource: 'status' });
    },
  });
  controller.watch(informer);
  const stop = new AbortController();
  const running = Promise.all([informer.run(stop.signal), controller.run(stop.signal)]);

  const mine = widgets.namespace('default');
  await mine.create({
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w1' },
    spec: { color: 'blue' },
  });
  await waitFor('the Widget painted', async () => (await mine.get('w1')).status?.phase === 'Painted blue');
  await mine.patch('w1', { spec: { color: 'green' } }, { type: 'merge' });
  await waitFor('the Widget repainted', async () => (await mine.get('w1')).status?.phase === 'Painted green');

  stop.abort();
  await running;
});
