import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { aggregationRule, rules } from './policy.js';

export const clusterRole = (): ResourceType =>
  defineResource({
    group: group('rbac.authorization'),
    version: 'v1',
    kind: 'ClusterRole',
    plural: 'clusterroles',
    singular: 'clusterrole',
    namespaced: false,
    nameRule: 'path-segment',
    hasSpec: false,
    schema: objectSchema({ rules, aggregationRule }),
  });
