import { setImmediate as setImmediatePromise } from 'node:timers/promises';
import { isNotFound, type ApiObject, type Node, type Pod, type PodCondition } from '@svc/api';
import {
  ResourceClient,
  objectKey,
  responseError,
  type EventRecorder,
  type Informer,
  type RestClient,
  type SharedInformerFactory,
} from '@svc/client';
import type { Logger } from '@svc/component-base';
import { SchedulerCache } from './cache.js';
import { podState, runFilters } from './filters.js';
import { NO_NODES_AVAILABLE, fitErrorMessage } from './fit-error.js';
import type { SchedulerMetrics } from './metrics.js';
import { isTerminated } from './node-info.js';
import { SchedulingQueue, type QueuedPod } from './scheduling-queue.js';
import { scoreNodes, selectHost } from './scores.js';
import { findFeasibleNodes } from './feasible-nodes.js';

export interface SchedulerDeps {
  client: RestClient;
  informers: SharedInformerFactory;
  logger: Logger;
  metrics: SchedulerMetrics;
  events: EventRecorder;
  /** `spec.schedulerName` of the pods this scheduler takes. */
  schedulerName: string;
  podMaxInUnschedulablePodsDurationMs: number;
  /** Back-off bounds of the queue (defaults 1 s and 10 s). */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

const PODS = { group: '', version: 'v1', resource: 'pods' };
const NODES = { group: '', version: 'v1', resource: 'nodes' };

/** The node fields that decide where pods fit (heartbeats left out). */
function schedulingProperties(n: Node): string {
  const conditions = (n.status?.conditions ?? []).map(({ type, status, reason }) => ({ type, status, reason }));
  return JSON.stringify([n.metadata.labels, n.spec?.unschedulable, n.spec?.taints, n.status?.allocatable, conditions]);
}

/** Kubernetes' UpdatePodCondition comparison: whether writing `c` changes the pod's condition. */
function conditionChanges(pod: Pod, c: PodCondition): boolean {
  const old = pod.status?.conditions?.find((x) => x.type === c.type);
  return !old || old.status !== c.status || old.reason !== c.reason || old.message !== c.message;
}

/**
 * One leadership term of the scheduler: watches pods and nodes, and binds each pending pod
 * of `schedulerName` (no `spec.nodeName`, no scheduling gates, not being deleted) to the
 * best node that fits, one pod at a time. A chosen node counts the pod at once (assumed)
 * while its binding runs in the background; writes about one pod (status, binding) happen
 * in order. A pod no node fits gets PodScheduled=False and a FailedScheduling event and
 * waits in the queue until the cluster changes.
 */
export class Scheduler {
  private readonly cache = new SchedulerCache();
  private readonly queue: SchedulingQueue;
  private readonly pods: Informer<Pod>;
  private readonly nodes: Informer<Node>;
  private readonly gated = new Set<string>();
  /** The last write about each pod; the next one waits for it. */
  private readonly podWrites = new Map<string, Promise<void>>();
  private readonly logger: Logger;
  /** Where the next cycle starts filtering (Kubernetes' nextStartNodeIndex): a cycle may stop before the last node. */
  private nextStartNodeIndex = 0;

  constructor(private readonly d: SchedulerDeps) {
    this.logger = d.logger;
    this.queue = new SchedulingQueue({
      initialBackoffMs: d.initialBackoffMs,
      maxBackoffMs: d.maxBackoffMs,
      maxUnschedulableMs: d.podMaxInUnschedulablePodsDurationMs,
      onPending: () => this.reportPending(),
    });
    this.pods = d.informers.informerFor<Pod>(PODS);
    this.nodes = d.informers.informerFor<Node>(NODES);
    this.pods.addEventHandler({
      onAdd: (p) => this.podChanged(undefined, p),
      onUpdate: (old, p) => this.podChanged(old, p),
      onDelete: (p) => this.podDeleted(p),
    });
    this.nodes.addEventHandler({
      onAdd: (n) => {
        this.cache.setNode(n);
        this.queue.moveAllToActiveOrBackoff();
      },
      onUpdate: (old, n) => {
        this.cache.setNode(n);
        if (schedulingProperties(old) !== schedulingProperties(n)) this.queue.moveAllToActiveOrBackoff();
      },
      onDelete: (n) => this.cache.removeNode(n),
    });
  }

  /** Whether the pod and node informers have delivered their first lists. */
  hasSynced(): boolean {
    return this.pods.hasSynced() && this.nodes.hasSynced();
  }

