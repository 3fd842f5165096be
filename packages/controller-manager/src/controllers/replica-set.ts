import {
  isNotFound,
  type DaemonSet,
  isStatusError,
  type Pod,
  type ReplicaSet,
  type ReplicaSetCondition,
  type ReplicaSetStatus,
} from '@svc/api';
import { NAMESPACE_INDEX, objectKey, type GroupVersionResource } from '@svc/client';
import { jsonEqual, labelSelectorFromObject, nameIsDnsSubdomain, type LabelSelector } from '@svc/machinery';
import {
  informer,
  newController,
  type ControllerContext,
  type ControllerDefinition,
  type RunnableController,
} from '../controller-context.js';
import { R } from '../resources.js';
import { claimObjects, controllerOf, newControllerRef, recheckOwner } from './controller-ref.js';
import { ControllerExpectations } from './expectations.js';
import { watchOwnedPods, type PodOwner } from './owned-pods.js';
import { isPodActive, isPodAvailable, isPodReady, sortPodsForDeletion } from './pod-util.js';
import { nowTime, replicasOf, writeStatusRetryingOnce } from './workload-util.js';
import { namespacedApi, ownerScaffold, selectorOrSkip } from './owner-scaffold.js';

/** Most pods created or deleted in one sync (Kubernetes' BurstReplicas). */
const BURST_REPLICAS = 500;
/** Calls `fn` `count` times in batches of 1, 2, 4, ... (concurrently within a batch); stops after the first batch with a failure. Answers the successes and that failure. */
export async function slowStartBatch(
  count: number,
  initialBatch: number,
  fn: () => Promise<void>,
): Promise<{ successes: number; error?: unknown }> {
  let remaining = count;
  let successes = 0;
  for (let batch = Math.min(remaining, initialBatch); batch > 0; batch = Math.min(2 * batch, remaining)) {
    const results = await Promise.allSettled(Array.from({ length: batch }, fn));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    successes += results.filter((r) => r.status === 'fulfilled').length;
    if (failed) return { successes, error: failed.reason };
    remaining -= batch;
  }
  return { successes };
}

/**
 * The pod a ReplicaSet (or another workload, `kind`: apps/v1 or a core/v1 ReplicationController)
 * creates from its template (Kubernetes' GetPodFromTemplate): template labels, annotations,
 * finalizers and spec, name `<owner>-<random>`, controlled by the owner.
 */
export function podFromTemplate(
  rs: ReplicaSet | DaemonSet,
  kind: 'ReplicaSet' | 'DaemonSet' | 'ReplicationController' = 'ReplicaSet',
): Pod {
  const t = rs.spec.template ?? {};
  const name = rs.metadata.name ?? '';
  const prefix = nameIsDnsSubdomain(`${name}-`, true) ? `${name}-` : name;
  const metadata: Pod['metadata'] = {
    generateName: prefix,
    ownerReferences: [newControllerRef(rs, kind === 'ReplicationController' ? 'v1' : 'apps/v1', kind)],
  };
  if (t.metadata?.labels) metadata.labels = { ...t.metadata.labels };
  if (t.metadata?.annotations) metadata.annotations = { ...t.metadata.annotations };
  if (t.metadata?.finalizers) metadata.finalizers = [...t.metadata.finalizers];
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: structuredClone(t.spec ?? {}) };
}

/** Drops zero counts (Kubernetes' omitempty) except those listed in `keep`. */
export function omitZero<T extends object>(status: T, keep: readonly string[] = []): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(status)) {
    if (v === undefined || ((v === 0 || (Array.isArray(v) && v.length === 0)) && !keep.includes(k))) continue;
    out[k] = v;
  }
  return out as T;
}

/**
 * The status a sync writes (Kubernetes' calculateStatus): counts over the claimed active pods,
 * and a `ReplicaFailure` condition while creating or deleting pods fails.
 */
export function calculateReplicaSetStatus(
  rs: ReplicaSet,
  pods: readonly Pod[],
  { manageError, nowMs = Date.now() }: { manageError?: unknown; nowMs?: number } = {},
): ReplicaSetStatus {
  const templateLabels = rs.spec.template?.metadata?.labels ?? {};
  const minReady = rs.spec.minReadySeconds ?? 0;
  let fullyLabeled = 0;
  let ready = 0;
  let available = 0;
  for (const p of pods) {
    const labels = p.metadata.labels ?? {};
    if (Object.entries(templateLabels).every(([k, v]) => labels[k] === v)) fullyLabeled++;
    if (isPodReady(p)) {
      ready++;
      if (isPodAvailable(p, minReady, nowMs)) available++;
    }
  }
  let conditions = [...(rs.status?.conditions ?? [])];
  const failure = conditions.find((c) => c.type === 'ReplicaFailure');
  if (manageError !== undefined && !failure) {
    const reason = pods.length < replicasOf(rs) ? 'FailedCreate' : 'FailedDelete';
    const message = manageError instanceof Error ? manageError.message : String(manageError);
    const c: ReplicaSetCondition = {
      type: 'ReplicaFailure',
      status: 'True',
      lastTransitionTime: nowTime(nowMs),
      reason,
      message,
    };
    conditions.push(c);
  } else if (manageError === undefined && failure) {
    conditions = conditions.filter((c) => c.type !== 'ReplicaFailure');
  }
  return omitZero(
    {
      replicas: pods.length,
      fullyLabeledReplicas: fullyLabeled,
      readyReplicas: ready,
      availableReplicas: available,
      observedGeneration: rs.status?.observedGeneration,
      conditions,
    },
    ['replicas'],
  );
}

