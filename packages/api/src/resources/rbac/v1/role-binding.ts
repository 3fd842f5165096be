import { defineResource, type ResourceType } from '../../../catalog.js';
import { objectSchema } from '../../../meta-schema.js';
import { group } from '../../../names.js';
import { ageColumn, column, nameColumn } from '../../../table-columns.js';
import { roleRef, subjects } from './policy.js';

const roleColumn = column('Role', 'string', (o) => {
  const r = o.roleRef as { kind?: string; name?: string } | undefined;
  return r ? `${r.kind ?? ''}/${r.name ?? ''}` : '';
});

export const roleBinding = (): ResourceType =>
  defineResource({
    group: group('rbac.authorization'),
    version: 'v1',
    kind: 'RoleBinding',
    plural: 'rolebindings',
    singular: 'rolebinding',
    namespaced: true,
    nameRule: 'path-segment',
    hasSpec: false,
    tableColumns: [nameColumn, roleColumn, ageColumn],
    schema: objectSchema({ subjects, roleRef }, { required: ['roleRef'] }),
  });

export const clusterRoleBinding = (): ResourceType =>
  defineResource({
    group: group('rbac.authorization'),
    version: 'v1',
    kind: 'ClusterRoleBinding',
    plural: 'clusterrolebindings',
    singular: 'clusterrolebinding',
    namespaced: false,
    nameRule: 'path-segment',
    hasSpec: false,
    tableColumns: [nameColumn, roleColumn, ageColumn],
    schema: objectSchema({ subjects, roleRef }, { required: ['roleRef'] }),
  });
