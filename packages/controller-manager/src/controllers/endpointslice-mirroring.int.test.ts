// endpointslice-mirroring-controller against a real API server and etcd (issue 19): hand-written
// Endpoints of a Service without a selector mirrored into EndpointSlices (one per address family
// and port set, ready and not-ready addresses, labels and annotations but the dropped ones, a
// controller reference to the Endpoints), updated in place, limited by
// --mirroring-max-endpoints-per-subset=3 with a Warning event, removed on the skip-mirror label
// and when the Endpoints or the Service goes; Endpoints without a Service are not mirrored; stock
// kubectl lists the slices; bad --mirroring-* values exit 2.
import { resolve } from 'node:path';
import {
  endpointSliceLabel,
  endpointsControllerKey,
  naming,
  type EndpointSlice,
  type Endpoints,
  type SliceEndpoint,
} from '@svc/api';
import { ResourceClient, type RestClient } from '@svc/client';
import { runCommand, waitFor } from '@svc/testing';
import { withControllerManager } from '../cm-testing.js';
import { R } from '../resources.js';
import { createNamespace, eventsAbout, kubectlIn } from './workload-testing.js';

const BIN = resolve(__dirname, '../../dist/bin/svc-controller-manager.js');
const env = withControllerManager(['--controllers=endpointslicemirroring', '--mirroring-max-endpoints-per-subset=3']);
const MANAGER = (): string => endpointsControllerKey('mirroring-manager');

const services = (api: RestClient, ns: string): ResourceClient => new ResourceClient(api, R.services()).namespace(ns);
const endpoints = (api: RestClient, ns: string): ResourceClient<Endpoints> =>
  new ResourceClient<Endpoints>(api, R.endpoints()).namespace(ns);
const slicesApi = (api: RestClient, ns: string): ResourceClient<EndpointSlice> =>
  new ResourceClient<EndpointSlice>(api, R.endpointSlices()).namespace(ns);

async function slicesOf(ns: string, svc: string): Promise<EndpointSlice[]> {
  const l = await slicesApi(env.api, ns).list({ labelSelector: `${endpointSliceLabel('service-name')}=${svc}` });
  return l.items.sort((a, b) => a.addressType.localeCompare(b.addressType));
}

/** Waits until the slices of `svc` satisfy `ok`; returns them (sorted by address type). */
const slicesWhen = (
  what: string,
  where: { ns: string; svc: string },
  ok: (s: EndpointSlice[]) => boolean,
): Promise<EndpointSlice[]> =>
  waitFor(
    what,
    async () => {
      const s = await slicesOf(where.ns, where.svc);
      return ok(s) ? s : undefined;
    },
    { timeoutMs: 30_000 },
  );

const selectorless = (api: RestClient, ns: string, name: string): Promise<unknown> =>
  services(api, ns).create({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: { ports: [{ name: 'http', port: 80 }] },
  });

const ips = (s: EndpointSlice | undefined): string[] => (s?.endpoints ?? []).flatMap((e: SliceEndpoint) => e.addresses);

