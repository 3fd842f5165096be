// The API servers' own Service and identity (issue 18): two API servers on one etcd and one port
// (bound to different loopback addresses, advertising 192.0.2.x), one in this process and one the
// built binary. The `svc` Service in `default`, its Endpoints and EndpointSlice listing every live
// server (kubectl shows them), a killed server dropping out within its 15 s lease, a stopped one
// at once; the identity Leases in svc-system and the collection of expired ones; the `none` and
// `master-count` reconcilers and --svc-service-node-port; bad Endpoints and EndpointSlices refused.
// Needs the build (`tsc -b packages/*/tsconfig.json`): it runs dist/bin/svc-apiserver.js.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { apiServerIdentityLabel, endpointSliceLabel, group, naming, nodeLabelKey } from '@svc/api';
import { silentLogger } from '@svc/component-base';
import {
  expectCode,
  expectFailure,
  freePort,
  HttpsClient,
  kubectl,
  startEtcd,
  createDefaultServiceAccount,
  startTestApiServer,
  svcconfigYaml,
  waitFor,
  type EtcdHandle,
  type Json,
  type TestApiServer,
} from '@svc/testing';
import { parseApiServerOptions } from '../options.js';
import { startApiServer, type RunningApiServer } from './api-server.js';
import { identityLeaseName } from './apiserver-identity.js';

const BIN = resolve(__dirname, '../../dist/bin/svc-apiserver.js');
const discovery = `/apis/${group('discovery')}/v1`;

let etcd: EtcdHandle;
let dir: string;
let port: number;
let storePrefix: string;
let tokenFile: string;
let adminToken: string;
let a: RunningApiServer;
let client: HttpsClient;
let b: ChildProcess | undefined;
let bLog = '';

function flags(o: { bind: string; advertise: string; certDir: string }): string[] {
  return [
    '--store-servers',
    etcd.endpoints.join(','),
    '--store-prefix',
    storePrefix,
    '--secure-port',
    String(port),
    '--bind-address',
    o.bind,
    '--advertise-address',
    o.advertise,
    '--cert-dir',
    join(dir, o.certDir),
    '--token-auth-file',
    tokenFile,
  ];
}

/** An API server in this process on the shared port and store, reconciling fast. */
async function startInProcess(o: { bind: string; advertise: string; host: string }): Promise<RunningApiServer> {
  const opts = parseApiServerOptions(flags({ ...o, certDir: `pki-${o.host}` }), { quiet: true });
  const server = await startApiServer(opts, {
    logger: silentLogger,
    controllers: { hostname: o.host, endpointIntervalMs: 200, identity: { renewIntervalMs: 500, gcPeriodMs: 300 } },
  });
  await server.started;
  return server;
}

const addresses = (e: Json): string[] =>
  ((e.subsets as Json[] | undefined) ?? []).flatMap((s) => ((s.addresses as Json[]) ?? []).map((x) => String(x.ip)));

async function endpointsListing(ips: string[], timeoutMs = 10_000): Promise<Json> {
  return waitFor(
    `Endpoints svc listing ${ips.join(', ')}`,
    async () => {
      const res = await client.get(`/api/v1/namespaces/default/endpoints/${naming().clusterName}`);
      if (res.status !== 200) return undefined;
      const e = res.json<Json>();
      return JSON.stringify(addresses(e)) === JSON.stringify(ips) ? e : undefined;
    },
    { timeoutMs, intervalMs: 100 },
  );
}

beforeAll(async () => {
  etcd = await startEtcd();
  dir = await mkdtemp(join(tmpdir(), 'svc-apiserver-endpoints-'));
  port = await freePort();
  storePrefix = `/registry-${randomBytes(4).toString('hex')}`;
  adminToken = randomBytes(16).toString('hex');
  tokenFile = join(dir, 'tokens.csv');
  await writeFile(tokenFile, `${adminToken},admin,admin-uid,"system:masters"\n`);
  a = await startInProcess({ bind: '127.0.0.2', advertise: '192.0.2.10', host: 'host-a' });
  client = new HttpsClient(a.url, a.caPem, { token: adminToken });
  b = spawn(process.execPath, [BIN, ...flags({ bind: '127.0.0.3', advertise: '192.0.2.11', certDir: 'pki-b' })], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  b.stdout?.on('data', (d: Buffer) => (bLog += d.toString()));
  b.stderr?.on('data', (d: Buffer) => (bLog += d.toString()));
  await endpointsListing(['192.0.2.10', '192.0.2.11'], 30_000).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}; second server's log: ${bLog.slice(-2000)}`);
  });
});

