// Service IP and node-port repair at start (issue 19), as Kubernetes' RepairIP / RepairPorts: a
// Service's address and node port that the stored ranges lost are marked taken again when an API
// server starts on that store (a request for them is then refused), while an address and a port
// no Service holds stay taken through two repairs and are freed on the third. Then, on the
// restarted server, allocation on update: type changes take and give back addresses and ports.
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

interface SvcSpec {
  type?: string;
  clusterIP?: string;
  clusterIPs?: string[];
  ipFamilies?: string[];
  ports: Array<{ port: number; nodePort?: number }>;
}

it('type changes on update take an address and node ports, and give back those the Service no longer has', async () => {
  const s = second;
  if (!s) throw new Error('the restarted server of the first case is needed');
  const path = `${SVCS}/flip`;
  const merge = 'application/merge-patch+json';
  const specOf = (r: unknown): SvcSpec => (r as { spec: SvcSpec }).spec;
  expectCode(await s.client.post(SVCS, { ...svc('flip', { type: 'ExternalName', externalName: 'example.com' }) }), 201);

  // ExternalName → ClusterIP: an address of the range, as on create.
  const asClusterIp = specOf(
    expectCode(await s.client.patch(path, { spec: { type: 'ClusterIP', externalName: null } }, merge), 200),
  );
  expect(asClusterIp.clusterIP).toMatch(/^10\.97\.0\.\d+$/);
  expect(asClusterIp.clusterIPs).toEqual([asClusterIp.clusterIP]);
  expect(asClusterIp.ipFamilies).toEqual(['IPv4']);

  // ClusterIP → NodePort: node ports, the same address.
  const asNodePort = specOf(expectCode(await s.client.patch(path, { spec: { type: 'NodePort' } }, merge), 200));
  expect(asNodePort.clusterIP).toBe(asClusterIp.clusterIP);
  const nodePort = asNodePort.ports[0]?.nodePort ?? 0;
  expect(nodePort).toBeGreaterThanOrEqual(30000);
  expect(nodePort).toBeLessThanOrEqual(30999);
  // A replace without the node port keeps it; asking for a taken one is refused and takes nothing.
  const replaced = expectCode(await s.client.get(path), 200) as { spec: SvcSpec };
  replaced.spec.ports = [{ port: 80 }];
  expect(specOf(expectCode(await s.client.put(path, replaced as never), 200)).ports[0]?.nodePort).toBe(nodePort);
  expectCode(
    await s.client.post(SVCS, svc('holder', { type: 'NodePort', ports: [{ port: 80, nodePort: 30300 }] })),
    201,
  );
  expectFailure(await s.client.patch(path, { spec: { ports: [{ port: 80, nodePort: 30300 }] } }, merge), {
    code: 422,
    reason: 'Invalid',
    message: /spec\.ports\[0\]\.nodePort: Invalid value: 30300: provided port is already allocated/,
  });

  // Back to ClusterIP (the type alone): the node port goes and is free again.
  const back = specOf(expectCode(await s.client.patch(path, { spec: { type: 'ClusterIP' } }, merge), 200));
  expect(back.ports[0]?.nodePort).toBeUndefined();
  expectCode(await s.client.post(SVCS, svc('port-reuser', { type: 'NodePort', ports: [{ port: 80, nodePort }] })), 201);

  // To ExternalName (type and name only): the address goes and is free again.
  const ext = specOf(
    expectCode(await s.client.patch(path, { spec: { type: 'ExternalName', externalName: 'example.org' } }, merge), 200),
  );
  expect(ext.clusterIP).toBeUndefined();
  expect(ext.clusterIPs).toBeUndefined();
  expectCode(await s.client.post(SVCS, svc('ip-reuser', { clusterIP: asClusterIp.clusterIP })), 201);
});
