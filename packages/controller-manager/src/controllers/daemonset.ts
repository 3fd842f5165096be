import {
  isAlreadyExists,
  isNotFound,
  type ControllerRevision,
  type DaemonSet,
  type DaemonSetStatus,
  type Node,
  type Pod,
} from '@svc/api';
import { NAMESPACE_INDEX, objectKey } from '@svc/client';
import { jsonEqual, type LabelSelector } from '@svc/machinery';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';
import { claimObjects, controllerOf, newControllerRef, recheckOwner } from './controller-ref.js';
import {
  REVISION_HASH_LABEL,
  affinityForNode,
  allowsSurge,
  byCreationAndPhase,
  calculateDaemonSetStatus,
  daemonPodTemplate,
  groupByNode,
  matchesRevision,
  nodeShouldRunDaemonPod,
  planRollingUpdate,
  newControllerRevision,
  type NodePods,
} from './daemonset-util.js';
import { writeStatusRetryingOnce } from './workload-util.js';
import { namespacedApi, ownerScaffold, selectorOrSkip } from './owner-scaffold.js';
import { ControllerExpectations } from './expectations.js';
import { watchOwnedPods } from './owned-pods.js';
import { isPodAvailable, isPodReady } from './pod-util.js';
import { omitZero, podFromTemplate, slowStartBatch } from './replica-set.js';

const NAME = 'daemonset-controller';
/** Most pods created or deleted in one sync (Kubernetes' BurstReplicas for DaemonSets). */
const BURST_REPLICAS = 250;
/** Back-off before a failed daemon pod on a node is replaced again (Kubernetes: 1 s doubling up to 15 min). */
const FAILED_POD_BACKOFF_MS = { initial: 1000, max: 15 * 60_000 };

