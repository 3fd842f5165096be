import type { ApiObject } from '../types.js';

/** flowcontrol.apiserver.<suffix>/v1 FlowSchema and PriorityLevelConfiguration, as stored. */

export interface FlowControlCondition {
  type?: string;
  status?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface FlowSchemaSubject {
  kind: string;
  user?: { name: string };
  group?: { name: string };
  serviceAccount?: { namespace: string; name: string };
}

export interface ResourcePolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  clusterScope?: boolean;
  namespaces?: string[];
}

export interface NonResourcePolicyRule {
  verbs: string[];
  nonResourceURLs: string[];
}

export interface PolicyRulesWithSubjects {
  subjects: FlowSchemaSubject[];
  resourceRules?: ResourcePolicyRule[];
  nonResourceRules?: NonResourcePolicyRule[];
}

export interface FlowSchemaSpec {
  priorityLevelConfiguration: { name: string };
  matchingPrecedence?: number;
  /** `ByUser` or `ByNamespace`; absent: one flow for the whole schema. */
  distinguisherMethod?: { type: string };
  rules?: PolicyRulesWithSubjects[];
}

export interface FlowSchema extends ApiObject {
  spec: FlowSchemaSpec;
  status?: { conditions?: FlowControlCondition[] };
}

export interface QueuingConfiguration {
  queues?: number;
  handSize?: number;
  queueLengthLimit?: number;
}

export interface LimitedPriorityLevelConfiguration {
  nominalConcurrencyShares?: number;
  limitResponse: { type: string; queuing?: QueuingConfiguration };
  lendablePercent?: number;
  borrowingLimitPercent?: number;
}

export interface PriorityLevelConfigurationSpec {
  /** `Exempt` or `Limited`. */
  type: string;
  limited?: LimitedPriorityLevelConfiguration;
  exempt?: { nominalConcurrencyShares?: number; lendablePercent?: number };
}

export interface PriorityLevelConfiguration extends ApiObject {
  spec: PriorityLevelConfigurationSpec;
  status?: { conditions?: FlowControlCondition[] };
}