afterAll(async () => {
  b?.kill('SIGKILL');
  await a?.shutdown();
  await etcd?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('the svc Service of two API servers on one etcd', () => {
  it('is a ClusterIP Service on 443 targeting the secure port', async () => {
    const svc = expectCode(await client.get(`/api/v1/namespaces/default/services/${naming().clusterName}`), 200);
    expect(svc.metadata.labels).toEqual({ component: 'apiserver', provider: naming().clusterName });
    expect(svc.spec).toMatchObject({
      type: 'ClusterIP',
      sessionAffinity: 'None',
      ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: port }],
    });
  });

  it('lists both servers in its Endpoints (not mirrored) and its EndpointSlice', async () => {
    const e = await endpointsListing(['192.0.2.10', '192.0.2.11']);
    expect(e.metadata.labels).toEqual({ [endpointSliceLabel('skip-mirror')]: 'true' });
    expect(e.subsets).toEqual([
      { addresses: [{ ip: '192.0.2.10' }, { ip: '192.0.2.11' }], ports: [{ name: 'https', port, protocol: 'TCP' }] },
    ]);
    const slice = await waitFor('the EndpointSlice to list both', async () => {
      const s = expectCode(
        await client.get(`${discovery}/namespaces/default/endpointslices/${naming().clusterName}`),
        200,
      );
      return (s.endpoints as Json[]).length === 2 ? s : undefined;
    });
    expect(slice).toMatchObject({
      metadata: {
        labels: { [endpointSliceLabel('service-name')]: naming().clusterName },
        generation: expect.any(Number),
      },
      addressType: 'IPv4',
      endpoints: [
        { addresses: ['192.0.2.10'], conditions: { ready: true } },
        { addresses: ['192.0.2.11'], conditions: { ready: true } },
      ],
      ports: [{ name: 'https', protocol: 'TCP', port }],
    });
  });

  it('shows them with kubectl get endpoints,endpointslices', async () => {
    const config = join(dir, 'admin.svcconfig');
    await writeFile(config, svcconfigYaml({ server: a.url, caPem: a.caPem, token: adminToken }));
    const r = await kubectl(config, ['get', 'endpoints,endpointslices', '-n', 'default']);
    expect(r.stderr).toBe('');
    const lines = r.stdout.split('\n').map((l) => l.trim().split(/\s{2,}/));
    expect(lines[0]).toEqual(['NAME', 'ENDPOINTS', 'AGE']);
    expect(lines[1]?.slice(0, 2)).toEqual([
      `endpoints/${naming().clusterName}`,
      `192.0.2.10:${port},192.0.2.11:${port}`,
    ]);
    const sliceHeader = lines.findIndex((l) => l[0] === 'NAME' && l[1] === 'ADDRESSTYPE');
    expect(lines[sliceHeader]).toEqual(['NAME', 'ADDRESSTYPE', 'PORTS', 'ENDPOINTS', 'AGE']);
    expect(lines[sliceHeader + 1]?.slice(0, 4)).toEqual([
      `endpointslice.${group('discovery')}/${naming().clusterName}`,
      'IPv4',
      String(port),
      '192.0.2.10,192.0.2.11',
    ]);
  });

  it('keeps an identity Lease per server in the system namespace', async () => {
    const label = apiServerIdentityLabel();
    const list = expectCode(
      await client.get(
        `/apis/${group('coordination')}/v1/namespaces/${naming().systemNamespace}/leases?labelSelector=${encodeURIComponent(`${label.key}=${label.value}`)}`,
      ),
      200,
    );
    const byName = new Map((list.items as Json[]).map((l) => [l.metadata.name as string, l]));
    const mine = byName.get(identityLeaseName('host-a'));
    const theirs = byName.get(identityLeaseName(hostname()));
    expect(mine?.metadata.labels).toEqual({ [label.key]: label.value, [nodeLabelKey('hostname')]: 'host-a' });
    expect(theirs?.metadata.labels).toEqual({ [label.key]: label.value, [nodeLabelKey('hostname')]: hostname() });
    for (const [name, lease] of [
      [identityLeaseName('host-a'), mine],
      [identityLeaseName(hostname()), theirs],
    ] as const) {
      expect(name).toMatch(/^apiserver-[a-z2-7]{26}$/);
      expect(lease?.spec).toMatchObject({
        holderIdentity: expect.stringMatching(new RegExp(`^${name}_[0-9a-f-]{36}$`)),
        leaseDurationSeconds: 3600,
        renewTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      });
    }
    const renewed = mine?.spec.renewTime as string;
    await waitFor('the lease to be renewed', async () => {
      const l = expectCode(
        await client.get(
          `/apis/${group('coordination')}/v1/namespaces/${naming().systemNamespace}/leases/${identityLeaseName('host-a')}`,
        ),
        200,
      );
      return l.spec.renewTime !== renewed;
    });
  });

  it('collects identity leases that expired, and only those', async () => {
    const label = apiServerIdentityLabel();
    const leases = `/apis/${group('coordination')}/v1/namespaces/${naming().systemNamespace}/leases`;
    const lease = (name: string, labels: Record<string, string>): Json => ({
      apiVersion: `${group('coordination')}/v1`,
      kind: 'Lease',
      metadata: { name, labels },
      spec: { holderIdentity: `${name}_x`, leaseDurationSeconds: 60, renewTime: '2020-01-01T00:00:00.000000Z' },
    });
    expectCode(await client.post(leases, lease('apiserver-gone', { [label.key]: label.value })), 201);
    expectCode(await client.post(leases, lease('not-an-apiserver', { other: 'x' })), 201);
    await waitFor(
      'the expired identity lease to be deleted',
      async () => (await client.get(`${leases}/apiserver-gone`)).status === 404,
    );
    expectCode(await client.get(`${leases}/not-an-apiserver`), 200);
  });

  it('drops a killed server within its 15 s lease and a stopped one at once', async () => {
    b?.kill('SIGKILL');
    const killedAt = Date.now();
    await endpointsListing(['192.0.2.10'], 25_000);
    expect(Date.now() - killedAt).toBeLessThan(20_000);
    const c = await startInProcess({ bind: '127.0.0.4', advertise: '192.0.2.12', host: 'host-c' });
    await endpointsListing(['192.0.2.10', '192.0.2.12']);
    await c.shutdown();
    // The stopping server wrote the Endpoints without itself: no TTL to wait for.
    const e = expectCode(await client.get(`/api/v1/namespaces/default/endpoints/${naming().clusterName}`), 200);
    expect(addresses(e)).toEqual(['192.0.2.10']);
  });

  it("refuses bad Endpoints and EndpointSlices with Kubernetes' messages", async () => {
    const bad = await client.post('/api/v1/namespaces/default/endpoints', {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'bad' },
      subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: 70000 }] }],
    });
    expectFailure(bad, {
      code: 422,
      reason: 'Invalid',
      message:
        'Endpoints "bad" is invalid: [subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128), subsets[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive]',
    });
    const slice = await client.post(`${discovery}/namespaces/default/endpointslices`, {
      apiVersion: `${group('discovery')}/v1`,
      kind: 'EndpointSlice',
      metadata: { name: 'bad' },
      addressType: 'IPv6',
      endpoints: [{ addresses: ['10.0.0.1'] }],
    });
    expectFailure(slice, {
      code: 422,
      reason: 'Invalid',
      message: `EndpointSlice.${group('discovery')} "bad" is invalid: endpoints[0].addresses[0]: Invalid value: "10.0.0.1": must be a valid IPv6 address`,
    });
  });
});

