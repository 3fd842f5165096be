import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { rules } from './policy.js';

export const role = (): ResourceType =>
  defineResource({
    group: group('rbac.authorization'),
    version: 'v1',
    kind: 'Role',
    plural: 'roles',
    singular: 'role',
    namespaced: true,
    nameRule: 'path-segment',
    hasSpec: false,
    schema: objectSchema({ rules }),
  });
