// node-ipam-controller (RangeAllocator) against a real API server and etcd, dual-stack: IPv4
// 10.100.0.0/28 in /30 blocks (four, the first taken by --service-cluster-ip-range) and IPv6
// fd00:10::/120 in /122 blocks (four). A node created before the manager starts already holds
// 10.100.0.8/30 and fd00:10::40/122, so two IPv4 blocks are left: two nodes get them, a third
// waits with the CIDRNotAvailable event until a node is deleted. No node agents run. Also the
// API server's rule that podCIDRs are set once, stock kubectl reading spec.podCIDR, and bad flags.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isInvalid, isStatusError, type Event, type Node } from '@svc/api';
import { ResourceClient, RestClient, loadSvcconfig } from '@svc/client';
import { createLogger } from '@svc/component-base';
import { kubectl, runCommand, startTestApiServer, uniqueName, waitFor, type TestApiServer } from '@svc/testing';
import { startTestControllerManager, type TestControllerManager } from '../cm-testing.js';
import type { ControllerContext } from '../controller-context.js';
import { parseControllerManagerOptions } from '../options.js';
import { R } from '../resources.js';
import { nodeIpamController } from './node-ipam.js';
import { nodeIpamConfig, type NodeIpamFlags } from './node-ipam-config.js';
import { CidrSet, formatCidr, parseCidr } from './node-ipam-cidr.js';

const BIN = resolve(__dirname, '../../dist/bin/svc-controller-manager.js');
const PRE = { v4: '10.100.0.8/30', v6: 'fd00:10::40/122' };

let server: TestApiServer;
let manager: TestControllerManager;
let api: RestClient;
let home: string;
const preName = uniqueName('ipam-pre');

const nodes = (): ResourceClient<Node> => new ResourceClient<Node>(api, R.nodes());

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'svc-ipam-kubectl-'));
  server = await startTestApiServer();
  api = new RestClient(loadSvcconfig(server.svcconfigPath));
  await nodes().create({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: preName },
    spec: { podCIDR: PRE.v4, podCIDRs: [PRE.v4, PRE.v6] },
  });
  manager = await startTestControllerManager(server, [
    '--controllers=nodeipam',
    '--allocate-node-cidrs=true',
    '--cluster-cidr=10.100.0.0/28,fd00:10::/120',
    '--node-cidr-mask-size-ipv4=30',
    '--node-cidr-mask-size-ipv6=122',
    '--service-cluster-ip-range=10.100.0.0/30',
  ]);
});