describe('the other reconcilers, --allow-privileged, --enable-garbage-collector, --delete-collection-workers', () => {
  let none: TestApiServer;
  let masterCount: TestApiServer;

  beforeAll(async () => {
    none = await startTestApiServer({
      etcd,
      args: ['--endpoint-reconciler-type=none', '--advertise-address=192.0.2.20'],
    });
    masterCount = await startTestApiServer({
      etcd,
      args: [
        '--endpoint-reconciler-type=master-count',
        '--advertise-address=192.0.2.21',
        '--svc-service-node-port=30443',
        '--enable-garbage-collector=false',
        '--delete-collection-workers=4',
      ],
    });
  });

  afterAll(async () => {
    await none?.stop();
    await masterCount?.stop();
  });

  it('none: the Service exists, its Endpoints are left alone', async () => {
    await waitFor(
      'the Service',
      async () => (await none.client.get(`/api/v1/namespaces/default/services/${naming().clusterName}`)).status === 200,
    );
    expect((await none.client.get(`/api/v1/namespaces/default/endpoints/${naming().clusterName}`)).status).toBe(404);
  });

  it('master-count with --svc-service-node-port: a NodePort Service and this server in its Endpoints', async () => {
    const svc = await waitFor('the Service', async () => {
      const r = await masterCount.client.get(`/api/v1/namespaces/default/services/${naming().clusterName}`);
      return r.status === 200 ? r.json<Json>() : undefined;
    });
    expect(svc.spec).toMatchObject({ type: 'NodePort', ports: [{ name: 'https', port: 443, nodePort: 30443 }] });
    const e = await waitFor('the Endpoints', async () => {
      const r = await masterCount.client.get(`/api/v1/namespaces/default/endpoints/${naming().clusterName}`);
      return r.status === 200 ? r.json<Json>() : undefined;
    });
    expect(addresses(e)).toEqual(['192.0.2.21']);
  });

  const pod = (name: string): Json => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'c', image: 'busybox', securityContext: { privileged: true } }] },
  });

  // --allow-privileged=true is one setting per process, as in Kubernetes; the PodSecurity test
  // runs its server with it and creates privileged pods.
  it('refuses privileged containers by default (--allow-privileged=false)', async () => {
    await createDefaultServiceAccount(none.client, 'default');
    expectFailure(await none.client.post('/api/v1/namespaces/default/pods', pod('p')), {
      code: 422,
      reason: 'Invalid',
      message:
        'Pod "p" is invalid: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy',
    });
  });

  it('adds no propagation finalizer without the garbage collector', async () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fg' } };
    const foreground = { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' };
    for (const s of [none, masterCount]) {
      expectCode(await s.client.post('/api/v1/namespaces/default/configmaps', cm), 201);
      expectCode(await s.client.delete('/api/v1/namespaces/default/configmaps/fg', { body: foreground }), 200);
    }
    const kept = expectCode(await none.client.get('/api/v1/namespaces/default/configmaps/fg'), 200);
    expect(kept.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect((await masterCount.client.get('/api/v1/namespaces/default/configmaps/fg')).status).toBe(404);
  });

  it('deletes a collection with several workers', async () => {
    for (let i = 0; i < 12; i++)
      expectCode(
        await masterCount.client.post('/api/v1/namespaces/default/configmaps', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `dc-${i}`, labels: { batch: 'dc' } },
        }),
        201,
      );
    const deleted = expectCode(
      await masterCount.client.delete('/api/v1/namespaces/default/configmaps?labelSelector=batch%3Ddc'),
      200,
    );
    expect((deleted.items as Json[]).map((i) => i.metadata.name).sort()).toEqual(
      Array.from({ length: 12 }, (_, i) => `dc-${i}`).sort(),
    );
    const left = expectCode(
      await masterCount.client.get('/api/v1/namespaces/default/configmaps?labelSelector=batch%3Ddc'),
      200,
    );
    expect(left.items).toEqual([]);
  });
});
