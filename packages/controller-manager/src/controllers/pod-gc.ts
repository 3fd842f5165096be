import { isNotFound, nodeTaintKey, type Node, type Pod, type PodCondition } from '@svc/api';
import { ResourceClient } from '@svc/client';
import { Counter, type Registry } from 'prom-client';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';
import { nodeCondition, nowTime } from './node-taints.js';

const NAME = 'pod-garbage-collector-controller';
/** The one key of the periodic sweep. */
const SWEEP = 'gc';

/** Kubernetes' podgc reasons, as its metrics label them. */
type GcReason = 'terminated' | 'orphaned' | 'terminating_unscheduled' | 'terminating_out_of_service';

/** How often the sweep runs and how long a missing node is waited for (Kubernetes: 20 s and 40 s). */
export interface PodGcTiming {
  periodMs: number;
  quarantineMs: number;
}

/** A pod that finished: any phase but Pending, Running and Unknown (Kubernetes' isPodTerminated). */
export function isPodTerminated(p: Pod): boolean {
  const phase = p.status?.phase;
  return phase !== 'Pending' && phase !== 'Running' && phase !== 'Unknown';
}

const isEvicted = (p: Pod): boolean => p.status?.phase === 'Failed' && p.status.reason === 'Evicted';

/** Kubernetes' byEvictionAndCreationTimestamp: evicted pods first, then oldest, then by name. */
export function byEvictionAndCreation(a: Pod, b: Pod): number {
  if (isEvicted(a) !== isEvicted(b)) return isEvicted(a) ? -1 : 1;
  const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  if (ta !== tb) return ta - tb;
  const na = a.metadata.name ?? '';
  const nb = b.metadata.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}

const isNodeReady = (n: Node): boolean => nodeCondition(n, 'Ready')?.status === 'True';

/** A counter registered once per registry (the manager may build its controllers again after losing the lease). */
function counter(registry: Registry, name: string, help: string): Counter<'namespace' | 'reason'> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Counter<'namespace' | 'reason'>;
  return new Counter({ name, help, labelNames: ['namespace', 'reason'], registers: [registry] });
}

/**
 * `pod-garbage-collector-controller` (`podgc`), as Kubernetes v1.32's: every `periodMs` it
 * force-deletes (grace period 0) terminated pods beyond `--terminated-pod-gc-threshold`, evicted
 * then oldest first (0 or less turns that off); pods bound to a node that has been missing from
 * the node cache for `quarantineMs` and that a fresh read confirms gone (after setting
 * DisruptionTarget, reason DeletionByPodGC); terminating pods never scheduled; and terminating
 * pods on a not-ready node tainted out-of-service. A pod not yet Succeeded or Failed is marked
 * Failed through `/status` before its deletion.
 */
