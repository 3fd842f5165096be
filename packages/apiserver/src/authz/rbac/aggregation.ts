import { isConflict, isNotFound, type ApiObject } from '@svc/api';
import { jsonEqual, labelSelectorFromObject, type LabelSelectorObject } from '@svc/machinery';
import type { GenericStore } from '../../registry/store.js';
import type { StoreInformer } from './informer.js';
import type { PolicyRule } from './rules.js';

/** The rules an aggregated ClusterRole should have: those of every other matching ClusterRole, deduplicated, by name. */
export function aggregatedRules(target: ApiObject, all: Iterable<ApiObject>): PolicyRule[] | undefined {
  const sels = (target.aggregationRule as { clusterRoleSelectors?: LabelSelectorObject[] } | undefined)?.clusterRoleSelectors;
  if (!sels) return undefined;
  const selectors = sels.map((s) => labelSelectorFromObject(s));
  const matching = [...all]
    .filter((o) => o.metadata.name !== target.metadata.name && selectors.some((s) => s.matches(o.metadata.labels ?? {})))
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  const out: PolicyRule[] = [];
  for (const o of matching) {
    for (const r of (o.rules as PolicyRule[] | undefined) ?? []) {
      if (!out.some((x) => jsonEqual(x, r))) out.push(r);
    }
  }
  return out;
}

/**
 * Kubernetes' ClusterRoleAggregationController, inside the API server: after every change to
 * ClusterRoles, rewrites `rules` of each ClusterRole with an `aggregationRule` that differs
 * from its aggregate. Level-based: a pass reads only the informer cache; writes go through
 * the store as the server itself (no escalation check).
 */
export class ClusterRoleAggregator {
  private running: Promise<void> | undefined;
  private again = false;

  constructor(private readonly informer: StoreInformer, private readonly store: GenericStore, private readonly onError: (e: unknown) => void) {}

  start(): void {
    this.informer.onChange(() => { this.kick(); });
  }

  /** Schedules a pass; a pass already running is followed by one more. */
  kick(): void {
    if (this.running) { this.again = true; return; }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.syncAll();
        } catch (e) {
          this.onError(e);
        }
      } while (this.again);
      this.running = undefined;
    })();
  }

  async syncAll(): Promise<void> {
    const all = [...this.informer.list()];
    for (const role of all) {
      const want = aggregatedRules(role, all);
      if (!want || jsonEqual(want, role.rules ?? [])) continue;
      try {
        await this.store.update('', role.metadata.name ?? '', (cur) => {
          const wanted = aggregatedRules(cur, all) ?? [];
          return { ...cur, rules: wanted };
        }, {});
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e;
        this.again = true;
      }
    }
  }
}