afterAll(async () => {
  await manager?.stop();
  api?.close();
  await server?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

const addNode = async (): Promise<string> => {
  const name = uniqueName('ipam');
  await nodes().create({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
  return name;
};

const cidrsOf = (name: string): Promise<string[]> =>
  waitFor(
    `podCIDRs on ${name}`,
    async () => {
      const n = await nodes().get(name);
      return n.spec?.podCIDRs && n.spec.podCIDRs.length > 0 ? n : undefined;
    },
    { timeoutMs: 30_000 },
  ).then((n) => {
    expect(n.spec?.podCIDR).toBe(n.spec?.podCIDRs?.[0]);
    return n.spec?.podCIDRs ?? [];
  });

const eventsAbout = async (name: string): Promise<Event[]> =>
  (await new ResourceClient<Event>(api, R.events()).namespace('default').list()).items.filter(
    (e) => e.involvedObject.kind === 'Node' && e.involvedObject.name === name,
  );

describe('node-ipam-controller', () => {
  let first = '';
  let firstCidrs: string[] = [];
  let waiting = '';

  it('gives nodes distinct CIDRs of each family, skipping the Service range and the CIDRs nodes had', async () => {
    first = await addNode();
    const second = await addNode();
    firstCidrs = await cidrsOf(first);
    const secondCidrs = await cidrsOf(second);
    const v4 = [firstCidrs[0], secondCidrs[0]].sort();
    expect(v4).toEqual(['10.100.0.12/30', '10.100.0.4/30']);
    const v6 = [firstCidrs[1], secondCidrs[1]];
    expect(new Set(v6).size).toBe(2);
    for (const c of v6) expect(['fd00:10::/122', 'fd00:10::80/122', 'fd00:10::c0/122']).toContain(c);
    const pre = await nodes().get(preName);
    expect(pre.spec?.podCIDRs).toEqual([PRE.v4, PRE.v6]);
  });

  it('records CIDRNotAvailable on a node when a pool is exhausted, and gives it a deleted node CIDR', async () => {
    waiting = await addNode();
    const event = await waitFor(
      'the CIDRNotAvailable event',
      async () => (await eventsAbout(waiting)).find((e) => e.reason === 'CIDRNotAvailable'),
      { timeoutMs: 30_000 },
    );
    expect(event).toMatchObject({
      type: 'Normal',
      message: `Node ${waiting} status is now: CIDRNotAvailable`,
      source: { component: 'cidrAllocator' },
    });
    expect((await nodes().get(waiting)).spec?.podCIDRs).toBeUndefined();

    await nodes().delete(first);
    const got = await cidrsOf(waiting);
    expect(got[0]).toBe(firstCidrs[0]);
  });

  it("reports Kubernetes' cidrset metrics and the queue's", async () => {
    const text = await manager.cm.metrics.metrics();
    // Four IPv4 blocks, all taken: the Service range's, the old node's and two nodes'.
    expect(text).toContain('node_ipam_controller_cidrset_usage_cidrs{clusterCIDR="10.100.0.0/28"} 1');
    expect(text).toContain('node_ipam_controller_cirdset_max_cidrs{clusterCIDR="fd00:10::/120"} 4');
    expect(text).toMatch(/node_ipam_controller_cidrset_cidrs_releases_total\{clusterCIDR="10.100.0.0\/28"\} [1-9]/);
    expect(text).toMatch(/workqueue_adds_total\{name="nodeipam"\} [1-9]/);
  });

  it('lets podCIDRs be set once: a change is refused with 422', async () => {
    let err: unknown;
    try {
      await nodes().patch(
        waiting,
        { spec: { podCIDR: '10.100.0.4/30', podCIDRs: ['10.100.0.4/30'] } },
        { type: 'merge' },
      );
    } catch (e) {
      err = e;
    }
    expect(isInvalid(err)).toBe(true);
    expect(isStatusError(err) && err.status.code).toBe(422);
    expect(isStatusError(err) && err.status.message).toContain(
      'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid',
    );

    let bad: unknown;
    try {
      await nodes().create({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: uniqueName('ipam-bad') },
        spec: { podCIDRs: ['10.1.0.0/24', '10.2.0.0/24'] },
      });
    } catch (e) {
      bad = e;
    }
    expect(isStatusError(bad) && bad.status.code).toBe(422);
    expect(isStatusError(bad) && bad.status.message).toContain('may specify no more than one CIDR for each IP family');
  });

  it('stock kubectl reads spec.podCIDR', async () => {
    const r = await kubectl(server.svcconfigPath, ['get', 'nodes', '-o', 'jsonpath={.items[*].spec.podCIDR}'], {
      home,
      timeoutMs: 60_000,
    });
    expect(r.code).toBe(0);
    const fromApi = (await nodes().list()).items.map((n) => n.spec?.podCIDR ?? '').filter((c) => c !== '');
    expect(r.stdout.split(' ').sort()).toEqual(fromApi.sort());
    expect(fromApi).toEqual(expect.arrayContaining([PRE.v4, firstCidrs[0]]));
  });

  it('bad flag values exit 2 with one line', async () => {
    const cases: Array<[string[], string]> = [
      [
        ['--allocate-node-cidrs', '--cluster-cidr=10.0.0.0/16', '--node-cidr-mask-size=8'],
        'Error: Invalid --cluster-cidr, mask size of cluster CIDR must be less than or equal to --node-cidr-mask-size configured for CIDR family',
      ],
      [
        ['--allocate-node-cidrs', '--cluster-cidr=10.0.0.0/16,fd00::/48,10.1.0.0/16'],
        'Error: --cluster-cidr: length of clusterCIDRs is:3 more than max allowed of 2',
      ],
    ];
    for (const [args, line] of cases) {
      const r = await runCommand(process.execPath, [BIN, ...args]);
      expect({ args, code: r.code, lines: r.stderr.trim().split('\n') }).toEqual({ args, code: 2, lines: [line] });
    }
  });
});

describe('node-ipam flags', () => {
  const flags = (o: Partial<NodeIpamFlags>): NodeIpamFlags => ({
    allocateNodeCidrs: true,
    cidrAllocatorType: 'RangeAllocator',
    nodeCidrMaskSize: 0,
    nodeCidrMaskSizeIpv4: 0,
    nodeCidrMaskSizeIpv6: 0,
    ...o,
  });
  const refusal = (o: Partial<NodeIpamFlags>): string => {
    try {
      nodeIpamConfig(flags(o));
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error('accepted');
  };

  it("checks them as Kubernetes does, with Kubernetes' messages", () => {
    expect(nodeIpamConfig(flags({ clusterCidr: '10.244.0.0/16' })).nodeMaskSizes).toEqual([24]);
    expect(nodeIpamConfig(flags({ clusterCidr: 'fd00::/48' })).nodeMaskSizes).toEqual([64]);
    expect(nodeIpamConfig(flags({ clusterCidr: '10.244.0.0/16,fd00::/56' })).nodeMaskSizes).toEqual([24, 64]);
    expect(nodeIpamConfig(flags({ allocateNodeCidrs: false })).allocateNodeCidrs).toBe(false);
    expect(refusal({})).toBe('--cluster-cidr must be specified if --allocate-node-cidrs is set');
    expect(refusal({ clusterCidr: 'ten/8' })).toBe('--cluster-cidr: invalid CIDR address: ten/8');
    expect(refusal({ clusterCidr: '10.0.0.0/8,10.1.0.0/16' })).toBe(
      '--cluster-cidr: len of ClusterCIDRs==2 and they are not configured as dual stack (at least one from each IPFamily)',
    );
    expect(refusal({ clusterCidr: '10.0.0.0/8,fd00::/48', nodeCidrMaskSize: 24 })).toBe(
      'usage of --node-cidr-mask-size is not allowed with dual-stack clusters',
    );
    expect(refusal({ clusterCidr: '10.0.0.0/8', nodeCidrMaskSizeIpv6: 64 })).toBe(
      'usage of --node-cidr-mask-size-ipv6 is not allowed for a single-stack IPv4 cluster',
    );
    expect(refusal({ clusterCidr: 'fd00::/32' })).toBe(
      '--node-cidr-mask-size-ipv6: New CIDR set failed; the node CIDR size is too big',
    );
    expect(refusal({ serviceClusterIpRange: '10.96.0.0/12,fd00::/108,10.0.0.0/24' })).toBe(
      '--service-cluster-ip-range can not contain more than two entries',
    );
    expect(refusal({ clusterCidr: '10.0.0.0/8', serviceClusterIpRange: '10.96.0.0/12,10.0.0.0/24' })).toBe(
      '--service-cluster-ip-range: serviceCIDR and secondaryServiceCIDR are not dualstack (from different IPfamiles)',
    );
    expect(refusal({ clusterCidr: '10.0.0.0/8', cidrAllocatorType: 'CloudAllocator' })).toBe(
      "--cidr-allocator-type is set to 'CloudAllocator' but cloud provider is not configured",
    );
  });

  it('without --allocate-node-cidrs the controller is skipped with a log line', async () => {
    const lines: string[] = [];
    const options = parseControllerManagerOptions([], { quiet: true });
    expect(options.nodeIpam.allocateNodeCidrs).toBe(false);
    // Skipping reads only the options and the logger; it starts nothing.
    const ctx = { options, logger: createLogger({ write: (l) => lines.push(l) }) } as unknown as ControllerContext;
    await (await nodeIpamController.build(ctx)).run(new AbortController().signal);
    expect(lines.join('\n')).toContain('Skipping controller');
    // With the controller off, its flags are not checked (Kubernetes checks them when it starts it).
    const off = parseControllerManagerOptions(['--controllers=*,-nodeipam', '--allocate-node-cidrs'], { quiet: true });
    expect(off.nodeIpam.allocateNodeCidrs).toBe(false);
  });

  it('CidrSet hands out blocks round-robin, skips occupied ones and prints addresses as Go does', () => {
    const set = new CidrSet(parseCidr('10.0.0.0/22'), 24);
    set.occupy(parseCidr('10.0.1.128/25'));
    expect(formatCidr(set.allocateNext() ?? parseCidr('0.0.0.0/0'))).toBe('10.0.0.0/24');
    expect(formatCidr(set.allocateNext() ?? parseCidr('0.0.0.0/0'))).toBe('10.0.2.0/24');
    set.release(parseCidr('10.0.0.0/24'));
    expect(formatCidr(set.allocateNext() ?? parseCidr('0.0.0.0/0'))).toBe('10.0.3.0/24');
    expect(formatCidr(set.allocateNext() ?? parseCidr('0.0.0.0/0'))).toBe('10.0.0.0/24');
    expect(set.allocateNext()).toBeUndefined();
    expect(formatCidr(parseCidr('2001:DB8:0:0:1::5/64'))).toBe('2001:db8::/64');
    expect(formatCidr(parseCidr('fd00:0:0:1:0:0:0:0/96'))).toBe('fd00:0:0:1::/96');
    const v6 = new CidrSet(parseCidr('fd00:10::/112'), 120);
    v6.allocateNext();
    expect(formatCidr(v6.allocateNext() ?? parseCidr('::/0'))).toBe('fd00:10::100/120');
  });
});
