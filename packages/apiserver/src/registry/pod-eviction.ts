import {
  badRequest,
  evictionKind,
  forbidden,
  internalError,
  successStatus,
  tooManyRequests,
  type DeleteOptions,
  type Eviction,
  type Pod,
  type PodDisruptionBudget,
  type PodDisruptionBudgetStatus,
  type ResourceType,
} from '@svc/api';
import { labelSelectorFromObject } from '@svc/machinery';
import { endpointKey, type CreateOnlyHandler, type CreateOnlyRequest } from './create-only.js';
import { setPodCondition } from './pod-binding.js';
import { nowRfc3339, type GenericStore } from './store.js';

/** Kubernetes' MaxDisruptedPodSize: evictions the disruption controller has not confirmed yet. */
const MAX_DISRUPTED_PODS = 2000;
const REFUSED = "Cannot evict pod as it would violate the pod's disruption budget.";
/** Kubernetes' policyv1.DisruptionBudgetCause. */
const BUDGET_CAUSE = 'DisruptionBudget';

interface EvictionStores {
  pods: () => GenericStore;
  budgets: () => GenericStore;
}

const isReady = (p: Pod): boolean =>
  (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** Finished, not started or already going: evicted without asking a budget (Kubernetes' canIgnorePDB). */
function canIgnoreBudget(p: Pod): boolean {
  const phase = p.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || !!p.metadata.deletionTimestamp;
}

function budgetRefused(o: { retryAfterSeconds: number; why: string }): never {
  const e = tooManyRequests(REFUSED, o.retryAfterSeconds);
  e.status.details = { ...e.status.details, causes: [{ reason: BUDGET_CAUSE, message: o.why }] };
  throw e;
}

/** Kubernetes' UpdateDisruptionAllowedCondition once the eviction used up the last allowed disruption. */
function markInsufficient(status: PodDisruptionBudgetStatus): void {
  const conditions = status.conditions ?? [];
  const i = conditions.findIndex((c) => c.type === 'DisruptionAllowed');
  const old = i >= 0 ? conditions[i] : undefined;
  const next = {
    type: 'DisruptionAllowed',
    status: 'False' as const,
    observedGeneration: status.observedGeneration,
    reason: 'InsufficientPods',
    message: '',
    lastTransitionTime: old?.status === 'False' ? old.lastTransitionTime : nowRfc3339(),
  };
  if (i >= 0) conditions[i] = next;
  else conditions.push(next);
  status.conditions = conditions;
}

/**
 * Kubernetes' checkAndDecrement, run on the budget as stored (again on every conflict): refused
 * while the controller has not seen the current generation or no disruption is allowed; else one
 * disruption fewer and the pod recorded in `disruptedPods` (not written on a dry run).
 */
async function takeDisruption(o: { budgets: GenericStore; pdb: PodDisruptionBudget; pod: string; dryRun: boolean }) {
  const ns = o.pdb.metadata.namespace ?? '';
  const name = o.pdb.metadata.name ?? '';
  const check = (pdb: PodDisruptionBudget): PodDisruptionBudget => {
    const st = pdb.status ?? { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
    if ((st.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0))
      budgetRefused({
        retryAfterSeconds: 10,
        why: `The disruption budget ${name} is still being processed by the server.`,
      });
    const budget = { group: 'policy', resource: 'poddisruptionbudget' };
    if (st.disruptionsAllowed < 0)
      throw forbidden(`${budget.resource}.${budget.group} "${name}" is forbidden: pdb disruptions allowed is negative`);
    if (Object.keys(st.disruptedPods ?? {}).length > MAX_DISRUPTED_PODS)
      throw forbidden(
        `${budget.resource}.${budget.group} "${name}" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller`,
      );
    if (st.disruptionsAllowed === 0)
      budgetRefused({
        retryAfterSeconds: 0,
        why: `The disruption budget ${name} needs ${st.desiredHealthy} healthy pods and has ${st.currentHealthy} currently`,
      });
    st.disruptionsAllowed -= 1;
    if (st.disruptionsAllowed === 0) markInsufficient(st);
    st.disruptedPods = { ...st.disruptedPods, [o.pod]: nowRfc3339() };
    pdb.status = st;
    return pdb;
  };
  if (o.dryRun) {
    check((await o.budgets.get(ns, name)) as PodDisruptionBudget);
    return;
  }
  await o.budgets.update(ns, name, {
    updater: (cur) => check(cur as PodDisruptionBudget),
    ctx: {},
    subresource: 'status',
  });
}

/** The budgets of the pod's namespace whose selector matches it (an unset selector matches nothing). */
async function budgetsOf(budgets: GenericStore, pod: Pod): Promise<PodDisruptionBudget[]> {
  const list = await budgets.list(pod.metadata.namespace ?? '');
  const labels = pod.metadata.labels ?? {};
  return (list.items as PodDisruptionBudget[]).filter((b) => labelSelectorFromObject(b.spec?.selector).matches(labels));
}

/** Kubernetes' addConditionAndDeletePod: DisruptionTarget=True on the pod, then the eviction's delete. */
async function deletePod(o: { pods: GenericStore; pod: Pod; req: CreateOnlyRequest; options: DeleteOptions }) {
  const ns = o.req.namespace;
  const name = o.pod.metadata.name ?? '';
  const has = (o.pod.status?.conditions ?? []).some((c) => c.type === 'DisruptionTarget' && c.status === 'True');
  if (!o.req.dryRun && !has && !o.pod.metadata.deletionTimestamp) {
    await o.pods.update(ns, name, {
      updater: (cur) => {
        const status = (cur.status ?? {}) as NonNullable<Pod['status']>;
        setPodCondition(
          status,
          {
            type: 'DisruptionTarget',
            status: 'True',
            reason: 'EvictionByEvictionAPI',
            message: 'Eviction API: evicting',
          },
          nowRfc3339(),
        );
        cur.status = status;
        return cur;
      },
      ctx: {},
      subresource: 'status',
    });
  }
  await o.pods.delete(ns, name, { ctx: { user: o.req.user, dryRun: o.req.dryRun }, options: o.options });
}

/**
 * POST `pods/<name>/eviction`, as Kubernetes' EvictionREST: the pod is deleted with the
 * eviction's deleteOptions unless the one PodDisruptionBudget selecting it allows no more
 * disruptions (429 with the DisruptionBudget cause). Pods that are finished, pending or
 * terminating skip the budget; more than one budget is a 500; an unready pod passes when its
 * budget is healthy anyway (or its policy is AlwaysAllow) without using a disruption.
 */
async function evict(s: EvictionStores, req: CreateOnlyRequest): Promise<object> {
  const ev = req.body as Eviction;
  if (ev.metadata.name && ev.metadata.name !== req.name)
    throw badRequest('name in URL does not match name in Eviction object');
  const options: DeleteOptions = { ...ev.deleteOptions };
  delete options.apiVersion;
  delete options.kind;
  const pods = s.pods();
  const pod = (await pods.get(req.namespace, req.name)) as Pod;
  const done = async (preconditions?: DeleteOptions['preconditions']): Promise<object> => {
    await deletePod({ pods, pod, req, options: preconditions ? { ...options, preconditions } : options });
    return { ...successStatus(), code: 201 };
  };
  if (canIgnoreBudget(pod)) return done();
  const budgets = await budgetsOf(s.budgets(), pod);
  const [pdb, ...more] = budgets;
  if (!pdb) return done();
  if (more.length > 0)
    throw internalError(
      'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    );
  if (!isReady(pod)) {
    const st = pdb.status;
    const healthyAnyway = !!st && st.desiredHealthy > 0 && st.currentHealthy >= st.desiredHealthy;
    // The pod is deleted only as it was read, so one turning Ready meanwhile is not taken without the budget.
    if (pdb.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow' || healthyAnyway)
      return done({ ...options.preconditions, resourceVersion: pod.metadata.resourceVersion });
  }
  await takeDisruption({ budgets: s.budgets(), pdb, pod: req.name, dryRun: req.dryRun });
  return done();
}

/** The create-only endpoint `pods/<name>/eviction`, keyed by `endpointKey`; reads policy/v1 and v1beta1 Evictions. */
export function podEvictionHandler(o: {
  pod: ResourceType;
  pods: () => GenericStore;
  budgets: () => GenericStore;
}): [string, CreateOnlyHandler] {
  return [
    endpointKey(o.pod, 'eviction'),
    { kind: evictionKind(), alsoVersions: ['v1beta1'], create: (req) => evict(o, req) },
  ];
}
