import {
  deploymentAnnotation,
  isAlreadyExists,
  isNotFound,
  isStatusError,
  podTemplateHashLabel,
  type Deployment,
  type DeploymentCondition,
  type DeploymentStatus,
  type Pod,
  type ReplicaSet,
} from '@svc/api';
import {
  NAMESPACE_INDEX,
  ResourceClient,
  type EventOptions,
  type EventRecorder,
  type Informer,
  type ReconcileResult,
  type RestClient,
} from '@svc/client';
import type { Logger } from '@svc/component-base';
import { jsonEqual, labelSelectorFromObject } from '@svc/machinery';
import { R } from '../resources.js';
import { claimObjects, controllerOf, newControllerRef, recheckOwner } from './controller-ref.js';
import {
  REASON,
  activeReplicaSets,
  actualReplicas,
  byCreation,
  byRevision,
  bySizeNewer,
  bySizeOlder,
  calculateStatus,
  computeHash,
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  equalIgnoreHash,
  findActiveOrLatest,
  findNewReplicaSet,
  findOldReplicaSets,
  getCondition,
  hasProgressDeadline,
  isRollingUpdate,
  isSaturated,
  maxRevision,
  maxSurge,
  maxUnavailable,
  newCondition,
  newRSNewReplicas,
  proportion,
  removeCondition,
  replicasAnnotationsNeedUpdate,
  setCondition,
  setDeploymentRevision,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
  specReplicas,
  wireStatus,
} from './deployment-util.js';
import { replicasOf } from './workload-util.js';

export interface DeploymentSyncDeps {
  client: RestClient;
  /** Kubernetes' ScalingReplicaSet / FailedCreate events on the Deployment. */
  events: EventRecorder;
  replicaSets: Informer<ReplicaSet>;
  pods: Informer<Pod>;
  logger: Logger;
}

type Sync = Promise<ReconcileResult | void>;

