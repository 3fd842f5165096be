import {
  isConflict,
  isNotFound,
  type Deployment,
  type OwnerReference,
  type Pod,
  type PodDisruptionBudget,
  type PodDisruptionBudgetCondition,
  type PodDisruptionBudgetStatus,
  type ReplicaSet,
} from '@svc/api';
import {
  EventRecorder,
  NAMESPACE_INDEX,
  ResourceClient,
  objectKey,
  responseError,
  type GroupVersionResource,
  type RestClient,
} from '@svc/client';
import { labelSelectorFromObject } from '@svc/machinery';
import { informer, newController, runAll, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';
import { REAL_CLOCK, type Clock } from './clock.js';
import { controllerOf, resolveControllerRef } from './controller-ref.js';
import { scaledValue } from './deployment-util.js';
import { isPodReady } from './pod-util.js';
import { nowTime, replicasOf } from './workload-util.js';

const NAME = 'disruption-controller';
/** Kubernetes' DeletionTimeout: an eviction not followed by the pod's deletion within this is forgotten. */
export const DELETION_TIMEOUT_MS = 2 * 60 * 1000;
/** Kubernetes' stalePodDisruptionTimeout: a DisruptionTarget=True condition on a pod not deleted within this is reset. */
export const STALE_POD_DISRUPTION_TIMEOUT_MS = 2 * 60 * 1000;

/**
 * Kubernetes' nonTerminatingPodHasStaleDisruptionCondition: whether `pod`, not being deleted,
 * carries DisruptionTarget=True, and how long until that condition is stale (0: it is).
 */
export function staleDisruptionIn(pod: Pod, now: number): number | undefined {
  if (pod.metadata.deletionTimestamp) return undefined;
  const c = pod.status?.conditions?.find((x) => x.type === 'DisruptionTarget');
  if (c?.status !== 'True') return undefined;
  const since = c.lastTransitionTime ? Date.parse(c.lastTransitionTime) : now;
  return Math.max(0, since + STALE_POD_DISRUPTION_TIMEOUT_MS - now);
}
const PDBS: GroupVersionResource = { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets' };

/** The scale of one controller of selected pods. */
interface ControllerScale {
  uid: string;
  scale: number;
}

const selects = (pdb: PodDisruptionBudget, pod: Pod): boolean => {
  try {
    return labelSelectorFromObject(pdb.spec?.selector).matches(pod.metadata.labels ?? {});
  } catch {
    return false;
  }
};

/**
 * Kubernetes' UpdateDisruptionAllowedCondition: DisruptionAllowed True/SufficientPods while a
 * disruption is allowed, else False/InsufficientPods (`reason`/`message` override, for SyncFailed).
 */
function setAllowedCondition(
  st: PodDisruptionBudgetStatus,
  o: { now: string; reason?: string; message?: string } = { now: nowTime() },
): void {
  const allowed = st.disruptionsAllowed > 0 && o.reason === undefined;
  const next: PodDisruptionBudgetCondition = {
    type: 'DisruptionAllowed',
    status: allowed ? 'True' : 'False',
    observedGeneration: st.observedGeneration,
    reason: o.reason ?? (allowed ? 'SufficientPods' : 'InsufficientPods'),
    message: o.message ?? '',
    lastTransitionTime: o.now,
  };
  const list = st.conditions ?? [];
  const i = list.findIndex((c) => c.type === next.type);
  const old = list[i];
  if (old?.status === next.status) next.lastTransitionTime = old.lastTransitionTime;
  if (old) list[i] = next;
  else list.push(next);
  st.conditions = list;
}

/**
 * The plural of a kind and whether it serves `scale`, by discovery of its group version
 * (cached), as Kubernetes' REST mapper and implementsScale.
 */
export function scaleMapper(
  client: RestClient,
): (apiVersion: string, kind: string) => Promise<{ plural: string; scale: boolean }> {
  type Listed = Array<{ name: string; kind: string }>;
  const lists = new Map<string, Promise<Listed>>();
  const resources = (apiVersion: string): Promise<Listed> => {
    let p = lists.get(apiVersion);
    if (!p) {
      const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      p = client.request('GET', path).then(async (r) => {
        if (r.status !== 200) throw responseError(r.status, r.body);
        return (await r.json<{ resources?: Listed }>()).resources ?? [];
      });
      p.catch(() => lists.delete(apiVersion));
      lists.set(apiVersion, p);
    }
    return p;
  };
  return async (apiVersion, kind) => {
    const list = await resources(apiVersion);
    const plural = list.find((r) => r.kind === kind && !r.name.includes('/'))?.name;
    if (!plural) throw new Error(`no matches for kind "${kind}" in version "${apiVersion}"`);
    return { plural, scale: list.some((r) => r.name === `${plural}/scale`) };
  };
}

/** The same pod → time entries, in any order. */
function sameMap(a: Record<string, string> = {}, b: Record<string, string> = {}): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

/**
 * `disruption-controller`: keeps each PodDisruptionBudget's status, as Kubernetes 1.32's
 * disruption controller. expectedPods is the number of selected pods (integer minAvailable) or
 * the sum of the scale of their controllers (percentages and maxUnavailable: a ReplicaSet's
 * Deployment, a ReplicaSet, or any controller through its `scale` subresource); currentHealthy
 * counts Ready pods that are neither being deleted nor recently evicted (`disruptedPods`, kept
 * 2 minutes); disruptionsAllowed = currentHealthy - desiredHealthy (0 without expected pods).
 * A budget it cannot compute gets disruptionsAllowed 0 and DisruptionAllowed False/SyncFailed.
 */
export function makeDisruptionController({ clock = REAL_CLOCK }: { clock?: Clock } = {}): ControllerDefinition {
  return {
    name: NAME,
    build(ctx) {
      const pdbs = informer<PodDisruptionBudget>(ctx, PDBS);
      const pods = informer<Pod>(ctx, R.pods());
      const replicaSets = informer<ReplicaSet>(ctx, R.replicaSets());
      const deployments = informer<Deployment>(ctx, R.deployments());
      const log = ctx.logger.with({ controller: NAME });
      const events = new EventRecorder(ctx.client, { component: NAME, logger: log });
      const record = (
        pdb: PodDisruptionBudget,
        e: { type: 'Normal' | 'Warning'; reason: string; message: string },
      ): void => events.event({ object: pdb, apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', ...e });
      const mapping = scaleMapper(ctx.client);
      const pdbApi = (ns: string): ResourceClient<PodDisruptionBudget> =>
        new ResourceClient<PodDisruptionBudget>(ctx.client, PDBS).namespace(ns);

      /** The scale of the controller `ref` of a pod in `ns` (Kubernetes' finders), undefined when none is found. */
      async function controllerScale(ref: OwnerReference, ns: string): Promise<ControllerScale | undefined> {
        const rs = resolveControllerRef(ref, { group: 'apps', kind: 'ReplicaSet' }, (name) =>
          replicaSets.store.get(`${ns}/${name}`),
        );
        if (rs) {
          const d = resolveControllerRef(controllerOf(rs), { group: 'apps', kind: 'Deployment' }, (name) =>
            deployments.store.get(`${ns}/${name}`),
          );
          if (d) return { uid: d.metadata.uid ?? '', scale: replicasOf(d) };
          if (controllerOf(rs)?.kind === 'Deployment') return undefined;
          return { uid: rs.metadata.uid ?? '', scale: replicasOf(rs) };
        }
        const { plural, scale: hasScale } = await mapping(ref.apiVersion, ref.kind);
        const slash = ref.apiVersion.indexOf('/');
        const group = slash < 0 ? '' : ref.apiVersion.slice(0, slash);
        const version = ref.apiVersion.slice(slash + 1);
        if (!hasScale) throw new Error(`${plural}${group ? `.${group}` : ''} does not implement the scale subresource`);
        try {
          const scale = await new ResourceClient<{ metadata: { uid?: string }; spec?: { replicas?: number } }>(
            ctx.client,
            { group, version, resource: plural },
          )
            .namespace(ns)
            .get(ref.name, { subresource: 'scale' });
          return scale.metadata.uid === ref.uid ? { uid: ref.uid, scale: scale.spec?.replicas ?? 0 } : undefined;
        } catch (e) {
          if (isNotFound(e)) return undefined;
          throw e;
        }
      }

      /** Kubernetes' getExpectedScale: the sum of the selected pods' controllers' scales, and the unmanaged pods. */
      async function expectedScale(selected: Pod[], ns: string): Promise<{ expected: number; unmanaged: string[] }> {
        const scales = new Map<string, number>();
        const unmanaged: string[] = [];
        for (const pod of selected) {
          const ref = controllerOf(pod);
          if (!ref) {
            unmanaged.push(pod.metadata.name ?? '');
            continue;
          }
          if (scales.has(ref.uid)) continue;
          const found = await controllerScale(ref, ns);
          if (!found) throw new Error(`found no controllers for pod "${pod.metadata.name ?? ''}"`);
          scales.set(found.uid, found.scale);
        }
        return { expected: [...scales.values()].reduce((a, b) => a + b, 0), unmanaged };
      }

      /** Kubernetes' getExpectedPodCount. */
      async function expectedCounts(pdb: PodDisruptionBudget, selected: Pod[]) {
        const ns = pdb.metadata.namespace ?? '';
        const { minAvailable, maxUnavailable } = pdb.spec ?? {};
        if (maxUnavailable !== undefined) {
          const { expected, unmanaged } = await expectedScale(selected, ns);
          return { expected, desired: Math.max(0, expected - scaledValue(maxUnavailable, expected, true)), unmanaged };
        }
        if (typeof minAvailable === 'number')
          return { expected: selected.length, desired: minAvailable, unmanaged: [] };
        if (typeof minAvailable === 'string') {
          const { expected, unmanaged } = await expectedScale(selected, ns);
          return { expected, desired: scaledValue(minAvailable, expected, true), unmanaged };
        }
        return { expected: 0, desired: 0, unmanaged: [] };
      }

      /** Kubernetes' buildDisruptedPodMap: entries of selected, not deleted pods younger than the timeout. */
      function disruptedPods(pdb: PodDisruptionBudget, selected: Pod[], now: number) {
        const recorded = pdb.status?.disruptedPods ?? {};
        const kept: Record<string, string> = {};
        let recheckAt: number | undefined;
        for (const pod of selected) {
          const at = recorded[pod.metadata.name ?? ''];
          if (pod.metadata.deletionTimestamp || at === undefined) continue;
          const expires = Date.parse(at) + DELETION_TIMEOUT_MS;
          if (expires < now) {
            log.v(1).info('pod was expected to be deleted but it was not', { pod: objectKey(pod) });
            continue;
          }
          kept[pod.metadata.name ?? ''] = at;
          recheckAt = Math.min(recheckAt ?? expires, expires);
        }
        return { kept, recheckAt };
      }

      async function writeStatus(pdb: PodDisruptionBudget, status: PodDisruptionBudgetStatus): Promise<void> {
        await pdbApi(pdb.metadata.namespace ?? '').update({ ...pdb, status }, { subresource: 'status' });
      }

      async function sync(pdb: PodDisruptionBudget): Promise<{ requeueAfter: number } | undefined> {
        const ns = pdb.metadata.namespace ?? '';
        const selected = pods.store.byIndex(NAMESPACE_INDEX, ns).filter((p) => selects(pdb, p));
        if (selected.length === 0) record(pdb, { type: 'Normal', reason: 'NoPods', message: 'No matching pods found' });
        const { expected, desired, unmanaged } = await expectedCounts(pdb, selected);
        if (unmanaged.length > 0)
          record(pdb, {
            type: 'Warning',
            reason: 'UnmanagedPods',
            message: `Pods selected by this PodDisruptionBudget (selector: ${JSON.stringify(pdb.spec?.selector ?? null)}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.`,
          });
        const now = clock.now();
        const { kept, recheckAt } = disruptedPods(pdb, selected, now);
        const healthy = selected.filter(
          (p) => !p.metadata.deletionTimestamp && kept[p.metadata.name ?? ''] === undefined && isPodReady(p),
        ).length;
        const allowed = expected <= 0 || healthy - desired <= 0 ? 0 : healthy - desired;
        const old = pdb.status;
        const same =
          old &&
          old.currentHealthy === healthy &&
          old.desiredHealthy === desired &&
          old.expectedPods === expected &&
          old.disruptionsAllowed === allowed &&
          old.observedGeneration === pdb.metadata.generation &&
          sameMap(old.disruptedPods, kept) &&
          (old.conditions ?? []).some((c) => c.type === 'DisruptionAllowed' && c.reason !== 'SyncFailed');
        if (!same) {
          const status: PodDisruptionBudgetStatus = {
            currentHealthy: healthy,
            desiredHealthy: desired,
            expectedPods: expected,
            disruptionsAllowed: allowed,
            disruptedPods: kept,
            observedGeneration: pdb.metadata.generation,
            conditions: old?.conditions?.map((c) => ({ ...c })),
          };
          setAllowedCondition(status, { now: nowTime(now) });
          await writeStatus(pdb, status);
        }
        return recheckAt === undefined ? undefined : { requeueAfter: Math.max(0, recheckAt - now) };
      }

      /** Kubernetes' failSafe: no disruption allowed, DisruptionAllowed False/SyncFailed with the error. */
      async function failSafe(pdb: PodDisruptionBudget, error: unknown): Promise<void> {
        const message = error instanceof Error ? error.message : String(error);
        const status: PodDisruptionBudgetStatus = {
          ...(pdb.status ?? { currentHealthy: 0, desiredHealthy: 0, expectedPods: 0, disruptionsAllowed: 0 }),
          disruptionsAllowed: 0,
        };
        status.conditions = status.conditions?.map((c) => ({ ...c }));
        setAllowedCondition(status, { now: nowTime(clock.now()), reason: 'SyncFailed', message });
        await writeStatus(pdb, status);
      }

      const controller = newController(ctx, {
        name: NAME,
        queueName: 'disruption',
        reconcile: async (key) => {
          const pdb = pdbs.store.get(key);
          if (!pdb) return undefined;
          try {
            return await sync(pdb);
          } catch (e) {
            if (isConflict(e) || isNotFound(e)) throw e;
            record(pdb, {
              type: 'Warning',
              reason: 'CalculateExpectedPodCountFailed',
              message: `Failed to calculate the number of expected pods: ${String(e instanceof Error ? e.message : e)}`,
            });
            await failSafe(pdb, e);
            return undefined;
          }
        },
      });

      /** The budgets a pod change may move (Kubernetes enqueues the first; every one is cheap here). */
      const budgetsOf = (pod: Pod): string[] =>
        pdbs.store
          .byIndex(NAMESPACE_INDEX, pod.metadata.namespace ?? '')
          .filter((b) => selects(b, pod))
          .map((b) => objectKey(b));
      controller.watch(pdbs);
      controller.watch(pods, budgetsOf);
      pods.addEventHandler({
        onUpdate: (old, cur) => {
          // Relabelled away: the budgets it left change too.
          if (JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(cur.metadata.labels ?? {}))
            for (const k of budgetsOf(old)) controller.enqueue(k);
        },
      });
      /** A controller's scale changed: the budgets of its namespace are computed again. */
      const scaleChanged = (old: ReplicaSet | Deployment, cur: ReplicaSet | Deployment): void => {
        if (replicasOf(old) === replicasOf(cur)) return;
        for (const b of pdbs.store.byIndex(NAMESPACE_INDEX, cur.metadata.namespace ?? ''))
          controller.enqueue(objectKey(b));
      };
      replicaSets.addEventHandler({ onUpdate: scaleChanged });
      deployments.addEventHandler({ onUpdate: scaleChanged });

      // Kubernetes' stale pod disruption loop: an eviction (or other disruption) that marked a
      // pod DisruptionTarget=True but never led to its deletion is undone after 2 minutes, so
      // the pod does not look about to go forever.
      const stale = newController(ctx, {
        name: NAME,
        queueName: 'stale_pod_disruption',
        reconcile: async (key) => {
          const pod = pods.store.get(key);
          if (!pod) return undefined;
          const wait = staleDisruptionIn(pod, clock.now());
          if (wait === undefined) return undefined;
          if (wait > 0) return { requeueAfter: wait };
          await new ResourceClient<Pod>(ctx.client, R.pods()).namespace(pod.metadata.namespace ?? '').patch(
            pod.metadata.name ?? '',
            {
              status: {
                conditions: [{ type: 'DisruptionTarget', status: 'False', lastTransitionTime: nowTime(clock.now()) }],
              },
            },
            { type: 'strategic', subresource: 'status' },
          );
          log.v(2).info('reset stale DisruptionTarget condition to False', { pod: key });
          return undefined;
        },
      });
      stale.watch(pods, (pod) => (staleDisruptionIn(pod, clock.now()) === undefined ? [] : [objectKey(pod)]));
      return runAll([controller, stale]);
    },
  };
}

export const disruptionController = makeDisruptionController();
