// Service IP and node-port repair at start (issue 19), as Kubernetes' RepairIP / RepairPorts: a
// Service's address and node port that the stored ranges lost are marked taken again when an API
// server starts on that store (a request for them is then refused), while an address and a port
// no Service holds stay taken through two repairs and are freed on the third.
import type { ApiObject } from '@svc/api';
import { silentLogger } from '@svc/component-base';
import {
  expectCode,
  expectFailure,
  startEtcd,
  startTestApiServer,
  type EtcdHandle,
  type Json,
  type TestApiServer,
} from '@svc/testing';
import { Etcd3Storage } from '../storage/etcd3/etcd3-storage.js';
import { ClusterIpRange, NodePortRange } from './service-allocator.js';
import { ServiceRangeRepair } from './service-repair.js';

const RANGE_ARGS = ['--service-cluster-ip-range', '10.97.0.0/24', '--service-node-port-range', '30000-30999'];
const SVCS = '/api/v1/namespaces/default/services';

let etcd: EtcdHandle;
let storage: Etcd3Storage;
let first: TestApiServer | undefined;
let second: TestApiServer | undefined;

beforeAll(async () => {
  etcd = await startEtcd();
  storage = new Etcd3Storage({ endpoints: etcd.endpoints });
}, 60_000);
afterAll(async () => {
  await first?.stop();
  await second?.stop();
  await storage?.close();
  await etcd?.stop();
});

function svc(name: string, spec: Record<string, unknown>): Json {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec },
  };
}

it('a restarted API server marks the lost address and node port taken; a leak is freed on the third repair', async () => {
  first = await startTestApiServer({ etcd, args: RANGE_ARGS });
  const prefix = first.storePrefix;
  expectCode(
    await first.client.post(
      SVCS,
      svc('kept', { type: 'NodePort', clusterIP: '10.97.0.50', ports: [{ port: 80, nodePort: 30123 }] }),
    ),
    201,
  );
  await first.stop();
  first = undefined;

  // The stored ranges lose the Service's items (a restored backup) and hold two nobody has.
  const allocation = {
    ips: new ClusterIpRange({ storage, storePrefix: prefix, cidr: '10.97.0.0/24' }),
    nodePorts: new NodePortRange({ storage, storePrefix: prefix, min: 30000, max: 30999 }),
  };
  const index = (ip: string): number => allocation.ips.indexOf(ip) ?? -1;
  const port = (p: number): number => allocation.nodePorts.indexOf(p) ?? -1;
  await allocation.ips.bitmap.reconcile({ mark: [index('10.97.0.60')], release: [index('10.97.0.50')] });
  await allocation.nodePorts.bitmap.reconcile({ mark: [port(30200)], release: [port(30123)] });

  second = await startTestApiServer({ etcd, args: [...RANGE_ARGS, '--store-prefix', prefix] });
  const s = second;
  expect(await allocation.ips.bitmap.allocated()).toEqual(
    expect.arrayContaining([index('10.97.0.50'), index('10.97.0.60')]),
  );
  expectFailure(await s.client.post(SVCS, svc('same-ip', { clusterIP: '10.97.0.50' })), {
    code: 422,
    reason: 'Invalid',
    message: /provided IP is already allocated/,
  });
  expectFailure(
    await s.client.post(SVCS, svc('same-port', { type: 'NodePort', ports: [{ port: 80, nodePort: 30123 }] })),
    { code: 422, reason: 'Invalid', message: /provided port is already allocated/ },
  );

  // The start's repair saw the leaks once; two more repairs in a row free them.
  const repair = new ServiceRangeRepair({
    allocation,
    listServices: async () =>
      (expectCode(await s.client.get('/api/v1/services'), 200) as unknown as { items: ApiObject[] }).items,
    log: silentLogger,
  });
  const runs = [await repair.runOnce(), await repair.runOnce(), await repair.runOnce()];
  // A repair of its own starts counting: the first two keep the leaks, the third frees them.
  expect(runs.map((r) => r.ips.released)).toEqual([[], [], ['10.97.0.60']]);
  expect(runs.map((r) => r.nodePorts.released)).toEqual([[], [], [30200]]);
  expect(runs.flatMap((r) => [...r.ips.marked, ...r.nodePorts.marked])).toEqual([]);
  expectCode(await s.client.post(SVCS, svc('leaked-ip', { clusterIP: '10.97.0.60' })), 201);
  expectCode(
    await s.client.post(SVCS, svc('leaked-port', { type: 'NodePort', ports: [{ port: 80, nodePort: 30200 }] })),
    201,
  );
}, 120_000);