/** What one sync of a DaemonSet works from: its key, the cached DaemonSet, the nodes, its claimed pods and current hash. */
interface SyncState {
  key: string;
  ds: DaemonSet;
  nodeList: readonly Node[];
  claimed: readonly Pod[];
  hash: string;
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const revisionHash = (r: ControllerRevision): string => r.metadata.labels?.[REVISION_HASH_LABEL] ?? '';

/**
 * `daemonset-controller`: runs one pod of each DaemonSet on every node that should run it, as
 * Kubernetes v1.32 does. A node qualifies when it matches the template's nodeSelector and
 * required node affinity and its NoSchedule/NoExecute taints are tolerated (with the daemon
 * tolerations added); a pod stays on a node whose only untolerated taints are NoSchedule.
 * Pods are made from the template with the `controller-revision-hash` and
 * `pod-template-generation` labels, the daemon tolerations and a required node affinity
 * `metadata.name In [node]` (the scheduler binds them). The template's history is kept in
 * ControllerRevisions (one per template, named `<ds>-<hash>`, `revision` counting up, the
 * oldest unused beyond `revisionHistoryLimit` deleted); a template equal to an older revision's
 * (rollout undo) takes that revision over with a new number. RollingUpdate replaces old pods
 * within maxUnavailable (or surges with maxSurge); OnDelete waits for pods to be deleted.
 * Failed pods are replaced with a per-node back-off; status counts are written through `/status`.
 */
export const daemonSetController: ControllerDefinition = {
  name: NAME,
  build(ctx) {
    const dss = informer<DaemonSet>(ctx, R.daemonSets());
    const pods = informer<Pod>(ctx, R.pods());
    const nodes = informer<Node>(ctx, R.nodes());
    const revisions = informer<ControllerRevision>(ctx, R.controllerRevisions());
    const expectations = new ControllerExpectations();
    const failedBackoff = new Map<string, { delayMs: number; at: number }>();
    const { log, record } = ownerScaffold<DaemonSet>(ctx, { name: NAME, apiVersion: 'apps/v1', kind: 'DaemonSet' });

    const dsApi = namespacedApi<DaemonSet>(ctx, R.daemonSets());
    const podApi = namespacedApi<Pod>(ctx, R.pods());
    const revApi = namespacedApi<ControllerRevision>(ctx, R.controllerRevisions());

    const controller = newController(ctx, {
      name: NAME,
      queueName: 'daemonset',
      workers: ctx.options.concurrentSyncs.daemonset,
      reconcile: async (key) => {
        const ds = dss.store.get(key);
        if (!ds) {
          expectations.delete(key);
          return undefined;
        }
        const selector = selectorOrSkip(ds.spec.selector, { log, key });
        if (!selector) return undefined;
        if (ds.metadata.deletionTimestamp) return undefined;
        const nodeList = nodes.store.list();
        const { current, old } = await constructHistory(ds, selector);
        const hash = revisionHash(current);
        const claimed = await claimPods(ds, selector);
        const state: SyncState = { key, ds, nodeList, claimed, hash };
        if (!expectations.satisfied(key)) return writeStatus(state, false);
        let requeueAfter = await manage(state);
        if (expectations.satisfied(key) && ds.spec.updateStrategy?.type === 'RollingUpdate') {
          const plan = planRollingUpdate({
            ds,
            nodes: nodeList,
            nodePods: groupByNode(claimed.filter((p) => !(isTerminal(p) && p.metadata.deletionTimestamp))),
            hash,
            nowMs: Date.now(),
          });
          await syncNodes(key, ds, { deletePods: plan.deletePods, createOn: plan.createOn, hash });
        }
        await cleanupHistory(ds, old, claimed);
        const after = await writeStatus(state, true);
        if (after?.requeueAfter !== undefined) requeueAfter = Math.min(requeueAfter ?? Infinity, after.requeueAfter);
        return requeueAfter === undefined ? undefined : { requeueAfter };
      },
    });

    const isTerminal = (p: Pod): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

    /** Pods the DaemonSet controls (adopting matching orphans, releasing those that stopped matching). */
    function claimPods(ds: DaemonSet, selector: LabelSelector): Promise<Pod[]> {
      const ns = ds.metadata.namespace ?? '';
      return claimObjects<Pod>({
        owner: ds,
        ownerRef: newControllerRef(ds, 'apps/v1', 'DaemonSet'),
        selector,
        objects: pods.store.byIndex(NAMESPACE_INDEX, ns),
        client: podApi(ns),
        canAdopt: recheckOwner(ds, () => dsApi(ns).get(ds.metadata.name ?? '')),
      });
    }

    /**
     * Kubernetes' constructHistory: the revision of the current template (created when missing,
     * renumbered to the newest when an older one matches) and the others.
     */
    async function constructHistory(
      ds: DaemonSet,
      selector: LabelSelector,
    ): Promise<{ current: ControllerRevision; old: ControllerRevision[] }> {
      const ns = ds.metadata.namespace ?? '';
      const owned = await claimObjects<ControllerRevision>({
        owner: ds,
        ownerRef: newControllerRef(ds, 'apps/v1', 'DaemonSet'),
        selector,
        objects: revisions.store.byIndex(NAMESPACE_INDEX, ns),
        client: revApi(ns),
        canAdopt: recheckOwner(ds, () => dsApi(ns).get(ds.metadata.name ?? '')),
      });
      const matching: ControllerRevision[] = [];
      const old: ControllerRevision[] = [];
      for (let r of owned) {
        if (!revisionHash(r)) {
          // The hash label is the revision's name when missing (as Kubernetes, so collisions do not matter).
          const labels = { ...(r.metadata.labels ?? {}), [REVISION_HASH_LABEL]: r.metadata.name ?? '' };
          r = await revApi(ns).update({ ...structuredClone(r), metadata: { ...r.metadata, labels } });
        }
        (matchesRevision(ds, r) ? matching : old).push(r);
      }
      const next = Math.max(0, ...old.map((r) => r.revision ?? 0)) + 1;
      if (matching.length === 0) return { current: await snapshot(ds, next), old };
      // Duplicates of the current template (Kubernetes' dedupCurHistories): keep the newest.
      matching.sort((a, b) => (b.revision ?? 0) - (a.revision ?? 0));
      const [keep, ...dups] = matching as [ControllerRevision, ...ControllerRevision[]];
      for (const d of dups) await deleteRevision(ns, d);
      if ((keep.revision ?? 0) >= next) return { current: keep, old };
      const renumbered = await revApi(ns).update({ ...structuredClone(keep), revision: next });
      return { current: renumbered, old };
    }

    /** Kubernetes' snapshot: a ControllerRevision `<ds>-<hash>`; a name taken by another template bumps collisionCount. */
    async function snapshot(ds: DaemonSet, revision: number): Promise<ControllerRevision> {
      const ns = ds.metadata.namespace ?? '';
      const rev = newControllerRevision(ds, { kind: 'DaemonSet', revision, collisionCount: ds.status?.collisionCount });
      const name = rev.metadata.name ?? '';
      try {
        return await revApi(ns).create(rev);
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
        const existing = await revApi(ns).get(name);
        if (matchesRevision(ds, existing)) return existing;
        const fresh = await dsApi(ns).get(ds.metadata.name ?? '');
        if ((fresh.status?.collisionCount ?? 0) !== (ds.status?.collisionCount ?? 0))
          throw new Error(`found a stale collision count of DaemonSet ${ds.metadata.name ?? ''}; will retry`, {
            cause: e,
          });
        const collisionCount = (fresh.status?.collisionCount ?? 0) + 1;
        await dsApi(ns).update({ ...fresh, status: { ...fresh.status, collisionCount } }, { subresource: 'status' });
        log.v(2).info('hash collision, bumping collisionCount', { daemonset: objectKey(ds), collisionCount });
        throw e;
      }
    }

    async function deleteRevision(ns: string, r: ControllerRevision): Promise<void> {
      try {
        await revApi(ns).delete(r.metadata.name ?? '');
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }

    /** Kubernetes' cleanupHistory: the oldest revisions beyond revisionHistoryLimit that no live pod uses. */
    async function cleanupHistory(ds: DaemonSet, old: ControllerRevision[], claimed: readonly Pod[]): Promise<void> {
      let toKill = old.length - (ds.spec.revisionHistoryLimit ?? 10);
      if (toKill <= 0) return;
      const live = new Set(claimed.map((p) => p.metadata.labels?.[REVISION_HASH_LABEL]).filter(Boolean));
      for (const r of [...old].sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0))) {
        if (toKill <= 0) break;
        if (live.has(revisionHash(r))) continue;
        await deleteRevision(ds.metadata.namespace ?? '', r);
        toKill--;
      }
    }

    /** A failed pod on `node` may be replaced now; otherwise the delay until it may. */
    function failedPodBackoff(ds: DaemonSet, node: string, nowMs: number): number | undefined {
      const k = `${ds.metadata.uid ?? ''}/${node}`;
      const b = failedBackoff.get(k);
      if (b && nowMs - b.at < b.delayMs) return b.delayMs - (nowMs - b.at);
      const delayMs = b ? Math.min(b.delayMs * 2, FAILED_POD_BACKOFF_MS.max) : FAILED_POD_BACKOFF_MS.initial;
      failedBackoff.set(k, { delayMs, at: nowMs });
      return undefined;
    }

    /**
     * Kubernetes' manage (podsShouldBeOnNode for every node): which nodes need a pod and which
     * pods must go. Answers the delay after which failed pods held back may be replaced.
     */
    async function manage({ key, ds, nodeList, claimed, hash }: SyncState): Promise<number | undefined> {
      const nowMs = Date.now();
      const nodePods: NodePods = groupByNode(claimed.filter((p) => !(isTerminal(p) && p.metadata.deletionTimestamp)));
      const createOn: string[] = [];
      const deletePods: string[] = [];
      let retryAfter: number | undefined;
      for (const node of nodeList) {
        const name = node.metadata.name ?? '';
        const { shouldRun, shouldContinueRunning } = nodeShouldRunDaemonPod(node, ds);
        const onNode = nodePods.get(name);
        if (shouldRun && !onNode) {
          createOn.push(name);
          continue;
        }
        if (!onNode) continue;
        if (!shouldContinueRunning) {
          for (const p of onNode) if (!p.metadata.deletionTimestamp) deletePods.push(p.metadata.name ?? '');
          continue;
        }
        const running: Pod[] = [];
        for (const p of onNode) {
          if (p.metadata.deletionTimestamp) continue;
          if (p.status?.phase === 'Failed') {
            const wait = failedPodBackoff(ds, name, nowMs);
            if (wait !== undefined) {
              retryAfter = Math.min(retryAfter ?? Infinity, wait);
              continue;
            }
            record(ds, {
              type: 'Warning',
              reason: 'FailedDaemonPod',
              message: `Found failed daemon pod ${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''} on node ${name}, will try to kill it`,
            });
            deletePods.push(p.metadata.name ?? '');
          } else if (p.status?.phase === 'Succeeded') deletePods.push(p.metadata.name ?? '');
          else running.push(p);
        }
        running.sort(byCreationAndPhase);
        if (!allowsSurge(ds)) {
          // Without surge one pod per node: all but the oldest go.
          for (const p of running.slice(1)) deletePods.push(p.metadata.name ?? '');
          continue;
        }
        if (running.length === 0) {
          if (shouldRun) createOn.push(name);
          continue;
        }
        // With surge: the oldest current pod and the oldest old one may both stay while the current one is not available.
        let oldestNew: Pod | undefined;
        let oldestOld: Pod | undefined;
        for (const p of running) {
          if (p.metadata.labels?.[REVISION_HASH_LABEL] === hash) {
            if (!oldestNew) {
              oldestNew = p;
              continue;
            }
          } else if (!oldestOld) {
            oldestOld = p;
            continue;
          }
          deletePods.push(p.metadata.name ?? '');
        }
        if (
          oldestNew &&
          oldestOld &&
          (!isPodReady(oldestOld) || isPodAvailable(oldestNew, ds.spec.minReadySeconds ?? 0, nowMs))
        )
          deletePods.push(oldestOld.metadata.name ?? '');
      }
      // Unscheduled pods meant for nodes that are gone (Kubernetes' getUnscheduledPodsWithoutNode).
      const known = new Set(nodeList.map((n) => n.metadata.name ?? ''));
      for (const [node, ps] of nodePods) {
        if (known.has(node)) continue;
        for (const p of ps)
          if (!p.spec?.nodeName && !p.metadata.deletionTimestamp) deletePods.push(p.metadata.name ?? '');
      }
      await syncNodes(key, ds, { deletePods, createOn, hash });
      return retryAfter;
    }

    /** Kubernetes' syncNodes: creates pods for `createOn` (slow start) and deletes `deletePods`, under expectations. */
    async function syncNodes(
      key: string,
      ds: DaemonSet,
      { deletePods, createOn, hash }: { deletePods: string[]; createOn: string[]; hash: string },
    ): Promise<void> {
      const ns = ds.metadata.namespace ?? '';
      const creates = createOn.slice(0, BURST_REPLICAS);
      const deletes = deletePods.slice(0, BURST_REPLICAS);
      if (creates.length === 0 && deletes.length === 0) return;
      expectations.expect(key, { creations: creates.length, deletions: deletes.map((n) => `${ns}/${n}`) });
      log.v(2).info('syncing nodes', { key, creating: creates.length, deleting: deletes.length });
      const template = daemonPodTemplate(ds, hash);
      const queue = [...creates];
      const { successes, error } = await slowStartBatch(creates.length, 1, async () => {
        const node = queue.shift() ?? '';
        const pod = podFromTemplate({ ...ds, spec: { ...ds.spec, template } }, 'DaemonSet');
        pod.spec = { ...pod.spec, affinity: affinityForNode(pod.spec?.affinity, node) } as Pod['spec'];
        try {
          const made = await podApi(ns).create(pod);
          record(ds, {
            type: 'Normal',
            reason: 'SuccessfulCreate',
            action: 'Create',
            message: `Created pod: ${made.metadata.name ?? ''}`,
          });
        } catch (e) {
          record(ds, {
            type: 'Warning',
            reason: 'FailedCreate',
            action: 'Create',
            message: `Error creating: ${errorText(e)}`,
          });
          throw e;
        }
      });
      // Pods never attempted or refused will not be seen: stop expecting them.
      for (let i = successes; i < creates.length; i++) expectations.creationObserved(key);
      const results = await Promise.allSettled(
        deletes.map(async (name) => {
          try {
            await podApi(ns).delete(name);
            record(ds, {
              type: 'Normal',
              reason: 'SuccessfulDelete',
              action: 'Delete',
              message: `Deleted pod: ${name}`,
            });
          } catch (e) {
            expectations.deletionObserved(key, `${ns}/${name}`);
            if (isNotFound(e)) return;
            record(ds, {
              type: 'Warning',
              reason: 'FailedDelete',
              action: 'Delete',
              message: `Error deleting: ${errorText(e)}`,
            });
            throw e;
          }
        }),
      );
      if (error !== undefined) throw error;
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    }

    /** Kubernetes' updateDaemonSetStatus: writes the counts (and observedGeneration when `observed`) unless unchanged. */
    async function writeStatus(
      { ds, nodeList, claimed, hash }: SyncState,
      observed: boolean,
    ): Promise<{ requeueAfter: number } | undefined> {
      const counts = calculateDaemonSetStatus({
        ds,
        nodes: nodeList,
        nodePods: groupByNode(claimed),
        hash,
        nowMs: Date.now(),
      });
      const old: DaemonSetStatus = ds.status ?? {};
      const generation = ds.metadata.generation ?? 0;
      const same =
        (Object.keys(counts) as Array<keyof DaemonSetStatus>).every((k) => (old[k] ?? 0) === (counts[k] ?? 0)) &&
        (!observed || (old.observedGeneration ?? 0) >= generation);
      if (!same) {
        await writeStatusRetryingOnce(dsApi(ds.metadata.namespace ?? ''), {
          cached: ds,
          status: (cur) =>
            omitZero(
              {
                ...cur.status,
                ...counts,
                observedGeneration: observed ? generation : cur.status?.observedGeneration,
              },
              ['currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady'],
            ),
        });
      }
      const minReady = ds.spec.minReadySeconds ?? 0;
      // As Kubernetes: look again after minReadySeconds while ready pods are not yet available.
      return minReady > 0 && counts.numberReady !== counts.numberAvailable
        ? { requeueAfter: minReady * 1000 }
        : undefined;
    }

    // ---- event handlers

    const enqueue = (ds: DaemonSet): void => controller.enqueue(objectKey(ds));
    const enqueueAll = (): void => {
      for (const ds of dss.store.list()) enqueue(ds);
    };
    const { ownerOf: dsOf, matching } = watchOwnedPods({
      controller,
      owners: dss,
      pods,
      owner: { group: 'apps', kind: 'DaemonSet' },
      expectations,
    });
    controller.watch(nodes, () => []);
    nodes.addEventHandler({
      onAdd: enqueueAll,
      onUpdate: (old, cur) => {
        // Heartbeats and status do not change where daemons run; labels, taints and names do.
        if (
          !jsonEqual(old.metadata.labels ?? {}, cur.metadata.labels ?? {}) ||
          !jsonEqual(old.spec?.taints ?? [], cur.spec?.taints ?? []) ||
          old.spec?.unschedulable !== cur.spec?.unschedulable
        )
          enqueueAll();
      },
      onDelete: enqueueAll,
    });
    controller.watch(revisions, () => []);
    const revisionChanged = (r: ControllerRevision): void => {
      const ds = dsOf(r);
      if (ds) enqueue(ds);
      else if (!controllerOf(r)) for (const m of matching(r)) enqueue(m);
    };
    revisions.addEventHandler({
      onAdd: revisionChanged,
      onUpdate: (_old, cur) => revisionChanged(cur),
      onDelete: revisionChanged,
    });
    return controller;
  },
};