export function makePodGcController(
  timing: PodGcTiming = { periodMs: 20_000, quarantineMs: 40_000 },
): ControllerDefinition {
  return {
    name: NAME,
    build(ctx) {
      const pods = informer<Pod>(ctx, R.pods());
      const nodes = informer<Node>(ctx, R.nodes());
      const log = ctx.logger.with({ controller: NAME });
      const threshold = ctx.options.terminatedPodGcThreshold;
      const registry = ctx.metrics.registry;
      const deleting = counter(
        registry,
        'pod_gc_collector_force_delete_pods_total',
        'Number of pods that are being forcefully deleted since the Pod GC Controller started.',
      );
      const failing = counter(
        registry,
        'pod_gc_collector_force_delete_pod_errors_total',
        'Number of errors encountered when forcefully deleting the pods since the Pod GC Controller started.',
      );
      const podApi = (ns: string): ResourceClient<Pod> => new ResourceClient<Pod>(ctx.client, R.pods()).namespace(ns);
      const nodeApi = new ResourceClient<Node>(ctx.client, R.nodes());
      /** Node name → when a pod bound to it was first seen with the node missing. */
      const missingSince = new Map<string, number>();

      /** Kubernetes' markFailedAndDeletePodWithCondition; a pod already gone is no error. */
      async function markFailedAndDelete(pod: Pod, reason: GcReason, condition?: PodCondition): Promise<void> {
        const ns = pod.metadata.namespace ?? '';
        const name = pod.metadata.name ?? '';
        deleting.inc({ namespace: ns, reason });
        log.info('force deleting pod', { pod: `${ns}/${name}`, reason });
        try {
          const phase = pod.status?.phase;
          if (phase !== 'Succeeded' && phase !== 'Failed') {
            let conditions = pod.status?.conditions ?? [];
            if (condition) {
              const old = conditions.find((c) => c.type === condition.type);
              const changed = old?.status !== condition.status;
              const next = { ...condition, lastTransitionTime: changed ? nowTime() : old.lastTransitionTime };
              conditions = [...conditions.filter((c) => c !== old), next];
            }
            await podApi(ns).patch(
              name,
              {
                metadata: { uid: pod.metadata.uid },
                status: { phase: 'Failed', ...(condition ? { conditions } : {}) },
              },
              { type: 'merge', subresource: 'status' },
            );
          }
          await podApi(ns).delete(name, { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } });
        } catch (e) {
          if (isNotFound(e)) return;
          failing.inc({ namespace: ns, reason });
          log.error('force deletion failed', { pod: `${ns}/${name}`, reason, error: String(e) });
        }
      }

      const deleteAll = (list: readonly Pod[], reason: GcReason, condition?: PodCondition): Promise<unknown> =>
        Promise.all(list.map((p) => markFailedAndDelete(p, reason, condition)));

      async function gcTerminated(all: readonly Pod[]): Promise<void> {
        const terminated = all.filter(isPodTerminated);
        const count = terminated.length - threshold;
        if (count <= 0) return;
        log.info('garbage collecting terminated pods', { count });
        await deleteAll([...terminated].sort(byEvictionAndCreation).slice(0, count), 'terminated');
      }

      async function gcTerminatingOutOfService(all: readonly Pod[]): Promise<void> {
        const outOfService = nodeTaintKey('out-of-service');
        const victims = all.filter((p) => {
          if (!p.metadata.deletionTimestamp) return false;
          const node = nodes.store.get(p.spec?.nodeName ?? '');
          return (
            node !== undefined && !isNodeReady(node) && (node.spec?.taints ?? []).some((t) => t.key === outOfService)
          );
        });
        if (victims.length === 0) return;
        await deleteAll([...victims].sort(byEvictionAndCreation), 'terminating_out_of_service');
      }

      /** Nodes missing for the quarantine that a read confirms gone (Kubernetes' discoverDeletedNodes). */
      async function deletedNodes(all: readonly Pod[]): Promise<Set<string>> {
        const now = Date.now();
        for (const p of all) {
          const n = p.spec?.nodeName;
          if (n && !nodes.store.get(n) && !missingSince.has(n)) missingSince.set(n, now);
        }
        const gone = new Set<string>();
        for (const [n, since] of [...missingSince]) {
          if (since + timing.quarantineMs > now) continue;
          missingSince.delete(n);
          if (nodes.store.get(n)) continue;
          try {
            await nodeApi.get(n);
          } catch (e) {
            if (isNotFound(e)) gone.add(n);
            else log.error('error while getting node', { node: n, error: String(e) });
          }
        }
        return gone;
      }

      async function gcOrphaned(all: readonly Pod[]): Promise<void> {
        const gone = await deletedNodes(all);
        if (gone.size === 0) return;
        const orphans = all.filter((p) => gone.has(p.spec?.nodeName ?? ''));
        await deleteAll(orphans, 'orphaned', {
          type: 'DisruptionTarget',
          status: 'True',
          reason: 'DeletionByPodGC',
          message: 'PodGC: node no longer exists',
        });
      }

      const gcUnscheduledTerminating = (all: readonly Pod[]): Promise<unknown> =>
        deleteAll(
          all.filter((p) => p.metadata.deletionTimestamp && !p.spec?.nodeName),
          'terminating_unscheduled',
        );

      const controller = newController(ctx, {
        name: NAME,
        queueName: 'orphaned_pods_nodes',
        reconcile: async () => {
          const all = pods.store.list();
          if (threshold > 0) await gcTerminated(all);
          await gcTerminatingOutOfService(all);
          await gcOrphaned(all);
          await gcUnscheduledTerminating(all);
          return { requeueAfter: timing.periodMs };
        },
      });
      // Registered so `run` waits for both caches; the sweep is periodic, not event-driven.
      controller.watch(pods, () => []);
      controller.watch(nodes, () => []);
      controller.enqueue(SWEEP);
      return controller;
    },
  };
}

export const podGcController = makePodGcController();
