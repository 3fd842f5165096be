// Service ClusterIP and NodePort allocation (issue 19): one API server with small ranges
// (--service-cluster-ip-range 10.96.0.0/28, --service-node-port-range 30000-30009): addresses
// and node ports taken on create, requested ones honoured or refused with Kubernetes' messages,
// headless and ExternalName Services, dry runs that take nothing, clusterIP immutable on update,
// everything given back on delete; then two allocators on one etcd prefix (two API servers)
// racing for one range never hand out the same address.
import { randomBytes } from 'node:crypto';
import { apiServiceName } from '@svc/api';
import { expectCode, expectFailure, startTestApiServer, waitFor, type Json, type TestApiServer } from '@svc/testing';
import { Etcd3Storage } from '../storage/etcd3/etcd3-storage.js';
import { ClusterIpRange } from './service-allocator.js';

let t: TestApiServer;
const SVCS = '/api/v1/namespaces/default/services';

beforeAll(async () => {
  t = await startTestApiServer({
    args: ['--service-cluster-ip-range', '10.96.0.0/28', '--service-node-port-range', '30000-30009'],
  });
}, 60_000);
afterAll(() => t?.stop());

interface Svc extends Json {
  spec: {
    clusterIP?: string;
    clusterIPs?: string[];
    ipFamilies?: string[];
    ipFamilyPolicy?: string;
    internalTrafficPolicy?: string;
    externalTrafficPolicy?: string;
    type?: string;
    ports: Array<{ port: number; nodePort?: number }>;
  };
}

function svc(name: string, spec: Record<string, unknown> = {}): Json {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec },
  };
}

const create = async (body: Json, query = ''): Promise<Svc> =>
  expectCode(await t.client.post(`${SVCS}${query}`, body), 201) as Svc;

const inRange = (ip: string | undefined): boolean => /^10\.96\.0\.([1-9]|1[0-4])$/.test(ip ?? '');

it('gives a Service an address of the range, its families and policies; the svc Service has the first address', async () => {
  const s = await create(svc('a'));
  expect(inRange(s.spec.clusterIP)).toBe(true);
  expect(s.spec).toMatchObject({
    clusterIPs: [s.spec.clusterIP],
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    internalTrafficPolicy: 'Cluster',
    type: 'ClusterIP',
  });
  await waitFor('the svc Service', async () => (await t.client.get(`${SVCS}/${apiServiceName()}`)).status === 200);
  const api = expectCode(await t.client.get(`${SVCS}/${apiServiceName()}`), 200) as Svc;
  expect(api.spec.clusterIP).toBe('10.96.0.1');
  // The requested addresses of the next tests must be free: 'a' took a random one of the range.
  expectCode(await t.client.delete(`${SVCS}/a`), 200);
});

it('honours a requested address and refuses a taken, an outside and a malformed one as Kubernetes does', async () => {
  expect((await create(svc('b', { clusterIP: '10.96.0.5' }))).spec.clusterIPs).toEqual(['10.96.0.5']);
  expectFailure(await t.client.post(SVCS, svc('b2', { clusterIP: '10.96.0.5' })), {
    code: 422,
    reason: 'Invalid',
    message:
      'Service "b2" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.5"]: failed to allocate IP 10.96.0.5: provided IP is already allocated',
  });
  expectFailure(await t.client.post(SVCS, svc('b3', { clusterIP: '10.97.0.1' })), {
    code: 422,
    reason: 'Invalid',
    message:
      'Service "b3" is invalid: spec.clusterIPs: Invalid value: ["10.97.0.1"]: failed to allocate IP 10.97.0.1: the provided IP (10.97.0.1) is not in the valid range. The range of valid IPs is 10.96.0.0/28',
  });
  expectFailure(await t.client.post(SVCS, svc('b4', { clusterIP: 'ten' })), {
    code: 422,
    reason: 'Invalid',
    message:
      'Service "b4" is invalid: spec.clusterIPs[0]: Invalid value: "ten": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
  });
  expectFailure(await t.client.post(SVCS, svc('b5', { ipFamilies: ['IPv6'] })), {
    code: 422,
    reason: 'Invalid',
    message: 'Service "b5" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster',
  });
});

it('makes headless and ExternalName Services without an address', async () => {
  const h = await create(svc('headless', { clusterIP: 'None' }));
  expect(h.spec).toMatchObject({ clusterIP: 'None', clusterIPs: ['None'], ipFamilyPolicy: 'SingleStack' });
  const x = await create({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'ext' },
    spec: { type: 'ExternalName', externalName: 'example.com' },
  });
  expect(x.spec.clusterIP).toBeUndefined();
});

