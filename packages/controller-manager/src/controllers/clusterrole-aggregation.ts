import { StatusError, type ApiObject } from '@svc/api';
import { ResourceClient, objectKey } from '@svc/client';
import { aggregateClusterRoleRules, policyRulesEqual, type AggregatedPolicyRule } from '@svc/machinery';
import { informer, newController, type ControllerDefinition } from '../controller-context.js';
import { R } from '../resources.js';

const NAME = 'clusterrole-aggregation-controller';

/**
 * `clusterrole-aggregation-controller`: a ClusterRole with an `aggregationRule` gets as `rules`
 * the union of the rules of the ClusterRoles its selectors match (machinery's
 * `aggregateClusterRoleRules`: by selector, then by name, duplicates dropped), written by
 * server-side apply as this controller (forced; a plain update when the server refuses apply)
 * and only when it differs. As Kubernetes, any ClusterRole change requeues every aggregated
 * role, since which sources a role has depends on labels the change may have moved.
 */
export const clusterRoleAggregationController: ControllerDefinition = {
  name: NAME,
  build(ctx) {
    const roles = informer<ApiObject>(ctx, R.clusterRoles());
    const api = new ResourceClient(ctx.client, R.clusterRoles());
    const controller = newController(ctx, {
      name: NAME,
      queueName: 'ClusterRoleAggregator',
      reconcile: async (name, signal) => {
        const role = roles.store.get(name);
        if (!role) return;
        const rules = aggregateClusterRoleRules(role, roles.store.list());
        if (!rules || policyRulesEqual(rules, role.rules as AggregatedPolicyRule[] | undefined)) return;
        ctx.logger
          .v(2)
          .info('updating aggregated ClusterRole rules', { controller: NAME, key: name, rules: rules.length });
        const applied = { apiVersion: `${R.clusterRoles().group}/v1`, kind: 'ClusterRole', metadata: { name }, rules };
        try {
          await api.apply(applied, { fieldManager: NAME, force: true, signal });
        } catch (e) {
          if (!(e instanceof StatusError && e.code === 415)) throw e;
          await api.update({ ...role, rules }, { signal });
        }
      },
    });
    const aggregated = (): string[] =>
      roles.store
        .list()
        .filter((r) => r.aggregationRule)
        .map((r) => objectKey(r));
    controller.watch(roles, aggregated);
    return controller;
  },
};
