import { isAlreadyExists, isConflict, isNotFound, type ApiObject } from '@svc/api';
import { jsonEqual } from '@svc/machinery';
import type { GenericStore } from '../../registry/store.js';
import type { Subject } from '../../registry/strategies/rbac.js';
import { autoupdateAnnotation, defaultClusterRoleBindings, defaultClusterRoles } from './bootstrap-policy.js';
import { uncoveredRules, type PolicyRule } from './rules.js';
import { forEachInParallel } from '../../server/in-parallel.js';

/** Adds what `want` has and `have` lacks: labels, annotations, rules (missing permissions), aggregation selectors, subjects. */
function reconciled(have: ApiObject, want: ApiObject): ApiObject {
  const out: ApiObject = { ...have, metadata: { ...have.metadata } };
  out.metadata.labels = { ...(want.metadata.labels ?? {}), ...(have.metadata.labels ?? {}) };
  out.metadata.annotations = { ...(want.metadata.annotations ?? {}), ...(have.metadata.annotations ?? {}) };
  if (want.kind === 'ClusterRole') {
    const wantAgg = want.aggregationRule as { clusterRoleSelectors: unknown[] } | undefined;
    if (wantAgg) {
      // Aggregated roles: their rules belong to the aggregation controller; only the selectors are ours.
      const haveSel =
        (have.aggregationRule as { clusterRoleSelectors?: unknown[] } | undefined)?.clusterRoleSelectors ?? [];
      const sel = [...haveSel];
      for (const s of wantAgg.clusterRoleSelectors) if (!sel.some((x) => jsonEqual(x, s))) sel.push(s);
      out.aggregationRule = { clusterRoleSelectors: sel };
    } else {
      const haveRules = (have.rules as PolicyRule[] | undefined) ?? [];
      const missing = uncoveredRules(haveRules, (want.rules as PolicyRule[] | undefined) ?? []);
      if (missing.length) out.rules = [...haveRules, ...missing];
    }
  } else {
    const subjects = [...((have.subjects as Subject[] | undefined) ?? [])];
    for (const s of (want.subjects as Subject[] | undefined) ?? []) {
      if (!subjects.some((x) => x.kind === s.kind && x.name === s.name && (x.namespace ?? '') === (s.namespace ?? '')))
        subjects.push(s);
    }
    out.subjects = subjects;
  }
  return out;
}

/**
 * The post-start hook `rbac/bootstrap-roles`: creates the default ClusterRoles and
 * ClusterRoleBindings and, on every start, re-adds missing permissions and subjects to
 * existing ones, except those annotated `rbac.authorization.<suffix>/autoupdate: "false"`.
 */
export async function reconcileBootstrapPolicy(stores: {
  clusterRoles: GenericStore;
  clusterRoleBindings: GenericStore;
  /**
   * Synced caches of both kinds (RBAC's informers), when there are, else a list of each: an
   * object they lack is created without reading it first; one they hold is reconciled against
   * that copy (the store is read only after a conflict).
   */
  cached?: { clusterRoles: CachedLookup; clusterRoleBindings: CachedLookup };
}): Promise<void> {
  // Without RBAC's informers (another authorization mode), one list of each kind stands in for
  // them: two reads instead of one per default object.
  const [roles, bindings] = await Promise.all([
    stores.cached?.clusterRoles ?? listed(stores.clusterRoles),
    stores.cached?.clusterRoleBindings ?? listed(stores.clusterRoleBindings),
  ]);
  const work: Array<[Target, ApiObject]> = [
    ...defaultClusterRoles().map((o): [Target, ApiObject] => [{ store: stores.clusterRoles, cached: roles }, o]),
    ...defaultClusterRoleBindings().map((o): [Target, ApiObject] => [
      { store: stores.clusterRoleBindings, cached: bindings },
      o,
    ]),
  ];
  // Each object is independent of the others (bindings may name roles not there yet, as in
  // Kubernetes), so several are in flight at once.
  await forEachInParallel(work, { workers: BOOTSTRAP_WORKERS, each: ([target, want]) => reconcileOne(target, want) });
}

/** A synced cache's lookup of a cluster-scoped object by name. */
export interface CachedLookup {
  get(namespace: string, name: string): ApiObject | undefined;
}

/** A cluster-scoped kind's objects as listed now, looked up by name. */
async function listed(store: GenericStore): Promise<CachedLookup> {
  const byName = new Map((await store.list('')).items.map((o) => [o.metadata.name ?? '', o]));
  return { get: (_namespace, name) => byName.get(name) };
}

/** Where one kind of default object lives. */
interface Target {
  store: GenericStore;
  cached: CachedLookup;
}

/** Writes in flight at once while reconciling the default policy. */
const BOOTSTRAP_WORKERS = 8;

/** Creates `want`, or re-adds what the stored object lacks (unless it opted out of auto-update). */
async function reconcileOne({ store, cached }: Target, want: ApiObject): Promise<void> {
  const name = want.metadata.name ?? '';
  for (let attempt = 0; ; attempt++) {
    try {
      // First the cached or listed copy: a fresh store has none of them, and on a restart nearly
      // all are there as wanted, so no read per object either way. Should the copy be behind
      // the store (another server wrote meanwhile), the create or the update (which carries the
      // copy's resourceVersion) fails and the retry reads the store.
      let have = attempt === 0 ? cached.get('', name) : undefined;
      if (attempt > 0) {
        try {
          have = await store.get('', name);
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
      }
      if (!have) {
        await store.create('', want, { ctx: {} });
        break;
      }
      if (have.metadata.annotations?.[autoupdateAnnotation()] === 'false') break;
      const next = reconciled(have, want);
      if (!jsonEqual(next, have)) await store.update('', name, { updater: () => next, ctx: {} });
      break;
    } catch (e) {
      // NotFound: the cache held an object another server has since deleted.
      if ((isConflict(e) || isAlreadyExists(e) || isNotFound(e)) && attempt < 5) continue;
      throw e;
    }
  }
}