it('takes nothing on a dry run, keeps the address on updates and refuses changing it', async () => {
  const dry = await create(svc('dry', { clusterIP: '10.96.0.6' }), '?dryRun=All');
  expect(dry.spec.clusterIP).toBe('10.96.0.6');
  const real = await create(svc('real', { clusterIP: '10.96.0.6' }));
  // A replace that leaves out the address keeps it (Kubernetes' patchAllocatedValues).
  const { clusterIP: _ip, clusterIPs: _ips, ...rest } = real.spec;
  const put = expectCode(await t.client.put(`${SVCS}/real`, { ...real, spec: rest }), 200) as Svc;
  expect(put.spec.clusterIP).toBe('10.96.0.6');
  expectFailure(
    await t.client.put(`${SVCS}/real`, {
      ...put,
      spec: { ...put.spec, clusterIP: '10.96.0.7', clusterIPs: ['10.96.0.7'] },
    }),
    {
      code: 422,
      reason: 'Invalid',
      message: 'Service "real" is invalid: spec.clusterIPs[0]: Invalid value: ["10.96.0.7"]: may not change once set',
    },
  );
});

it('gives the address back on delete', async () => {
  expectCode(await t.client.delete(`${SVCS}/b`), 200);
  expect((await create(svc('b-again', { clusterIP: '10.96.0.5' }))).spec.clusterIP).toBe('10.96.0.5');
});

it('takes node ports for NodePort and LoadBalancer Services, honours or refuses a requested one, gives them back', async () => {
  const n = await create(svc('np', { type: 'NodePort' }));
  const port = n.spec.ports[0]?.nodePort ?? 0;
  expect(port).toBeGreaterThanOrEqual(30000);
  expect(port).toBeLessThanOrEqual(30009);
  expect(n.spec.externalTrafficPolicy).toBe('Cluster');
  // A port the random pick above did not take.
  const wanted = port === 30007 ? 30008 : 30007;
  const lb = await create(svc('lb', { type: 'LoadBalancer', ports: [{ port: 80, nodePort: wanted }] }));
  expect(lb.spec.ports[0]?.nodePort).toBe(wanted);
  expectFailure(await t.client.post(SVCS, svc('np2', { type: 'NodePort', ports: [{ port: 80, nodePort: wanted }] })), {
    code: 422,
    reason: 'Invalid',
    message: `Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: ${wanted}: provided port is already allocated`,
  });
  expectFailure(await t.client.post(SVCS, svc('np3', { type: 'NodePort', ports: [{ port: 80, nodePort: 31000 }] })), {
    code: 422,
    reason: 'Invalid',
    message:
      'Service "np3" is invalid: spec.ports[0].nodePort: Invalid value: 31000: provided port is not in the valid range. The range of valid ports is 30000-30009',
  });
  expectCode(await t.client.delete(`${SVCS}/lb`), 200);
  expect(
    (await create(svc('np4', { type: 'NodePort', ports: [{ port: 80, nodePort: wanted }] }))).spec.ports[0]?.nodePort,
  ).toBe(wanted);
});

it('answers 500 when the range is full', async () => {
  const list = expectCode(await t.client.get(SVCS), 200) as { items: Svc[] };
  const used = list.items.filter((s) => inRange(s.spec.clusterIP)).length;
  for (let i = used; i < 14; i++) await create(svc(`fill-${i}`));
  expectFailure(await t.client.post(SVCS, svc('one-too-many')), {
    code: 500,
    reason: 'InternalError',
    message: /failed to allocate a serviceIP: range is full/,
  });
});

it('two allocators on one store (two API servers) never hand out the same address', async () => {
  const prefix = `/race-${randomBytes(4).toString('hex')}`;
  const stores = [new Etcd3Storage({ endpoints: t.etcd.endpoints }), new Etcd3Storage({ endpoints: t.etcd.endpoints })];
  try {
    const ranges = stores.map((storage) => new ClusterIpRange({ storage, storePrefix: prefix, cidr: '10.1.0.0/26' }));
    const got = await Promise.all(
      Array.from({ length: 62 }, (_, i) => (ranges[i % 2] as ClusterIpRange).bitmap.allocateNext()),
    );
    expect(new Set(got).size).toBe(62);
    expect(got).not.toContain(undefined);
    expect(await (ranges[0] as ClusterIpRange).bitmap.allocateNext()).toBeUndefined();
    expect((await (ranges[1] as ClusterIpRange).bitmap.allocated()).length).toBe(62);
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
});