const hasNamespaceTerminatingCause = (e: unknown): boolean =>
  isStatusError(e) && (e.status.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating');

/** An owner of replicas: a ReplicaSet's status, its pods through a selector. */
type ReplicaOwner = PodOwner & { status?: ReplicaSetStatus };

/**
 * The kind a replica-keeping controller drives. Kubernetes runs its ReplicaSet controller on
 * ReplicationControllers through a conversion; `asReplicaSet` is that conversion (the object
 * as a ReplicaSet, its selector as a label selector object). Both kinds have the same status.
 */
export interface ReplicaKind<O extends ReplicaOwner> {
  /** The controller's name (logs, events, metrics) and its work queue's. */
  name: string;
  queueName: string;
  workers(ctx: ControllerContext): number | undefined;
  resource(): GroupVersionResource;
  /** As the pods' controller references name it. */
  apiVersion: string;
  group: string;
  kind: 'ReplicaSet' | 'ReplicationController';
  asReplicaSet(o: O): ReplicaSet;
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * `replicaset-controller` (and, through a `ReplicaKind`, `replicationcontroller-controller`):
 * keeps `spec.replicas` active pods matching each ReplicaSet's selector, as Kubernetes v1.32's
 * ReplicaSet controller does: claims pods (adopts matching orphans, releases owned pods that
 * stopped matching), creates missing pods from the template in slow-start batches, deletes
 * surplus pods in deletion-preference order, and writes `status` through `/status`. Creations
 * and deletions it issued and has not yet seen in its pod informer are expectations: until
 * they are met (or 5 minutes pass) it does not create or delete again for that ReplicaSet.
 * Pods that are being deleted or finished do not count.
 */
export function replicaKindController<O extends ReplicaOwner>(k: ReplicaKind<O>): ControllerDefinition {
  return { name: k.name, build: (ctx) => buildReplicaController(ctx, k) };
}

function buildReplicaController<O extends ReplicaOwner>(ctx: ControllerContext, k: ReplicaKind<O>): RunnableController {
  const NAME = k.name;
  const owners = informer<O>(ctx, k.resource());
  const pods = informer<Pod>(ctx, R.pods());
  const expectations = new ControllerExpectations();
  /** Kubernetes' pod-control events are recorded on the owner. */
  const { log, record } = ownerScaffold<ReplicaSet>(ctx, { name: NAME, apiVersion: k.apiVersion, kind: k.kind });

  const rsApi = namespacedApi<O>(ctx, k.resource());
  const podApi = namespacedApi<Pod>(ctx, R.pods());

  const controller = newController(ctx, {
    name: NAME,
    queueName: k.queueName,
    workers: k.workers(ctx),
    reconcile: async (key) => {
      const stored = owners.store.get(key);
      if (!stored) {
        expectations.delete(key);
        return;
      }
      const rs = k.asReplicaSet(stored);
      const ns = rs.metadata.namespace ?? '';
      const needsSync = expectations.satisfied(key);
      const selector = selectorOrSkip(rs.spec.selector, { log, key });
      if (!selector) return;
      const active = pods.store.byIndex(NAMESPACE_INDEX, ns).filter(isPodActive);
      const claimed = await claimObjects<Pod>({
        owner: rs,
        ownerRef: newControllerRef(rs, k.apiVersion, k.kind),
        selector,
        objects: active,
        client: podApi(ns),
        canAdopt: recheckOwner(rs, () => rsApi(ns).get(rs.metadata.name ?? '')),
      });
      let manageError: unknown;
      if (needsSync && !rs.metadata.deletionTimestamp) {
        try {
          await manageReplicas(key, rs, claimed);
        } catch (e) {
          manageError = e;
        }
      }
      const updated = k.asReplicaSet(
        await updateStatus(stored, calculateReplicaSetStatus(rs, claimed, { manageError })),
      );
      if (manageError !== undefined) throw manageError;
      const minReady = updated.spec.minReadySeconds ?? 0;
      const st = updated.status ?? {};
      // Resync after minReadySeconds as a last line of defense against clock skew (as Kubernetes).
      if (
        minReady > 0 &&
        (st.readyReplicas ?? 0) === replicasOf(updated) &&
        (st.availableReplicas ?? 0) !== replicasOf(updated)
      ) {
        return { requeueAfter: minReady * 1000 };
      }
      return undefined;
    },
  });

  /** Creates or deletes pods so `claimed` reaches `spec.replicas`, at most BURST_REPLICAS per call. */
  async function manageReplicas(key: string, rs: ReplicaSet, claimed: readonly Pod[]): Promise<void> {
    const ns = rs.metadata.namespace ?? '';
    let diff = claimed.length - replicasOf(rs);
    if (diff < 0) {
      diff = Math.min(-diff, BURST_REPLICAS);
      expectations.expectCreations(key, diff);
      log.v(2).info('too few replicas', { key, need: replicasOf(rs), creating: diff });
      const pod = podFromTemplate(rs, k.kind);
      const { successes, error } = await slowStartBatch(diff, 1, async () => {
        if (Object.keys(pod.metadata.labels ?? {}).length === 0) throw new Error('unable to create pods, no labels');
        try {
          const created = await podApi(ns).create(structuredClone(pod));
          record(rs, {
            type: 'Normal',
            reason: 'SuccessfulCreate',
            action: 'Create',
            message: `Created pod: ${created.metadata.name ?? ''}`,
          });
        } catch (e) {
          // Nothing can be created in a namespace being deleted; not a failure (as Kubernetes).
          if (!hasNamespaceTerminatingCause(e)) {
            record(rs, {
              type: 'Warning',
              reason: 'FailedCreate',
              action: 'Create',
              message: `Error creating: ${errorText(e)}`,
            });
            throw e;
          }
        }
      });
      // Pods never attempted will not be seen: stop expecting them.
      for (let i = successes; i < diff; i++) expectations.creationObserved(key);
      if (error !== undefined) throw error;
      return;
    }
    if (diff === 0) return;
    diff = Math.min(diff, BURST_REPLICAS);
    log.v(2).info('too many replicas', { key, need: replicasOf(rs), deleting: diff });
    const victims = diff < claimed.length ? sortPodsForDeletion(claimed, relatedPods(rs)).slice(0, diff) : [...claimed];
    expectations.expectDeletions(key, victims.map(objectKey));
    const results = await Promise.allSettled(
      victims.map(async (p) => {
        try {
          await podApi(ns).delete(p.metadata.name ?? '');
          record(rs, {
            type: 'Normal',
            reason: 'SuccessfulDelete',
            action: 'Delete',
            message: `Deleted pod: ${p.metadata.name ?? ''}`,
          });
        } catch (e) {
          // The informer will not see this deletion.
          expectations.deletionObserved(key, objectKey(p));
          if (isNotFound(e)) return;
          record(rs, {
            type: 'Warning',
            reason: 'FailedDelete',
            action: 'Delete',
            message: `Error deleting: ${errorText(e)}`,
          });
          throw e;
        }
      }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Pods of every ReplicaSet with the same controller as `rs` (just `rs` when it has none), for the same-node rank. */
  function relatedPods(rs: ReplicaSet): Pod[] {
    const ns = rs.metadata.namespace ?? '';
    const owner = controllerOf(rs);
    const siblings = owner
      ? owners.store
          .byIndex(NAMESPACE_INDEX, ns)
          .filter((o) => controllerOf(o)?.uid === owner.uid)
          .map(k.asReplicaSet)
      : [rs];
    const seen = new Set<string>();
    const out: Pod[] = [];
    const inNs = pods.store.byIndex(NAMESPACE_INDEX, ns);
    for (const s of siblings) {
      let sel: LabelSelector;
      try {
        sel = labelSelectorFromObject(s.spec.selector);
      } catch {
        continue;
      }
      for (const p of inNs) {
        if (!sel.matches(p.metadata.labels) || seen.has(p.metadata.uid ?? '')) continue;
        seen.add(p.metadata.uid ?? '');
        out.push(p);
      }
    }
    return out;
  }

  /** Writes `status` (with observedGeneration) unless it is unchanged; answers the object as stored. */
  async function updateStatus(cached: O, status: ReplicaSetStatus): Promise<O> {
    const old = cached.status ?? {};
    const generation = cached.metadata.generation;
    const same =
      (['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas'] as const).every(
        (k) => (old[k] ?? 0) === (status[k] ?? 0),
      ) &&
      old.observedGeneration === generation &&
      jsonEqual(old.conditions ?? [], status.conditions ?? []);
    if (same) return cached;
    return writeStatusRetryingOnce(rsApi(cached.metadata.namespace ?? ''), {
      cached,
      status: (): O['status'] => ({ ...status, observedGeneration: generation }),
    });
  }

  watchOwnedPods({
    controller,
    owners,
    pods,
    owner: { group: k.group, kind: k.kind },
    expectations,
    selectorOf: (o) => labelSelectorFromObject(k.asReplicaSet(o).spec.selector),
  });
  return controller;
}

export const replicaSetController: ControllerDefinition = replicaKindController<ReplicaSet>({
  name: 'replicaset-controller',
  queueName: 'replicaset',
  workers: (ctx) => ctx.options.concurrentSyncs.replicaset,
  resource: R.replicaSets,
  apiVersion: 'apps/v1',
  group: 'apps',
  kind: 'ReplicaSet',
  asReplicaSet: (rs) => rs,
});
