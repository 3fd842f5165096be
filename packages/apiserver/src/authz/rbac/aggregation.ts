import { isConflict, isNotFound, type ApiObject } from '@svc/api';
import { aggregateClusterRoleRules, policyRulesEqual } from '@svc/machinery';
import type { GenericStore } from '../../registry/store.js';
import type { StoreInformer } from './informer.js';
import type { PolicyRule } from './rules.js';

/** The rules an aggregated ClusterRole should have (machinery's `aggregateClusterRoleRules`, the controller manager's too). */
export function aggregatedRules(target: ApiObject, all: Iterable<ApiObject>): PolicyRule[] | undefined {
  return aggregateClusterRoleRules(target, all) as PolicyRule[] | undefined;
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

  constructor(
    private readonly informer: StoreInformer,
    private readonly store: GenericStore,
    private readonly onError: (e: unknown) => void,
  ) {}

  start(): void {
    this.informer.onChange(() => {
      this.kick();
    });
  }

  /** Schedules a pass; a pass already running is followed by one more. */
  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
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
      if (!want || policyRulesEqual(want, role.rules as PolicyRule[] | undefined)) continue;
      try {
        await this.store.update('', role.metadata.name ?? '', {
          updater: (cur) => {
            const wanted = aggregatedRules(cur, all) ?? [];
            return { ...cur, rules: wanted };
          },
          ctx: {},
        });
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e;
        this.again = true;
      }
    }
  }
}
