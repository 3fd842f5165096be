import type { Node, Pod } from '@svc/api';
import type { CacheSizes } from './metrics.js';
import { NodeInfo, isTerminated } from './node-info.js';

/**
 * Kubernetes' scheduler cache: every node and the pods bound to it, as the informers report
 * them, plus the pods this scheduler has assumed onto a node while their binding is under
 * way. An assumed pod counts on its node until the informer reports it bound (anywhere),
 * deleted, or `forget` drops it (the binding failed). Keyed by pod uid.
 */
export class SchedulerCache {
  private readonly infos = new Map<string, NodeInfo>();
  /** Node of each pod the cache counts, bound or assumed. */
  private readonly podNode = new Map<string, string>();
  private readonly assumed = new Set<string>();

  private info(name: string): NodeInfo {
    let n = this.infos.get(name);
    if (!n) this.infos.set(name, (n = new NodeInfo(name)));
    return n;
  }

  private prune(name: string): void {
    const n = this.infos.get(name);
    if (n && !n.node && n.pods.size === 0) this.infos.delete(name);
  }

  setNode(node: Node): void {
    this.info(node.metadata.name ?? '').node = node;
  }

  removeNode(node: Node): void {
    const name = node.metadata.name ?? '';
    const n = this.infos.get(name);
    if (n) n.node = undefined;
    this.prune(name);
  }

  /** A pod the informer reports (added or updated): counted on its node while bound and running; confirms an assumption. */
  setPod(pod: Pod): void {
    const uid = pod.metadata.uid ?? '';
    const node = pod.spec?.nodeName ?? '';
    if (!node || isTerminated(pod)) {
      if (!this.assumed.has(uid)) this.removePod(pod);
      return;
    }
    this.assumed.delete(uid);
    this.place(uid, pod, node);
  }

  /** The pod is gone (or no longer counts): removed, assumed or not. */
  removePod(pod: Pod): void {
    const uid = pod.metadata.uid ?? '';
    this.assumed.delete(uid);
    const at = this.podNode.get(uid);
    if (at === undefined) return;
    this.podNode.delete(uid);
    this.infos.get(at)?.removePod(uid);
    this.prune(at);
  }

  /** Counts `pod` on `node` before its binding is confirmed. */
  assume(pod: Pod, node: string): void {
    const uid = pod.metadata.uid ?? '';
    this.assumed.add(uid);
    this.place(uid, { ...pod, spec: { ...pod.spec, nodeName: node } }, node);
  }

  /** Drops an assumption (the binding failed); a pod the informer already reported bound stays. */
  forget(pod: Pod): void {
    if (this.assumed.has(pod.metadata.uid ?? '')) this.removePod(pod);
  }

  /** What the cache holds, as the `scheduler_scheduler_cache_size` metric reports it. */
  sizes(): CacheSizes {
    return { nodes: this.nodes().length, pods: this.podNode.size, assumed_pods: this.assumed.size };
  }

  isAssumed(uid: string): boolean {
    return this.assumed.has(uid);
  }

  private place(uid: string, pod: Pod, node: string): void {
    const at = this.podNode.get(uid);
    if (at !== undefined && at !== node) {
      this.infos.get(at)?.removePod(uid);
      this.prune(at);
    }
    this.podNode.set(uid, node);
    this.info(node).addPod(uid, pod);
  }

  /** The nodes that exist, with their pods (the scheduling cycle's snapshot; do not keep it across cycles). */
  nodes(): NodeInfo[] {
    return [...this.infos.values()].filter((n) => n.node !== undefined);
  }
}
