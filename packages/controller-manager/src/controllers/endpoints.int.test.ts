// endpoints-controller and endpointslice-controller against a real API server and etcd (issue 19):
// addresses of the pods a Service selects, ready and not ready, ports resolved by name and
// number, nodeName and targetRef, the last-change-trigger-time annotation; following pods as they
// turn ready, terminate and go; several slices under --max-endpoints-per-slice=2; the headless
// label; everything removed with the Service; the API server's own svc Service left to its
// reconciler. No node agent runs: pods get their IP and readiness through `/status` here.
import {
  apiServiceName,
  endpointSliceLabel,
  endpointsControllerKey,
  group,
  type EndpointSlice,
  type Endpoints,
  type Pod,
} from '@svc/api';
import { ResourceClient, type RestClient } from '@svc/client';
import { waitFor } from '@svc/testing';
import { withControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';
import { createNamespace, kubectlIn, pods } from './workload-testing.js';
import { nowTime } from './workload-util.js';

const env = withControllerManager(['--controllers=endpoint,endpointslice', '--max-endpoints-per-slice=2']);

const services = (api: RestClient, ns: string): ResourceClient => new ResourceClient(api, R.services()).namespace(ns);
const endpoints = (api: RestClient, ns: string): ResourceClient<Endpoints> =>
  new ResourceClient<Endpoints>(api, R.endpoints()).namespace(ns);
const slicesClient = (api: RestClient, ns: string): ResourceClient<EndpointSlice> =>
  new ResourceClient<EndpointSlice>(api, R.endpointSlices()).namespace(ns);

async function slicesOf(ns: string, svc: string): Promise<EndpointSlice[]> {
  const l = await slicesClient(env.api, ns).list({ labelSelector: `${endpointSliceLabel('service-name')}=${svc}` });
  return l.items;
}

async function pod(
  ns: string,
  o: { name: string; app: string; ip?: string; ready?: boolean; node?: string },
): Promise<Pod> {
  const created = await pods(env.api, ns).create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: o.name, labels: { app: o.app } },
    spec: {
      nodeName: o.node ?? 'node-a',
      containers: [{ name: 'c', image: 'busybox', ports: [{ name: 'web', containerPort: 8080 }] }],
    },
  } as Pod);
  if (o.ip) await setStatus(created, { ip: o.ip, ready: o.ready ?? false });
  return created;
}

async function setStatus(p: Pod, o: { ip: string; ready: boolean }): Promise<void> {
  await pods(env.api, p.metadata.namespace ?? '').patch(
    p.metadata.name ?? '',
    {
      status: {
        phase: 'Running',
        podIP: o.ip,
        podIPs: [{ ip: o.ip }],
        conditions: [{ type: 'Ready', status: o.ready ? 'True' : 'False', lastTransitionTime: nowTime() }],
      },
    },
    { type: 'merge', subresource: 'status' },
  );
}

const ipsOf = (addrs: Array<{ ip: string }> | undefined): string[] => (addrs ?? []).map((a) => a.ip);