describe('endpointslice-mirroring-controller', () => {
  it('mirrors hand-written Endpoints per address family, follows updates in place, and kubectl lists them', async () => {
    const ns = await createNamespace(env.api, 'mirror');
    await selectorless(env.api, ns, 'ext');
    await endpoints(env.api, ns).create({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: {
        name: 'ext',
        labels: { team: 'db' },
        annotations: {
          note: 'kept',
          [naming().lastAppliedAnnotation]: '{}',
          [endpointsControllerKey('trigger-time')]: '2026-01-01T00:00:00Z',
        },
      },
      subsets: [
        {
          addresses: [
            { ip: '192.0.2.10', nodeName: 'node-a', hostname: 'db-0' },
            { ip: '192.0.2.11', targetRef: { kind: 'Pod', namespace: ns, name: 'db-1' } },
          ],
          notReadyAddresses: [{ ip: '192.0.2.12' }],
          ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }],
        },
        { addresses: [{ ip: '2001:db8::1' }], ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }] },
      ],
    });
    const [v4, v6] = await slicesWhen('an IPv4 and an IPv6 slice', { ns, svc: 'ext' }, (s) => s.length === 2);
    expect(v4?.addressType).toBe('IPv4');
    expect(v6?.addressType).toBe('IPv6');
    const ep = await endpoints(env.api, ns).get('ext');
    expect(v4?.metadata.name).toMatch(/^ext-/);
    expect(v4?.metadata.labels).toEqual({
      team: 'db',
      [endpointSliceLabel('service-name')]: 'ext',
      [endpointSliceLabel('managed-by')]: MANAGER(),
    });
    expect(v4?.metadata.annotations).toEqual({ note: 'kept' });
    expect(v4?.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'v1',
        kind: 'Endpoints',
        name: 'ext',
        uid: ep.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(v4?.ports).toEqual([{ name: 'pg', port: 5432, protocol: 'TCP' }]);
    expect(v4?.endpoints).toEqual([
      { addresses: ['192.0.2.10'], conditions: { ready: true }, nodeName: 'node-a', hostname: 'db-0' },
      {
        addresses: ['192.0.2.11'],
        conditions: { ready: true },
        targetRef: { kind: 'Pod', namespace: ns, name: 'db-1' },
      },
      { addresses: ['192.0.2.12'], conditions: { ready: false } },
    ]);
    expect(v6?.endpoints).toEqual([{ addresses: ['2001:db8::1'], conditions: { ready: true } }]);

    const k = await kubectlIn(env.server.svcconfigPath);
    try {
      const out = await k.ok(['get', 'endpointslices', '-n', ns, '--no-headers']);
      const rows = out.stdout
        .trim()
        .split('\n')
        .map((l) => l.trim().split(/\s+/).slice(0, 4));
      expect(rows).toEqual(
        expect.arrayContaining([
          [v4?.metadata.name, 'IPv4', '5432', '192.0.2.10,192.0.2.11,192.0.2.12'],
          [v6?.metadata.name, 'IPv6', '5432', '2001:db8::1'],
        ]),
      );
    } finally {
      await k.stop();
    }

    // An address goes, another turns ready: the IPv4 slice is updated in place.
    await endpoints(env.api, ns).patch(
      'ext',
      {
        subsets: [
          {
            addresses: [{ ip: '192.0.2.12' }, { ip: '192.0.2.13' }],
            ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }],
          },
          { addresses: [{ ip: '2001:db8::1' }], ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }] },
        ],
      },
      { type: 'merge' },
    );
    const [v4b] = await slicesWhen(
      'the IPv4 slice updated',
      { ns, svc: 'ext' },
      (s) => s.length === 2 && ips(s[0]).join() === '192.0.2.12,192.0.2.13',
    );
    expect(v4b?.metadata.uid).toBe(v4?.metadata.uid);
    expect(v4b?.endpoints.map((e) => e.conditions)).toEqual([{ ready: true }, { ready: true }]);

    // The IPv6 address goes: its slice is deleted.
    await endpoints(env.api, ns).patch(
      'ext',
      { subsets: [{ addresses: [{ ip: '192.0.2.12' }], ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }] }] },
      { type: 'merge' },
    );
    await slicesWhen(
      'the IPv6 slice gone',
      { ns, svc: 'ext' },
      (s) => s.length === 1 && ips(s[0]).join() === '192.0.2.12',
    );

    // The Endpoints go: so do the slices.
    await endpoints(env.api, ns).delete('ext');
    await slicesWhen('no slices', { ns, svc: 'ext' }, (s) => s.length === 0);
  });

  it('skips Endpoints labelled skip-mirror or without a selector-less Service, and drops slices when the Service goes', async () => {
    const ns = await createNamespace(env.api, 'mirror');
    const subsets = [{ addresses: [{ ip: '198.51.100.1' }], ports: [{ port: 443, protocol: 'TCP' as const }] }];
    // No Service at all: nothing mirrored (checked once the other Endpoints below are mirrored).
    await endpoints(env.api, ns).create({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'orphan' }, subsets });
    await selectorless(env.api, ns, 'web');
    await endpoints(env.api, ns).create({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'web', labels: { [endpointSliceLabel('skip-mirror')]: 'true' } },
      subsets,
    });
    await selectorless(env.api, ns, 'api');
    await endpoints(env.api, ns).create({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'api' }, subsets });
    await slicesWhen('the api slice', { ns, svc: 'api' }, (s) => s.length === 1);
    expect(await slicesOf(ns, 'web')).toEqual([]);
    expect(await slicesOf(ns, 'orphan')).toEqual([]);

    // The label comes off: mirrored; back on: removed.
    await endpoints(env.api, ns).patch(
      'web',
      { metadata: { labels: { [endpointSliceLabel('skip-mirror')]: null } } },
      { type: 'merge' },
    );
    await slicesWhen('the web slice', { ns, svc: 'web' }, (s) => s.length === 1);
    await endpoints(env.api, ns).patch(
      'web',
      { metadata: { labels: { [endpointSliceLabel('skip-mirror')]: 'true' } } },
      { type: 'merge' },
    );
    await slicesWhen('the web slice removed', { ns, svc: 'web' }, (s) => s.length === 0);

    // The Service gets a selector (the endpoints controllers' business then): removed.
    await services(env.api, ns).patch('api', { spec: { selector: { app: 'api' } } }, { type: 'merge' });
    await slicesWhen('the api slice removed for the selector', { ns, svc: 'api' }, (s) => s.length === 0);
    await services(env.api, ns).patch('api', { spec: { selector: null } }, { type: 'merge' });
    await slicesWhen('the api slice back', { ns, svc: 'api' }, (s) => s.length === 1);
    // The Service goes: removed, though the Endpoints stay.
    await services(env.api, ns).delete('api');
    await slicesWhen('the api slice removed with its Service', { ns, svc: 'api' }, (s) => s.length === 0);
    expect(await endpoints(env.api, ns).find('api')).toBeDefined();
  });

  it('mirrors at most --mirroring-max-endpoints-per-subset addresses per subset, with a Warning event', async () => {
    const ns = await createNamespace(env.api, 'mirror');
    await selectorless(env.api, ns, 'big');
    await endpoints(env.api, ns).create({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'big' },
      subsets: [
        {
          addresses: [1, 2, 3, 4].map((i) => ({ ip: `203.0.113.${i}` })),
          notReadyAddresses: [{ ip: '203.0.113.5' }],
          ports: [{ port: 8080, protocol: 'TCP' }],
        },
      ],
    });
    const [slice] = await slicesWhen('the big slice', { ns, svc: 'big' }, (s) => s.length === 1);
    expect(ips(slice)).toEqual(['203.0.113.1', '203.0.113.2', '203.0.113.3']);
    await waitFor(
      'the TooManyAddressesToMirror event',
      async () =>
        (await eventsAbout(env.api, ns, { kind: 'Endpoints', name: 'big' })).includes(
          'TooManyAddressesToMirror: A max of 3 addresses can be mirrored to EndpointSlices per Endpoints subset. 2 addresses were skipped',
        ),
      { timeoutMs: 30_000 },
    );
  });

  it('bad --mirroring-* values exit 2 with one line', async () => {
    const tooMany = await runCommand(process.execPath, [BIN, '--mirroring-max-endpoints-per-subset=1001']);
    expect(tooMany.code).toBe(2);
    expect(tooMany.stderr.trim().split('\n')).toEqual([
      'Error: --mirroring-max-endpoints-per-subset must not be more than 1000, but got 1001',
    ]);
    const none = await runCommand(process.execPath, [BIN, '--mirroring-concurrent-service-endpoint-syncs=0']);
    expect(none.code).toBe(2);
    expect(none.stderr.trim().split('\n')).toEqual([
      'Error: --mirroring-concurrent-service-endpoint-syncs must not be less than 1, but got 0',
    ]);
    const period = await runCommand(process.execPath, [BIN, '--mirroring-endpointslice-updates-batch-period=soon']);
    expect(period.code).toBe(2);
    expect(period.stderr.trim().split('\n')).toHaveLength(1);
    expect(period.stderr).toContain('--mirroring-endpointslice-updates-batch-period');
  });
});
