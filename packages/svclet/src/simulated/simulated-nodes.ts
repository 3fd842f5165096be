import { setMaxListeners } from 'node:events';
import { naming, useNaming, type Node } from '@svc/api';
import { Informer, listWatcherFor, loadSvcconfig, type ClientConfig, type RestClient } from '@svc/client';
import { logCheck, pingCheck, type Logger } from '@svc/component-base';
import { NodeLeaseController } from '../node-lease.js';
import { NodeStatusManager } from '../node-status.js';
import { SVCLET_VERSION, type SvcletOptions } from '../options.js';
import { startHealthzServer, type HealthzServer } from '../server.js';
import { SvcletConfigError } from '../svclet.js';
import { BoundedRestClient } from './bounded-client.js';
import { simulatedNodeName } from './simulated-node-flags.js';
import { simulatedMachine, simulatedNodeIp } from './simulated-machine.js';
import { SimulatedPods, type SimulatedNode } from './simulated-pods.js';

/**
 * Requests outstanding at once for the pods, and for the nodes' heartbeats per node (at least
 * 16): 1,000 nodes renew 100 Leases a second, which at the 0.3 s a write takes on a loaded
 * server needs ~30 in flight (watches are not counted).
 */
const POD_MAX_IN_FLIGHT = 32;
const NODES_PER_HEARTBEAT_SLOT = 8;
const MIN_HEARTBEAT_SLOTS = 16;
/** Nodes registering at once. */
const REGISTER_CONCURRENCY = 16;
/** Pods handled at once. */
const POD_WORKERS = 16;

export interface RunningSimulatedNodes {
  /** The simulated nodes' names, in index order. */
  names: string[];
  client: RestClient;
  /** How many nodes are registered so far. */
  registeredCount(): number;
  /** Settles once every node is registered (or the simulator stopped). */
  registered: Promise<void>;
  /** When each node's Lease was last renewed (ms; 0 = never). */
  leaseRenewedAt(name: string): number;
  /** Pods Running on the simulated nodes, as the simulator knows them. */
  runningPods(): number;
  healthz?: HealthzServer;
  /** Stops every loop; the Nodes stay registered (and go NotReady once their Leases expire). */
  shutdown(): Promise<void>;
}

interface Member {
  status: NodeStatusManager;
  /** Once registered. */
  lease?: NodeLeaseController;
}

/**
 * Runs the simulated nodes of `o.simulated` (every group's) in this process, through the API
 * credential of `--svcconfig`, which may write every node (a node's own credential may not:
 * the Node authorizer and NodeRestriction confine it to itself). Each node goes through the real svclet's code for
 * the node side — `NodeStatusManager` (registration, status every `nodeStatusUpdateFrequency`,
 * written when changed or every `nodeStatusReportFrequency`) and `NodeLeaseController` (renewed
 * every quarter of `nodeLeaseDurationSeconds`) — with a simulated machine, and reads its Node
 * from one watch of all nodes instead of a GET. `SimulatedPods` is the pod side of all of them.
 * The rate limit is the per-node one (`svcAPIQPS`, `svcAPIBurst`) times the node count, as for
 * as many real svclets, split between a client for the nodes (one request in flight per 8
 * nodes, at least 16) and one for the pods (32); 16 nodes register at once.
 */
