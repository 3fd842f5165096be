import type { ApiObject } from '@svc/api';
import { aggregateClusterRoleRules, policyRulesEqual } from './clusterrole-aggregation.js';

const role = (name: string, labels: Record<string, string>, rules: object[]): ApiObject => ({
  apiVersion: 'rbac/v1',
  kind: 'ClusterRole',
  metadata: { name, labels },
  rules,
});
const aggregating = (target: ApiObject, aggregationRule: object): ApiObject => ({ ...target, aggregationRule });

describe('aggregateClusterRoleRules', () => {
  const pods = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
  const secrets = { verbs: ['get'], apiGroups: [''], resources: ['secrets'] };
  const nodes = { verbs: ['list'], apiGroups: [''], resources: ['nodes'] };

  it('orders by selector, then by name in byte order, drops duplicates and the target itself', () => {
    const target = aggregating(role('target', { a: 'x' }, [nodes]), {
      clusterRoleSelectors: [{ matchLabels: { a: 'x' } }, { matchLabels: { b: 'x' } }],
    });
    const all = [
      target,
      role('b-src', { b: 'x' }, [secrets, pods]),
      role('Z-src', { a: 'x' }, [pods]),
      role('a-src', { a: 'x' }, [{ ...pods, resourceNames: [] }]),
    ];
    // 'Z-src' < 'a-src' in byte order; the rule with an empty resourceNames equals the one without.
    expect(aggregateClusterRoleRules(target, all)).toEqual([pods, secrets]);
  });

  it('answers undefined without an aggregationRule and [] for one without selectors; {} matches every other role', () => {
    expect(aggregateClusterRoleRules(role('t', {}, []), [])).toBeUndefined();
    expect(aggregateClusterRoleRules(aggregating(role('t', {}, []), {}), [role('s', {}, [pods])])).toEqual([]);
    expect(
      aggregateClusterRoleRules(aggregating(role('t', {}, []), { clusterRoleSelectors: [{}] }), [
        role('s', {}, [pods]),
      ]),
    ).toEqual([pods]);
  });

  it('compares rule lists semantically: absent equals empty, order matters', () => {
    expect(policyRulesEqual(undefined, [])).toBe(true);
    expect(policyRulesEqual([{ verbs: ['get'] }], [{ verbs: ['get'], apiGroups: [] }])).toBe(true);
    expect(policyRulesEqual([pods, secrets], [secrets, pods])).toBe(false);
  });
});
