// Simulated nodes against a real control plane in this process (etcd, API server with the Node
// authorizer and NodeRestriction, controller manager, scheduler): 20 nodes register, turn
// Ready and renew their Leases; a Deployment's 60 pods are scheduled across them and Running;
// deleted pods go; stock kubectl shows them as it shows real nodes. The bad-flag case runs the
// built binary (needs `tsc -b packages/*/tsconfig.json`).
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { group, naming, nodeLabelKey, nodeTaintKey, type Event, type Lease, type Node, type Pod } from '@svc/api';
import { RestClient, ResourceClient, loadSvcconfig } from '@svc/client';
import { silentLogger } from '@svc/component-base';
import {
  parseControllerManagerOptions,
  startControllerManager,
  type RunningControllerManager,
} from '@svc/controller-manager';
import { parseSchedulerOptions, startScheduler, type RunningScheduler } from '@svc/scheduler';
import {
  QUICK_LEADER_ELECTION,
  componentTestArgs,
  createNamespace,
  freePort,
  kubectl,
  startTestApiServer,
  waitFor,
  type TestApiServer,
} from '@svc/testing';
import { parseSvcletOptions } from '../options.js';
import { svcletConfigYaml } from '../svclet-testing.js';
import { startSimulatedNodes, type RunningSimulatedNodes } from './simulated-nodes.js';

const BIN = resolve(__dirname, '../../dist/bin/svclet.js');
const NODES = 20;
const REPLICAS = 60;
let NS = '';
// A Lease of 8 s is renewed every 2 s (a quarter), so renewals show within the test.
const LEASE_S = 8;

let dir: string;
let server: TestApiServer;
let cm: RunningControllerManager;
let scheduler: RunningScheduler;
let sim: RunningSimulatedNodes;
let api: RestClient;
let nodes: ResourceClient<Node>;
let pods: ResourceClient<Pod>;

const simNodes = async (): Promise<Node[]> =>
  (await nodes.list({ labelSelector: 'pool=simulated' })).items.sort((a, b) =>
    (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
  );
const isReady = (n: Node): boolean =>
  n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
const podReady = (p: Pod): boolean =>
  p.status?.phase === 'Running' && (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svclet-sim-'));
  server = await startTestApiServer({
    args: ['--authorization-mode=Node,RBAC', '--enable-admission-plugins=NodeRestriction'],
  });
  api = new RestClient(loadSvcconfig(server.svcconfigPath));
  nodes = new ResourceClient<Node>(api, { group: '', version: 'v1', resource: 'nodes' });
  cm = await startControllerManager(
    parseControllerManagerOptions(
      [
        '--svcconfig',
        server.svcconfigPath,
        '--secure-port',
        '0',
        '--leader-elect=false',
        '--controllers=serviceaccount-controller,node-lifecycle-controller,replicaset-controller,deployment-controller,garbage-collector-controller',
      ],
      { quiet: true },
    ),
    { logger: silentLogger },
  );
  scheduler = await startScheduler(
    parseSchedulerOptions(
      [
        ...componentTestArgs({ server, port: await freePort(), certDir: dir, leaderElection: QUICK_LEADER_ELECTION }),
        '--leader-elect=false',
      ],
      { quiet: true },
    ),
    { logger: silentLogger },
  );
  NS = await createNamespace(api, 'sim');
  pods = new ResourceClient<Pod>(api, { group: '', version: 'v1', resource: 'pods' }).namespace(NS);
  const config = join(dir, 'config.yaml');
  await writeFile(config, svcletConfigYaml({ nodeLeaseDurationSeconds: LEASE_S, healthzPort: 0 }));
  const groups = join(dir, 'groups.yaml');
  await writeFile(
    groups,
    [
      'groups:',
      '- count: 2',
      '  namePrefix: gpu-',
      '  labels: {pool: gpu}',
      '  taints: ["example.com/gpu=present:NoSchedule"]',
      '  capacity: {cpu: 64, example.com/gpu: "4"}',
    ].join('\n'),
  );
  sim = await startSimulatedNodes(
    parseSvcletOptions(
      [
        '--config',
        config,
        '--svcconfig',
        server.svcconfigPath,
        '--simulate-nodes',
        String(NODES),
        '--simulated-node-labels',
        'pool=simulated,tier=test',
        '--simulated-node-taints',
        'example.com/simulated=yes:PreferNoSchedule',
        '--simulated-node-capacity',
        'cpu=8,memory=32Gi,pods=20',
        '--simulated-nodes-file',
        groups,
      ],
      { quiet: true },
    ),
    { logger: silentLogger },
  );
}, 60_000);