export async function startSimulatedNodes(o: SvcletOptions, deps: { logger: Logger }): Promise<RunningSimulatedNodes> {
  const sim = o.simulated;
  if (!sim) throw new SvcletConfigError('--simulate-nodes is not set');
  useNaming(o.naming);
  const logger = deps.logger;
  for (const w of o.warnings) logger.warn(w);
  const c = o.config;
  let config: ClientConfig;
  try {
    config = loadSvcconfig(o.svcconfig ?? '');
  } catch (e) {
    throw new SvcletConfigError(`--svcconfig: ${(e as Error).message}`);
  }
  const total = sim.groups.reduce((n, g) => n + g.count, 0);
  // Two clients, each with half the rate limit: the nodes' registration, status and Leases on
  // one, the pods on the other. On one shared queue, the status writes of thousands of newly
  // bound pods held the Lease renewals back past the node monitor's grace period and nodes
  // went NotReady (real svclets do not share a queue either).
  const clientFor = (part: string, maxInFlight: number): BoundedRestClient =>
    new BoundedRestClient(config, {
      qps: (c.svcAPIQPS * total) / 2,
      burst: Math.max(1, Math.round((c.svcAPIBurst * total) / 2)),
      contentType: c.contentType,
      userAgent: `${naming().nodeAgentName}/${SVCLET_VERSION} (simulated nodes, ${part})`,
      maxInFlight,
    });
  const client = clientFor('nodes', Math.max(MIN_HEARTBEAT_SLOTS, Math.ceil(total / NODES_PER_HEARTBEAT_SLOT)));
  const podClient = clientFor('pods', POD_MAX_IN_FLIGHT);
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const signal = stop.signal;
  const nodeInformer = new Informer<Node>(
    listWatcherFor<Node>(client, { group: '', version: 'v1', resource: 'nodes' }),
    {
      logger,
    },
  );
  const nodes = new Map<string, SimulatedNode>();
  const members = new Map<string, Member>();
  // The index across all groups numbers the nodes' addresses.
  let index = 0;
  for (const g of sim.groups) {
    const nodeConfig = { ...c, registerWithTaints: g.taints };
    for (let k = 1; k <= g.count; k++) {
      const name = simulatedNodeName(g.namePrefix, k);
      const ip = simulatedNodeIp(++index);
      nodes.set(name, { name, index, ip });
      members.set(name, {
        status: new NodeStatusManager({
          client,
          nodeName: name,
          hostname: name,
          hostIps: [ip],
          config: nodeConfig,
          nodeLabels: g.labels,
          machine: simulatedMachine({ name, capacity: g.capacity, version: SVCLET_VERSION }),
          cachedNode: () => nodeInformer.store.get(name),
          logger,
        }),
      });
    }
  }
  const pods = new SimulatedPods({
    client: podClient,
    nodes,
    logger: logger.with({ component: 'simulated-pods' }),
    workers: POD_WORKERS,
  });
  let healthz: HealthzServer | undefined;
  if (c.healthzPort > 0) {
    try {
      healthz = await startHealthzServer({
        bindAddress: c.healthzBindAddress,
        port: c.healthzPort,
        checks: () => [pingCheck, logCheck],
      });
    } catch (e) {
      client.close();
      podClient.close();
      throw new SvcletConfigError(`--healthz-port: ${(e as Error).message}`);
    }
  }

  const tasks: Array<Promise<void>> = [nodeInformer.run(signal), pods.run(signal)];
  let registeredCount = 0;
  const queue = [...members.entries()];
  const registerOne = async ([name, m]: [string, Member]): Promise<void> => {
    let node: Node;
    try {
      node = await m.status.register(signal);
    } catch {
      return;
    }
    registeredCount++;
    const lease = new NodeLeaseController({
      client,
      nodeName: name,
      leaseDurationSeconds: c.nodeLeaseDurationSeconds,
      nodeUid: node.metadata.uid,
      logger,
    });
    m.lease = lease;
    tasks.push(lease.run(signal), m.status.run(signal));
  };
  const registered = Promise.all(
    Array.from({ length: Math.min(REGISTER_CONCURRENCY, queue.length) }, async () => {
      for (let next = queue.shift(); next && !signal.aborted; next = queue.shift()) await registerOne(next);
    }),
  ).then(() => {
    if (!signal.aborted) logger.info('simulated nodes registered', { count: registeredCount });
  });
  logger.info('starting simulated nodes', {
    count: total,
    groups: sim.groups.map((g) => `${g.count}×${g.namePrefix}`).join(','),
    server: config.server,
  });

  return {
    names: [...members.keys()],
    client,
    registeredCount: () => registeredCount,
    registered,
    leaseRenewedAt: (name) => members.get(name)?.lease?.lastRenewed ?? 0,
    runningPods: () => pods.running,
    healthz,
    shutdown: async () => {
      stop.abort();
      await registered;
      await Promise.allSettled(tasks);
      await healthz?.close();
      client.close();
      podClient.close();
    },
  };
}
