import { naming, type Container, type Pod } from '@svc/api';
import {
  Controller,
  EventRecorder,
  Informer,
  listWatcherFor,
  objectKey,
  type ClientLogger,
  type RestClient,
} from '@svc/client';
import { goDuration } from '../pods/backoff.js';
import { isMirrorPod } from '../pods/mirror-pods.js';
import { StatusManager } from '../pods/status-manager.js';
import type { PodEvent } from '../pods/types.js';
import { simulatedPodIp } from './simulated-machine.js';
import { simulatedPodStatus, type SimulatedPodState } from './simulated-pod-status.js';

/** What the pod side knows of one simulated node. */
export interface SimulatedNode {
  name: string;
  /** Its index (from 1): its pod addresses are 10.<hi>.<lo>.1-254. */
  index: number;
  ip: string;
}

interface NodePods {
  /** Host parts of the pod addresses in use. */
  used: Set<number>;
  events?: EventRecorder;
}

interface PodState extends SimulatedPodState {
  node: string;
  /** The pod's address is one of the node's (not host network). */
  ownIp: boolean;
}

export interface SimulatedPodsOptions {
  client: RestClient;
  nodes: ReadonlyMap<string, SimulatedNode>;
  logger: ClientLogger;
  /** Pods handled at once (status writes and final deletes in flight). */
  workers: number;
}

const PODS = { group: '', version: 'v1', resource: 'pods' };

/**
 * The pod side of every simulated node at once: one watch of all bound pods
 * (`spec.nodeName!=`), dispatched to the simulated nodes by `spec.nodeName`; pods on other
 * nodes are ignored. A pod bound to a simulated node gets the svclet's events (Pulled or
 * Pulling/Pulled, Created, Started per container) and a Running status with every container
 * running and ready; it stays Running whatever its command would do (no process runs). Deleted
 * (`deletionTimestamp`): Killing events, the final status (containers terminated, exit 0), then
 * the final delete with grace 0 and the uid as precondition, as the svclet's pod worker does.
 * Status writes go through the svclet's `StatusManager`; failures are retried with back-off.
 */
export class SimulatedPods {
  private readonly informer: Informer<Pod>;
  private readonly controller: Controller;
  private readonly statuses: StatusManager;
  private readonly byNode = new Map<string, NodePods>();
  private readonly states = new Map<string, PodState>();
  /** The uid last seen under each key (a pod re-created under its name has a new one). */
  private readonly uids = new Map<string, string>();
  private stopped = false;

  constructor(private readonly o: SimulatedPodsOptions) {
    this.informer = new Informer<Pod>(listWatcherFor<Pod>(o.client, PODS, { fieldSelector: 'spec.nodeName!=' }), {
      logger: o.logger,
    });
    this.statuses = new StatusManager({ client: o.client, logger: o.logger, mirrorOf: () => undefined });
    this.controller = new Controller({
      name: 'simulated-pods',
      reconcile: (key) => this.reconcile(key),
      workers: o.workers,
      logger: o.logger,
    });
    this.controller.watch(this.informer, (p) =>
      o.nodes.has(p.spec.nodeName ?? '') || this.uids.has(objectKey(p)) ? [objectKey(p)] : [],
    );
  }

  /** Pods of simulated nodes that are Running as far as the simulator knows. */
  get running(): number {
    let n = 0;
    for (const s of this.states.values()) if (s.stoppedAtMs === undefined) n++;
    return n;
  }

  hasSynced(): boolean {
    return this.informer.hasSynced();
  }

