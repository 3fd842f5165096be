import {
  apfAutoUpdateAnnotation,
  group,
  naming,
  type FlowSchema,
  type FlowSchemaSubject,
  type PolicyRulesWithSubjects,
  type PriorityLevelConfiguration,
  type PriorityLevelConfigurationSpec,
  type ResourcePolicyRule,
} from '@svc/api';
import { AUTHENTICATED_GROUP, MASTERS_GROUP, UNAUTHENTICATED_GROUP } from '@svc/component-base';

/**
 * Kubernetes 1.32's configuration objects of priority and fairness
 * (`k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap`), with the product's names: the
 * mandatory ones (`exempt` and `catch-all`, kept as defined whatever the annotation says) and
 * the suggested ones (created when missing, kept up to date while their auto-update
 * annotation is `true`).
 */

export const EXEMPT = 'exempt';
export const CATCH_ALL = 'catch-all';
const NODES_GROUP = 'system:nodes';
const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';

function level(name: string, spec: PriorityLevelConfigurationSpec): PriorityLevelConfiguration {
  return {
    apiVersion: `${group('flowcontrol.apiserver')}/v1`,
    kind: 'PriorityLevelConfiguration',
    metadata: { name, annotations: { [apfAutoUpdateAnnotation()]: 'true' } },
    spec,
  };
}

function queued(o: {
  shares: number;
  lendable: number;
  queues: number;
  handSize: number;
}): PriorityLevelConfigurationSpec {
  return {
    type: 'Limited',
    limited: {
      nominalConcurrencyShares: o.shares,
      lendablePercent: o.lendable,
      limitResponse: { type: 'Queue', queuing: { queues: o.queues, handSize: o.handSize, queueLengthLimit: 50 } },
    },
  };
}

function schema(
  name: string,
  o: { level: string; precedence: number; by?: 'ByUser' | 'ByNamespace'; rules: PolicyRulesWithSubjects[] },
): FlowSchema {
  return {
    apiVersion: `${group('flowcontrol.apiserver')}/v1`,
    kind: 'FlowSchema',
    metadata: { name, annotations: { [apfAutoUpdateAnnotation()]: 'true' } },
    spec: {
      priorityLevelConfiguration: { name: o.level },
      matchingPrecedence: o.precedence,
      ...(o.by ? { distinguisherMethod: { type: o.by } } : {}),
      rules: o.rules,
    },
  };
}

const groups = (...names: string[]): FlowSchemaSubject[] => names.map((name) => ({ kind: 'Group', group: { name } }));
const users = (...names: string[]): FlowSchemaSubject[] => names.map((name) => ({ kind: 'User', user: { name } }));
const systemServiceAccounts = (...names: string[]): FlowSchemaSubject[] =>
  names.map((name) => ({ kind: 'ServiceAccount', serviceAccount: { namespace: naming().systemNamespace, name } }));

/** A rule over every namespace (and cluster-scoped objects when `clusterScope`). */
function resourceRule(
  verbs: string[],
  target: { apiGroups: string[]; resources: string[]; clusterScope?: boolean },
): ResourcePolicyRule {
  return { verbs, ...target, clusterScope: target.clusterScope ?? false, namespaces: ['*'] };
}

/** Every verb on every resource and non-resource URL. */
function everything(subjects: FlowSchemaSubject[]): PolicyRulesWithSubjects[] {
  return [
    {
      subjects,
      resourceRules: [resourceRule(['*'], { apiGroups: ['*'], resources: ['*'], clusterScope: true })],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    },
  ];
}

export function mandatoryPriorityLevels(): PriorityLevelConfiguration[] {
  return [
    level(CATCH_ALL, {
      type: 'Limited',
      limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Reject' } },
    }),
    level(EXEMPT, { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } }),
  ];
}

export function mandatoryFlowSchemas(): FlowSchema[] {
  return [
    schema(EXEMPT, { level: EXEMPT, precedence: 1, rules: everything(groups(MASTERS_GROUP)) }),
    schema(CATCH_ALL, {
      level: CATCH_ALL,
      precedence: 10000,
      by: 'ByUser',
      rules: everything(groups(UNAUTHENTICATED_GROUP, AUTHENTICATED_GROUP)),
    }),
  ];
}

