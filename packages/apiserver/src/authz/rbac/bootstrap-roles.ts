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
}): Promise<void> {
  const work: Array<[GenericStore, ApiObject]> = [
    ...defaultClusterRoles().map((o): [GenericStore, ApiObject] => [stores.clusterRoles, o]),
    ...defaultClusterRoleBindings().map((o): [GenericStore, ApiObject] => [stores.clusterRoleBindings, o]),
  ];
  // Each object is independent of the others (bindings may name roles not there yet, as in
  // Kubernetes), so several are in flight at once.
  await forEachInParallel(work, { workers: BOOTSTRAP_WORKERS, each: ([store, want]) => reconcileOne(store, want) });
}

/** Writes in flight at once while reconciling the default policy. */
const BOOTSTRAP_WORKERS = 8;

/** Creates `want`, or re-adds what the stored object lacks (unless it opted out of auto-update). */
async function reconcileOne(store: GenericStore, want: ApiObject): Promise<void> {
  const name = want.metadata.name ?? '';
  for (let attempt = 0; ; attempt++) {
    try {
      let have: ApiObject | undefined;
      try {
        have = await store.get('', name);
      } catch (e) {
        if (!isNotFound(e)) throw e;
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
      if ((isConflict(e) || isAlreadyExists(e)) && attempt < 5) continue;
      throw e;
    }
  }
}