afterAll(async () => {
  await sim?.shutdown();
  await scheduler?.shutdown();
  await cm?.shutdown();
  api?.close();
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('svclet --simulate-nodes', () => {
  it('registers the nodes with the status a svclet writes; they turn Ready and their Leases renew', async () => {
    const ready = await waitFor(
      `${NODES} simulated nodes Ready without the not-ready taint`,
      async () => {
        const list = await simNodes();
        const done = list.filter(
          (n) => isReady(n) && !(n.spec?.taints ?? []).some((t) => t.key === nodeTaintKey('not-ready')),
        );
        return done.length === NODES ? list : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(ready.map((n) => n.metadata.name)).toEqual(
      Array.from({ length: NODES }, (_x, i) => `sim-node-${String(i + 1).padStart(4, '0')}`),
    );
    const first = ready[0] as Node;
    expect(first.metadata.labels).toMatchObject({
      pool: 'simulated',
      tier: 'test',
      [nodeLabelKey('hostname')]: 'sim-node-0001',
      [nodeLabelKey('os')]: 'linux',
    });
    expect(first.spec?.taints).toEqual([{ key: 'example.com/simulated', value: 'yes', effect: 'PreferNoSchedule' }]);
    const st = first.status ?? {};
    expect(st.capacity).toMatchObject({ cpu: '8', memory: '32Gi', pods: '20' });
    // Allocatable as the svclet computes it: capacity less the hard eviction threshold (memory.available<100Mi).
    expect(st.allocatable).toMatchObject({ cpu: '8', memory: `${32 * 1024 * 1024 - 100 * 1024}Ki`, pods: '20' });
    expect((st.conditions ?? []).map((c) => [c.type, c.status]).sort()).toEqual([
      ['DiskPressure', 'False'],
      ['MemoryPressure', 'False'],
      ['PIDPressure', 'False'],
      ['Ready', 'True'],
    ]);
    expect(st.addresses).toEqual([
      { type: 'InternalIP', address: '100.64.0.1' },
      { type: 'Hostname', address: 'sim-node-0001' },
    ]);
    expect(st.nodeInfo).toMatchObject({
      kubeletVersion: 'v1.32.0-svc.0.1.0',
      containerRuntimeVersion: 'simulated://v1.32.0-svc.0.1.0',
      operatingSystem: 'linux',
    });

    // The file's group: its own name, labels, taint and capacity; addresses numbered after the flags' nodes.
    const gpu = await waitFor('the file group Ready', async () => {
      const list = (await nodes.list({ labelSelector: 'pool=gpu' })).items;
      return list.length === 2 && list.every(isReady) ? list : undefined;
    });
    const g2 = gpu.find((n) => n.metadata.name === 'gpu-0002');
    expect(g2?.status?.capacity).toMatchObject({ cpu: '64', 'example.com/gpu': '4', memory: '256Gi', pods: '110' });
    expect(g2?.spec?.taints).toContainEqual({ key: 'example.com/gpu', value: 'present', effect: 'NoSchedule' });
    expect(g2?.status?.addresses?.[0]).toEqual({ type: 'InternalIP', address: `100.64.0.${NODES + 2}` });

    const leases = new ResourceClient<Lease>(api, {
      group: group('coordination'),
      version: 'v1',
      resource: 'leases',
    }).namespace(naming().nodeLeaseNamespace);
    const lease = await leases.get('sim-node-0020');
    expect(lease.spec).toMatchObject({ holderIdentity: 'sim-node-0020', leaseDurationSeconds: LEASE_S });
    expect(lease.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Node', name: 'sim-node-0020' });
    const renewed = lease.spec?.renewTime ?? '';
    await waitFor(
      'the Lease renewed',
      async () => ((await leases.get('sim-node-0020')).spec?.renewTime ?? '') > renewed,
      { timeoutMs: 3 * (LEASE_S / 4) * 1000, intervalMs: 200 },
    );
  });

  it('runs a Deployment across the nodes: scheduled, Running and Ready, with the svclet events', async () => {
    const deployments = new ResourceClient(api, { group: 'apps', version: 'v1', resource: 'deployments' }).namespace(
      NS,
    );
    await deployments.create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: REPLICAS,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            // A command that would exit at once: no process runs, the pod stays Running.
            containers: [
              { name: 'app', image: 'busybox:1.36', command: ['true'], resources: { requests: { cpu: '100m' } } },
            ],
          },
        },
      },
    });
    const running = await waitFor(
      `${REPLICAS} pods Running and Ready`,
      async () => {
        const list = (await pods.list({ labelSelector: 'app=web' })).items;
        return list.length === REPLICAS && list.every(podReady) ? list : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    const used = new Set(running.map((p) => p.spec.nodeName));
    expect(used.size).toBeGreaterThanOrEqual(10);
    for (const n of used) expect(n).toMatch(/^sim-node-\d{4}$/);
    const p = running[0] as Pod;
    const index = Number(p.spec.nodeName?.slice(-4));
    const s = p.status ?? {};
    expect(s.hostIP).toBe(`100.64.0.${index}`);
    expect(s.podIP).toMatch(new RegExp(`^10\\.0\\.${index}\\.\\d+$`));
    expect(s.startTime).toBeDefined();
    expect((s.conditions ?? []).map((c) => [c.type, c.status]).sort()).toEqual([
      ['ContainersReady', 'True'],
      ['Initialized', 'True'],
      ['PodReadyToStartContainers', 'True'],
      ['PodScheduled', 'True'],
      ['Ready', 'True'],
    ]);
    expect(s.containerStatuses?.[0]).toMatchObject({ name: 'app', ready: true, started: true, restartCount: 0 });
    expect(s.containerStatuses?.[0]?.state.running?.startedAt).toBeDefined();
    expect(s.containerStatuses?.[0]?.containerID).toMatch(/^simulated:\/\/[0-9a-f]{64}$/);
    const ips = new Set(running.map((x) => x.status?.podIP));
    expect(ips.size).toBe(REPLICAS);

    const events = new ResourceClient<Event>(api, { group: '', version: 'v1', resource: 'events' }).namespace(NS);
    const reasons = await waitFor(
      'the svclet events of a pod',
      async () => {
        const list = (await events.list({ fieldSelector: `involvedObject.name=${p.metadata.name ?? ''}` })).items;
        const r = list.map((e) => e.reason).sort();
        return ['Created', 'Pulled', 'Scheduled', 'Started'].every((x) => r.includes(x)) ? list : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    const started = reasons.find((e) => e.reason === 'Started');
    expect(started).toMatchObject({
      message: 'Started container app',
      source: { component: naming().nodeAgentName, host: p.spec.nodeName },
      involvedObject: { fieldPath: 'spec.containers{app}' },
    });
    expect(reasons.find((e) => e.reason === 'Pulled')?.message).toBe(
      'Container image "busybox:1.36" already present on machine',
    );
  });

  it('shows the nodes and pods to stock kubectl as real ones', async () => {
    const n = await kubectl(server.svcconfigPath, ['get', 'nodes', '-l', 'pool=simulated', '-o', 'wide']);
    expect(n.code).toBe(0);
    const lines = n.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\s+INTERNAL-IP\s+EXTERNAL-IP\s+OS-IMAGE/);
    expect(lines).toHaveLength(NODES + 1);
    expect(lines[1]).toMatch(/^sim-node-0001\s+Ready\s+<none>\s+\S+\s+v1\.32\.0-svc\.0\.1\.0\s+100\.64\.0\.1\s+<none>/);
    const p = await kubectl(server.svcconfigPath, ['get', 'pods', '-n', NS, '-o', 'wide']);
    expect(p.code).toBe(0);
    const rows = p.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/);
    expect(rows).toHaveLength(REPLICAS + 1);
    for (const r of rows.slice(1))
      expect(r).toMatch(/^web-\S+\s+1\/1\s+Running\s+0\s+\S+\s+10\.0\.\d+\.\d+\s+sim-node-\d{4}\s/);
  });

  it('takes deleted pods away (Killing, final delete), and the Deployment scaled to 0 leaves none', async () => {
    const [victim] = (await pods.list({ labelSelector: 'app=web' })).items;
    const name = victim?.metadata.name ?? '';
    const uid = victim?.metadata.uid ?? '';
    await pods.delete(name);
    await waitFor(
      'the deleted pod gone',
      async () => {
        const now = await pods.find(name);
        return !now || now.metadata.uid !== uid;
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    const events = new ResourceClient<Event>(api, { group: '', version: 'v1', resource: 'events' }).namespace(NS);
    await waitFor(
      'a Killing event',
      async () =>
        (await events.list({ fieldSelector: `involvedObject.name=${name}` })).items.some(
          (e) => e.reason === 'Killing' && e.message === 'Stopping container app',
        ),
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    const deployments = new ResourceClient(api, { group: 'apps', version: 'v1', resource: 'deployments' }).namespace(
      NS,
    );
    await deployments.patch('web', { spec: { replicas: 0 } }, { type: 'merge' });
    await waitFor('no pods left', async () => (await pods.list({ labelSelector: 'app=web' })).items.length === 0, {
      timeoutMs: 20_000,
      intervalMs: 250,
    });
    expect(sim.runningPods()).toBe(0);
  });

  it('exits 2 with one line for bad simulator flags and files', async () => {
    const badFile = join(dir, 'bad-groups.yaml');
    await writeFile(badFile, 'groups:\n- count: 2\n  namePrefix: x-\n  cpus: 4\n');
    const clash = join(dir, 'clash-groups.yaml');
    await writeFile(clash, 'groups:\n- {count: 2, namePrefix: sim-node-}\n');
    const cases: Array<[string[], RegExp]> = [
      [['--simulate-nodes', 'many'], /^Error: option '--simulate-nodes <int>' argument 'many' is invalid/],
      [
        ['--simulate-nodes', '3', '--svcconfig', '/nonexistent', '--simulated-node-capacity', 'cpu=lots'],
        /^Error: option '--simulated-node-capacity <pairs>' argument 'cpu=lots' is invalid\. cpu: quantities must match/,
      ],
      [
        ['--simulate-nodes', '3', '--svcconfig', '/x', '--simulated-node-labels', 'bad key=x'],
        /^Error: option '--simulated-node-labels <pairs>' argument 'bad key=x' is invalid\. invalid label/,
      ],
      [
        ['--simulate-nodes', '3', '--svcconfig', '/x', '--simulated-node-taints', 'a=b:Sometimes'],
        /^Error: option '--simulated-node-taints <taints>' argument 'a=b:Sometimes' is invalid\. invalid taint spec/,
      ],
      [['--simulate-nodes', '3'], /^Error: --simulate-nodes needs --svcconfig/],
      [['--simulated-node-labels', 'a=b'], /^Error: --simulated-node-labels needs --simulate-nodes/],
      [
        ['--svcconfig', '/x', '--simulated-nodes-file', badFile],
        new RegExp(`^Error: --simulated-nodes-file: ${badFile}: groups\\[0\\]: unknown field "cpus"$`),
      ],
      [
        ['--svcconfig', '/x', '--simulate-nodes', '3', '--simulated-nodes-file', clash],
        /: groups\[0\]: node name "sim-node-0001" is also another group's$/,
      ],
      [
        ['--simulate-nodes', '3', '--svcconfig', '/x', '--simulated-node-name-prefix', 'Bad_'],
        /^Error: --simulated-node-name-prefix: "Bad_0003" is not a valid node name/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
      expect([args, r.status]).toEqual([args, 2]);
      expect(r.stderr.trim()).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});