export function suggestedPriorityLevels(): PriorityLevelConfiguration[] {
  return [
    level('system', queued({ shares: 30, lendable: 33, queues: 64, handSize: 6 })),
    level('node-high', queued({ shares: 40, lendable: 25, queues: 64, handSize: 6 })),
    level('leader-election', queued({ shares: 10, lendable: 0, queues: 16, handSize: 4 })),
    level('workload-high', queued({ shares: 40, lendable: 50, queues: 128, handSize: 6 })),
    level('workload-low', queued({ shares: 100, lendable: 90, queues: 128, handSize: 6 })),
    level('global-default', queued({ shares: 20, lendable: 50, queues: 128, handSize: 6 })),
  ];
}

export function suggestedFlowSchemas(): FlowSchema[] {
  const n = naming();
  const controllerManager = `system:${n.controllerManagerName}`;
  const scheduler = `system:${n.schedulerName}`;
  const getCreateUpdate = ['get', 'create', 'update'];
  const leases = resourceRule(getCreateUpdate, { apiGroups: [group('coordination')], resources: ['leases'] });
  return [
    schema('system-nodes', { level: 'system', precedence: 500, by: 'ByUser', rules: everything(groups(NODES_GROUP)) }),
    schema('system-node-high', {
      level: 'node-high',
      precedence: 400,
      by: 'ByUser',
      rules: [
        {
          subjects: groups(NODES_GROUP),
          resourceRules: [
            resourceRule(['*'], { apiGroups: [''], resources: ['nodes', 'nodes/status'], clusterScope: true }),
            resourceRule(['*'], { apiGroups: [group('coordination')], resources: ['leases'] }),
          ],
        },
      ],
    }),
    schema('probes', {
      level: EXEMPT,
      precedence: 2,
      rules: [
        {
          subjects: groups(UNAUTHENTICATED_GROUP, AUTHENTICATED_GROUP),
          nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }],
        },
      ],
    }),
    schema('system-leader-election', {
      level: 'leader-election',
      precedence: 100,
      by: 'ByUser',
      rules: [
        { subjects: [...users(controllerManager, scheduler), ...systemServiceAccounts('*')], resourceRules: [leases] },
      ],
    }),
    schema('workload-leader-election', {
      level: 'leader-election',
      precedence: 200,
      by: 'ByUser',
      rules: [
        {
          subjects: systemServiceAccounts('*'),
          resourceRules: [
            resourceRule(getCreateUpdate, { apiGroups: [''], resources: ['endpoints', 'configmaps'] }),
            leases,
          ],
        },
      ],
    }),
    schema('endpoint-controller', {
      level: 'workload-high',
      precedence: 150,
      by: 'ByUser',
      rules: [
        {
          subjects: [
            ...users(controllerManager),
            ...systemServiceAccounts('endpoint-controller', 'endpointslicemirroring-controller'),
          ],
          resourceRules: [resourceRule(getCreateUpdate, { apiGroups: [''], resources: ['endpoints'] })],
        },
      ],
    }),
    schema(n.controllerManagerName, {
      level: 'workload-high',
      precedence: 800,
      by: 'ByNamespace',
      rules: everything(users(controllerManager)),
    }),
    schema(n.schedulerName, {
      level: 'workload-high',
      precedence: 800,
      by: 'ByNamespace',
      rules: everything(users(scheduler)),
    }),
    schema(`${n.systemNamespace}-service-accounts`, {
      level: 'workload-high',
      precedence: 900,
      by: 'ByNamespace',
      rules: everything(systemServiceAccounts('*')),
    }),
    schema('service-accounts', {
      level: 'workload-low',
      precedence: 9000,
      by: 'ByUser',
      rules: everything(groups(SERVICE_ACCOUNTS_GROUP)),
    }),
    schema('global-default', {
      level: 'global-default',
      precedence: 9900,
      by: 'ByUser',
      rules: everything(groups(UNAUTHENTICATED_GROUP, AUTHENTICATED_GROUP)),
    }),
  ];
}