const hasNamespaceTerminatingCause = (e: unknown): boolean =>
  isStatusError(e) && (e.status.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating');

/**
 * An RS's available replicas counted at most up to its `spec.replicas`. Deviation from
 * Kubernetes, which uses `status.availableReplicas` alone: right after a scale-down the
 * ReplicaSet's status still counts the pods it is deleting, and a rollout that trusted it
 * could scale old ReplicaSets below `maxUnavailable`.
 */
const availableOf = (rs: ReplicaSet | undefined): number =>
  rs ? Math.min(rs.status?.availableReplicas ?? 0, replicasOf(rs)) : 0;

/**
 * One sync of one Deployment, as Kubernetes v1.32's deployment controller (syncDeployment and
 * what it calls): claim ReplicaSets, then either update status only (being deleted), scale
 * (paused, or `spec.replicas` changed), or roll out (RollingUpdate, Recreate), and write
 * status with the Available/Progressing conditions. Works on a private copy of the cached
 * Deployment whose resourceVersion follows its own writes; ReplicaSets from the cache are
 * copied before they are changed.
 *
 * Deviation: the Deployment's revision annotation is written with an update of the
 * Deployment itself (spec unchanged, so no new generation), because this server's `/status`
 * keeps all of metadata from the stored object, where Kubernetes' Deployment status strategy
 * lets annotations through.
 */
export class DeploymentSyncer {
  constructor(private readonly deps: DeploymentSyncDeps) {}

  /** An event on the Deployment (action `Scale`, as Kubernetes' deployment controller). */
  private record(d: Deployment, e: Pick<EventOptions, 'type' | 'reason' | 'message'>): void {
    this.deps.events.event({ object: d, apiVersion: 'apps/v1', kind: 'Deployment', action: 'Scale', ...e });
  }

  private rsApi(ns: string): ResourceClient<ReplicaSet> {
    return new ResourceClient<ReplicaSet>(this.deps.client, R.replicaSets()).namespace(ns);
  }

  private dApi(ns: string): ResourceClient<Deployment> {
    return new ResourceClient<Deployment>(this.deps.client, R.deployments()).namespace(ns);
  }

  async sync(cached: Deployment): Sync {
    const d = structuredClone(cached);
    const rsList = await this.claimReplicaSets(d);
    if (d.metadata.deletionTimestamp) return this.syncStatusOnly(d, rsList);
    await this.checkPausedConditions(d);
    if (d.spec.paused || (await this.isScalingEvent(d, rsList))) return this.syncScaled(d, rsList);
    return isRollingUpdate(d) ? this.rolloutRolling(d, rsList) : this.rolloutRecreate(d, rsList);
  }

  private async claimReplicaSets(d: Deployment): Promise<ReplicaSet[]> {
    const ns = d.metadata.namespace ?? '';
    const selector = labelSelectorFromObject(d.spec.selector);
    return claimObjects<ReplicaSet>({
      owner: d,
      ownerRef: newControllerRef(d, 'apps/v1', 'Deployment'),
      selector,
      objects: this.deps.replicaSets.store.byIndex(NAMESPACE_INDEX, ns),
      client: this.rsApi(ns),
      canAdopt: recheckOwner(d, () => this.dApi(ns).get(d.metadata.name ?? '')),
    });
  }

  /** Pods matching the Deployment's selector, by the UID of the claimed ReplicaSet that controls them. */
  private podMap(d: Deployment, rsList: readonly ReplicaSet[]): Map<string, Pod[]> {
    const selector = labelSelectorFromObject(d.spec.selector);
    const map = new Map<string, Pod[]>(rsList.map((rs) => [rs.metadata.uid ?? '', []]));
    for (const p of this.deps.pods.store.byIndex(NAMESPACE_INDEX, d.metadata.namespace ?? '')) {
      if (selector.matches(p.metadata.labels)) map.get(controllerOf(p)?.uid ?? '')?.push(p);
    }
    return map;
  }

  // ---- writes of the Deployment

  private async writeStatus(d: Deployment): Promise<void> {
    const res = await this.dApi(d.metadata.namespace ?? '').update(
      { ...d, status: wireStatus(d.status ?? {}) },
      { subresource: 'status' },
    );
    d.metadata.resourceVersion = res.metadata.resourceVersion;
  }

  private async writeRevision(d: Deployment): Promise<void> {
    const res = await this.dApi(d.metadata.namespace ?? '').update(d);
    d.metadata = res.metadata;
  }

  // ---- the new ReplicaSet

  /** The new ReplicaSet (created when `create` and missing) and every old one, with revisions brought up to date. */
  private async allReplicaSets(
    d: Deployment,
    rsList: readonly ReplicaSet[],
    create: boolean,
  ): Promise<{ newRS?: ReplicaSet; oldRSs: ReplicaSet[] }> {
    const { all } = findOldReplicaSets(d, rsList);
    return { newRS: await this.newReplicaSet(d, { rsList, oldRSs: all, create }), oldRSs: all };
  }

  private async newReplicaSet(
    d: Deployment,
    { rsList, oldRSs, create }: { rsList: readonly ReplicaSet[]; oldRSs: readonly ReplicaSet[]; create: boolean },
  ): Promise<ReplicaSet | undefined> {
    const ns = d.metadata.namespace ?? '';
    const existing = findNewReplicaSet(d, rsList);
    const newRevision = maxRevision(oldRSs) + 1;
    if (existing) {
      const copy = structuredClone(existing);
      const annotationsUpdated = setNewReplicaSetAnnotations(d, copy, { newRevision, exists: true });
      if (annotationsUpdated || (copy.spec.minReadySeconds ?? 0) !== (d.spec.minReadySeconds ?? 0)) {
        copy.spec.minReadySeconds = d.spec.minReadySeconds ?? 0;
        return this.rsApi(ns).update(copy);
      }
      const revisionChanged = setDeploymentRevision(d, copy.metadata.annotations?.[deploymentAnnotation('revision')]);
      // A Deployment that had no Progressing condition starts being tracked from here.
      const track = hasProgressDeadline(d) && !getCondition(d.status, 'Progressing');
      if (track)
        setCondition(
          (d.status ??= {}),
          newCondition({
            type: 'Progressing',
            status: 'True',
            reason: REASON.foundNewRS,
            message: `Found new replica set "${copy.metadata.name ?? ''}"`,
          }),
        );
      if (revisionChanged) await this.writeRevision(d);
      if (track) await this.writeStatus(d);
      return copy;
    }
    if (!create) return undefined;

    const hashLabel = podTemplateHashLabel();
    const template = structuredClone(d.spec.template ?? {});
    const hash = computeHash(template, d.status?.collisionCount);
    template.metadata = { ...template.metadata, labels: { ...template.metadata?.labels, [hashLabel]: hash } };
    const selector = structuredClone(d.spec.selector ?? {});
    selector.matchLabels = { ...selector.matchLabels, [hashLabel]: hash };
    const name = `${d.metadata.name ?? ''}-${hash}`;
    const rs: ReplicaSet = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name,
        namespace: ns,
        labels: { ...template.metadata.labels },
        ownerReferences: [newControllerRef(d, 'apps/v1', 'Deployment')],
      },
      spec: { replicas: 0, minReadySeconds: d.spec.minReadySeconds ?? 0, selector, template },
    };
    rs.spec.replicas = newRSNewReplicas(d, [...oldRSs, rs], rs);
    setNewReplicaSetAnnotations(d, rs, { newRevision, exists: false });
    let created: ReplicaSet;
    let alreadyExists = false;
    try {
      created = await this.rsApi(ns).create(rs);
    } catch (e) {
      if (isAlreadyExists(e)) {
        const found =
          this.deps.replicaSets.store.get(`${ns}/${name}`) ??
          (await this.rsApi(ns)
            .get(name)
            .catch(() => undefined));
        if (
          !found ||
          controllerOf(found)?.uid !== d.metadata.uid ||
          !equalIgnoreHash(d.spec.template, found.spec.template)
        ) {
          // A hash collision: the next sync hashes with a higher collision count.
          (d.status ??= {}).collisionCount = (d.status.collisionCount ?? 0) + 1;
          await this.writeStatus(d);
          this.deps.logger.info('found a hash collision for the deployment', {
            deployment: `${ns}/${d.metadata.name ?? ''}`,
            collisionCount: d.status.collisionCount,
          });
          throw e;
        }
        created = found;
        alreadyExists = true;
      } else {
        if (!hasNamespaceTerminatingCause(e)) {
          const msg = `Failed to create new replica set "${name}": ${e instanceof Error ? e.message : String(e)}`;
          this.record(d, { type: 'Warning', reason: REASON.failedRSCreate, message: msg });
          if (hasProgressDeadline(d)) {
            setCondition(
              (d.status ??= {}),
              newCondition({ type: 'Progressing', status: 'False', reason: REASON.failedRSCreate, message: msg }),
            );
            await this.writeStatus(d).catch(() => undefined);
          }
        }
        throw e;
      }
    }
    if (!alreadyExists && replicasOf(rs) > 0) {
      this.deps.logger.v(2).info('scaled up replica set', { replicaSet: `${ns}/${name}`, from: 0, to: replicasOf(rs) });
      this.record(d, {
        type: 'Normal',
        reason: 'ScalingReplicaSet',
        message: `Scaled up replica set ${name} from 0 to ${replicasOf(rs)}`,
      });
    }
    const revisionChanged = setDeploymentRevision(d, String(newRevision));
    const track = !alreadyExists && hasProgressDeadline(d);
    if (track)
      setCondition(
        (d.status ??= {}),
        newCondition({
          type: 'Progressing',
          status: 'True',
          reason: REASON.newRSCreated,
          message: `Created new replica set "${name}"`,
        }),
      );
    if (revisionChanged) await this.writeRevision(d);
    if (track) await this.writeStatus(d);
    return created;
  }

  // ---- scaling

  /** Scales `rs` to `n` (also refreshing its replica annotations); answers whether the size changed and the stored ReplicaSet. */
  private async scaleReplicaSet(
    rs: ReplicaSet,
    n: number,
    d: Deployment,
  ): Promise<{ scaled: boolean; rs: ReplicaSet }> {
    const max = replicasOf(d) + maxSurge(d);
    const sizeChanges = replicasOf(rs) !== n;
    if (!sizeChanges && !replicasAnnotationsNeedUpdate(rs, replicasOf(d), max)) return { scaled: false, rs };
    const copy = structuredClone(rs);
    copy.spec.replicas = n;
    setReplicasAnnotations(copy, replicasOf(d), max);
    const updated = await this.rsApi(rs.metadata.namespace ?? '').update(copy);
    if (sizeChanges) {
      const direction = n > replicasOf(rs) ? 'up' : 'down';
      this.deps.logger.v(2).info(`scaled ${direction} replica set`, {
        replicaSet: `${rs.metadata.namespace ?? ''}/${rs.metadata.name ?? ''}`,
        from: replicasOf(rs),
        to: n,
      });
      this.record(d, {
        type: 'Normal',
        reason: 'ScalingReplicaSet',
        message: `Scaled ${direction} replica set ${rs.metadata.name ?? ''} from ${replicasOf(rs)} to ${n}`,
      });
    }
    return { scaled: sizeChanges, rs: updated };
  }

  private async scaleIfNeeded(rs: ReplicaSet, n: number, d: Deployment): Promise<{ scaled: boolean; rs: ReplicaSet }> {
    return replicasOf(rs) === n ? { scaled: false, rs } : this.scaleReplicaSet(rs, n, d);
  }

  /** A change of `spec.replicas` shows as a ReplicaSet whose desired-replicas annotation differs. */
  private async isScalingEvent(d: Deployment, rsList: readonly ReplicaSet[]): Promise<boolean> {
    const { newRS, oldRSs } = await this.allReplicaSets(d, rsList, false);
    return activeReplicaSets([...oldRSs, newRS]).some((rs) => {
      const desired = rs.metadata.annotations?.[deploymentAnnotation('desired-replicas')];
      return desired !== undefined && /^[0-9]+$/.test(desired) && Number(desired) !== replicasOf(d);
    });
  }

  /** Kubernetes' `sync`: scale for a paused Deployment or a new `spec.replicas`, no rollout. */
  private async syncScaled(d: Deployment, rsList: readonly ReplicaSet[]): Sync {
    const { newRS, oldRSs } = await this.allReplicaSets(d, rsList, false);
    await this.scale(d, newRS, oldRSs);
    if (d.spec.paused) await this.cleanup(oldRSs, d);
    return this.syncStatus([...oldRSs, newRS], newRS, d);
  }

  /**
   * The single active (or latest) ReplicaSet gets `spec.replicas`; with a saturated new one the
   * old ones go to 0; otherwise, rolling, the change is spread proportionally over the active
   * ReplicaSets (largest first, leftovers to the first).
   */
  private async scale(d: Deployment, newRS: ReplicaSet | undefined, oldRSs: readonly ReplicaSet[]): Promise<void> {
    const only = findActiveOrLatest(newRS, oldRSs);
    if (only) {
      if (replicasOf(only) !== replicasOf(d)) await this.scaleIfNeeded(only, replicasOf(d), d);
      return;
    }
    if (isSaturated(d, newRS)) {
      for (const old of activeReplicaSets(oldRSs)) await this.scaleIfNeeded(old, 0, d);
      return;
    }
    if (!isRollingUpdate(d)) return;
    const all = activeReplicaSets([...oldRSs, newRS]);
    const allowed = replicasOf(d) > 0 ? replicasOf(d) + maxSurge(d) : 0;
    const toAdd = allowed - specReplicas(all);
    if (toAdd > 0) all.sort(bySizeNewer);
    else if (toAdd < 0) all.sort(bySizeOlder);
    let added = 0;
    const sizes = all.map((rs) => {
      if (toAdd === 0) return replicasOf(rs);
      const p = proportion(rs, d, { toAdd, added });
      added += p;
      return replicasOf(rs) + p;
    });
    for (const [i, rs] of all.entries()) {
      let n = sizes[i] ?? replicasOf(rs);
      if (i === 0 && toAdd !== 0) n = Math.max(0, n + toAdd - added);
      await this.scaleReplicaSet(rs, n, d);
    }
  }

  // ---- RollingUpdate

  private async rolloutRolling(d: Deployment, rsList: readonly ReplicaSet[]): Sync {
    const { newRS, oldRSs } = await this.allReplicaSets(d, rsList, true);
    if (!newRS) throw new Error('no new replica set');
    const allRSs = [...oldRSs, newRS];
    if (await this.reconcileNewReplicaSet(allRSs, newRS, d)) return this.syncRolloutStatus(allRSs, newRS, d);
    if (await this.reconcileOldReplicaSets(d, { allRSs, oldRSs: activeReplicaSets(oldRSs), newRS }))
      return this.syncRolloutStatus(allRSs, newRS, d);
    if (deploymentComplete(d, d.status ?? {})) await this.cleanup(oldRSs, d);
    return this.syncRolloutStatus(allRSs, newRS, d);
  }

  /** Scales the new ReplicaSet up within maxSurge (or down to `spec.replicas`); true when it scaled. */
  private async reconcileNewReplicaSet(
    allRSs: readonly ReplicaSet[],
    newRS: ReplicaSet,
    d: Deployment,
  ): Promise<boolean> {
    if (replicasOf(newRS) === replicasOf(d)) return false;
    const n = replicasOf(newRS) > replicasOf(d) ? replicasOf(d) : newRSNewReplicas(d, allRSs, newRS);
    return (await this.scaleIfNeeded(newRS, n, d)).scaled;
  }

  /** Scales old ReplicaSets down as far as maxUnavailable allows, unhealthy replicas first; true when any scaled. */
  private async reconcileOldReplicaSets(
    d: Deployment,
    { allRSs, oldRSs, newRS }: { allRSs: readonly ReplicaSet[]; oldRSs: readonly ReplicaSet[]; newRS: ReplicaSet },
  ): Promise<boolean> {
    if (specReplicas(oldRSs) === 0) return false;
    const minAvailable = replicasOf(d) - maxUnavailable(d);
    const newUnavailable = replicasOf(newRS) - (newRS.status?.availableReplicas ?? 0);
    const maxScaledDown = specReplicas(allRSs) - minAvailable - newUnavailable;
    if (maxScaledDown <= 0) return false;
    const cleaned = await this.cleanupUnhealthyReplicas(oldRSs, d, maxScaledDown);
    const scaledDown = await this.scaleDownOldForRollingUpdate([...cleaned.rss, newRS], cleaned.rss, d);
    return cleaned.count + scaledDown > 0;
  }

  /** Removes unavailable replicas of old ReplicaSets (oldest first), at most `max` in all. */
  private async cleanupUnhealthyReplicas(
    oldRSs: readonly ReplicaSet[],
    d: Deployment,
    max: number,
  ): Promise<{ rss: ReplicaSet[]; count: number }> {
    const rss = [...oldRSs].sort(byCreation);
    let total = 0;
    for (const [i, rs] of rss.entries()) {
      if (total >= max) break;
      const unhealthy = replicasOf(rs) - availableOf(rs);
      if (replicasOf(rs) === 0 || unhealthy === 0) continue;
      const down = Math.min(max - total, unhealthy);
      rss[i] = (await this.scaleIfNeeded(rs, replicasOf(rs) - down, d)).rs;
      total += down;
    }
    return { rss, count: total };
  }

  /** Scales old ReplicaSets (oldest first) down by what is available above `spec.replicas - maxUnavailable`. */
  private async scaleDownOldForRollingUpdate(
    allRSs: readonly ReplicaSet[],
    oldRSs: readonly ReplicaSet[],
    d: Deployment,
  ): Promise<number> {
    const minAvailable = replicasOf(d) - maxUnavailable(d);
    const available = allRSs.reduce((n, rs) => n + availableOf(rs), 0);
    if (available <= minAvailable) return 0;
    const toScale = available - minAvailable;
    let total = 0;
    for (const rs of [...oldRSs].sort(byCreation)) {
      if (total >= toScale) break;
      if (replicasOf(rs) === 0) continue;
      const down = Math.min(replicasOf(rs), toScale - total);
      await this.scaleIfNeeded(rs, replicasOf(rs) - down, d);
      total += down;
    }
    return total;
  }

  // ---- Recreate

  /** Old ReplicaSets to 0, wait until no old pod is left, then create/scale the new ReplicaSet. */
  private async rolloutRecreate(d: Deployment, rsList: readonly ReplicaSet[]): Sync {
    let { newRS, oldRSs } = await this.allReplicaSets(d, rsList, false);
    let allRSs = [...oldRSs, newRS];
    let scaledDown = false;
    for (const rs of activeReplicaSets(oldRSs)) if ((await this.scaleIfNeeded(rs, 0, d)).scaled) scaledDown = true;
    if (scaledDown || this.oldPodsRunning(newRS, oldRSs, this.podMap(d, rsList)))
      return this.syncRolloutStatus(allRSs, newRS, d);
    if (!newRS) {
      ({ newRS, oldRSs } = await this.allReplicaSets(d, rsList, true));
      allRSs = [...oldRSs, newRS];
    }
    if (newRS) await this.scaleIfNeeded(newRS, replicasOf(d), d);
    if (deploymentComplete(d, d.status ?? {})) await this.cleanup(oldRSs, d);
    return this.syncRolloutStatus(allRSs, newRS, d);
  }

  /** Old ReplicaSets still report pods, or a pod of one is not finished (being deleted counts as running). */
  private oldPodsRunning(
    newRS: ReplicaSet | undefined,
    oldRSs: readonly ReplicaSet[],
    podMap: Map<string, Pod[]>,
  ): boolean {
    if (actualReplicas(oldRSs) > 0) return true;
    for (const [uid, pods] of podMap) {
      if (uid === newRS?.metadata.uid) continue;
      if (pods.some((p) => p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded')) return true;
    }
    return false;
  }

  // ---- history

  /** Deletes the oldest old ReplicaSets beyond `revisionHistoryLimit` that have no pods wanted or left. */
  private async cleanup(oldRSs: readonly ReplicaSet[], d: Deployment): Promise<void> {
    const limit = d.spec.revisionHistoryLimit;
    if (limit === undefined || limit === 2_147_483_647) return;
    const cleanable = oldRSs.filter((rs) => !rs.metadata.deletionTimestamp).sort(byRevision);
    const diff = cleanable.length - limit;
    for (const rs of cleanable.slice(0, Math.max(0, diff))) {
      const st = rs.status ?? {};
      if (
        (st.replicas ?? 0) !== 0 ||
        replicasOf(rs) !== 0 ||
        (rs.metadata.generation ?? 0) > (st.observedGeneration ?? 0)
      )
        continue;
      this.deps.logger
        .v(4)
        .info('deleting old replica set', { replicaSet: `${rs.metadata.namespace ?? ''}/${rs.metadata.name ?? ''}` });
      try {
        await this.rsApi(rs.metadata.namespace ?? '').delete(rs.metadata.name ?? '');
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
  }

  // ---- status

  private async syncStatusOnly(d: Deployment, rsList: readonly ReplicaSet[]): Sync {
    const { newRS, oldRSs } = await this.allReplicaSets(d, rsList, false);
    return this.syncStatus([...oldRSs, newRS], newRS, d);
  }

  /** Writes the counts and `Available` when they changed. */
  private async syncStatus(
    allRSs: ReadonlyArray<ReplicaSet | undefined>,
    newRS: ReplicaSet | undefined,
    d: Deployment,
  ): Sync {
    const st = calculateStatus(d, { allRSs, newRS });
    if (jsonEqual(wireStatus(d.status ?? {}), wireStatus(st))) return;
    d.status = st;
    await this.writeStatus(d);
  }

  /** A paused Deployment shows Progressing=Unknown/DeploymentPaused; resuming shows DeploymentResumed. */
  private async checkPausedConditions(d: Deployment): Promise<void> {
    if (!hasProgressDeadline(d)) return;
    const cond = getCondition(d.status, 'Progressing');
    if (cond?.reason === REASON.timedOut) return;
    const pausedShown = cond?.reason === REASON.paused;
    let c: DeploymentCondition;
    if (d.spec.paused && !pausedShown)
      c = newCondition({
        type: 'Progressing',
        status: 'Unknown',
        reason: REASON.paused,
        message: 'Deployment is paused',
      });
    else if (!d.spec.paused && pausedShown)
      c = newCondition({
        type: 'Progressing',
        status: 'Unknown',
        reason: REASON.resumed,
        message: 'Deployment is resumed',
      });
    else return;
    setCondition((d.status ??= {}), c);
    await this.writeStatus(d);
  }

  /** Status plus the Progressing condition (complete, progressing, or past its deadline) and ReplicaSet failures. */
  private async syncRolloutStatus(
    allRSs: ReadonlyArray<ReplicaSet | undefined>,
    newRS: ReplicaSet | undefined,
    d: Deployment,
  ): Sync {
    const st = calculateStatus(d, { allRSs, newRS });
    if (!hasProgressDeadline(d)) removeCondition(st, 'Progressing');
    const current = getCondition(d.status, 'Progressing');
    const name = newRS ? `ReplicaSet "${newRS.metadata.name ?? ''}"` : `Deployment "${d.metadata.name ?? ''}"`;
    const complete = (st.replicas ?? 0) === (st.updatedReplicas ?? 0) && current?.reason === REASON.newRSAvailable;
    if (hasProgressDeadline(d) && !complete) {
      if (deploymentComplete(d, st)) {
        setCondition(
          st,
          newCondition({
            type: 'Progressing',
            status: 'True',
            reason: REASON.newRSAvailable,
            message: `${name} has successfully progressed.`,
          }),
        );
      } else if (deploymentProgressing(d, st)) {
        // Progress refreshes lastUpdateTime even with the same reason; the transition time stays while True.
        const c = newCondition({
          type: 'Progressing',
          status: 'True',
          reason: REASON.rsUpdated,
          message: `${name} is progressing.`,
        });
        if (current?.status === 'True') c.lastTransitionTime = current.lastTransitionTime;
        removeCondition(st, 'Progressing');
        setCondition(st, c);
      } else if (deploymentTimedOut(d, st)) {
        setCondition(
          st,
          newCondition({
            type: 'Progressing',
            status: 'False',
            reason: REASON.timedOut,
            message: `${name} has timed out progressing.`,
          }),
        );
      }
    }
    const failure = replicaFailure(allRSs, newRS);
    if (failure) setCondition(st, failure);
    else removeCondition(st, 'ReplicaFailure');
    if (jsonEqual(wireStatus(d.status ?? {}), wireStatus(st))) return requeueStuck(d, st);
    d.status = st;
    await this.writeStatus(d);
  }
}

/** The first ReplicaFailure condition of the new, then the old ReplicaSets, as a Deployment condition. */
function replicaFailure(
  allRSs: ReadonlyArray<ReplicaSet | undefined>,
  newRS: ReplicaSet | undefined,
): DeploymentCondition | undefined {
  for (const rs of [newRS, ...allRSs]) {
    const c = rs?.status?.conditions?.find((x) => x.type === 'ReplicaFailure');
    if (c)
      return {
        type: 'ReplicaFailure',
        status: c.status,
        lastUpdateTime: c.lastTransitionTime,
        lastTransitionTime: c.lastTransitionTime,
        reason: c.reason,
        message: c.message,
      };
  }
  return undefined;
}

/** When a rollout in progress will pass its deadline, look again then (Kubernetes' requeueStuckDeployment). */
function requeueStuck(d: Deployment, st: DeploymentStatus): ReconcileResult | void {
  const c = getCondition(d.status, 'Progressing');
  if (!hasProgressDeadline(d) || !c || deploymentComplete(d, st) || c.reason === REASON.timedOut) return;
  const after = Date.parse(c.lastUpdateTime ?? '') + (d.spec.progressDeadlineSeconds ?? 0) * 1000 - Date.now();
  if (!Number.isFinite(after)) return;
  return { requeueAfter: after < 1000 ? Math.max(after, 0) + 50 : after + 1000 };
}