  /** Schedules until `signal` fires, then waits for bindings and writes under way. */
  async run(signal: AbortSignal): Promise<void> {
    const close = (): void => this.queue.close();
    signal.addEventListener('abort', close, { once: true });
    this.d.metrics.observeCache(() => this.cache.sizes());
    this.d.informers.start(signal);
    try {
      await this.d.informers.waitForCacheSync({ signal, timeoutMs: 2 ** 31 - 1 });
      // A cycle is synchronous work and `pop` resolves at once while pods wait: without a turn
      // of the event loop between cycles, a long queue would hold back every socket and timer
      // (lease renewals, bindings' answers, watch events) until it ran dry.
      while (!signal.aborted && (await this.scheduleOne())) await setImmediatePromise();
    } catch (e) {
      if (!signal.aborted) throw e;
    } finally {
      this.queue.close();
      signal.removeEventListener('abort', close);
      await Promise.allSettled([...this.podWrites.values()]);
      await this.d.events.flush();
      await this.d.informers.stopped();
      // A standby has nothing pending and no cache.
      this.d.metrics.observeCache(undefined);
      this.d.metrics.setPending({ active: 0, backoff: 0, unschedulable: 0, gated: 0 });
    }
  }

  private reportPending(): void {
    this.d.metrics.setPending({ ...this.queue.counts(), gated: this.gated.size });
  }

  private responsible(p: Pod): boolean {
    return (p.spec?.schedulerName ?? this.d.schedulerName) === this.d.schedulerName;
  }

  private podChanged(old: Pod | undefined, p: Pod): void {
    const key = objectKey(p);
    this.cache.setPod(p);
    if (p.spec?.nodeName) {
      this.queue.delete(key);
      if (this.gated.delete(key)) this.reportPending();
      // A bound pod that ended frees its node.
      if (old && !isTerminated(old) && isTerminated(p)) this.queue.moveAllToActiveOrBackoff();
      return;
    }
    if (!this.responsible(p) || isTerminated(p) || p.metadata.deletionTimestamp) {
      this.queue.delete(key);
      return;
    }
    if ((p.spec?.schedulingGates ?? []).length > 0) {
      this.queue.delete(key);
      this.gated.add(key);
      this.reportPending();
      return;
    }
    if (this.gated.delete(key)) this.reportPending();
    this.queue.update(key, p);
  }

  private podDeleted(p: Pod): void {
    const key = objectKey(p);
    this.cache.removePod(p);
    this.queue.delete(key);
    if (this.gated.delete(key)) this.reportPending();
    if (p.spec?.nodeName) this.queue.moveAllToActiveOrBackoff();
  }

  /** Runs `write` after the writes already queued for `key`. */
  private chain(key: string, write: () => Promise<void>): void {
    const next = (this.podWrites.get(key) ?? Promise.resolve()).then(write).catch((e: unknown) => {
      this.logger.error('scheduler write failed', { pod: key, error: String(e) });
    });
    this.podWrites.set(key, next);
    void next.then(() => {
      if (this.podWrites.get(key) === next) this.podWrites.delete(key);
    });
  }

  /** One scheduling cycle (Kubernetes' scheduleOne); false once the queue is closed. */
  private async scheduleOne(): Promise<boolean> {
    const popped = await this.queue.pop();
    if (!popped) return false;
    const { info, cycle } = popped;
    const started = performance.now();
    const pod = this.pods.store.get(info.key);
    if (!pod || pod.spec?.nodeName || pod.metadata.deletionTimestamp || this.cache.isAssumed(pod.metadata.uid ?? '')) {
      this.queue.done(info.key);
      return true;
    }
    info.pod = pod;
    try {
      const nodes = this.cache.nodes();
      if (nodes.length === 0) {
        this.failed(info, cycle, {
          reason: 'Unschedulable',
          message: NO_NODES_AVAILABLE,
          unschedulable: true,
          started,
        });
        return true;
      }
      const s = podState(pod);
      const { feasible, statuses, processed } = findFeasibleNodes(nodes, {
        start: this.nextStartNodeIndex % nodes.length,
        filter: (n) => runFilters(s, n),
      });
      this.nextStartNodeIndex = (this.nextStartNodeIndex + processed) % nodes.length;
      if (feasible.length === 0) {
        this.failed(info, cycle, {
          reason: 'Unschedulable',
          message: fitErrorMessage(pod, statuses),
          unschedulable: true,
          started,
        });
        return true;
      }
      const chosen = feasible.length === 1 ? feasible[0] : feasible[selectHost(scoreNodes(pod, feasible))];
      const node = chosen?.name ?? '';
      this.cache.assume(pod, node);
      this.chain(info.key, () => this.bind(info, { pod, node, started }));
    } catch (e) {
      this.failed(info, cycle, {
        reason: 'SchedulerError',
        message: String(e instanceof Error ? e.message : e),
        unschedulable: false,
        started,
      });
    }
    return true;
  }