describe('endpoints and endpointslice controllers', () => {
  it('list ready and not-ready pods with ports resolved by name, nodeName, targetRef and the trigger time', async () => {
    const ns = await createNamespace(env.api, 'ep');
    const p1 = await pod(ns, { name: 'web-1', app: 'web', ip: '10.244.0.11', ready: true, node: 'node-a' });
    await pod(ns, { name: 'web-2', app: 'web', ip: '10.244.0.12', ready: false, node: 'node-b' });
    await pod(ns, { name: 'web-3', app: 'web' }); // no IP yet: not listed
    await pod(ns, { name: 'other', app: 'other', ip: '10.244.0.99', ready: true });
    await services(env.api, ns).create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', labels: { tier: 'front' } },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'web' }] },
    });
    const ep = await waitFor('the Endpoints', async () => {
      const e = await endpoints(env.api, ns).find('web');
      return e?.subsets?.[0]?.notReadyAddresses ? e : undefined;
    });
    expect(ep.metadata.labels).toEqual({ tier: 'front' });
    expect(ep.metadata.annotations?.[endpointsControllerKey('trigger-time')]).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(ep.subsets).toEqual([
      {
        addresses: [
          {
            ip: '10.244.0.11',
            nodeName: 'node-a',
            targetRef: { kind: 'Pod', namespace: ns, name: 'web-1', uid: p1.metadata.uid },
          },
        ],
        notReadyAddresses: [expect.objectContaining({ ip: '10.244.0.12', nodeName: 'node-b' })],
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    ]);
    const [slice] = await waitFor('the EndpointSlice', async () => {
      const s = await slicesOf(ns, 'web');
      return s.length === 1 && s[0]?.endpoints?.length === 2 ? s : undefined;
    });
    expect(slice?.apiVersion).toBe(`${group('discovery')}/v1`);
    expect(slice?.metadata.name).toMatch(/^web-/);
    expect(slice?.metadata.labels).toEqual({
      tier: 'front',
      [endpointSliceLabel('service-name')]: 'web',
      [endpointSliceLabel('managed-by')]: endpointsControllerKey('slice-manager'),
    });
    expect(slice?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Service', name: 'web', controller: true });
    expect(slice?.addressType).toBe('IPv4');
    expect(slice?.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    expect(slice?.endpoints).toEqual([
      {
        addresses: ['10.244.0.11'],
        conditions: { ready: true, serving: true, terminating: false },
        nodeName: 'node-a',
        targetRef: { kind: 'Pod', namespace: ns, name: 'web-1', uid: p1.metadata.uid },
      },
      expect.objectContaining({
        addresses: ['10.244.0.12'],
        conditions: { ready: false, serving: false, terminating: false },
      }),
    ]);
    // A settled slice is updated in place, not replaced: a label change of the Service keeps its
    // uid (a port set compared by key order once made the controller recreate it on every sync).
    await services(env.api, ns).patch('web', { metadata: { labels: { tier: 'back' } } }, { type: 'merge' });
    const relabelled = await waitFor('the slice relabelled', async () => {
      const s = await slicesOf(ns, 'web');
      return s.length === 1 && s[0]?.metadata.labels?.tier === 'back' ? s : undefined;
    });
    expect(relabelled[0]?.metadata.uid).toBe(slice?.metadata.uid);
  });

  it('follow pods turning ready, terminating and going; split slices past --max-endpoints-per-slice', async () => {
    const ns = await createNamespace(env.api, 'ep');
    await services(env.api, ns).create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'api' },
      spec: { selector: { app: 'api' }, ports: [{ port: 80, targetPort: 9090 }] },
    });
    const a = await pod(ns, { name: 'a', app: 'api', ip: '10.244.1.1', ready: false });
    await pod(ns, { name: 'b', app: 'api', ip: '10.244.1.2', ready: true });
    await pod(ns, { name: 'c', app: 'api', ip: '10.244.1.3', ready: true });
    await setStatus(a, { ip: '10.244.1.1', ready: true });
    await waitFor('three ready addresses on port 9090', async () => {
      const e = await endpoints(env.api, ns).find('api');
      const s = e?.subsets?.[0];
      return ipsOf(s?.addresses).join() === '10.244.1.1,10.244.1.2,10.244.1.3' && s?.ports?.[0]?.port === 9090;
    });
    await waitFor('two slices of at most 2', async () => {
      const s = await slicesOf(ns, 'api');
      const sizes = s.map((x) => x.endpoints?.length ?? 0).sort();
      return sizes.join() === '1,2';
    });
    // A terminating pod (kept by a finalizer) leaves the Endpoints, stays in its slice as terminating.
    await pods(env.api, ns).patch('b', { metadata: { finalizers: ['example.com/hold'] } }, { type: 'merge' });
    await pods(env.api, ns).delete('b', { gracePeriodSeconds: 0 });
    await waitFor('b out of the Endpoints', async () => {
      const e = await endpoints(env.api, ns).find('api');
      return ipsOf(e?.subsets?.[0]?.addresses).join() === '10.244.1.1,10.244.1.3';
    });
    await waitFor('b terminating in its slice', async () => {
      const all = (await slicesOf(ns, 'api')).flatMap((s) => s.endpoints ?? []);
      const b = all.find((e) => e.addresses[0] === '10.244.1.2');
      return b?.conditions?.terminating === true && b.conditions.ready === false;
    });
    await pods(env.api, ns).patch('b', { metadata: { finalizers: null } }, { type: 'merge' });
    await pods(env.api, ns).delete('c', { gracePeriodSeconds: 0 });
    await waitFor('one slice with a', async () => {
      const s = await slicesOf(ns, 'api');
      return s.length === 1 && s[0]?.endpoints?.map((e) => e.addresses[0]).join() === '10.244.1.1';
    });
    // No endpoints left: one empty placeholder slice stays, as Kubernetes keeps one.
    await pods(env.api, ns).delete('a', { gracePeriodSeconds: 0 });
    const [placeholder] = await waitFor('the placeholder slice', async () => {
      const s = await slicesOf(ns, 'api');
      return s.length === 1 && (s[0]?.endpoints ?? []).length === 0 ? s : undefined;
    });
    expect(placeholder?.ports ?? []).toEqual([]);
    expect(placeholder?.addressType).toBe('IPv4');
    await services(env.api, ns).delete('api');
    await waitFor('Endpoints and slices gone with the Service', async () => {
      const e = await endpoints(env.api, ns).find('api');
      return !e && (await slicesOf(ns, 'api')).length === 0;
    });
  });

  it('mark a headless Service, leave the svc Service to the API server', async () => {
    const ns = await createNamespace(env.api, 'ep');
    await services(env.api, ns).create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'db' },
      spec: { clusterIP: 'None', selector: { app: 'db' }, ports: [{ port: 5432 }] },
    });
    const ep = await waitFor('the headless Endpoints', () => endpoints(env.api, ns).find('db'));
    expect(ep.metadata.labels).toEqual({ [endpointsControllerKey('headless')]: '' });
    expect(ep.subsets ?? []).toEqual([]);
    await pod(ns, { name: 'db-0', app: 'db', ip: '10.244.2.1', ready: true });
    const [slice] = await waitFor('the headless slice', async () => {
      const s = await slicesOf(ns, 'db');
      return s.length === 1 && s[0]?.endpoints?.length === 1 ? s : undefined;
    });
    expect(slice?.metadata.labels?.[endpointsControllerKey('headless')]).toBe('');
    const api = await waitFor('the svc Service endpoints', () => endpoints(env.api, 'default').find(apiServiceName()));
    expect(api.subsets?.[0]?.addresses?.length).toBeGreaterThan(0);
    const own = await slicesOf('default', apiServiceName());
    expect(
      own.every(
        (s) => s.metadata.labels?.[endpointSliceLabel('managed-by')] !== endpointsControllerKey('slice-manager'),
      ),
    ).toBe(true);
  });

  it('stock kubectl: expose a pod, get its ClusterIP and its endpoints', async () => {
    const ns = await createNamespace(env.api, 'ep');
    await pod(ns, { name: 'hello', app: 'hello', ip: '10.244.3.1', ready: true });
    const k = await kubectlIn(env.server.svcconfigPath);
    try {
      await k.ok(['-n', ns, 'expose', 'pod', 'hello', '--port', '80', '--target-port', '8080']);
      const ip = (await k.ok(['-n', ns, 'get', 'service', 'hello', '-o', 'jsonpath={.spec.clusterIP}'])).stdout;
      expect(ip).toMatch(/^10\.0\.0\.\d+$/);
      const out = await waitFor('kubectl get endpoints lists the pod', async () => {
        const r = await k.ok(['-n', ns, 'get', 'endpoints', 'hello']);
        return r.stdout.includes('10.244.3.1:8080') ? r.stdout : undefined;
      });
      expect(out.split('\n')[0]).toMatch(/^NAME\s+ENDPOINTS\s+AGE$/);
    } finally {
      await k.stop();
    }
  });
});
