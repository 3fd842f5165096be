import {
  isAlreadyExists,
  isNotFound,
  type ControllerRevision,
  type PersistentVolumeClaim,
  type Pod,
  type StatefulSet,
  type StatefulSetStatus,
} from '@svc/api';
import { NAMESPACE_INDEX, objectKey } from '@svc/client';
import { type LabelSelector } from '@svc/machinery';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';
import { claimObjects, controllerOf, newControllerRef, recheckOwner } from './controller-ref.js';
import { REVISION_HASH_LABEL, matchesRevision, newControllerRevision } from './daemonset-util.js';
import { ControllerExpectations } from './expectations.js';
import { watchOwnedPods } from './owned-pods.js';
import { omitZero, slowStartBatch } from './replica-set.js';
import {
  allowsBurst,
  claimIsStale,
  claimOwnerRefs,
  claimsFor,
  identityMatches,
  isCreated,
  isFailed,
  isHealthy,
  isMemberOf,
  isPending,
  isRunningAndAvailable,
  isRunningAndReady,
  isSucceeded,
  isTerminating,
  newStatefulSetPod,
  ordinalOf,
  podInOrdinalRange,
  podRevision,
  replicaStatus,
  replicasOfSet,
  revisionTemplate,
  startOrdinal,
  storageMatches,
  updateIdentity,
  updateStorage,
} from './statefulset-util.js';
import { writeStatusRetryingOnce } from './workload-util.js';
import { namespacedApi, ownerScaffold, selectorOrSkip } from './owner-scaffold.js';

const NAME = 'statefulset-controller';

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const byRevision = (a: ControllerRevision, b: ControllerRevision): number => (a.revision ?? 0) - (b.revision ?? 0);

/** What one sync works from: the set, the revisions its pods are made from, and the set with each revision's template. */
interface SyncState {
  set: StatefulSet;
  current: ControllerRevision;
  update: ControllerRevision;
  currentSet: StatefulSet;
  updateSet: StatefulSet;
  nowMs: number;
}

/**
 * `statefulset-controller`, as Kubernetes v1.32's (stateful_set_control.go with
 * StatefulSetAutoDeletePVC and StatefulSetStartOrdinal on, MaxUnavailableStatefulSet off): pods
 * `<set>-<ordinal>` for the ordinals from `spec.ordinals.start`, with the pod-name and pod-index
 * labels, hostname and subdomain (`serviceName`), each claim template's PersistentVolumeClaim
 * `<template>-<set>-<ordinal>` created before its pod. OrderedReady creates one pod at a time,
 * each after its predecessors are Running and Ready (and available), and removes pods beyond
 * `replicas` highest ordinal first, one at a time; Parallel does both at once. Failed or
 * succeeded pods are deleted and made again. The template's history is kept in
 * ControllerRevisions `<set>-<hash>` (pods carry the revision's name in
 * `controller-revision-hash`); RollingUpdate replaces pods at ordinals from `partition` up, the
 * highest first, one at a time and only while every pod is healthy; OnDelete waits for pods to
 * be deleted. `persistentVolumeClaimRetentionPolicy` is kept through owner references on the
 * claims (the set for whenDeleted Delete, a scaled-away pod for whenScaled Delete), which the
 * garbage collector acts on.
 */