  /** Kubernetes' binding cycle with the DefaultBinder: POST pods/binding with the pod's uid as precondition. */
  private async bind(
    info: QueuedPod,
    { pod, node, started }: { pod: Pod; node: string; started: number },
  ): Promise<void> {
    const ns = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    const r = await this.d.client
      .request('POST', `/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(name)}/binding`, {
        body: {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name, namespace: ns, uid: pod.metadata.uid },
          target: { kind: 'Node', name: node },
        },
      })
      .catch((e: unknown) => e as Error);
    if (!(r instanceof Error) && r.status === 201) {
      this.d.metrics.attempt('scheduled', performance.now() - started);
      this.queue.done(info.key);
      this.logger.v(2).info('successfully bound pod to node', { pod: info.key, node });
      this.d.events.event({
        object: pod,
        apiVersion: 'v1',
        kind: 'Pod',
        type: 'Normal',
        reason: 'Scheduled',
        action: 'Binding',
        message: `Successfully assigned ${ns}/${name} to ${node}`,
      });
      return;
    }
    this.cache.forget(pod);
    const error = r instanceof Error ? r.message : responseError(r.status, r.body).message;
    if (!(r instanceof Error) && (r.status === 409 || r.status === 404)) {
      // Bound elsewhere or gone meanwhile (another scheduler, a former leader): nothing left to do.
      const fresh = await new ResourceClient<Pod>(this.d.client, PODS)
        .namespace(ns)
        .get(name)
        .catch((e: unknown) => (isNotFound(e) ? undefined : pod));
      if (!fresh || fresh.spec?.nodeName || fresh.metadata.uid !== pod.metadata.uid) {
        this.logger.info('pod was bound or deleted meanwhile; not retrying', { pod: info.key, error });
        this.queue.done(info.key);
        return;
      }
    }
    this.failed(info, 0, {
      reason: 'SchedulerError',
      message: `running Bind plugin "DefaultBinder": ${error}`,
      unschedulable: false,
      started,
    });
  }

  /**
   * Kubernetes' handleSchedulingFailure: the pod goes back to the queue (unless it is gone or
   * bound meanwhile), gets a FailedScheduling event and, when it changes, PodScheduled=False.
   */
  private failed(
    info: QueuedPod,
    cycle: number,
    f: { reason: string; message: string; unschedulable: boolean; started: number },
  ): void {
    this.d.metrics.attempt(f.unschedulable ? 'unschedulable' : 'error', performance.now() - f.started);
    const pod = this.pods.store.get(info.key);
    if (!pod || pod.spec?.nodeName || pod.metadata.uid !== info.pod.metadata.uid) {
      this.queue.done(info.key);
      return;
    }
    if (f.unschedulable) this.queue.addUnschedulable(info, cycle);
    else this.queue.addBackoff(info);
    this.logger.v(2).info('unable to schedule pod; waiting', { pod: info.key, reason: f.reason, message: f.message });
    this.d.events.event({
      object: pod,
      apiVersion: 'v1',
      kind: 'Pod',
      type: 'Warning',
      reason: 'FailedScheduling',
      action: 'Scheduling',
      message: f.message,
    });
    this.chain(info.key, () =>
      this.setUnschedulableCondition(info.key, {
        type: 'PodScheduled',
        status: 'False',
        reason: f.reason,
        message: f.message,
      }),
    );
  }

  /** PATCHes the pod's status with the condition (Kubernetes' updatePod), unless it already says so. */
  private async setUnschedulableCondition(key: string, c: PodCondition): Promise<void> {
    const pod = this.pods.store.get(key);
    if (!pod || pod.spec?.nodeName || !conditionChanges(pod, c)) return;
    const old = pod.status?.conditions?.find((x) => x.type === c.type);
    const lastTransitionTime =
      old && old.status === c.status ? old.lastTransitionTime : new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    try {
      await new ResourceClient<ApiObject>(this.d.client, PODS).namespace(pod.metadata.namespace ?? '').patch(
        pod.metadata.name ?? '',
        {
          status: { conditions: [{ ...c, lastProbeTime: null, lastTransitionTime }] },
        },
        { type: 'strategic', subresource: 'status' },
      );
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}