  /** Runs until `signal` fires; resolves once the workers stopped and the events recorded were written. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all([this.informer.run(signal), this.controller.run(signal)]);
    this.stopped = true;
    await Promise.all([...this.byNode.values()].map((n) => n.events?.flush()));
  }

  private nodePods(node: string): NodePods {
    let n = this.byNode.get(node);
    if (!n) {
      n = { used: new Set() };
      this.byNode.set(node, n);
    }
    return n;
  }

  private event(pod: Pod, e: PodEvent): void {
    if (this.stopped) return;
    const node = pod.spec.nodeName ?? '';
    const n = this.nodePods(node);
    n.events ??= new EventRecorder(this.o.client, {
      component: naming().nodeAgentName,
      host: node,
      logger: this.o.logger,
    });
    n.events.event({ object: pod, apiVersion: 'v1', kind: 'Pod', ...e });
  }

  private forget(key: string, uid: string): void {
    const st = this.states.get(uid);
    if (st?.ownIp) this.byNode.get(st.node)?.used.delete(Number(st.podIp.split('.')[3]));
    this.states.delete(uid);
    this.uids.delete(key);
  }

  private async reconcile(key: string): Promise<void> {
    const pod = this.informer.store.get(key);
    const before = this.uids.get(key);
    if (before && before !== pod?.metadata.uid) this.forget(key, before);
    if (!pod) return;
    const uid = pod.metadata.uid ?? '';
    const node = this.o.nodes.get(pod.spec.nodeName ?? '');
    if (!node || !uid || isMirrorPod(pod)) return;
    this.uids.set(key, uid);
    const phase = pod.status?.phase;
    const finished = phase === 'Succeeded' || phase === 'Failed';
    let st = this.states.get(uid);
    if (pod.metadata.deletionTimestamp) {
      if (st && st.stoppedAtMs === undefined) {
        for (const c of pod.spec.containers)
          this.event(pod, {
            type: 'Normal',
            reason: 'Killing',
            message: `Stopping container ${c.name}`,
            fieldPath: `spec.containers{${c.name}}`,
          });
        st.stoppedAtMs = Date.now();
      }
      if (st && !(await this.statuses.update(pod, 'api', simulatedPodStatus(pod, st))))
        throw new Error('cannot write the final pod status');
      if (!(await this.statuses.finalDelete(pod))) throw new Error('cannot delete the pod');
      this.forget(key, uid);
      return;
    }
    if (finished && !st) return;
    st ??= this.start(pod, node);
    if (!st) return;
    if (!(await this.statuses.update(pod, 'api', simulatedPodStatus(pod, st))))
      throw new Error('cannot write the pod status');
  }

  /** Takes a pod on: adopts the running status the API holds, or starts it (address, events). */
  private start(pod: Pod, node: SimulatedNode): PodState | undefined {
    const uid = pod.metadata.uid ?? '';
    const n = this.nodePods(node.name);
    const hostNetwork = pod.spec.hostNetwork === true;
    const api = pod.status;
    const adopted = api?.phase === 'Running' && api.podIP && api.startTime ? api : undefined;
    let host = 0;
    if (!hostNetwork) {
      const part = adopted?.podIP?.split('.')[3];
      host = adopted && part ? Number(part) : 0;
      if (!host) for (let h = 1; h <= 254 && !host; h++) if (!n.used.has(h)) host = h;
      if (!host) {
        this.event(pod, {
          type: 'Warning',
          reason: 'FailedCreatePodSandBox',
          message: `Failed to create pod sandbox: no free address in ${simulatedPodIp(node.index, 0)}/24`,
        });
        return undefined;
      }
      n.used.add(host);
    }
    const st: PodState = {
      node: node.name,
      ownIp: !hostNetwork,
      hostIp: node.ip,
      podIp: hostNetwork ? node.ip : simulatedPodIp(node.index, host),
      startedAtMs: adopted?.startTime ? Date.parse(adopted.startTime) : Date.now(),
    };
    this.states.set(uid, st);
    if (adopted) return st;
    for (const c of pod.spec.initContainers ?? []) this.startEvents(pod, c, 'initContainers');
    for (const c of pod.spec.containers) this.startEvents(pod, c, 'containers');
    return st;
  }

  /** The svclet's events for starting container `c`: the image (pulled or present), Created, Started. */
  private startEvents(pod: Pod, c: Container, list: 'containers' | 'initContainers'): void {
    const fieldPath = `spec.${list}{${c.name}}`;
    const image = c.image ?? '';
    const e = (reason: string, message: string): void =>
      this.event(pod, { type: 'Normal', reason, message, fieldPath });
    if (c.imagePullPolicy === 'Always') {
      const took = goDuration(0);
      e('Pulling', `Pulling image "${image}"`);
      e('Pulled', `Successfully pulled image "${image}" in ${took} (${took} including waiting)`);
    } else {
      e('Pulled', `Container image "${image}" already present on machine`);
    }
    e('Created', `Created container: ${c.name}`);
    e('Started', `Started container ${c.name}`);
  }
}
