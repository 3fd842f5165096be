import {
  isAlreadyExists,
  naming,
  nodeLabelKey,
  nodeTaintKey,
  type Node,
  type NodeCondition,
  type NodeStatus,
  type NodeSystemInfo,
  type Taint,
} from '@svc/api';
import { ResourceClient, type RestClient } from '@svc/client';
import type { Logger } from '@svc/component-base';
import { jsonEqual } from '@svc/machinery';
import type { SvcletConfiguration } from './configuration.js';
import {
  allocatable,
  goArch,
  goOs,
  machineCapacity,
  nodeAddresses,
  observePressure,
  systemInfo,
  type Pressure,
} from './host-info.js';
import type { RuntimeStatusService } from './pod-source.js';
import { sleep } from '@svc/machinery';

const nodesResource = () => ({ group: '', version: 'v1', resource: 'nodes' });

/** The API's seconds-precision time. */
export function nowTime(now = Date.now()): string {
  return new Date(now).toISOString().replace(/\.\d+Z$/, 'Z');
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<T>((_r, reject) => {
      t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(t));
}

/**
 * What the node status reports about the machine: the host the svclet runs on
 * (`hostMachine`), or a simulated one (`simulated-machine.ts`). The status code path is the same.
 */
export interface NodeMachine {
  /** `status.capacity`. */
  capacity(): Record<string, string>;
  /** The hard eviction signals observed now. */
  pressure(): Pressure;
  /** `status.nodeInfo` apart from the runtime's version. */
  readonly info: NodeSystemInfo;
  /** Why the node is not ready (Kubernetes' messages), or undefined when it is. */
  readiness(): Promise<string | undefined>;
  /** `<runtime name>://<version>`, or '' while the runtime has not answered. */
  runtimeVersion(): Promise<string>;
}

export interface NodeStatusOptions {
  client: RestClient;
  nodeName: string;
  /** The name in the hostname label and the Hostname address (`--hostname-override` or the host's). */
  hostname: string;
  hostIps: string[];
  config: SvcletConfiguration;
  nodeLabels: Record<string, string>;
  machine: NodeMachine;
  /**
   * The Node as an informer holds it (the simulator's one watch of all nodes), read instead of a
   * GET before each status computation; undefined (not seen yet) falls back to the GET.
   */
  cachedNode?: () => Node | undefined;
  logger: Logger;
}

/**
 * The machine the svclet runs on: capacity and pressure from the host (`rootDir`'s file
 * system), readiness and version from the container runtime (absent or not answering: not Ready).
 */
export function hostMachine(o: {
  rootDir: string;
  config: SvcletConfiguration;
  version: string;
  runtime?: RuntimeStatusService;
}): NodeMachine {
  let runtimeVersion = '';
  return {
    capacity: () => machineCapacity({ rootDir: o.rootDir, maxPods: o.config.maxPods }),
    pressure: () => observePressure({ rootDir: o.rootDir, evictionHard: o.config.evictionHard }),
    info: systemInfo(o.version),
    readiness: () => runtimeReadiness(o.runtime),
    runtimeVersion: async () => {
      if (runtimeVersion === '' && o.runtime) {
        try {
          const v = await withTimeout(o.runtime.version({}), 2000);
          if (v.runtimeName) runtimeVersion = `${v.runtimeName}://${v.runtimeVersion ?? ''}`;
        } catch {
          /* tried again next time */
        }
      }
      return runtimeVersion;
    },
  };
}

const agentTitle = (): string => naming().nodeAgentName.charAt(0).toUpperCase() + naming().nodeAgentName.slice(1);

/**
 * Registration and status of the node (Kubernetes' kubelet_node_status): the Node is created
 * (or, when it exists, its default labels reconciled), then its status is computed every
 * `nodeStatusUpdateFrequency` and written when something other than heartbeat times changed,
 * or when `nodeStatusReportFrequency` passed since the last write.
 */
export class NodeStatusManager {
  private readonly api: ResourceClient<Node>;
  private lastReport = 0;
  /** When each pressure was last observed (Kubernetes holds a pressure condition for evictionPressureTransitionPeriod). */
  private readonly pressureSeen: Record<keyof Pressure, number> = { memory: 0, disk: 0, pid: 0 };

  constructor(private readonly o: NodeStatusOptions) {
    this.api = new ResourceClient<Node>(o.client, nodesResource());
  }

  /** Kubernetes' initialNode: name, default and `--node-labels` labels, taints (with not-ready), provider ID. */
  initialNode(): Node {
    const taints: Taint[] = [...this.o.config.registerWithTaints];
    // As Kubernetes: registered not ready; the node lifecycle controller removes the taint once Ready.
    const notReady: Taint = { key: nodeTaintKey('not-ready'), effect: 'NoSchedule' };
    if (!taints.some((t) => t.key === notReady.key && t.effect === notReady.effect)) taints.push(notReady);
    const spec: Node['spec'] = { taints };
    if (this.o.config.providerID) spec.providerID = this.o.config.providerID;
    return {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: this.o.nodeName, labels: { ...this.o.nodeLabels, ...this.defaultLabels() } },
      spec,
    };
  }

  private defaultLabels(): Record<string, string> {
    return {
      [nodeLabelKey('hostname')]: this.o.hostname,
      [nodeLabelKey('os')]: goOs(),
      [nodeLabelKey('arch')]: goArch(),
    };
  }

  /**
   * Creates the Node, or takes the existing one and puts its default labels right; retries with
   * back-off (100 ms doubling to 7 s, as Kubernetes) until it succeeds or `signal` fires.
   */
  async register(signal: AbortSignal): Promise<Node> {
    let delay = 100;
    while (!signal.aborted) {
      try {
        const node = await this.tryRegister(signal);
        this.o.logger.info('successfully registered node', { node: this.o.nodeName });
        await this.update(signal, true);
        return node;
      } catch (e) {
        if (signal.aborted) break;
        this.o.logger.warn('unable to register node with API server', { node: this.o.nodeName, error: String(e) });
        await sleep(delay, signal);
        delay = Math.min(delay * 2, 7000);
      }
    }
    throw new Error('registration stopped');
  }

  private async tryRegister(signal: AbortSignal): Promise<Node> {
    try {
      return await this.api.create(this.initialNode(), { signal });
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
    const existing = await this.api.get(this.o.nodeName, { signal });
    const labels = existing.metadata.labels ?? {};
    const wanted = this.defaultLabels();
    if (Object.entries(wanted).every(([k, v]) => labels[k] === v)) return existing;
    return this.api.patch(this.o.nodeName, { metadata: { labels: wanted } }, { type: 'merge', signal });
  }

  /** Runs the periodic status updates until `signal` fires. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await sleep(this.o.config.nodeStatusUpdateFrequency, signal);
      if (signal.aborted) break;
      try {
        await this.update(signal, false);
      } catch (e) {
        if (!signal.aborted)
          this.o.logger.warn('error updating node status, will retry', { node: this.o.nodeName, error: String(e) });
      }
    }
  }

  /** Reads the Node, computes its status and writes it when changed or due (or `force`). */
  async update(signal: AbortSignal, force: boolean): Promise<void> {
    const node = this.o.cachedNode?.() ?? (await this.api.get(this.o.nodeName, { signal }));
    const status = await this.computeStatus(node.status ?? {});
    const due = Date.now() - this.lastReport >= this.o.config.nodeStatusReportFrequency;
    if (!force && !due && !statusChanged(node.status ?? {}, status)) return;
    // Strategic merge: conditions merge by type, so conditions others own (NetworkUnavailable) stay.
    await this.api.patch(this.o.nodeName, { status }, { type: 'strategic', subresource: 'status', signal });
    this.lastReport = Date.now();
  }

  /** The status the node has now, given the one the API holds (for transition times). */
  async computeStatus(old: NodeStatus): Promise<NodeStatus> {
    const c = this.o.config;
    const machine = this.o.machine;
    const capacity = machine.capacity();
    const now = Date.now();
    const pressure = machine.pressure();
    for (const k of Object.keys(pressure) as Array<keyof Pressure>) if (pressure[k]) this.pressureSeen[k] = now;
    const held = (k: keyof Pressure): boolean =>
      this.pressureSeen[k] > 0 && now - this.pressureSeen[k] < c.evictionPressureTransitionPeriod;
    const agent = agentTitle();
    const lower = naming().nodeAgentName;
    const stamp = nowTime(now);
    const cond = ({
      type,
      status,
      reason,
      message,
    }: Required<Pick<NodeCondition, 'type' | 'status' | 'reason' | 'message'>>): NodeCondition => {
      const prev = old.conditions?.find((x) => x.type === type);
      return {
        type,
        status,
        lastHeartbeatTime: stamp,
        lastTransitionTime: prev && prev.status === status && prev.lastTransitionTime ? prev.lastTransitionTime : stamp,
        reason,
        message,
      };
    };
    const ready = await machine.readiness();
    const runtimeVersion = await machine.runtimeVersion();
    return {
      capacity,
      allocatable: allocatable(capacity, c),
      conditions: [
        held('memory')
          ? cond({
              type: 'MemoryPressure',
              status: 'True',
              reason: `${agent}HasInsufficientMemory`,
              message: `${lower} has insufficient memory available`,
            })
          : cond({
              type: 'MemoryPressure',
              status: 'False',
              reason: `${agent}HasSufficientMemory`,
              message: `${lower} has sufficient memory available`,
            }),
        held('disk')
          ? cond({
              type: 'DiskPressure',
              status: 'True',
              reason: `${agent}HasDiskPressure`,
              message: `${lower} has disk pressure`,
            })
          : cond({
              type: 'DiskPressure',
              status: 'False',
              reason: `${agent}HasNoDiskPressure`,
              message: `${lower} has no disk pressure`,
            }),
        held('pid')
          ? cond({
              type: 'PIDPressure',
              status: 'True',
              reason: `${agent}HasInsufficientPID`,
              message: `${lower} has insufficient PID available`,
            })
          : cond({
              type: 'PIDPressure',
              status: 'False',
              reason: `${agent}HasSufficientPID`,
              message: `${lower} has sufficient PID available`,
            }),
        ready === undefined
          ? cond({
              type: 'Ready',
              status: 'True',
              reason: `${agent}Ready`,
              message: `${lower} is posting ready status`,
            })
          : cond({ type: 'Ready', status: 'False', reason: `${agent}NotReady`, message: ready }),
      ],
      addresses: nodeAddresses(this.o.hostIps, this.o.hostname),
      daemonEndpoints: { kubeletEndpoint: { Port: c.port } },
      nodeInfo: { ...machine.info, containerRuntimeVersion: runtimeVersion },
    };
  }
}

/** Why the node is not ready (Kubernetes' messages), or undefined when the runtime reports ready. */
async function runtimeReadiness(service: RuntimeStatusService | undefined): Promise<string | undefined> {
  if (!service) return 'container runtime status check may not have completed yet';
  let conditions;
  try {
    conditions = (await withTimeout(service.status({}), 2000)).status?.conditions ?? [];
  } catch (e) {
    return `container runtime is down: ${String(e)}`;
  }
  const errs: string[] = [];
  const runtime = conditions.find((x) => x.type === 'RuntimeReady');
  const network = conditions.find((x) => x.type === 'NetworkReady');
  if (!runtime?.status)
    errs.push(
      runtime
        ? `container runtime not ready: RuntimeReady=false reason:${runtime.reason ?? ''} message:${runtime.message ?? ''}`
        : 'container runtime not ready: RuntimeReady condition is missing',
    );
  if (!network?.status)
    errs.push(
      network
        ? `container runtime network not ready: NetworkReady=false reason:${network.reason ?? ''} message:${network.message ?? ''}`
        : 'container runtime network not ready: NetworkReady condition is missing',
    );
  if (errs.length === 0) return undefined;
  return errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`;
}

/** Kubernetes' nodeStatusHasChanged: any difference but heartbeat times. */
export function statusChanged(a: NodeStatus, b: NodeStatus): boolean {
  const strip = (s: NodeStatus): unknown => ({
    capacity: s.capacity,
    allocatable: s.allocatable,
    addresses: s.addresses,
    nodeInfo: s.nodeInfo,
    daemonEndpoints: s.daemonEndpoints,
    conditions: [...(s.conditions ?? [])]
      .map(({ lastHeartbeatTime: _h, ...rest }) => rest)
      .sort((x, y) => x.type.localeCompare(y.type)),
  });
  return !jsonEqual(strip(a), strip(b));
}