export const statefulSetController: ControllerDefinition = {
  name: NAME,
  build(ctx) {
    const sets = informer<StatefulSet>(ctx, R.statefulSets());
    const pods = informer<Pod>(ctx, R.pods());
    const claims = informer<PersistentVolumeClaim>(ctx, R.persistentVolumeClaims());
    const revisions = informer<ControllerRevision>(ctx, R.controllerRevisions());
    // Kubernetes' statefulset controller keeps no expectations (pod names are fixed); the shared pod wiring wants one.
    const expectations = new ControllerExpectations();
    const { log, record } = ownerScaffold<StatefulSet>(ctx, { name: NAME, apiVersion: 'apps/v1', kind: 'StatefulSet' });

    const setApi = namespacedApi<StatefulSet>(ctx, R.statefulSets());
    const podApi = namespacedApi<Pod>(ctx, R.pods());
    const claimApi = namespacedApi<PersistentVolumeClaim>(ctx, R.persistentVolumeClaims());
    const revApi = namespacedApi<ControllerRevision>(ctx, R.controllerRevisions());

    const controller = newController(ctx, {
      name: NAME,
      queueName: 'statefulset',
      workers: ctx.options.concurrentSyncs.statefulset,
      reconcile: async (key) => {
        const set = sets.store.get(key);
        if (!set) return undefined;
        const selector = selectorOrSkip(set.spec.selector, { log, key });
        if (!selector) return undefined;
        const ns = set.metadata.namespace ?? '';
        const owned = await claimPods(set, selector);
        const revs = (await claimRevisions(set, selector)).sort(byRevision);
        const { current, update, collisionCount } = await setRevisions(set, revs);
        const state: SyncState = {
          set,
          current,
          update,
          currentSet: withTemplate(set, current),
          updateSet: withTemplate(set, update),
          nowMs: Date.now(),
        };
        const status = await updateStatefulSet(state, owned);
        status.collisionCount = collisionCount;
        await writeStatus(set, status);
        await truncateHistory({ set, owned, revs: revisions.store.byIndex(NAMESPACE_INDEX, ns), current, update });
        const minReady = set.spec.minReadySeconds ?? 0;
        // As Kubernetes: look again after minReadySeconds while ready pods are not yet available.
        return minReady > 0 && status.readyReplicas !== status.availableReplicas
          ? { requeueAfter: minReady * 1000 }
          : undefined;
      },
    });

    const withTemplate = (set: StatefulSet, rev: ControllerRevision): StatefulSet => ({
      ...set,
      spec: { ...set.spec, template: revisionTemplate(rev) ?? set.spec.template },
    });

    /** Pods the set controls among those named as its members (adopting matching orphans, releasing those that stopped matching). */
    function claimPods(set: StatefulSet, selector: LabelSelector): Promise<Pod[]> {
      const ns = set.metadata.namespace ?? '';
      return claimObjects<Pod>({
        owner: set,
        ownerRef: newControllerRef(set, 'apps/v1', 'StatefulSet'),
        selector,
        objects: pods.store.byIndex(NAMESPACE_INDEX, ns).filter((p) => isMemberOf(set, p)),
        client: podApi(ns),
        canAdopt: recheckOwner(set, () => setApi(ns).get(set.metadata.name ?? '')),
      });
    }

    function claimRevisions(set: StatefulSet, selector: LabelSelector): Promise<ControllerRevision[]> {
      const ns = set.metadata.namespace ?? '';
      return claimObjects<ControllerRevision>({
        owner: set,
        ownerRef: newControllerRef(set, 'apps/v1', 'StatefulSet'),
        selector,
        objects: revisions.store.byIndex(NAMESPACE_INDEX, ns),
        client: revApi(ns),
        canAdopt: recheckOwner(set, () => setApi(ns).get(set.metadata.name ?? '')),
      });
    }

    /**
     * Kubernetes' getStatefulSetRevisions: the update revision is the newest one when it holds the
     * template, an older equal one renumbered to the newest (rollback), or a new one; the current
     * revision is the one `status.currentRevision` names, else the update revision.
     */
    async function setRevisions(
      set: StatefulSet,
      revs: readonly ControllerRevision[],
    ): Promise<{ current: ControllerRevision; update: ControllerRevision; collisionCount: number }> {
      const ns = set.metadata.namespace ?? '';
      let collisionCount = set.status?.collisionCount ?? 0;
      const next = (revs.at(-1)?.revision ?? 0) + 1;
      const equal = revs.filter((r) => matchesRevision(set, r));
      const lastEqual = equal.at(-1);
      let update: ControllerRevision;
      if (lastEqual && lastEqual === revs.at(-1)) update = lastEqual;
      else if (lastEqual) update = await revApi(ns).update({ ...structuredClone(lastEqual), revision: next });
      else {
        for (;;) {
          const created = await createRevision(set, { revision: next, collisionCount });
          if (created) {
            update = created;
            break;
          }
          collisionCount++;
        }
      }
      const current = revs.find((r) => r.metadata.name === set.status?.currentRevision) ?? update;
      return { current, update, collisionCount };
    }

    /** Kubernetes' CreateControllerRevision: `<set>-<hash>`; undefined when that name holds another template (a collision). */
    async function createRevision(
      set: StatefulSet,
      { revision, collisionCount }: { revision: number; collisionCount: number },
    ): Promise<ControllerRevision | undefined> {
      const ns = set.metadata.namespace ?? '';
      const rev = newControllerRevision(set, { kind: 'StatefulSet', revision, collisionCount });
      const name = rev.metadata.name ?? '';
      try {
        return await revApi(ns).create(rev);
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
        const existing = await revApi(ns).get(name);
        return matchesRevision(set, existing) ? existing : undefined;
      }
    }

    /** Kubernetes' truncateHistory: the oldest revisions beyond revisionHistoryLimit that neither a pod nor the status uses. */
    async function truncateHistory(o: {
      set: StatefulSet;
      owned: readonly Pod[];
      revs: readonly ControllerRevision[];
      current: ControllerRevision;
      update: ControllerRevision;
    }): Promise<void> {
      const live = new Set([o.current.metadata.name, o.update.metadata.name, ...o.owned.map(podRevision)]);
      const history = o.revs
        .filter((r) => controllerOf(r)?.uid === o.set.metadata.uid && !live.has(r.metadata.name))
        .sort(byRevision);
      const excess = history.length - (o.set.spec.revisionHistoryLimit ?? 10);
      for (const r of history.slice(0, Math.max(0, excess))) {
        try {
          await revApi(o.set.metadata.namespace ?? '').delete(r.metadata.name ?? '');
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
      }
    }

    /** Kubernetes' newVersionedStatefulSetPod: below the partition from the current revision, else from the update revision. */
    function newVersionedPod(s: SyncState, ordinal: number): Pod {
      const ru = s.set.spec.updateStrategy;
      const partition =
        ru?.type === 'RollingUpdate'
          ? ru.rollingUpdate
            ? (ru.rollingUpdate.partition ?? 0)
            : (s.set.status?.currentReplicas ?? 0)
          : -1;
      const fromCurrent = ordinal < startOrdinal(s.set) + partition;
      const [src, rev] = fromCurrent ? [s.currentSet, s.current] : [s.updateSet, s.update];
      const pod = newStatefulSetPod(s.set, src.spec.template, ordinal);
      (pod.metadata.labels ??= {})[REVISION_HASH_LABEL] = rev.metadata.name ?? '';
      return pod;
    }

    /** Runs `fn` over `items`: in order, stopping at the first that says to (monotonic), or all at once in slow-start batches. */
    async function runForAll(
      items: readonly Pod[],
      fn: (i: number) => Promise<boolean>,
      monotonic: boolean,
    ): Promise<boolean> {
      if (monotonic) {
        for (let i = 0; i < items.length; i++) if (await fn(i)) return true;
        return false;
      }
      let next = 0;
      const { error } = await slowStartBatch(items.length, 1, async () => {
        await fn(next++);
      });
      if (error !== undefined) throw error;
      return false;
    }

    /**
     * Kubernetes' updateStatefulSet: makes the pods in range (creating, replacing failed ones,
     * fixing identity and storage), removes the condemned ones, then rolls the update. Answers
     * the status to write.
     */
    async function updateStatefulSet(s: SyncState, owned: readonly Pod[]): Promise<StatefulSetStatus> {
      const { set } = s;
      const count = replicasOfSet(set);
      const start = startOrdinal(set);
      const replicas: Pod[] = [];
      const condemned: Pod[] = [];
      for (const p of owned) {
        if (podInOrdinalRange(p, set)) replicas[ordinalOf(p) - start] ??= p;
        else if (ordinalOf(p) >= 0) condemned.push(p);
      }
      for (let i = 0; i < count; i++) replicas[i] ??= newVersionedPod(s, start + i);
      condemned.sort((a, b) => ordinalOf(b) - ordinalOf(a));
      const status: StatefulSetStatus = {
        observedGeneration: set.metadata.generation ?? 0,
        currentRevision: s.current.metadata.name ?? '',
        updateRevision: s.update.metadata.name ?? '',
        ...replicaStatus([...replicas, ...condemned], {
          minReadySeconds: set.spec.minReadySeconds ?? 0,
          currentRevision: s.current.metadata.name ?? '',
          updateRevision: s.update.metadata.name ?? '',
          nowMs: s.nowMs,
        }),
      };
      if (set.metadata.deletionTimestamp) return status;

      const firstUnhealthy = replicas.find((p) => !isHealthy(p)) ?? [...condemned].reverse().find((p) => !isHealthy(p));
      const monotonic = !allowsBurst(set);
      if (await runForAll(replicas, (i) => processReplica(s, { pod: replicas[i] as Pod, monotonic }), monotonic))
        return status;
      // Claims of condemned pods get the owners the retention policy wants before the pods go.
      if (
        await runForAll(
          condemned,
          async (i) => {
            await fixClaimOwners(s.updateSet, condemned[i] as Pod);
            return false;
          },
          monotonic,
        )
      )
        return status;
      const processCondemned = async (i: number): Promise<boolean> => {
        const pod = condemned[i] as Pod;
        if (isTerminating(pod)) return monotonic;
        const minReady = set.spec.minReadySeconds ?? 0;
        if (monotonic && pod !== firstUnhealthy && !isRunningAndAvailable(pod, minReady, s.nowMs)) return true;
        await deletePod(set, pod);
        return true;
      };
      if (await runForAll(condemned, processCondemned, monotonic)) return status;
      if (set.spec.updateStrategy?.type === 'OnDelete') return status;

      // Rolling update: the highest ordinal not at the update revision goes first, one at a time, while all are healthy.
      const updateMin = set.spec.updateStrategy?.rollingUpdate?.partition ?? 0;
      for (let target = replicas.length - 1; target >= updateMin; target--) {
        const pod = replicas[target] as Pod;
        if (podRevision(pod) !== status.updateRevision && !isTerminating(pod)) {
          log.v(2).info('pod of StatefulSet is terminating for update', {
            statefulSet: objectKey(set),
            pod: pod.metadata.name,
          });
          await deletePod(set, pod);
          status.currentReplicas = Math.max(0, (status.currentReplicas ?? 0) - 1);
          return status;
        }
        if (!isHealthy(pod)) return status;
      }
      return status;
    }

    /** Kubernetes' processReplica: true when a monotonic sync must stop here. */
    async function processReplica(
      s: SyncState,
      { pod, monotonic }: { pod: Pod; monotonic: boolean },
    ): Promise<boolean> {
      const { set } = s;
      if (isFailed(pod) || isSucceeded(pod)) {
        // A stopped pod is made again on the sync after it is gone.
        if (!isTerminating(pod)) await deletePod(set, pod);
        return true;
      }
      if (!isCreated(pod)) {
        // A claim still owned by an earlier pod of this ordinal waits for the garbage collector.
        if (set.spec.persistentVolumeClaimRetentionPolicy?.whenScaled === 'Delete' && podClaimIsStale(set, pod))
          return true;
        const made = await createPod(set, pod);
        return monotonic || !made;
      }
      if (isPending(pod)) await createMissingClaims(set, pod);
      if (monotonic && (isTerminating(pod) || !isRunningAndReady(pod))) return true;
      if (monotonic && !isRunningAndAvailable(pod, set.spec.minReadySeconds ?? 0, s.nowMs)) return true;
      await fixClaimOwners(s.updateSet, pod);
      if (identityMatches(set, pod) && storageMatches(set, pod)) return false;
      const fixed = structuredClone(pod);
      const ordinal = ordinalOf(pod);
      updateIdentity(set, fixed, ordinal);
      updateStorage(set, fixed, ordinal);
      await podApi(set.metadata.namespace ?? '').update(fixed);
      return false;
    }

    const cachedClaim = (ns: string, name: string): PersistentVolumeClaim | undefined =>
      claims.store.get(`${ns}/${name}`);

    function podClaimIsStale(set: StatefulSet, pod: Pod): boolean {
      const ns = set.metadata.namespace ?? '';
      for (const claim of claimsFor(set, ordinalOf(pod)).values()) {
        const found = cachedClaim(ns, claim.metadata.name ?? '');
        if (found && claimIsStale(found, pod)) return true;
      }
      return false;
    }

    /** Kubernetes' createPersistentVolumeClaims: each claim the pod mounts, created when missing; one being deleted is an error. */
    async function createMissingClaims(set: StatefulSet, pod: Pod): Promise<void> {
      const ns = set.metadata.namespace ?? '';
      const errors: string[] = [];
      for (const claim of claimsFor(set, ordinalOf(pod)).values()) {
        const name = claim.metadata.name ?? '';
        const found = cachedClaim(ns, name);
        if (found) {
          if (found.metadata.deletionTimestamp) errors.push(`pvc ${name} is being deleted`);
          continue;
        }
        const refs = claimOwnerRefs(claim, set, pod);
        if (refs) claim.metadata.ownerReferences = refs;
        try {
          await claimApi(ns).create(claim);
          record(set, {
            type: 'Normal',
            reason: 'SuccessfulCreate',
            message: `create Claim ${name} Pod ${pod.metadata.name ?? ''} in StatefulSet ${set.metadata.name ?? ''} success`,
          });
        } catch (e) {
          if (isAlreadyExists(e)) continue;
          record(set, {
            type: 'Warning',
            reason: 'FailedCreate',
            message: `create Claim ${name} for Pod ${pod.metadata.name ?? ''} in StatefulSet ${set.metadata.name ?? ''} failed error: ${errorText(e)}`,
          });
          errors.push(`failed to create PVC ${name}: ${errorText(e)}`);
        }
      }
      if (errors.length > 0) throw new Error(errors.join('; '));
    }

    /** Kubernetes' CreateStatefulPod: the claims, then the pod. False when the pod already exists (the cache lags). */
    async function createPod(set: StatefulSet, pod: Pod): Promise<boolean> {
      await createMissingClaims(set, pod);
      const name = pod.metadata.name ?? '';
      try {
        await podApi(set.metadata.namespace ?? '').create(pod);
      } catch (e) {
        if (isAlreadyExists(e)) return false;
        record(set, {
          type: 'Warning',
          reason: 'FailedCreate',
          message: `create Pod ${name} in StatefulSet ${set.metadata.name ?? ''} failed error: ${errorText(e)}`,
        });
        throw e;
      }
      record(set, {
        type: 'Normal',
        reason: 'SuccessfulCreate',
        message: `create Pod ${name} in StatefulSet ${set.metadata.name ?? ''} successful`,
      });
      return true;
    }

    async function deletePod(set: StatefulSet, pod: Pod): Promise<void> {
      const name = pod.metadata.name ?? '';
      try {
        await podApi(set.metadata.namespace ?? '').delete(name);
      } catch (e) {
        if (isNotFound(e)) return;
        record(set, {
          type: 'Warning',
          reason: 'FailedDelete',
          message: `delete Pod ${name} in StatefulSet ${set.metadata.name ?? ''} failed error: ${errorText(e)}`,
        });
        throw e;
      }
      record(set, {
        type: 'Normal',
        reason: 'SuccessfulDelete',
        message: `delete Pod ${name} in StatefulSet ${set.metadata.name ?? ''} successful`,
      });
    }

    /** Kubernetes' ClaimsMatchRetentionPolicy and UpdatePodClaimForRetentionPolicy: the pod's claims get the owners the policy wants. */
    async function fixClaimOwners(set: StatefulSet, pod: Pod): Promise<void> {
      const ns = set.metadata.namespace ?? '';
      for (const claim of claimsFor(set, ordinalOf(pod)).values()) {
        const found = cachedClaim(ns, claim.metadata.name ?? '');
        if (!found) continue;
        const refs = claimOwnerRefs(found, set, pod);
        if (!refs) continue;
        await claimApi(ns).update({
          ...structuredClone(found),
          metadata: { ...structuredClone(found.metadata), ownerReferences: refs },
        });
      }
    }

    /** Kubernetes' updateStatefulSetStatus: completes a rolling update that reached every pod, writes only a changed status. */
    async function writeStatus(set: StatefulSet, status: StatefulSetStatus): Promise<void> {
      if (
        set.spec.updateStrategy?.type === 'RollingUpdate' &&
        status.updatedReplicas === status.replicas &&
        status.readyReplicas === status.replicas
      ) {
        status.currentReplicas = status.updatedReplicas;
        status.currentRevision = status.updateRevision;
      }
      const old: Partial<StatefulSetStatus> = set.status ?? {};
      const keys = [
        'observedGeneration',
        'replicas',
        'readyReplicas',
        'currentReplicas',
        'updatedReplicas',
        'availableReplicas',
        'currentRevision',
        'updateRevision',
        'collisionCount',
      ] as const;
      const norm = (v: string | number | undefined): string => String(v ?? (v === '' ? '' : 0));
      // Kubernetes' inconsistentStatus: write only when a field differs (an absent count is 0).
      if (keys.every((k) => norm(old[k]) === norm(status[k]))) return;
      await writeStatusRetryingOnce(setApi(set.metadata.namespace ?? ''), {
        cached: set,
        status: (cur) =>
          omitZero({ ...cur.status, ...status }, [
            'replicas',
            'availableReplicas',
            'collisionCount',
            'observedGeneration',
          ]),
      });
    }

    // ---- event handlers

    const { ownerOf: setOf, matching } = watchOwnedPods({
      controller,
      owners: sets,
      pods,
      owner: { group: 'apps', kind: 'StatefulSet' },
      expectations,
    });
    controller.watch(claims, () => []);
    controller.watch(revisions, () => []);
    const revisionChanged = (r: ControllerRevision): void => {
      const set = setOf(r);
      if (set) controller.enqueue(objectKey(set));
      else if (!controllerOf(r)) for (const m of matching(r)) controller.enqueue(objectKey(m));
    };
    revisions.addEventHandler({
      onAdd: revisionChanged,
      onUpdate: (_old, cur) => revisionChanged(cur),
      onDelete: revisionChanged,
    });
    return controller;
  },
};
